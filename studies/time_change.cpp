// ---- Time changes (spec 4.2): if t(σ) is increasing, θ(t(σ)) solves the NA equation with speed
// s(t(σ))/t'(σ). Each row runs the engine twice from the same start and compares the directions at
// corresponding times; the time maps are written out here, not taken from the scheme headers.
//
// * 4.2-time-change-cod-*: LN-Scaling at t equals Post-LN at 2(sqrt(t + 1) − 1).
// * 4.2-time-change-ngpt-*: nGPT with α_t at t equals nGPT with α ≡ 1 at ∫_0^t α_s ds.
// * 4.2-mix-post-phase: Mix-LN up to τ equals Post-LN, radii unchanged (its Post-LN phase, where
//   dr/dt = 0 by construction: not a stalling radius).
// * 4.2-mix-pre-phase: Mix-LN after τ equals Pre-LN started from Mix-LN's state at τ.
// * 4.2-radius-scaling-*: Pre- and Peri-LN are invariant under (r, t) → (λ r, λ t): from radii λ r(0)
//   the directions at λ t are those from r(0) at t, and the radii λ r(t).
#include <cmath>

#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"
#include "stated_theory.hpp"

namespace normdyn::studies {
namespace {

constexpr double kRtol = 1e-11, kAtol = 1e-13;
// Two integrations of the same flow at rtol 1e-11 agree to ~1e-9 over these horizons.
constexpr double kAgreement = 1e-7;

struct Start {
  Index n, d;
  double beta;
  std::uint64_t seed;
};

std::string start_text(const Start& s) {
  return "n = " + std::to_string(s.n) + ", d = " + std::to_string(s.d) + ", beta = " + num(s.beta) + ", seed " +
         std::to_string(s.seed);
}

std::string suffix(const Start& s) {
  return "-n" + std::to_string(s.n) + "-d" + std::to_string(s.d) + "-beta" + num(s.beta);
}

struct Comparison {
  std::string problem;
  double directions = 0.0;  // max over sample times and tokens of |θ_a − θ_b|
  double radii = 0.0;       // max relative radius difference
};

// Runs `a` at times `ta` from `start_a` and `b` at times `tb` from `start_b`, and compares frame
// `skip + i` of a with frame i of b; the radii of b are compared after multiplying by `radius_factor`.
Comparison compare_runs(const Engine& engine, const Scheme& a, const Tokens& start_a, const std::vector<double>& ta,
                        const Scheme& b, const Tokens& start_b, const std::vector<double>& tb, double beta,
                        double radius_factor = 1.0, std::size_t skip = 0) {
  Comparison c;
  const ParticleRun ra =
      run_particles(engine, dynamics_spec(a, beta, 1), QkvSource::identity(), start_a, ta, kRtol, kAtol);
  const ParticleRun rb =
      run_particles(engine, dynamics_spec(b, beta, 1), QkvSource::identity(), start_b, tb, kRtol, kAtol);
  if (ra.status != RunStatus::ok || ra.frames.size() != ta.size() || rb.status != RunStatus::ok ||
      rb.frames.size() != tb.size()) {
    c.problem =
        "a run ended early (" + std::string(to_string(ra.status)) + ", " + std::string(to_string(rb.status)) + ")";
    return c;
  }
  for (std::size_t i = 0; i < tb.size() && skip + i < ta.size(); ++i) {
    const Tokens& x = ra.frames[skip + i];
    const Tokens& y = rb.frames[i];
    c.directions = std::max(c.directions, direction_distance(x, y));
    c.radii = std::max(c.radii, ((x.r - radius_factor * y.r).array().abs() / x.r.array()).maxCoeff());
  }
  return c;
}

std::string list(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : ", ") + num(x, 6);
  return s;
}

}  // namespace

void time_change(Builder& b) {
  const Engine& engine = b.engine();
  const std::vector<Start> starts = {{8, 3, 1.0, 1}, {16, 4, 2.0, 2}};
  const std::vector<double> times{0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0};

  b.study("time changes: LN-Scaling and nGPT against Post-LN and nGPT with alpha = 1", [&] {
    for (const Start& st : starts) {
      const Tokens start = uniform_tokens(st.n, st.d, 1.0, st.seed);
      // LN-Scaling at t = Post-LN at 2(sqrt(t + 1) − 1).
      std::vector<double> post_times;
      for (double t : times) post_times.push_back(2.0 * (std::sqrt(t + 1.0) - 1.0));
      const Comparison cod = compare_runs(engine, LNScaling{}, start, times, PostLN{}, start, post_times, st.beta);
      b.row({"4.2-time-change-cod" + suffix(st),
             "Time change (spec 4.2): LN-Scaling at time t equals Post-LN at time 2(sqrt(t + 1) - 1) from the same "
             "start (" +
                 start_text(st) + ", uniform directions)",
             "normdyn run with model.scheme = \"cod\" at t = " + list(times) +
                 " and with model.scheme = \"post\" at t = " + list(post_times) + ", model.n = " +
                 std::to_string(st.n) + ", model.d = " + std::to_string(st.d) + ", model.beta = " + num(st.beta) +
                 ", init.kind = \"uniform\", init.seed = " + std::to_string(st.seed) + ", solver.rtol = 1e-11",
             cod.problem.empty() ? "max over the times and tokens of |theta_cod(t) - theta_post(2(sqrt(t+1) - 1))| = " +
                                       num(cod.directions, 3)
                                 : cod.problem,
             "0", "<= " + num(kAgreement), cod.problem.empty() && cod.directions <= kAgreement ? "holds" : "fails"});

      // nGPT with α_t at t = nGPT with α = 1 at ∫α.
      for (const NGPT& g : {NGPT{0.5, 0.0}, NGPT{2.0, 0.5}, NGPT{0.75, 1.0}}) {
        std::vector<double> unit_times;
        for (double t : times) unit_times.push_back(integrated_alpha(g, t));
        const Comparison c = compare_runs(engine, g, start, times, NGPT{1.0, 0.0}, start, unit_times, st.beta);
        b.row({"4.2-time-change-" + scheme_tag(g) + suffix(st),
               "Time change (spec 4.2): " + scheme_label(g) +
                   " at time t equals nGPT with alpha = 1 at time int_0^t alpha_s ds "
                   "from the same start (" +
                   start_text(st) + ", uniform directions)",
               "normdyn run with " + scheme_settings(g) + " at t = " + list(times) +
                   " and with model.scheme = \"ngpt\", model.alpha = 1 at t = " + list(unit_times) + ", model.n = " +
                   std::to_string(st.n) + ", model.d = " + std::to_string(st.d) + ", model.beta = " + num(st.beta) +
                   ", init.kind = \"uniform\", init.seed = " + std::to_string(st.seed) + ", solver.rtol = 1e-11",
               c.problem.empty()
                   ? "max over the times and tokens of |theta_alpha(t) - theta_1(int alpha)| = " + num(c.directions, 3)
                   : c.problem,
               "0", "<= " + num(kAgreement), c.problem.empty() && c.directions <= kAgreement ? "holds" : "fails"});
      }
    }
  });

  b.study("time changes: Mix-LN's two phases, and the radius scaling of Pre- and Peri-LN", [&] {
    for (const Start& st : starts) {
      // Gaussian tokens: radii |g_j| differ between tokens, so a radius-dependent speed would show.
      const Tokens start = gaussian_tokens(st.n, st.d, st.seed);
      const double tau = 3.0;
      const MixLN mix{tau};
      // Up to τ: Post-LN, radii frozen.
      const std::vector<double> before{0.0, 0.5, 1.0, 2.0, tau};
      const Comparison post = compare_runs(engine, mix, start, before, PostLN{}, start, before, st.beta);
      b.row({"4.2-mix-post-phase" + suffix(st),
             "Mix-LN (tau = 3) for t <= tau is Post-LN: the directions follow Post-LN and every radius stays r_j(0) "
             "(dr/dt = 0 by construction in this phase: no radius stall) (" +
                 start_text(st) + ", Gaussian tokens)",
             "normdyn run with model.scheme = \"mix\", model.tau = 3 and with model.scheme = \"post\", model.n = " +
                 std::to_string(st.n) + ", model.d = " + std::to_string(st.d) + ", model.beta = " + num(st.beta) +
                 ", init.kind = \"gaussian\", init.seed = " + std::to_string(st.seed) +
                 ", frames at t = " + list(before),
             post.problem.empty() ? "max |theta_mix - theta_post| = " + num(post.directions, 3) +
                                        ", max relative change of a radius " + num(post.radii, 3)
                                  : post.problem,
             "0 and 0", "both <= " + num(kAgreement),
             post.problem.empty() && post.directions <= kAgreement && post.radii <= kAgreement ? "holds" : "fails"});
      // After τ: Pre-LN from Mix-LN's state at τ.
      const ParticleRun at_tau =
          run_particles(engine, dynamics_spec(mix, st.beta, 1), QkvSource::identity(), start, {0.0, tau}, kRtol, kAtol);
      Comparison pre;
      const std::vector<double> shifted{0.0, 1.0, 5.0, 20.0};  // t − τ
      std::vector<double> mix_times{0.0};                      // the start, then τ + shifted
      for (double t : shifted) mix_times.push_back(tau + t);
      if (at_tau.status != RunStatus::ok || at_tau.frames.size() != 2)
        pre.problem = "the run to tau ended with status " + std::string(to_string(at_tau.status));
      else
        pre = compare_runs(engine, mix, start, mix_times, PreLN{}, at_tau.frames.back(), shifted, st.beta, 1.0, 1);
      b.row({"4.2-mix-pre-phase" + suffix(st),
             "Mix-LN (tau = 3) for t > tau is Pre-LN started from its state at tau (" + start_text(st) +
                 ", Gaussian tokens)",
             "normdyn run with model.scheme = \"mix\", model.tau = 3 to t = 23, and normdyn run with model.scheme = "
             "\"pre\" "
             "from its frame at t = 3 (init.kind = \"file\"), frames at t - tau = " +
                 list(shifted),
             pre.problem.empty() ? "max |theta_mix(t) - theta_pre(t - tau)| = " + num(pre.directions, 3) +
                                       ", max relative radius difference " + num(pre.radii, 3)
                                 : pre.problem,
             "0 and 0", "both <= " + num(kAgreement),
             pre.problem.empty() && pre.directions <= kAgreement && pre.radii <= kAgreement ? "holds" : "fails"});

      // (r, t) → (λ r, λ t) with λ = 2 (r0 ≠ 1 on both sides).
      const double lambda = 2.0;
      Tokens scaled = start;
      scaled.r *= lambda;
      const std::vector<double> t1{0.0, 1.0, 3.0, 10.0, 30.0};
      std::vector<double> t2;
      for (double t : t1) t2.push_back(lambda * t);
      for (const Scheme& s : {Scheme{PreLN{}}, Scheme{PeriLN{}}}) {
        const Comparison c = compare_runs(engine, s, scaled, t2, s, start, t1, st.beta, lambda);
        b.row({"4.2-radius-scaling-" + scheme_tag(s) + suffix(st),
               "Time change (spec 4.2), " + scheme_label(s) +
                   ": from radii 2 r(0) the directions at time 2t are those "
                   "from r(0) at t, and the radii 2 r(t) (" +
                   start_text(st) + ", Gaussian tokens)",
               "normdyn run with " + scheme_settings(s) + ", model.n = " + std::to_string(st.n) +
                   ", model.d = " + std::to_string(st.d) + ", model.beta = " + num(st.beta) +
                   ", init.kind = \"gaussian\", init.seed = " + std::to_string(st.seed) + " at t = " + list(t1) +
                   ", and from the same tokens with radii doubled at t = " + list(t2),
               c.problem.empty() ? "max |theta(2t; 2r0) - theta(t; r0)| = " + num(c.directions, 3) +
                                       ", max relative |r(2t; 2r0) - 2 r(t; r0)| = " + num(c.radii, 3)
                                 : c.problem,
               "0 and 0", "both <= " + num(kAgreement),
               c.problem.empty() && c.directions <= kAgreement && c.radii <= kAgreement ? "holds" : "fails"});
      }
    }
  });
}

}  // namespace normdyn::studies
