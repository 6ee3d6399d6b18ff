#include "normdyn/studies/reproduce.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "normdyn/analysis/symmetric_ode.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/studies/attention.hpp"
#include "normdyn/studies/symmetric.hpp"
#include "normdyn/version.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {

// The spec's closed forms of Theorem 4.1's initial slope, written out per scheme (independent of
// the headers' speed(), which the reduced ODE uses).
static double closed_form_slope(const Scheme& s, double n, double beta, double r0) {
  const double e = std::exp(beta);
  const double plain = 2.0 / (e + n - 1.0);
  const double unit = 2.0 / std::sqrt(e * e + n - 1.0);
  return std::visit(
      [&](const auto& x) -> double {
        using S = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<S, PreLN>) return plain / r0;
        else if constexpr (std::is_same_v<S, MixLN>) return x.tau > 0.0 ? plain : plain / r0;
        else if constexpr (std::is_same_v<S, PeriLN>) return unit / r0;
        else if constexpr (std::is_same_v<S, NGPT>) return x.alpha_at(0.0) * unit;
        else return plain;
      },
      s);
}

// ---- Theorem 4.1: the reduced ODE, its initial slopes, its terminal laws and the particles.
void theorem_4_1(Builder& b) {
  Reproduction& r = b.report();
  const ReproduceOptions& o = b.options();
  const double n = 256.0, beta = 5.0, r0 = 1.0, t_end = 100.0;  // the figure's horizon
  SymmetricStudyRequest request;
  request.n = n;
  request.beta = beta;
  request.r0 = r0;
  request.t_end = t_end;
  request.samples = 1000;
  SymmetricStudy study;
  b.study("theorem 4.1: reduced ODE (n = 256, beta = 5, t <= 100)", [&] {
    study = symmetric_study(request);
    r.symmetric = to_json(study);
  });
  const std::vector<Scheme> schemes = symmetric_study_schemes(request);
  // The terminal laws need a longer horizon than the figure (Pre-LN's exponent is still 10% off at t = 100).
  SymmetricStudyRequest long_request = request;
  long_request.t_end = 1000.0;
  long_request.samples = 2000;
  const std::string law_cmd = "normdyn study symmetric --n 256 --beta 5 --t-end 1000 --samples 2000";
  SymmetricStudy long_study;
  b.study("theorem 4.1: reduced ODE to t = 1000 (terminal laws)", [&] { long_study = symmetric_study(long_request); });

  // Initial slopes: the reduced ODE's dγ/dt(0) and the particle velocity at t = 0 against the
  // closed forms.
  b.study("theorem 4.1: initial slopes (particles at n = d = 256)", [&] {
    for (const Scheme& s : schemes) {
      const std::string key(scheme_key(s));
      const double theory = closed_form_slope(s, n, beta, r0);
      const DynamicsSpec spec = dynamics_spec(s, beta, o.threads);
      AttentionDynamics dyn(spec, QkvSource::identity(), Index(n), Index(n));
      const Tokens x = orthonormal_tokens(Index(n), Index(n), r0, 1);
      RowMatrix dtheta(x.n(), x.d());
      Vector dr(x.n());
      dyn.velocity(x.theta, x.r, 0.0, 0.0, dtheta, dr);
      const double particle = dtheta.row(0).dot(x.theta.row(1)) + x.theta.row(0).dot(dtheta.row(1));
      const double ode = study.schemes.at(key).dgamma_dt.front();
      const double err = std::max(std::abs(particle - theory), std::abs(ode - theory)) / theory;
      b.row({"4.1-slope-" + key, "Theorem 4.1, " + scheme_title(s) + ": dgamma/dt(0) = (1/s_j + 1/s_k)/(e^beta + n - 1)",
             "normdyn study symmetric --n 256 --beta 5 --t-end 1 --samples 1 (dgamma/dt at t = 0)",
             "reduced ODE " + num(ode, 12) + ", particle velocity " + num(particle, 12) + " (n = d = 256)",
             num(theory, 12) + " (closed form)", "relative deviation of both <= 1e-10 (measured " + num(err, 3) + ")",
             err <= 1e-10 ? "holds" : "fails"});
    }
  });

  // Terminal laws from the reduced ODE at long times, with the constant of the leading term.
  for (const Scheme& s : schemes) {
    const std::string key(scheme_key(s));
    const analysis::SymmetricTrajectory& tr = long_study.schemes.at(key);
    const double horizon = long_request.t_end;
    std::vector<double> x = tr.t;  // the clock of the law
    std::string law, clock;
    double rate = 0.0;
    const auto& theory = scheme_theory(s);
    if (!theory) continue;
    std::visit(
        [&](const auto& sch) {
          using S = std::decay_t<decltype(sch)>;
          if constexpr (std::is_same_v<S, MixLN>) {
            for (double& v : x) v = std::log(std::max(v - sch.tau + r0, 1e-300));
            law = "C/(t - tau + r0)^2";
            clock = "ln(t - tau + r0)";
          } else if constexpr (std::is_same_v<S, NGPT>) {
            law = "C exp(-2 alpha t) (alpha = " + num(sch.alpha) + ")";
            clock = "t";
          }
        },
        s);
    if (theory->symmetric_law == "exponential") {
      rate = -theory->symmetric_parameter;
      if (law.empty()) law = "C exp(-" + num(theory->symmetric_parameter) + " t)", clock = "t";
    } else if (theory->symmetric_law == "power") {
      rate = -theory->symmetric_parameter;
      if (law.empty()) {
        for (double& v : x) v = std::log(std::max(v + r0, 1e-300));
        law = "C/(t + r0)^" + num(theory->symmetric_parameter);
        clock = "ln(t + r0)";
      }
    } else if (theory->symmetric_law == "stretched_exponential") {
      for (double& v : x) v = std::sqrt(v + 1.0);
      rate = -theory->symmetric_parameter;
      law = "C exp(-" + num(theory->symmetric_parameter) + " sqrt(t + 1))";
      clock = "sqrt(t + 1)";
    } else {
      continue;
    }
    // Two windows, [T/4, T/2] and [T/2, T]: the exponent of the later one decides; a change toward
    // the theory between them that leaves it outside the tolerance means the horizon is too short.
    auto clock_at = [&](double t) {
      for (std::size_t i = 0; i < tr.t.size(); ++i)
        if (tr.t[i] >= t) return x[i];
      return x.back();
    };
    const double early = log_slope(x, tr.log_one_minus_gamma, clock_at(horizon / 4), clock_at(horizon / 2));
    const double late = log_slope(x, tr.log_one_minus_gamma, clock_at(horizon / 2), clock_at(horizon));
    const double c_late = std::exp(tr.log_one_minus_gamma.back() - rate * x.back());
    std::size_t mid = 0;
    while (mid + 1 < tr.t.size() && tr.t[mid] < horizon / 2) ++mid;
    const double c_mid = std::exp(tr.log_one_minus_gamma[mid] - rate * x[mid]);
    const double rel = std::abs(late - rate) / std::abs(rate);
    std::string verdict = rel <= 0.05 ? "holds" : "fails";
    std::string note;
    if (verdict == "fails" && std::abs(late - rate) < std::abs(early - rate)) {
      verdict = "inconclusive";
      note = "; the exponent still moves toward the theory (" + num(early, 4) + " on [T/4, T/2]): horizon too short";
    }
    b.row({"4.1-law-" + key, "Theorem 4.1, " + scheme_title(s) + ": 1 - gamma ~ " + law + " as t -> infinity",
           law_cmd, "slope of ln(1 - gamma) against " + clock + " on [T/2, T], T = " + num(horizon) + ": " + num(late, 5) +
               " (on [T/4, T/2]: " + num(early, 5) + "); leading constant C = " + num(c_late, 5) + " at T, " +
               num(c_mid, 5) + " at T/2" + note,
           num(rate) + " (C not given by the theorem)", "relative deviation of the slope <= 5% (measured " +
               num(100 * rel, 3) + "%)",
           verdict});
  }

  // The particles against the reduced ODE.
  const Index np = o.quick ? 32 : 256;
  const std::vector<double> times{0.0, 1.0, 2.0, 4.0, 8.0};
  b.study("theorem 4.1: particles against the reduced ODE (n = d = " + std::to_string(np) + ")", [&] {
    for (const Scheme& s : schemes) {
      const std::string key(scheme_key(s));
      const DynamicsSpec spec = dynamics_spec(s, beta, o.threads);
      AttentionDynamics dyn(spec, QkvSource::identity(), np, np);
      const ParticleRun run = run_particles(dyn, orthonormal_tokens(np, np, r0, 3), times, 1e-11, 1e-13);
      const analysis::SymmetricTrajectory red =
          analysis::symmetric_trajectory(s, {double(np), beta, r0, 1e-4}, times);
      double err = 0.0, rerr = 0.0;
      for (std::size_t i = 0; i < run.frames.size(); ++i) {
        err = std::max(err, std::abs(mean_cosine(run.frames[i].theta) - red.gamma[i]));
        rerr = std::max(rerr, std::abs(run.frames[i].r.mean() - red.r[i]) / red.r[i]);
      }
      const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
      b.row({"4.1-particles-" + key,
             "Theorem 4.1, " + scheme_title(s) + ": from orthonormal tokens the n-particle flow follows the scalar ODE",
             "normdyn study symmetric --n " + std::to_string(np) + " --beta 5 --t-end 8 --samples 8, against "
             "normdyn run with model.n = model.d = " + std::to_string(np) + ", init.kind = \"orthonormal\"",
             complete ? "max |gamma_particles - gamma_ODE| = " + num(err, 3) + ", max relative radius deviation " +
                            num(rerr, 3) + " at t = 0, 1, 2, 4, 8 (n = d = " + std::to_string(np) + ", beta = 5, rtol 1e-11)"
                      : "the particle run ended with status " + std::string(to_string(run.status)),
             "0 (an exact reduction)", "both <= 1e-7", complete && err <= 1e-7 && rerr <= 1e-7 ? "holds" : "fails"});
    }
  });
}

// ---- Corollary of Theorem 3.1: <θ_j, A_j> ≥ (e^β − n + 1)/(n e^β) along Pre- and Peri-LN when n ≤ e^β.
void radial_lower_bound(Builder& b) {
  const ReproduceOptions& o = b.options();
  const Index n = 8, d = 3;
  const double beta = 3.0;  // e^3 ≈ 20 ≥ n
  const int seeds = o.quick ? 3 : 10;
  const double t_end = o.quick ? 20.0 : 50.0;
  const double bound = analysis::corollary_radial_bound(double(n), beta);
  b.study("corollary of theorem 3.1: radial lower bound", [&] {
    for_each_scheme([&](auto scheme) {
      const Scheme s = scheme;
      const auto th = scheme_theory(s);
      if (!th || !th->radial_alignment_bound) return;
      const std::string key(scheme_key(s));
      std::vector<double> times;
      for (int i = 0; i <= 100; ++i) times.push_back(t_end * i / 100.0);
      double lowest = std::numeric_limits<double>::infinity();
      std::string problem;
      for (int seed = 1; seed <= seeds; ++seed) {
        const DynamicsSpec spec = dynamics_spec(s, beta, 1);
        AttentionDynamics dyn(spec, QkvSource::identity(), n, d);
        const ParticleRun run = run_particles(dyn, gaussian_tokens(n, d, std::uint64_t(seed)), times, 1e-9, 1e-11);
        if (run.status != RunStatus::ok) problem = "seed " + std::to_string(seed) + ": " + std::string(to_string(run.status));
        for (const Tokens& f : run.frames) {
          const RowMatrix& a = dyn.attention(f.theta, 0.0);
          for (Index j = 0; j < n; ++j) lowest = std::min(lowest, f.theta.row(j).dot(a.row(j)));
        }
      }
      b.row({"3.1-radial-bound-" + key,
             "Corollary of Theorem 3.1, " + scheme_title(s) + ": if n <= e^beta, <theta_j, A_j> >= (e^beta - n + 1)/(n e^beta) along the flow",
             "normdyn run with model.scheme = \"" + key + "\", model.n = 8, model.d = 3, model.beta = 3, init.kind = "
             "\"gaussian\", seeds 1.." + std::to_string(seeds) + ", t <= " + num(t_end) + " (101 frames)",
             problem.empty() ? "min over seeds, tokens and frames: " + num(lowest, 6)
                             : "a run ended early (" + problem + "); min over the frames recorded: " + num(lowest, 6),
             ">= " + num(bound, 6), "measured >= theory", problem.empty() && lowest >= bound ? "holds" : "fails"});
    });
  });
}

// ---- Theorem 3.1: synchronization over seeds (n = 8, d = 3, beta = 1, Q = K = V = I).
static double min_cosine(const RowMatrix& theta) {
  const RowMatrix g = theta * theta.transpose();
  double lo = 1.0;
  for (Index j = 0; j < g.rows(); ++j)
    for (Index k = j + 1; k < g.cols(); ++k) lo = std::min(lo, g(j, k));
  return lo;
}

void theorem_3_1(Builder& b) {
  const ReproduceOptions& o = b.options();
  // A small scan of sizes; the first is the reference size (rows without a size suffix).
  struct Size {
    Index n, d;
    double beta;
  };
  const std::vector<Size> sizes = o.quick ? std::vector<Size>{{8, 3, 1.0}, {16, 3, 1.0}, {8, 5, 2.0}}
                                          : std::vector<Size>{{8, 3, 1.0}, {16, 3, 1.0}, {32, 3, 1.0}, {8, 5, 2.0}, {16, 8, 2.0}};
  for (const Size& size : sizes) {
    const Index n = size.n, d = size.d;
    const double beta = size.beta;
    const bool reference = &size == &sizes.front();
    const int seeds = o.quick ? (reference ? 4 : 2) : (reference ? 16 : 8);
    const std::string suffix =
        reference ? "" : "-n" + std::to_string(n) + "-d" + std::to_string(d) + "-beta" + num(beta);
    b.study("theorem 3.1: synchronization over seeds (n = " + std::to_string(n) + ", d = " + std::to_string(d) +
                ", beta = " + num(beta) + ")", [&] {
      for_each_scheme([&](auto scheme) {
        const Scheme s = scheme;
        const std::string key(scheme_key(s));
        const bool radius = scheme_has_radius(s);
        // Post-LN, nGPT: t = 40; LN-Scaling is Post-LN at time 2(sqrt(t+1) - 1): t = 440 reaches 40.
        // Radius schemes converge polynomially: t = 200.
        const double t_end = radius ? 200.0 : (key == "cod" ? 440.0 : 40.0);
        std::vector<double> times;
        for (int i = 0; i <= 40; ++i) times.push_back(t_end * i / 40.0);
        int synchronized = 0, stalled = 0, undecided = 0, failed = 0;
        double worst_gap = 0.0, lowest_speed = std::numeric_limits<double>::infinity();
        for (int seed = 1; seed <= seeds; ++seed) {
          const DynamicsSpec spec = dynamics_spec(s, beta, 1);
          AttentionDynamics dyn(spec, QkvSource::identity(), n, d);
          const Tokens start = radius ? gaussian_tokens(n, d, std::uint64_t(seed)) : uniform_tokens(n, d, 1.0, std::uint64_t(seed));
          const ParticleRun run = run_particles(dyn, start, times, 1e-10, 1e-12);
          if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
            ++failed;
            continue;
          }
          const Tokens& last = run.frames.back();
          const double gap = 1.0 - min_cosine(last.theta);
          const double gap_half = 1.0 - min_cosine(run.frames[times.size() / 2].theta);
          worst_gap = std::max(worst_gap, gap);
          if (!radius) {
            if (gap < 1e-6) ++synchronized;
            else if (gap < 0.1 * gap_half) ++undecided;
            else ++stalled;  // not synchronizing and not converging: a counterexample
            continue;
          }
          // The stall diagnostic: the smallest radial speed dr_j/dt at the end.
          const RowMatrix& a = dyn.attention(last.theta, t_end);
          double speed = std::numeric_limits<double>::infinity();
          for (Index j = 0; j < n; ++j) {
            TokenContext c;
            c.t = c.t_regime = t_end;
            c.r = last.r(j);
            c.theta_dot_a = last.theta.row(j).dot(a.row(j));
            c.a_norm = a.row(j).norm();
            speed = std::min(speed, scheme_radial_rate(s, c));
          }
          lowest_speed = std::min(lowest_speed, speed);
          if (gap < 1e-2 && gap < 0.5 * gap_half) ++synchronized;
          else if (speed < 1e-3) ++stalled;
          else ++undecided;
        }
        std::string measured = std::to_string(synchronized) + "/" + std::to_string(seeds) + " seeds synchronize";
        std::string statement, theory, criterion, verdict;
        if (!radius) {
          statement = "Theorem 3.1, " + scheme_title(s) + ": synchronization for almost every uniform start";
          measured += " (1 - min cos < 1e-6 at t = " + num(t_end) + "); largest 1 - min cos " + num(worst_gap, 3);
          if (undecided) measured += "; " + std::to_string(undecided) + " still converging (horizon too short)";
          if (failed) measured += "; " + std::to_string(failed) + " runs ended early";
          theory = "every seed synchronizes";
          criterion = "all seeds synchronize; inconclusive if the others still contract 10x over the second half";
          verdict = failed || stalled ? "fails" : undecided ? "inconclusive" : "holds";
        } else {
          statement = "Theorem 3.1, " + scheme_title(s) + ": from Gaussian tokens, synchronization or a stalling radius";
          measured += " (1 - min cos < 1e-2 at t = " + num(t_end) + " and halving over the second half), " +
                      std::to_string(stalled) + " stall (min_j dr_j/dt < 1e-3), " + std::to_string(undecided) +
                      " neither (slow synchronization not yet below the threshold); smallest final radial speed " +
                      num(lowest_speed, 3);
          if (failed) measured += "; " + std::to_string(failed) + " runs ended early";
          theory = "each seed synchronizes or stalls";
          criterion = "every seed classified; inconclusive if some seed is neither by t = " + num(t_end);
          verdict = failed ? "fails" : undecided ? "inconclusive" : "holds";
        }
        statement += " (n = " + std::to_string(n) + ", d = " + std::to_string(d) + ", beta = " + num(beta) + ")";
        b.row({"3.1-sync-" + key + suffix, statement,
               "normdyn run with model.scheme = \"" + key + "\", model.n = " + std::to_string(n) + ", model.d = " +
                   std::to_string(d) + ", model.beta = " + num(beta) + ", init.kind = \"" +
                   std::string(radius ? "gaussian" : "uniform") + "\", solver.t_end = " + num(t_end) + ", init.seed = 1.." +
                   std::to_string(seeds),
               measured, theory, criterion, verdict});
      });
    });
  }
}

// ---- Theorem 4.3 from a cap start (n = 4, d = 3, beta = 1): Q = K = V = I, and Gaussian Q, K scaled
// to |Q^T K| = 1 with V = I (QkvSource::gaussian_unit_norm, drawn from the start's seed).
void theorem_4_3(Builder& b) {
  const ReproduceOptions& o = b.options();
  const Index n = 4, d = 3;
  const double beta = 1.0;
  const double delta = 0.8 * analysis::theorem_4_3_delta_bound(double(n), beta);
  const int seeds = o.quick ? 1 : 4;
  for (const bool random_qk : {false, true})
    b.study(random_qk ? "theorem 4.3: variance decay from a cap start, random Q, K with |Q^T K| = 1, V = I"
                      : "theorem 4.3: variance decay from a cap start", [&] {
      const std::string tag = random_qk ? "random-qk-" : "";
      const std::string qkv_text = random_qk ? ", Q, K from model.qkv = \"gaussian_unit_norm\" (model.qkv_seed = init.seed) "
                                               "with V replaced by I, as a model.qkv = \"file\"" : "";
      for_each_scheme([&](auto scheme) {
        const Scheme s = scheme;
        const auto theory = scheme_theory(s);
        if (!theory) return;
        const std::string key(scheme_key(s));
        const bool radius = scheme_has_radius(s);
        // Exponential laws reach the variance floor by t ~ 10; LN-Scaling by t ~ 30; polynomial ones never.
        const double t_end = radius ? 200.0 : (key == "cod" ? 100.0 : 20.0);
        std::vector<double> times;
        for (int i = 0; i <= 200; ++i) times.push_back(t_end * i / 200.0);
        double worst = 0.0, worst_late = 0.0, growth_margin = std::numeric_limits<double>::infinity();
        std::string problem;
        for (int seed = 1; seed <= seeds; ++seed) {
          const DynamicsSpec spec = dynamics_spec(s, beta, 1);
          AttentionDynamics dyn(spec, random_qk ? QkvSource::gaussian_unit_norm(d, std::uint64_t(seed), true) : QkvSource::identity(),
                                n, d);
          const Tokens start = cap_tokens(n, d, 1.0, delta, std::uint64_t(seed));
          const ParticleRun run = run_particles(dyn, start, times, 1e-12, 1e-16);
          if (run.status != RunStatus::ok || run.frames.size() != times.size()) {
            problem = "seed " + std::to_string(seed) + " ended with status " + std::string(to_string(run.status));
            continue;
          }
          std::vector<double> var, rad;
          for (std::size_t i = 0; i < run.frames.size(); ++i) {
            const Tokens& f = run.frames[i];
            var.push_back(1.0 - f.theta.colwise().mean().squaredNorm());
            rad.push_back(f.r.mean());
            if (radius && theory->radial_growth && i > 0)
              growth_margin = std::min(growth_margin, (f.r - start.r).minCoeff() / ((1.0 - delta) * times[i]));
          }
          const analysis::ScaleFit f = analysis::fit_variance_scale(times, var, rad, s, 1e-12);
          if (!f.ok) {
            problem = "seed " + std::to_string(seed) + ": " + f.problem;
            continue;
          }
          if (std::abs(f.q_exponent) >= std::abs(worst)) worst = f.q_exponent, worst_late = f.q_exponent_late;
        }
        const bool close = std::abs(worst) <= 0.1;
        const bool drifting = std::isfinite(worst_late) && std::abs(worst_late - worst) > 0.1;
        const std::string cmd = "normdyn run with model.scheme = \"" + key +
                                "\", model.n = 4, model.d = 3, model.beta = 1, init.kind = \"cap\", init.delta = " +
                                num(delta) + ", solver.t_end = " + num(t_end) + ", init.seed = 1.." + std::to_string(seeds) +
                                qkv_text + ", then normdyn analyze (theorem_4_3_variance_scale)";
        const std::string with = random_qk ? " (Gaussian Q, K scaled to |Q^T K| = 1, V = I)" : "";
        b.row({"4.3-scale-" + tag + key,
               "Theorem 4.3, " + scheme_title(s) + with + ": dVar/dt = -Theta(Var / scale(t)) from a cap start (scale = the speed factor near consensus)",
               cmd,
               problem.empty() ? "exponent b of q = (-d ln Var/dt) scale(t) ~ t^b, worst over " + std::to_string(seeds) +
                                     " seed(s): " + num(worst, 3) + " (later half of the window: " + num(worst_late, 3) + ")"
                               : problem,
               "b = 0 (q = Theta(1))", "|b| <= 0.1; inconclusive if b is outside and still moves by more than 0.1",
               !problem.empty() ? "fails" : close ? "holds" : drifting ? "inconclusive" : "fails"});
        if (radius && theory->radial_growth)
          b.row({"4.3-radius-" + tag + key, "Theorem 4.3, " + scheme_title(s) + with + ": r_j(t) - r_j(0) >= (1 - delta) t from a cap start",
                 cmd, problem.empty() ? "min over seeds, tokens and frames t > 0 of (r_j(t) - r_j(0)) / ((1 - delta) t): " + num(growth_margin, 6)
                                      : problem,
                 ">= 1", "measured >= 1", problem.empty() && growth_margin >= 1.0 ? "holds" : "fails"});
      });
    });
}

// ---- Theorem 4.2 over a grid of (n, d): Q = K = V = I, and Gaussian Q, K, V scaled to |Q^T K| = |V| = 1.
void theorem_4_2(Builder& b) {
  Reproduction& r = b.report();
  const ReproduceOptions& o = b.options();
  for (const bool unit_norm : {false, true}) {
    AttentionStudyRequest request;
    if (o.quick) {
      request.n = {64, 256};
      request.d = {16, 64};
      request.seeds = 2;
    }
    request.threads = o.threads;
    request.unit_norm_qkv = unit_norm;
    std::vector<AttentionStudyRow> rows;
    b.study(unit_norm ? "theorem 4.2: attention at a uniform start, random Q, K, V of norm 1"
                      : "theorem 4.2: attention at a uniform start",
            [&] { rows = attention_study(request); });
    double hi = 0.0, lo = std::numeric_limits<double>::infinity();
    int with_hyp = 0;
    // Scaling: the log-log slope of max|A| against the bound over the grid.
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    nlohmann::json grid = nlohmann::json::array();
    for (const auto& row : rows) {
      const double ratio = row.max_attention_max / row.bound;
      grid.push_back({{"n", row.n}, {"d", row.d}, {"hypotheses", row.hypotheses}, {"max_attention", row.max_attention_max},
                      {"bound", row.bound}, {"ratio", ratio}});
      if (!row.hypotheses) continue;
      ++with_hyp;
      hi = std::max(hi, ratio);
      lo = std::min(lo, ratio);
      const double lx = std::log(row.bound), ly = std::log(row.max_attention_max);
      sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m += 1;
    }
    if (!unit_norm) r.attention = grid;  // the figure's grid
    const double slope = m >= 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : std::numeric_limits<double>::quiet_NaN();
    std::string ns, ds;
    for (auto v : request.n) ns += (ns.empty() ? "" : ",") + std::to_string(v);
    for (auto v : request.d) ds += (ds.empty() ? "" : ",") + std::to_string(v);
    b.row({unit_norm ? "4.2-random-unit-norm" : "4.2-identity",
           std::string("Theorem 4.2 (beta = 1, ") +
               (unit_norm ? "Gaussian Q, K, V scaled to |Q^T K| = |V| = 1" : "Q = K = V = I") +
               ", uniform start, e^sqrt(d) >= n log n >= d): max_j |A_j(0)| <= C (sqrt(log n/n) + log n/d)",
           "normdyn study theorem-4.2 --n " + ns + " --d " + ds + " --seeds " + std::to_string(request.seeds) +
               (unit_norm ? " --qkv gaussian_unit_norm" : ""),
           with_hyp ? "ratio max|A|/bound in [" + num(lo, 4) + ", " + num(hi, 4) + "] over the " + std::to_string(with_hyp) +
                          " grid points meeting the hypotheses; log-log slope of max|A| against the bound " + num(slope, 3)
                    : "no grid point meets the hypotheses",
           "C not given by the theorem; C = 1 is the check the analysis declares; slope 1 if the bound is tight",
           "largest ratio <= 1", with_hyp == 0 ? "inconclusive" : (hi <= 1.0 ? "holds" : "fails")});
  }
}


Reproduction reproduce(const ReproduceOptions& options) {
  Reproduction r;
  r.quick = options.quick;
  Builder b(r, options);
  for (const auto study : kReproductionStudies) study(b);
  const std::vector<std::string> not_measured = {
      "Continuum limits: the mean-field grid order is measured for Post-LN only; the (phi, r) grid of the radius "
      "schemes is checked by the test suite (tests/solvers/study_meanfield_limits.cpp), not here.",
  };
  r.not_measured.insert(r.not_measured.end(), not_measured.begin(), not_measured.end());
  return r;
}

bool any_failed(const Reproduction& r) {
  return std::any_of(r.rows.begin(), r.rows.end(), [](const ReproductionRow& row) { return row.verdict == "fails"; });
}

nlohmann::json to_json(const Reproduction& r) {
  nlohmann::json j;
  j["normdyn"] = {{"version", std::string(version())}, {"revision", std::string(revision())},
                  {"compiler", std::string(compiler())}, {"build_type", std::string(build_type())}};
  j["quick"] = r.quick;
  j["command"] = r.quick ? "normdyn reproduce --quick" : "normdyn reproduce";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"id", row.id}, {"statement", row.statement}, {"command", row.command}, {"measured", row.measured},
                    {"theory", row.theory}, {"criterion", row.criterion}, {"verdict", row.verdict}});
  j["rows"] = rows;
  nlohmann::json t = nlohmann::json::array();
  for (const auto& s : r.timings) t.push_back({{"study", s.name}, {"wall_seconds", s.seconds}});
  j["timings"] = t;
  j["not_measured"] = r.not_measured;
  j["theorem_4_2_grid"] = r.attention;
  return j;
}

std::string to_markdown(const Reproduction& r, const std::vector<std::string>& figures, const std::string& figure_note) {
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string md = "# Reproduction of \"Normalization in Attention Dynamics\" (arXiv:2510.22026)\n\n";
  md += std::string("Generated by `") + (r.quick ? "normdyn reproduce --quick" : "normdyn reproduce") + "`, normdyn " +
        std::string(version()) + ", revision " + std::string(revision()) + " (" + std::string(compiler()) + ", " +
        std::string(build_type()) + ")" + (r.quick ? ". **Quick sizes**: see the commands of each row." : ".") + "\n\n";
  int counts[4] = {0, 0, 0, 0};
  for (const auto& row : r.rows)
    counts[row.verdict == "holds" ? 0 : row.verdict == "fails" ? 1 : row.verdict == "inconclusive" ? 2 : 3]++;
  md += std::to_string(r.rows.size()) + " rows: " + std::to_string(counts[0]) + " hold, " + std::to_string(counts[1]) +
        " fail, " + std::to_string(counts[2]) + " inconclusive, " + std::to_string(counts[3]) + " differ.\n\n";
  md += "| id | statement | measured | theory | criterion | verdict |\n|---|---|---|---|---|---|\n";
  for (const auto& row : r.rows)
    md += "| " + cell(row.id) + " | " + cell(row.statement) + " | " + cell(row.measured) + " | " + cell(row.theory) +
          " | " + cell(row.criterion) + " | **" + row.verdict + "** |\n";
  md += "\n## Commands of the rows\n\n";
  for (const auto& row : r.rows) md += "* `" + row.id + "`: `" + row.command + "`\n";
  md += "\n## Not measured\n\n";
  for (const auto& s : r.not_measured) md += "* " + s + "\n";
  md += "\n## Wall time of each study\n\n| study | seconds |\n|---|---|\n";
  for (const auto& s : r.timings) md += "| " + cell(s.name) + " | " + num(s.seconds, 3) + " |\n";
  md += "\n## Figures\n\n";
  for (const auto& f : figures) md += "![" + f + "](" + f + ")\n\n";
  if (!figure_note.empty()) md += figure_note + "\n";
  return md;
}

}  // namespace normdyn::studies
