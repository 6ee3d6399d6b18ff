// The cost of a noisy step against a deterministic one, side by side in one run (a plain program:
// prints ratios). Every case integrates the same tokens for the same number of equal steps; the
// cases alternate in rounds so that a change of machine load hits all alike; medians over rounds.
//   * euler_maruyama with independent noise against the deterministic Euler step: the same one
//     attention evaluation per step, plus the draws (n d normals) and the projection of the noise;
//   * stratonovich_heun with independent noise against Heun's method without noise (two evaluations
//     each) and against the Euler step;
//   * value noise with V = I (its means are the attention itself) and with a random V (one kernel
//     pass with V = I gives the means M, and the attention is M V^T);
//   * euler_maruyama with tree increments (noise.increments = "tree": a Brownian bridge descent per
//     token and step instead of one draw).
// The load average is printed before and after (the machine may be shared).
//
//   normdyn_bench_noise [n] [d] [rounds] [steps] [threads] [only]     (defaults 1024 64 7 20 0)
// `only`: run only the case of that name (to profile it; the ratios then read nan).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/qkv.hpp"
#include "normdyn/solvers/integrator.hpp"

using namespace normdyn;

namespace {

struct Case {
  std::string name;
  Method method;
  NoiseKind noise;
  bool random_values = false;
  std::vector<double> seconds;
  NoiseIncrements increments = NoiseIncrements::counter;
};

struct Discard final : SampleObserver {
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double>,
                                     const CheckpointView&) override {
    return std::nullopt;
  }
};

// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them ("unknown" elsewhere).
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Index n = argc > 1 ? std::atol(argv[1]) : 1024;
  const Index d = argc > 2 ? std::atol(argv[2]) : 64;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 7;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 20;
  const int threads = argc > 5 ? std::atoi(argv[5]) : 0;
  const std::string only = argc > 6 ? argv[6] : "";
  std::printf("load average before: %s\n", load_average().c_str());
  std::vector<Case> cases{
      {"euler, no noise", Method::euler, NoNoise{}, false, {}},
      {"euler_maruyama, independent", Method::euler_maruyama, IndependentNoise{0.5}, false, {}},
      {"heun, no noise", Method::stratonovich_heun, NoNoise{}, false, {}},
      {"heun, independent", Method::stratonovich_heun, IndependentNoise{0.5}, false, {}},
      {"heun, value (V = I)", Method::stratonovich_heun, ValueNoise{0.5}, false, {}},
      {"heun, no noise, random V", Method::stratonovich_heun, NoNoise{}, true, {}},
      {"heun, value, random V", Method::stratonovich_heun, ValueNoise{0.5}, true, {}},
      {"euler_maruyama, indep., tree", Method::euler_maruyama, IndependentNoise{0.5}, false, {}, NoiseIncrements::tree},
  };
  const Tokens start = uniform_tokens(n, d, 1.0, 1);
  AttentionMatrices random_v;
  random_v.identity = false;
  random_v.Q = random_v.K = RowMatrix::Identity(d, d);
  random_v.V = QkvSource::gaussian(d, 3).at(0.0).V;
  const std::vector<double> times{0.0, 0.01 * steps};
  for (int round = 0; round < rounds; ++round)
    for (Case& c : cases) {
      if (!only.empty() && c.name != only) continue;
      DynamicsSpec spec;
      spec.beta = 1.0;
      spec.kernel.threads = threads;
      spec.noise = NoiseSpec{c.noise, 1};
      spec.noise.increment_draws = c.increments;
      AttentionDynamics dynamics(spec, c.random_values ? QkvSource::layers({random_v}) : QkvSource::identity(), n, d);
      std::vector<double> x0(dynamics.layout().size());
      dynamics.layout().pack(start, x0.data());
      IntegratorOptions o;
      o.method = c.method;
      o.dt = 0.01;
      Discard discard;
      const auto t0 = std::chrono::steady_clock::now();
      const IntegrationResult r = integrate(dynamics, x0, 0.0, times, o, discard);
      c.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                          static_cast<double>(r.counters.accepted_steps));
    }
  std::printf("n = %ld, d = %ld, %d steps per case, %d rounds (medians), %d threads (0: all)\n", static_cast<long>(n),
              static_cast<long>(d), steps, rounds, threads);
  const double euler = median(cases[0].seconds), heun = median(cases[2].seconds), heun_v = median(cases[5].seconds);
  std::printf("%-30s %12s %10s %10s\n", "case", "ms/step", "/ euler", "/ same");
  for (const Case& c : cases) {
    const double m = median(c.seconds);
    const double same = c.method == Method::euler_maruyama ? euler : c.random_values ? heun_v : heun;
    std::printf("%-30s %12.3f %10.3f %10.3f\n", c.name.c_str(), 1e3 * m, m / euler, m / same);
  }
  std::printf("(/ same: against the deterministic step of the same method and matrices)\n");
  std::printf("load average after: %s\n", load_average().c_str());
}
