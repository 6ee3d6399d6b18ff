// Steps set by accuracy, not by the grid: the mean field's semi-Lagrangian split step against the
// finite volumes of the method of lines (dopri5), on data/configs/meanfield.toml, side by side in one
// run (a plain program: prints the ratios; the machine's load cancels in them).
//
//   build/bench/normdyn_bench_meanfield_steps [CONFIG] [--reference-grid M] [--quick]
//
// 1. The reference: finite volumes at M = 65536 (--reference-grid) to t = 10.
// 2. Today's method: finite volumes at M = 16384 to t = 20 (its wall time), and its W1 at t = 10 to the
//    reference.
// 3. The semi-Lagrangian step at M = 16384 for steps dt = 0.1 / 2^j (j = 0..5) to t = 20: wall time
//    and W1 at t = 10 to the reference; the speed-up of the largest step whose W1 is at most the finite
//    volumes' (equal accuracy).
// 4. Time per unit time at M = 4096 and 16384 for both methods, and its growth exponent.
// --quick: M = 4096 (reference 16384), for a look in a minute.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/setup.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"

using namespace normdyn;

namespace {

struct Outcome {
  std::vector<double> at_ten;  // the density at t = 10
  double seconds = 0.0;        // wall time in the integrator to t_end
  std::int64_t steps = 0, rejected = 0;
  std::string status;
};

Outcome run(RunConfig config, std::int64_t grid, MeanFieldMethod method, double dt, double t_end) {
  config.meanfield.grid = grid;
  config.meanfield.method = method;
  config.solver.t_end = t_end;
  if (method == MeanFieldMethod::semi_lagrangian) {
    config.solver.method = Method::split;
    config.solver.dt = dt;
  }
  MeanFieldSetup setup = make_meanfield(config);
  StateRecorder keep;
  const std::vector<double> times{0.0, 10.0, t_end};
  const IntegrationResult r = integrate(*setup.system, setup.x0, 0.0, std::span(times.data(), t_end > 10.0 ? 3 : 2),
                                        integrator_options(config.solver), keep);
  Outcome o;
  o.at_ten = setup.system->angular_density(keep.states.at(1).data());
  o.seconds = r.wall_seconds;
  o.steps = r.counters.accepted_steps;
  o.rejected = r.counters.rejected_steps;
  o.status = to_string(r.status);
  return o;
}

double w1(const std::vector<double>& a, const std::vector<double>& b) {
  return analysis::wasserstein1_circle(analysis::CircleMeasure{{}, {}, a}, analysis::CircleMeasure{{}, {}, b});
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "data/configs/meanfield.toml";
  std::int64_t reference_grid = 65536, grid = 16384, small_grid = 4096;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      reference_grid = 16384;
      grid = 4096;
      small_grid = 1024;
    } else if (std::strcmp(argv[i], "--reference-grid") == 0 && i + 1 < argc) {
      reference_grid = std::stoll(argv[++i]);
    } else {
      path = argv[i];
    }
  }
  const RunConfig config = load_config(path);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("%s: %s, beta = %g; finite volumes by %s (rtol %g) against the semi-Lagrangian split step\n",
              path.c_str(), std::string(scheme_key(config.model.scheme)).c_str(), config.model.beta,
              std::string(to_string(config.solver.method)).c_str(), config.solver.rtol);

  const Outcome reference = run(config, reference_grid, MeanFieldMethod::finite_volume, 0.0, 10.0);
  std::printf("reference: finite volumes M = %lld to t = 10: %.1f s, %lld steps (%lld rejected), %s\n",
              static_cast<long long>(reference_grid), reference.seconds, static_cast<long long>(reference.steps),
              static_cast<long long>(reference.rejected), reference.status.c_str());

  const double t_end = 20.0;
  std::printf("\n%-16s %7s %8s %10s %10s %12s %10s\n", "method", "M", "dt", "seconds", "s per t", "W1(t=10)", "steps");
  const auto row = [&](const char* name, std::int64_t m, double dt, const Outcome& o) {
    std::printf("%-16s %7lld %8.4g %10.2f %10.4f %12.4e %10lld %s\n", name, static_cast<long long>(m), dt, o.seconds,
                o.seconds / t_end, w1(o.at_ten, reference.at_ten), static_cast<long long>(o.steps), o.status.c_str());
  };
  const Outcome fv = run(config, grid, MeanFieldMethod::finite_volume, 0.0, t_end);
  row("finite_volume", grid, 0.0, fv);
  const Outcome fv_small = run(config, small_grid, MeanFieldMethod::finite_volume, 0.0, t_end);
  row("finite_volume", small_grid, 0.0, fv_small);
  const double fv_error = w1(fv.at_ten, reference.at_ten);

  double best_dt = 0.0, best_seconds = 0.0;
  for (double dt : {0.1, 0.05, 0.025, 0.0125, 0.00625, 0.003125}) {
    const Outcome sl = run(config, grid, MeanFieldMethod::semi_lagrangian, dt, t_end);
    row("semi_lagrangian", grid, dt, sl);
    if (best_dt == 0.0 && w1(sl.at_ten, reference.at_ten) <= fv_error) {
      best_dt = dt;
      best_seconds = sl.seconds;
    }
  }
  std::printf("\nequal accuracy (W1 at t = 10 at most the finite volumes' %.4e at M = %lld): ", fv_error,
              static_cast<long long>(grid));
  if (best_dt > 0.0)
    std::printf("semi_lagrangian dt = %g, %.2f s against %.2f s: %.1fx faster (target 10x)\n", best_dt, best_seconds,
                fv.seconds, fv.seconds / best_seconds);
  else
    std::printf("not reached by any step tried\n");

  const double dt = best_dt > 0.0 ? best_dt : 0.025;
  const Outcome sl_small = run(config, small_grid, MeanFieldMethod::semi_lagrangian, dt, t_end);
  row("semi_lagrangian", small_grid, dt, sl_small);
  const Outcome sl_large = run(config, grid, MeanFieldMethod::semi_lagrangian, dt, t_end);
  const double ratio = static_cast<double>(grid) / static_cast<double>(small_grid);
  std::printf(
      "time per unit time from M = %lld to %lld: semi_lagrangian (dt = %g) grows as M^%.2f (target <= 1.3), "
      "finite volumes as M^%.2f\n",
      static_cast<long long>(small_grid), static_cast<long long>(grid), dt,
      std::log(sl_large.seconds / sl_small.seconds) / std::log(ratio),
      std::log(fv.seconds / fv_small.seconds) / std::log(ratio));
  return 0;
}
