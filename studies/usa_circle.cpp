// ---- Unnormalized self-attention (USA) on the circle at negative beta: for d = 2 every initialization
// (almost every) clusters for all beta > -0.16 (Geshkovski, Letrouit, Polyanskiy and Rigollet; the
// survey "The Mean-Field Dynamics of Transformers" [P]), so also for a weakly repulsive kernel
// e^{beta cos}, beta in (-0.16, 0).
//
// In angles the USA flow (Post-LN, Q = K = V = I) is theta_i' = (1/n) sum_j e^{beta cos(theta_j - theta_i)}
// sin(theta_j - theta_i), the Kuramoto model at beta = 0; the rows check the engine's velocity against
// this form (written in the row, in angles, not vectors) along the trajectory, and the clustering.
#include <cmath>
#include <limits>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"
#include "row_reference.hpp"

namespace normdyn::studies {
namespace {

// Clustered: every pairwise cosine above 1 - this at the horizon (t = 40; measured 1 - min cos <= 7e-11
// by t = 20 at n = 16 for both beta).
constexpr double kUsaClusterTolerance = 1e-10;
// The engine's velocity against the angle form, relative to the largest speed.
constexpr double kUsaVelocityTolerance = 1e-10;

// The angle form's velocity of a frame: theta_i' = (1/n) sum_j e^{beta cos(theta_j - theta_i)} sin(theta_j - theta_i).
RowMatrix usa_angle_velocity(const Tokens& x, double beta) {
  const std::vector<double> phi = reference::circle_angles(x.theta);
  const std::size_t n = phi.size();
  std::vector<double> rate(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double gap = phi[j] - phi[i];
      rate[i] += std::exp(beta * std::cos(gap)) * std::sin(gap) / double(n);
    }
  return reference::circle_velocity(phi, rate);
}

}  // namespace

void usa_circle_negative_beta(Builder& b) {
  const Engine& engine = b.engine();
  const ReproduceOptions& o = b.options();
  const Index n = o.quick ? 16 : 32, d = 2;
  const std::vector<double> times = linear_times(40.0, 80);
  const std::vector<std::uint64_t> seeds =
      o.quick ? std::vector<std::uint64_t>{1, 2} : std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8};
  b.study("USA on the circle at negative beta", [&] {
    for (const double beta : {-0.15, -0.05}) {
      DynamicsSpec spec = dynamics_spec(PostLN{}, beta, o.threads);
      spec.attention.normalizer = Uniform{};
      double spread = 0.0, deviation = 0.0;
      std::string problem;
      for (const std::uint64_t seed : seeds) {
        const ParticleRun run =
            run_particles(engine, spec, QkvSource::identity(), uniform_tokens(n, d, 1.0, seed), times, 1e-11, 1e-13);
        if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
          problem = "seed " + std::to_string(seed) + " ended with " + run_ending(run);
          break;
        }
        const RowMatrix& x = run.frames.back().theta;
        spread = std::max(spread, 1.0 - (x * x.transpose()).minCoeff());
        deviation = std::max(
            deviation, reference::velocity_deviation(engine, spec, QkvSource::identity(), run.frames, times, 5,
                                                     [&](const Tokens& f) { return usa_angle_velocity(f, beta); }));
      }
      const std::string tag = num(beta, 3);
      b.row(
          {"usa-circle-negative-beta" + tag,
           "USA on the circle (d = 2, Q = K = V = I, Post-LN) clusters for every beta > -0.16 (survey \"The Mean-Field "
           "Dynamics of Transformers\" [P]); here beta = " +
               tag + ", n = " + std::to_string(n) +
               ", uniform starts; the velocity is theta_i' = (1/n) sum_j e^{beta cos(theta_j - theta_i)} sin(theta_j - "
               "theta_i)",
           "normdyn run with model.scheme = \"post\", model.n = " + std::to_string(n) + ", model.d = 2, model.beta = " +
               tag + ", attention.normalizer = \"uniform\", init.kind = \"uniform\", init.seed = 1.." +
               std::to_string(seeds.size()) + ", solver.t_end = 40",
           problem.empty() ? "largest 1 - min cos at t = 40 over the " + std::to_string(seeds.size()) +
                                 " seeds: " + num(spread, 3) +
                                 "; velocity against the angle form (every 5th frame): largest relative deviation " +
                                 num(deviation, 3)
                           : problem,
           "0 and 0", "1 - min cos <= " + num(kUsaClusterTolerance) + ", deviation <= " + num(kUsaVelocityTolerance),
           problem.empty() && spread <= kUsaClusterTolerance && deviation <= kUsaVelocityTolerance ? "holds"
                                                                                                   : "fails"});
    }
  });
}

}  // namespace normdyn::studies
