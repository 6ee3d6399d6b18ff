// ---- Theorem 3.1 and its Corollary, on the engine's particles.
//
// * 3.1-sync-*: (a) Post-LN, nGPT (α = 1, 0.5 and a schedule) and LN-Scaling synchronize from
//   uniform starts; (b) Pre-, Mix- and Peri-LN from Gaussian tokens synchronize or some radius
//   stalls (liminf dr_j/dt = 0), decided at t = 1e5 (log-spaced frames: the adaptive steps grow with
//   t, so the long horizon is cheap). The stall diagnostic is the engine's dr_j/dt after the scheme's
//   last switch (Mix-LN's Post-LN phase, where dr/dt = 0 by construction, is not a stall).
// * 3.1-sync-qk-*: (a) with V = QᵀK symmetric positive definite (a gradient flow of the energy):
//   synchronization, at an eigenvector of QᵀK.
// * 3.1-corollary-*: n ≤ e^β: Pre- and Peri-LN always synchronize, with <θ_j, A_j> and dr_j/dt at
//   least (e^β − n + 1)/(n e^β) along the flow (A_j computed here, independently of the engine).
#include <cmath>
#include <limits>

#include "normdyn/analysis/theorems.hpp"
#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {
namespace {

double min_cosine(const RowMatrix& theta) {
  const RowMatrix g = theta * theta.transpose();
  double lo = 1.0;
  for (Index j = 0; j < g.rows(); ++j)
    for (Index k = j + 1; k < g.cols(); ++k) lo = std::min(lo, g(j, k));
  return lo;
}

// A_j for Q = K = V = I, written out (softmax with the row maximum subtracted).
RowMatrix reference_attention(const RowMatrix& theta, double beta) {
  RowMatrix w = beta * (theta * theta.transpose());
  for (Index j = 0; j < w.rows(); ++j) {
    const double top = w.row(j).maxCoeff();
    w.row(j) = w.row(j).unaryExpr([top](double v) { return std::exp(v - top); });
    w.row(j) /= w.row(j).sum();
  }
  return w * theta;
}

// The horizon at which the Post-LN-equivalent clock of the scheme reaches `clock` (Theorem 3.1(a)):
// t for Post-LN, ∫α for nGPT, 2(sqrt(t + 1) − 1) for LN-Scaling.
double horizon_for_clock(const Scheme& s, double clock) {
  if (const auto* g = std::get_if<NGPT>(&s)) {
    const double c = clock / g->alpha;
    if (g->alpha_decay == 0.0) return c;
    if (g->alpha_decay == 0.5) return std::pow(0.5 * c + 1.0, 2) - 1.0;
    if (g->alpha_decay == 1.0) return std::expm1(c);
    return std::pow(1.0 + (1.0 - g->alpha_decay) * c, 1.0 / (1.0 - g->alpha_decay)) - 1.0;
  }
  if (std::holds_alternative<LNScaling>(s)) return std::pow(0.5 * clock + 1.0, 2) - 1.0;
  return clock;
}

// The smallest dr_j/dt of the engine at `x` (time t, after the scheme's last switch).
double min_radial_speed(const Engine& engine, const Scheme& s, double beta, QkvSource qkv, const Tokens& x, double t) {
  return engine_velocity(engine, dynamics_spec(s, beta, 1), std::move(qkv), x, t).r.minCoeff();
}

}  // namespace

void theorem_3_1(Builder& b) {
  const ReproduceOptions& o = b.options();
  const Engine& engine = b.engine();
  // A small scan of sizes; the first is the reference size (rows without a size suffix). nGPT's
  // parameters change with the size: α = 1, 0.5, and the schedule α/(1 + t)^0.5.
  struct Size {
    Index n, d;
    double beta;
    NGPT ngpt;
  };
  const std::vector<Size> sizes =
      o.quick
          ? std::vector<Size>{{8, 3, 1.0, {}}, {16, 3, 1.0, {0.5, 0.0}}, {8, 5, 2.0, {1.0, 0.5}}}
          : std::vector<Size>{
                {8, 3, 1.0, {}}, {16, 3, 1.0, {0.5, 0.0}}, {32, 3, 1.0, {}}, {8, 5, 2.0, {1.0, 0.5}}, {16, 8, 2.0, {}}};
  // The radii of (b) grow like t, so the directions move on a ln t clock: a slow seed is still above
  // the synchronization threshold at t = 1e5 (seed 4 at n = 8, d = 5, beta = 2: 1 - min cos = 2.2e-4
  // at t = 2e5, 7.5e-14 at 1e10). The adaptive steps grow with t, so 1e10 costs little more.
  const double radius_horizon = 1e10;
  // 1 - min cos at the round-off of unit vectors: synchronized, with nothing left to halve.
  constexpr double kRoundOffGap = 1e-12;
  constexpr double kCorollaryHorizon = 1e200;
  for (const Size& size : sizes) {
    const Index n = size.n, d = size.d;
    const double beta = size.beta;
    const bool reference = &size == &sizes.front();
    const int seeds = o.quick ? (reference ? 4 : 2) : (reference ? 16 : 8);
    const std::string suffix =
        reference ? "" : "-n" + std::to_string(n) + "-d" + std::to_string(d) + "-beta" + num(beta);
    b.study(
        "theorem 3.1: synchronization over seeds (n = " + std::to_string(n) + ", d = " + std::to_string(d) +
            ", beta = " + num(beta) + ")",
        [&] {
          std::vector<Scheme> schemes;
          for_each_scheme([&](auto scheme) {
            if constexpr (std::is_same_v<decltype(scheme), NGPT>)
              schemes.emplace_back(size.ngpt);
            else
              schemes.emplace_back(scheme);
          });
          for (const Scheme& s : schemes) {
            const std::string key(scheme_key(s));
            const bool radius = scheme_has_radius(s);
            // (a): the Post-LN clock to 40; (b): t = 1e5 on log-spaced frames.
            const double t_end = radius ? radius_horizon : horizon_for_clock(s, 40.0);
            const std::vector<double> times = radius ? log_times(0.1, t_end, 60) : linear_times(t_end, 40);
            const auto breaks = scheme_breakpoints(s, 0.0, t_end);
            const double settled = breaks.empty() ? 0.0 : breaks.back();
            int synchronized = 0, stalled = 0, undecided = 0, failed = 0;
            double worst_gap = 0.0, lowest_speed = std::numeric_limits<double>::infinity();
            std::string first_failure;  // how the first run that ended early ended
            for (int seed = 1; seed <= seeds; ++seed) {
              const Tokens start =
                  radius ? gaussian_tokens(n, d, std::uint64_t(seed)) : uniform_tokens(n, d, 1.0, std::uint64_t(seed));
              const ParticleRun run =
                  run_particles(engine, dynamics_spec(s, beta, 1), QkvSource::identity(), start, times, 1e-10, 1e-12);
              if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
                if (!failed++) first_failure = "seed " + std::to_string(seed) + ": " + run_ending(run);
                continue;
              }
              const Tokens& last = run.frames.back();
              const double gap = 1.0 - min_cosine(last.theta);
              const double gap_half = 1.0 - min_cosine(run.frames[times.size() / 2].theta);
              worst_gap = std::max(worst_gap, gap);
              if (!radius) {
                if (gap < 1e-6)
                  ++synchronized;
                else if (gap < 0.1 * gap_half)
                  ++undecided;
                else
                  ++stalled;  // not synchronizing and not converging: a counterexample
                continue;
              }
              const double speed =
                  t_end > settled ? min_radial_speed(engine, s, beta, QkvSource::identity(), last, t_end) : 0.0;
              lowest_speed = std::min(lowest_speed, speed);
              if (gap < 1e-4 && (gap < 0.5 * gap_half || gap < kRoundOffGap))
                ++synchronized;
              else if (speed < 1e-3)
                ++stalled;
              else
                ++undecided;
            }
            std::string measured = std::to_string(synchronized) + "/" + std::to_string(seeds) + " seeds synchronize";
            std::string statement, theory, criterion, verdict;
            if (!radius) {
              statement = "Theorem 3.1(a), " + scheme_label(s) + ": synchronization for almost every uniform start";
              measured += " (1 - min cos < 1e-6 at t = " + num(t_end) + "); largest 1 - min cos " + num(worst_gap, 3);
              if (undecided) measured += "; " + std::to_string(undecided) + " still converging (horizon too short)";
              if (failed) measured += "; " + std::to_string(failed) + " runs ended early (" + first_failure + ")";
              theory = "every seed synchronizes";
              criterion = "all seeds synchronize; inconclusive if the others still contract 10x over the second half";
              verdict = failed || stalled ? "fails" : undecided ? "inconclusive" : "holds";
            } else {
              statement =
                  "Theorem 3.1(b), " + scheme_label(s) + ": from Gaussian tokens, synchronization or a stalling radius";
              measured += " (1 - min cos < 1e-4 at t = " + num(t_end) +
                          " and halving since t = " + num(times[times.size() / 2], 3) + ", or below " +
                          num(kRoundOffGap) + "), " + std::to_string(stalled) +
                          " stall (min_j dr_j/dt < 1e-3 at t = " + num(t_end) + "), " + std::to_string(undecided) +
                          " neither; smallest final radial speed " + num(lowest_speed, 3);
              if (settled > 0.0) measured += " (measured after the switch at t = " + num(settled) + ")";
              if (failed) measured += "; " + std::to_string(failed) + " runs ended early (" + first_failure + ")";
              theory = "each seed synchronizes or stalls";
              criterion = "every seed classified; inconclusive if some seed is neither by t = " + num(t_end);
              verdict = failed ? "fails" : undecided ? "inconclusive" : "holds";
            }
            statement += " (n = " + std::to_string(n) + ", d = " + std::to_string(d) + ", beta = " + num(beta) + ")";
            b.row({"3.1-sync-" + scheme_tag(s) + suffix, statement,
                   "normdyn run with " + scheme_settings(s) + ", model.n = " + std::to_string(n) +
                       ", model.d = " + std::to_string(d) + ", model.beta = " + num(beta) + ", init.kind = \"" +
                       std::string(radius ? "gaussian" : "uniform") + "\", solver.t_end = " + num(t_end) +
                       ", solver.rtol = 1e-10, init.seed = 1.." + std::to_string(seeds),
                   measured, theory, criterion, verdict});
          }
        });
  }

  // ---- (a) with V = QᵀK symmetric positive definite.
  b.study("theorem 3.1: synchronization with V = Q^T K symmetric positive definite", [&] {
    const Index n = 8, d = 3;
    const double beta = 1.0;
    const int seeds = o.quick ? 3 : 8;
    for (const Scheme& s : {Scheme{PostLN{}}, Scheme{NGPT{}}, Scheme{LNScaling{}}}) {
      const double t_end = horizon_for_clock(s, 60.0);
      const std::vector<double> times = linear_times(t_end, 40);
      int synchronized = 0, undecided = 0, other = 0;
      double worst_gap = 0.0, worst_eigen = 0.0;
      for (int seed = 1; seed <= seeds; ++seed) {
        const RowMatrix bqk = positive_definite_qk(d, std::uint64_t(100 + seed));
        const ParticleRun run = run_particles(engine, dynamics_spec(s, beta, 1), qk_equals_v(bqk),
                                              uniform_tokens(n, d, 1.0, std::uint64_t(seed)), times, 1e-10, 1e-12);
        if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
          ++other;
          continue;
        }
        const Tokens& last = run.frames.back();
        const double gap = 1.0 - min_cosine(last.theta);
        const double gap_half = 1.0 - min_cosine(run.frames[times.size() / 2].theta);
        // The consensus point θ̄ is a fixed point only if it is an eigenvector of B: |P_θ̄ B θ̄| = 0.
        Eigen::RowVectorXd mean = last.theta.colwise().mean();
        mean.normalize();
        const Eigen::RowVectorXd bm = mean * bqk.transpose();
        const double eigen = (bm - bm.dot(mean) * mean).norm() / bm.norm();
        worst_gap = std::max(worst_gap, gap);
        if (gap < 1e-6 && eigen < 1e-5)
          ++synchronized, worst_eigen = std::max(worst_eigen, eigen);
        else if (gap < 0.1 * gap_half)
          ++undecided;
        else
          ++other;
      }
      b.row({"3.1-sync-qk-" + scheme_tag(s),
             "Theorem 3.1(a) with V = Q^T K symmetric positive definite (a gradient flow of sum exp(beta <Q theta_j, K "
             "theta_k>)), " +
                 scheme_label(s) +
                 ": synchronization for almost every uniform start, at an eigenvector of Q^T K "
                 "(n = 8, d = 3, beta = 1)",
             "normdyn run with " + scheme_settings(s) +
                 ", model.n = 8, model.d = 3, model.beta = 1, model.qkv = \"file\" "
                 "holding Q = I, K = V = I + S/(2|S|) (S the symmetric part of a Gaussian matrix, seeds 101.." +
                 std::to_string(100 + seeds) + "), init.kind = \"uniform\", init.seed = 1.." + std::to_string(seeds) +
                 ", solver.t_end = " + num(t_end),
             std::to_string(synchronized) + "/" + std::to_string(seeds) +
                 " seeds synchronize (1 - min cos < 1e-6 at t = " + num(t_end) +
                 ") at an eigenvector (|P B theta| / |B theta| < 1e-5, largest " + num(worst_eigen, 3) +
                 "); largest 1 - min cos " + num(worst_gap, 3) +
                 (undecided ? "; " + std::to_string(undecided) + " still converging" : std::string()),
             "every seed synchronizes", "all seeds; inconclusive if the others still contract 10x over the second half",
             other       ? "fails"
             : undecided ? "inconclusive"
                         : "holds"});
    }
  });

  // ---- The Corollary: n ≤ e^β, Pre- and Peri-LN from Gaussian tokens.
  struct Small {
    Index n, d;
    double beta;
  };
  for (const Small& p : {Small{4, 3, 2.0}, Small{8, 3, 3.0}}) {
    const int seeds = o.quick ? 3 : 10;
    const double bound = analysis::corollary_radial_bound(double(p.n), p.beta);
    const std::string where = "n = " + std::to_string(p.n) + ", d = " + std::to_string(p.d) + ", beta = " + num(p.beta);
    const std::string suffix = "-n" + std::to_string(p.n) + "-beta" + num(p.beta);
    b.study("corollary of theorem 3.1 (" + where + ")", [&] {
      for (const Scheme& s : {Scheme{PreLN{}}, Scheme{PeriLN{}}}) {
        // The radii grow like t, so the directions move on a ln t clock: a saddle (two opposite
        // clusters) is left only after many units of ln t. At n = 8, beta = 3, four of ten seeds were
        // still two opposite clusters at t = 1e30 (69 units; 1 - min cos 1.5 to 1.96) and all had
        // merged by t = 1e114; t = 1e200 is 460 units, at most 2860 steps (the adaptive steps grow with
        // t), and leaves the radii (about t) far from overflow.
        const std::vector<double> times = log_times(0.01, kCorollaryHorizon, 160);
        int synchronized = 0;
        double lowest_alignment = std::numeric_limits<double>::infinity(), lowest_speed = lowest_alignment,
               worst_gap = 0.0;
        double worst_gap_half = 0.0;  // the worst seed's 1 - min cos halfway in ln t
        std::string problem;
        for (int seed = 1; seed <= seeds; ++seed) {
          const ParticleRun run = run_particles(engine, dynamics_spec(s, p.beta, 1), QkvSource::identity(),
                                                gaussian_tokens(p.n, p.d, std::uint64_t(seed)), times, 1e-10, 1e-12);
          if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
            // Both rows fail on it; the other seeds would not change that.
            problem = "seed " + std::to_string(seed) + ": " + run_ending(run);
            break;
          }
          for (std::size_t i = 0; i < run.frames.size(); ++i) {
            const Tokens& f = run.frames[i];
            const RowMatrix a = reference_attention(f.theta, p.beta);
            for (Index j = 0; j < p.n; ++j) lowest_alignment = std::min(lowest_alignment, f.theta.row(j).dot(a.row(j)));
            lowest_speed =
                std::min(lowest_speed, min_radial_speed(engine, s, p.beta, QkvSource::identity(), f, times[i]));
          }
          const double gap = 1.0 - min_cosine(run.frames.back().theta);
          if (gap > worst_gap)
            worst_gap = gap, worst_gap_half = 1.0 - min_cosine(run.frames[run.frames.size() / 2].theta);
          synchronized += gap < 1e-4;
        }
        const std::string cmd = "normdyn run with " + scheme_settings(s) + ", model.n = " + std::to_string(p.n) +
                                ", model.d = " + std::to_string(p.d) + ", model.beta = " + num(p.beta) +
                                ", init.kind = \"gaussian\", init.seed = 1.." + std::to_string(seeds) +
                                ", solver.t_end = " + num(kCorollaryHorizon) + ", output.log_times = [0.01, " +
                                num(kCorollaryHorizon) + ", 160]";
        b.row({"3.1-corollary-sync-" + scheme_tag(s) + suffix,
               "Corollary of Theorem 3.1, " + scheme_label(s) + ": if n <= e^beta, every start synchronizes (" + where +
                   ")",
               cmd,
               problem.empty() ? std::to_string(synchronized) + "/" + std::to_string(seeds) +
                                     " seeds synchronize (1 - min cos < 1e-4 at t = " + num(kCorollaryHorizon) +
                                     "); largest 1 - min cos " + num(worst_gap, 3) +
                                     (synchronized < seeds ? " (that seed's at t = " + num(times[times.size() / 2], 3) +
                                                                 ": " + num(worst_gap_half, 3) + ")"
                                                           : std::string())
                               : "a run ended early (" + problem + ")",
               "every seed synchronizes",
               "all seeds; a seed still apart at the horizon is not a counterexample (the statement is about t -> "
               "infinity, and the directions move on a ln t clock): inconclusive",
               !problem.empty()        ? "fails"
               : synchronized == seeds ? "holds"
                                       : "inconclusive"});
        b.row({"3.1-radial-bound-" + scheme_tag(s) + suffix,
               "Corollary of Theorem 3.1, " + scheme_label(s) +
                   ": if n <= e^beta, <theta_j, A_j> >= (e^beta - n + 1)/(n e^beta) "
                   "along the flow, hence dr_j/dt >= that bound (" +
                   where + ")",
               cmd + "; <theta_j, A_j> from the frames, dr_j/dt from the dynamics at the frames",
               problem.empty() ? "min over seeds, tokens and frames: <theta_j, A_j> " + num(lowest_alignment, 6) +
                                     ", dr_j/dt " + num(lowest_speed, 6)
                               : "a run ended early (" + problem + ")",
               ">= " + num(bound, 6), "both >= theory",
               problem.empty() && lowest_alignment >= bound && lowest_speed >= bound ? "holds" : "fails"});
      }
    });
  }
}

}  // namespace normdyn::studies
