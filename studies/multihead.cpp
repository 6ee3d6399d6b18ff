// ---- Multi-head gradient flow (Pendharkar 2026, statements quoted from secondary sources [S]): n tokens
// on the sphere, H heads with score matrices M_h, dx_i/dt = P_{x_i} (1/n) sum_h sum_j e^{beta <x_i, M_h x_j>}
// W_h x_j (the 1/n normalization, USA, as the summaries' energy implies; the source's normalization is
// not verified). Under score symmetry (M_h = M_h^T) and value alignment (W_h = M_h), the total energy
// E = sum_h E_h, E_h = sum_ij e^{beta <x_i, M_h x_j>}, never decreases: the flow is its projected
// gradient divided by 2 beta n. A single head's E_h need not: the other heads' "radial shadow" (their
// output's component along the token) moves the tokens against it.
//
// In normdyn: model.heads = H, Q_h = I, K_h = V_h = M_h, attention.normalizer = "uniform". The rows
// check the engine's velocity against the gradient of E computed in the row by central differences
// (independent of the attention kernel), the monotonicity of E, and a decrease of some E_h.
#include <cmath>
#include <limits>

#include "normdyn/init.hpp"
#include "normdyn/random.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"
#include "row_reference.hpp"

namespace normdyn::studies {
namespace {

// Round-off and the integrator's error (rtol 1e-11) leave E's increments above this relative size.
constexpr double kMultiheadEnergyTolerance = 1e-9;
// The velocity against P_j grad_j E / (2 beta n), grad E by central differences (step 1e-6).
constexpr double kMultiheadGradientTolerance = 1e-6;
// A single head's energy counts as decreasing when it falls by more than this (relative) between frames:
// a thousand times the total's tolerance.
constexpr double kShadowThreshold = 1e-6;

// S/|S|_2 with S the symmetric part of a Gaussian d x d matrix from (seed, head): symmetric, indefinite
// in general.
RowMatrix multihead_score(Index d, std::uint64_t seed, std::uint64_t head) {
  Random rng(seed, RandomStream::attention_matrices, 20 + head);
  RowMatrix g(d, d);
  for (Index i = 0; i < d; ++i)
    for (Index j = 0; j < d; ++j) g(i, j) = rng.normal();
  const RowMatrix s = 0.5 * (g + g.transpose());
  return s / Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(s).eigenvalues().cwiseAbs().maxCoeff();
}

double multihead_head_energy(const RowMatrix& x, const RowMatrix& m, double beta) {
  return (beta * x * m * x.transpose()).array().exp().sum();
}

}  // namespace

void multihead(Builder& b) {
  const Engine& engine = b.engine();
  const ReproduceOptions& o = b.options();
  const Index n = 8, d = 3, heads = 2;
  const double beta = 1.0;
  const std::vector<double> times = linear_times(20.0, 200);
  const std::vector<std::uint64_t> seeds =
      o.quick ? std::vector<std::uint64_t>{1, 2} : std::vector<std::uint64_t>{1, 2, 3, 4, 5};
  b.study("multi-head gradient flow", [&] {
    double shadow = 0.0, total_fall = -std::numeric_limits<double>::infinity();
    std::string shadow_where, problem;
    for (const std::uint64_t seed : seeds) {
      DynamicsSpec spec = dynamics_spec(PostLN{}, beta, o.threads);
      spec.attention.normalizer = Uniform{};
      AttentionMatrices m;
      std::vector<RowMatrix> scores;
      for (Index h = 0; h < heads; ++h) {
        scores.push_back(multihead_score(d, seed, std::uint64_t(h)));
        AttentionMatrices& head = h == 0 ? m : m.other_heads.emplace_back();
        head.identity = false;
        head.Q = RowMatrix::Identity(d, d);
        head.K = head.V = scores.back();
      }
      const QkvSource qkv = QkvSource::layers({m});
      const ParticleRun run = run_particles(engine, spec, qkv, uniform_tokens(n, d, 1.0, seed), times, 1e-11, 1e-13);
      const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
      const auto energy = [&](const RowMatrix& x) {
        double e = 0.0;
        for (const RowMatrix& s : scores) e += multihead_head_energy(x, s, beta);
        return e;
      };
      double fall = -std::numeric_limits<double>::infinity(), deviation = std::numeric_limits<double>::quiet_NaN();
      if (complete) {
        for (std::size_t k = 1; k < run.frames.size(); ++k) {
          const RowMatrix &before = run.frames[k - 1].theta, &after = run.frames[k].theta;
          fall = std::max(fall, (energy(before) - energy(after)) / energy(before));
          for (std::size_t h = 0; h < scores.size(); ++h) {
            const double e0 = multihead_head_energy(before, scores[h], beta),
                         e1 = multihead_head_energy(after, scores[h], beta);
            if ((e0 - e1) / e0 > shadow) {
              shadow = (e0 - e1) / e0;
              shadow_where =
                  "head " + std::to_string(h + 1) + " of seed " + std::to_string(seed) + " at t = " + num(times[k], 3);
            }
          }
        }
        deviation = reference::velocity_deviation(engine, spec, qkv, run.frames, times, 20, [&](const Tokens& f) {
          RowMatrix x = f.theta, gradient(n, d);
          for (Index j = 0; j < n; ++j)
            for (Index c = 0; c < d; ++c) {
              const double keep = x(j, c);
              x(j, c) = keep + 1e-6;
              const double up = energy(x);
              x(j, c) = keep - 1e-6;
              gradient(j, c) = (up - energy(x)) / 2e-6;
              x(j, c) = keep;
            }
          return reference::tangential(f.theta, gradient / (2.0 * beta * double(n)));
        });
        total_fall = std::max(total_fall, fall);
      } else if (problem.empty()) {
        problem = "seed " + std::to_string(seed) + " ended with " + run_ending(run);
      }
      b.row({"multihead-aligned-energy-seed" + std::to_string(seed),
             "Two heads with symmetric scores M_h and aligned values W_h = M_h (Pendharkar 2026, conditions 3 and 4 "
             "[S]): "
             "E = sum_h sum_ij e^{beta <x_i, M_h x_j>} is non-decreasing, the flow being dx_j/dt = P_j grad_j E/(2 "
             "beta n) "
             "(USA, Post-LN, n = 8, d = 3, beta = 1, M_h random symmetric indefinite)",
             "normdyn run with model.scheme = \"post\", model.n = 8, model.d = 3, model.beta = 1, model.heads = 2, "
             "attention.normalizer = \"uniform\", model.qkv = \"file\" holding Q_h = I, K_h = V_h = M_h (the symmetric "
             "part of "
             "a Gaussian matrix over its spectral norm, from the row's source), init.seed = " +
                 std::to_string(seed) + ", solver.t_end = 20",
             complete
                 ? "largest relative decrease of E between frames " + num(fall, 3) +
                       "; velocity against P_j grad_j E/(2 beta n) (central differences, every 20th frame): largest "
                       "relative deviation " +
                       num(deviation, 3)
                 : "the run ended with " + run_ending(run),
             "<= 0 and 0",
             "decrease <= " + num(kMultiheadEnergyTolerance) + ", deviation <= " + num(kMultiheadGradientTolerance),
             complete && fall <= kMultiheadEnergyTolerance && deviation <= kMultiheadGradientTolerance ? "holds"
                                                                                                       : "fails"});
    }
    b.row({"multihead-radial-shadow",
           "Under the same conditions a single head's energy E_h is not monotone (the other heads' radial shadow; "
           "Pendharkar 2026 [S]): some E_h decreases between frames while E does not",
           "the runs of multihead-aligned-energy-seed*",
           problem.empty()
               ? "largest relative decrease of a single E_h between frames: " + num(shadow, 3) +
                     (shadow_where.empty() ? "" : " (" + shadow_where + ")") + "; of E: " + num(total_fall, 3)
               : problem,
           "> 0 and <= 0",
           "some E_h decreases by more than " + num(kShadowThreshold) + " (else differs) and E by at most " +
               num(kMultiheadEnergyTolerance),
           !problem.empty() || total_fall > kMultiheadEnergyTolerance ? "fails"
           : shadow > kShadowThreshold                                ? "holds"
                                                                      : "differs"});
  });
}

}  // namespace normdyn::studies
