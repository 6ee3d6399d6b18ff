// ---- Strong order of the stochastic methods, measured on one path family. With tree increments
// (noise.increments = "tree") the increment over any interval is a function of the interval, so runs
// at h and at a much finer h_ref follow the same Brownian paths and E|x_h(T) − x_ref(T)|² is the
// strong error. Independent noise on the spheres (Post-LN, beta = 1, Q = K = V = I, sigma = 1):
//
// * d = 3: the noise's vector fields (the columns of P_θ) do not commute, so without Lévy areas both
//   methods have strong order 1/2 (Kloeden-Platen; for Heun, Rümelin 1982);
// * d = 2: on the circle the noise is one field, additive in the angle, dφ = v(φ) dt + σ dβ, so both
//   have strong order 1 (Heun is order 1 for commutative noise; Euler-Maruyama's retracted step moves
//   the angle by atan of the tangential increment, whose cubic error has mean zero).
#include <cmath>
#include <string>
#include <vector>

#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {
namespace {

// The fitted order within this of the expected one.
constexpr double kStrongOrderTolerance = 0.15;

struct StrongErrors {
  // per method, per step size: the root mean square over tokens and paths of |x_h(T) − x_ref(T)|
  std::vector<std::vector<double>> rms;
  bool complete = true;
};

// The errors of each method at each step of `steps` against stratonovich_heun at h_ref, on `paths`
// runs of n tokens sharing nothing but the law (seed s: uniform start and noise.seed = 700 + s).
StrongErrors strong_errors(const Engine& engine, Index n, Index d, const std::vector<Method>& methods,
                           const std::vector<double>& steps, double h_ref, int paths, int threads) {
  StrongErrors out;
  std::vector<std::vector<double>> sum(methods.size(), std::vector<double>(steps.size(), 0.0));
  const std::vector<double> times{0.0, 1.0};
  for (int p = 0; p < paths && out.complete; ++p) {
    const auto seed = static_cast<std::uint64_t>(700 + p);
    DynamicsSpec spec = dynamics_spec(PostLN{}, 1.0, threads);
    spec.noise = NoiseSpec{IndependentNoise{1.0}, seed};
    spec.noise.increment_draws = NoiseIncrements::tree;
    const Tokens start = uniform_tokens(n, d, 1.0, seed);
    const auto run = [&](Method m, double h) {
      IntegratorOptions o;
      o.method = m;
      o.dt = h;
      return run_particles(engine, spec, QkvSource::identity(), start, times, o);
    };
    const ParticleRun reference = run(Method::stratonovich_heun, h_ref);
    out.complete = reference.status == RunStatus::ok && reference.frames.size() == 2;
    for (std::size_t i = 0; i < methods.size(); ++i)
      for (std::size_t k = 0; k < steps.size() && out.complete; ++k) {
        const ParticleRun coarse = run(methods[i], steps[k]);
        out.complete = coarse.status == RunStatus::ok && coarse.frames.size() == 2;
        if (out.complete) sum[i][k] += (coarse.frames[1].theta - reference.frames[1].theta).squaredNorm();
      }
  }
  for (const auto& s : sum) {
    out.rms.emplace_back();
    for (double x : s) out.rms.back().push_back(std::sqrt(x / (double(paths) * double(n))));
  }
  return out;
}

}  // namespace

void noise_strong_order(Builder& b) {
  const ReproduceOptions& o = b.options();
  b.study("strong order of the stochastic methods", [&] {
    const Index n = 16;
    // Dyadic steps, so that every step's ends are points of the tree; the reference 16 times finer
    // than the finest (its own error then adds about 1/16 to the finest squared error at order 1/2).
    const std::vector<double> steps = o.quick ? std::vector<double>{1.0 / 8, 1.0 / 16, 1.0 / 32, 1.0 / 64}
                                              : std::vector<double>{1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128, 1.0 / 256};
    const double h_ref = steps.back() / 16.0;
    const int paths = o.quick ? 4 : 32;
    std::string step_list;
    for (double h : steps) step_list += (step_list.empty() ? "" : ", ") + std::string("1/") + num(1.0 / h, 4);
    const std::vector<Method> methods{Method::euler_maruyama, Method::stratonovich_heun};
    for (const Index d : {Index{3}, Index{2}}) {
      const StrongErrors e = strong_errors(b.engine(), n, d, methods, steps, h_ref, paths, o.threads);
      for (std::size_t i = 0; i < methods.size(); ++i) {
        const Method m = methods[i];
        const double expected = d == 3 ? 0.5 : 1.0;
        std::vector<double> log_h, log_e;
        for (std::size_t k = 0; k < steps.size() && e.complete; ++k) {
          log_h.push_back(std::log(steps[k]));
          log_e.push_back(std::log(e.rms[i][k]));
        }
        const double order = e.complete ? log_slope(log_h, log_e, log_h.front(), log_h.back()) : std::nan("");
        std::string measured = "a run ended early";
        if (e.complete) {
          measured = "rms errors";
          for (double x : e.rms[i]) measured += " " + num(x, 3);
          measured += "; fitted order " + num(order, 3);
        }
        const std::string tag = (m == Method::stratonovich_heun ? "heun" : "em") + std::string(d == 3 ? "" : "-circle");
        b.row({"noise-strong-order-" + tag,
               "Strong order " + num(expected, 2) + " of solver.method = \"" + std::string(to_string(m)) + "\" for " +
                   (d == 3 ? "non-commuting noise (independent noise on S^2)" : "commuting noise (independent noise on the circle)") +
                   ": the rms distance at t = 1 to a path of the same Brownian motions at a much finer step falls like h^" +
                   num(expected, 2),
               "normdyn run with model.scheme = \"post\", model.n = 16, model.d = " + std::to_string(d) +
                   ", model.beta = 1, noise.kind = \"independent\", noise.sigma = 1, noise.increments = \"tree\", "
                   "init.seed = noise.seed = 700 ... (" + std::to_string(paths) + " runs), solver.dt = " + step_list +
                   " against stratonovich_heun at solver.dt = 1/" + num(1.0 / h_ref, 6) + " (same seeds), solver.t_end = 1",
               measured, num(expected, 2), "|order - " + num(expected, 2) + "| <= " + num(kStrongOrderTolerance, 2),
               e.complete && std::abs(order - expected) <= kStrongOrderTolerance ? "holds" : "fails"});
      }
    }
  });
}

}  // namespace normdyn::studies
