// ---- Energy (spec 4.1): E = Σ_jk exp(β <Qθ_j, Kθ_k>) never decreases along the engine's flow, for
// every scheme (the NA equation is a gradient flow of E with a positive, time-varying metric), with
// Q = K = V = I and with V = QᵀK symmetric (Q = I, K = V = B).
#include <cmath>
#include <limits>

#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {
namespace {

// Round-off and the integrator's error (rtol 1e-11) leave E's late increments, which vanish with
// 1 − γ, below this relative size; a decrease beyond it is the flow's.
constexpr double kEnergyTolerance = 1e-9;

double energy(const RowMatrix& theta, const RowMatrix& b, double beta) {
  const RowMatrix g = theta * b * theta.transpose();
  return g.unaryExpr([beta](double v) { return std::exp(beta * v); }).sum();
}

}  // namespace

void energy_monotonicity(Builder& b) {
  const Engine& engine = b.engine();
  const Index n = 8, d = 3;
  const double beta = 2.0, t_end = 20.0;
  const std::vector<double> times = linear_times(t_end, 400);
  std::vector<Scheme> schemes;
  for_each_scheme([&](auto s) { schemes.emplace_back(s); });
  schemes.emplace_back(NGPT{0.5, 0.0});
  schemes.emplace_back(NGPT{2.0, 0.5});
  schemes.emplace_back(MixLN{0.0});
  for (const bool general : {false, true})
    b.study(
        general ? "energy: non-decreasing with V = Q^T K symmetric" : "energy: non-decreasing (Q = K = V = I)", [&] {
          const RowMatrix bqk = general ? positive_definite_qk(d, 7) : RowMatrix::Identity(d, d);
          for (const Scheme& s : schemes) {
            const bool radius = scheme_has_radius(s);
            const QkvSource qkv = general ? qk_equals_v(bqk) : QkvSource::identity();
            double worst = -std::numeric_limits<double>::infinity(), where = 0.0, rise = 0.0;
            std::string problem;
            for (std::uint64_t seed : {1u, 2u}) {
              const Tokens start = radius ? gaussian_tokens(n, d, seed) : uniform_tokens(n, d, 1.0, seed);
              const ParticleRun run = run_particles(engine, dynamics_spec(s, beta, 1), qkv, start, times, 1e-11, 1e-13);
              if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
                problem = "seed " + std::to_string(seed) + " ended with status " + std::string(to_string(run.status));
                continue;
              }
              double previous = energy(run.frames.front().theta, bqk, beta);
              const double first = previous;
              for (std::size_t i = 1; i < run.frames.size(); ++i) {
                const double e = energy(run.frames[i].theta, bqk, beta);
                const double drop = (previous - e) / previous;
                if (drop > worst) worst = drop, where = times[i];
                previous = e;
              }
              rise = std::max(rise, previous / first);
            }
            const std::string id = std::string(general ? "energy-qk-" : "energy-") + scheme_tag(s);
            b.row({id,
                   std::string("Energy (spec 4.1), ") + scheme_label(s) +
                       ": E = sum_jk exp(beta <Q theta_j, K theta_k>) is non-decreasing along the flow (" +
                       (general ? "Q = I, K = V = B symmetric positive definite" : "Q = K = V = I") +
                       ", n = 8, d = 3, beta = 2)",
                   "normdyn run with " + scheme_settings(s) + ", model.n = 8, model.d = 3, model.beta = 2" +
                       (general ? ", model.qkv = \"file\" holding Q = I, K = V = I + S/(2|S|) (S the symmetric part of "
                                  "a Gaussian matrix, seed 7)"
                                : "") +
                       ", init.kind = \"" + (radius ? "gaussian" : "uniform") +
                       "\", init.seed = 1, 2, solver.t_end = 20, "
                       "output.samples = 400, solver.rtol = 1e-11",
                   problem.empty() ? "largest relative decrease of E between consecutive frames: " + num(worst, 3) +
                                         " (at t = " + num(where, 3) +
                                         "; negative: E rose between every pair); E grew by a factor " + num(rise, 4)
                                   : problem,
                   "<= 0 (non-decreasing)", "largest relative decrease <= " + num(kEnergyTolerance),
                   problem.empty() && worst <= kEnergyTolerance ? "holds" : "fails"});
          }
        });
}

}  // namespace normdyn::studies
