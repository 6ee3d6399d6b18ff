#pragma once
// The facts of spec section 4 as checks of a run: each gives the theory's value beside the measured
// one and whether they agree under a stated criterion. Pure functions over per-frame series and a
// small context describing the run (CheckContext); the checks are the entries of one list
// (theorem_check_list), each with its hypotheses over the context, and checks whose hypotheses the
// run does not meet are listed as skipped, with the reason.
//
// Everything scheme-specific comes from the scheme's header through one generic path (scheme.hpp,
// SchemeTheory): speed() and radial_rate() at the state in question, and the optional theory().
// A scheme that declares no theory is skipped by the checks that need one, with that reason.
//
//   theorem_4_1_initial_slope   orthonormal start, QᵀK = I, V = I, d ≥ n: dγ/dt(0) = 2 w/s with
//                               s = speed() at the symmetric start, w = 1/(e^β + n − 1); `discrete`
//                               runs: the exact change of γ over the first layer (the header's
//                               layer map) against the first frame-to-frame difference
//   theorem_4_1_symmetry        same start: all pairwise cosines stay equal (max spread over frames)
//   theorem_4_1_decay_rate      same start: 1 − γ ~ C exp(−2 T(t)), T = ∫ dt/s along the run's own
//                               trajectory (s = speed() at the run's γ and radius): the slope of
//                               ln(1 − γ) against 2T in the last regime is 1 within 5%, with a
//                               resolution of 8% (asymptotic_verdict); covers every scheme, nGPT's
//                               schedules included
//   theorem_4_2_attention_at_start  uniform start, β = 1, max(‖QᵀK‖, ‖V‖) ≤ 1 at t = 0:
//                               max_j |A_j(0)| ≤ C (sqrt(log n / n) + log n / d), C = 1 declared here
//   theorem_4_3_variance_scale  V = I, ‖QᵀK‖ ≤ 1, start with all cosines ≥ 1 − δ, δ < 1/(100 n² max(β,1)²):
//                               q(t) = (−d ln Var/dt) · scale(t) is Θ(1), scale = speed() near
//                               consensus with the run's radius: fitted exponent of q ∝ t^b within 0.1 of 0
//   theorem_4_3_radial_growth   same hypotheses, schemes whose theory declares radial_growth:
//                               r_j(t) − r_j(0) ≥ (1 − δ) t
//   corollary_radial_lower_bound  theory declares radial_alignment_bound, QᵀK = V = I, n ≤ e^β:
//                               <θ_j, A_j> ≥ (e^β − n + 1)/(n e^β)
//   energy_monotonicity         QᵀK symmetric and V = QᵀK: the interaction energy never decreases
//
// Each check has an outcome: ok, fail, or not_asymptotic (an asymptotic statement the run is too
// short to decide: see asymptotic_verdict).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "normdyn/analysis/rates.hpp"
#include "normdyn/config.hpp"
#include "normdyn/schemes.hpp"

namespace normdyn::analysis {

// ---- The theory's values (from the scheme's header).
// The token context of a symmetric configuration (pairwise cosine γ, radius r, QᵀK = V = I, time t):
// <θ_j, A_j> and |A_j| in closed form.
TokenContext symmetric_context(double n, double beta, double gamma, double r, double t);
// The speed factor s_j at the symmetric start (orthonormal tokens, radii r0, QᵀK = V = I).
double symmetric_start_speed(const Scheme& scheme, double n, double beta, double r0);
// Theorem 4.1: dγ/dt(0) = (1/s_j + 1/s_k)/(e^β + n − 1) at the symmetric start (radii r0).
double initial_slope_theory(const Scheme& scheme, double n, double beta, double r0);
// The same start after one discrete layer of step h (the header's layer map): (γ(h) − γ(0)) / h.
double initial_layer_slope_theory(const Scheme& scheme, double n, double beta, double r0, double h);
// The speed factor at a symmetric configuration with pairwise cosine γ and radius r, at time t.
double symmetric_speed(const Scheme& scheme, double n, double beta, double gamma, double r, double t);
// Theorem 4.1, t → ∞: the named law and parameter of 1 − γ the scheme declares, or nothing (no
// theory, or a law that is none of the three the rate fit knows).
struct ExpectedDecay {
  DecayLaw law = DecayLaw::exponential;
  double parameter = 0.0;
};
std::optional<ExpectedDecay> symmetric_decay_theory(const Scheme& scheme);
// Theorem 4.3: scale(t) of dVar/dt = −Θ(Var / scale(t)): the speed factor near consensus
// (<θ_j, A_j> = |A_j| = 1) at radius r.
double variance_scale(const Scheme& scheme, double t, double r = 1.0);
// Theorem 4.3's hypothesis: δ < 1/(100 n² max(β, 1)²).
double theorem_4_3_delta_bound(double n, double beta);
// Corollary of Theorem 3.1: (e^β − n + 1)/(n e^β).
double corollary_radial_bound(double n, double beta);
// Theorem 4.2: sqrt(log n / n) + log n / d, and its hypothesis e^{√d} ≥ n log n ≥ d.
double attention_bound(double n, double d);
bool attention_bound_hypotheses(double n, double d);

// ---- Measurements.
// dy/dt at t[0] from the interpolating polynomial through the first `points` frames (at most 5),
// with the difference to one degree lower as its error estimate.
struct Derivative {
  double value = 0.0;
  double error = 0.0;
};
std::optional<Derivative> derivative_at_start(std::span<const double> t, std::span<const double> y,
                                              std::size_t points = 5);

// Theorem 4.3: the rate k = −d ln Var/dt (differences of consecutive frames, at their midpoints) over
// the later half of the usable frames (Var > floor), and the exponent m of k ∝ t^{−m} fitted there;
// q = k · scale(t) is the Θ(1) factor of the theorem (→ 2 near consensus); q_exponent is b of
// q ∝ t^b over the same frames (0 when the theorem holds), q_exponent_late the same over its later half.
struct ScaleFit {
  bool ok = false;
  std::string problem;
  double exponent = 0.0;
  double exponent_stderr = 0.0;
  double q_exponent = 0.0;
  double q_exponent_stderr = 0.0;
  double q_exponent_late = 0.0;
  double scale_exponent = 0.0;  // d ln scale / d ln t between the window's ends
  double q_min = 0.0, q_max = 0.0;
  double t_start = 0.0, t_end = 0.0;
  std::size_t points = 0;
};
// `radius`: the run's mean radius per frame (empty: 1).
ScaleFit fit_variance_scale(std::span<const double> t, std::span<const double> variance, std::span<const double> radius,
                            const Scheme& scheme, double floor);
// The same with a given scale(t, r) (e.g. the theorem's stated scale instead of the header's speed).
ScaleFit fit_variance_scale(std::span<const double> t, std::span<const double> variance, std::span<const double> radius,
                            const std::function<double(double t, double r)>& scale, double floor);

// ---- Asymptotic statements.
// Theorem 4.1's laws and Theorem 4.3's scale are statements about t → ∞, measured on a finite run:
// the exponent is fitted over two windows, an early and a late one, and their difference u bounds
// how far the late value may still move. Everything relative to |claim| (absolute when claim = 0):
//   ok              |late − claim| <= tolerance and tolerance + u <= resolution: the measurement
//                   would have seen the exponent change by `resolution` (so a rate 9 % off cannot pass
//                   with resolution < 9 %)
//   fail            |late − claim| > tolerance + u: the measurement separates the claim from what it
//                   saw, even allowing for the drift
//   not_asymptotic  otherwise: the run cannot yet tell the claim from a change of `resolution`
enum class Outcome { ok, fail, not_asymptotic };
std::string_view to_string(Outcome o) noexcept;

struct AsymptoticVerdict {
  Outcome outcome = Outcome::fail;
  double deviation = 0.0;   // |late − claim|, relative
  double drift = 0.0;       // u = |late − early|, relative
  double detectable = 0.0;  // tolerance + u: the smallest relative change the measurement resolves
};
AsymptoticVerdict asymptotic_verdict(double claim, double early, double late, double tolerance, double resolution);

// ---- The checks of one run.
// A check is one entry of a list (theorem_check_list): its name, the theorem it checks, its
// hypotheses (predicates over a small context describing the run: scheme, β, n, d, attention,
// start, horizon, traits) and a function computing its verdict from the per-frame series. A check
// whose hypotheses fail is skipped with the first unmet hypothesis as the reason; adding a check is
// adding one entry.

struct Check {
  std::string name;
  std::string theorem;    // the statement of the paper it checks ("Theorem 4.1", ...)
  std::string statement;  // what the theory says, in words
  std::string criterion;  // how "ok" is decided
  double theory = 0.0;
  double measured = 0.0;
  bool ok = false;  // outcome == ok
  Outcome outcome = Outcome::fail;
  std::vector<std::pair<std::string, double>> details;
  std::string note;
};

struct SkippedCheck {
  std::string name;
  std::string reason;
};

struct Checks {
  std::vector<Check> checks;
  std::vector<SkippedCheck> skipped;
};

// The attention matrices over the run, as far as the theorems' hypotheses need them (2-norms).
struct AttentionNorms {
  double qk_norm_at_start = 1.0;       // ‖QᵀK‖ at t = 0
  double v_norm_at_start = 1.0;        // ‖V‖ at t = 0
  double max_qk_norm = 1.0;            // max over the run's layers
  double max_qk_minus_identity = 0.0;  // max ‖QᵀK − I‖
  double max_v_minus_identity = 0.0;   // max ‖V − I‖
  double max_energy_asymmetry = 0.0;   // max (‖QᵀK − KᵀQ‖ + ‖V − QᵀK‖): 0 for a gradient flow of E
  static AttentionNorms identity() { return {}; }
};

// Structural properties of the attention that theorems assume, beyond its matrices. The defaults are
// those of softmax self-attention over all tokens; an attention variant (a mask, another normalizer)
// states which it breaks, and the checks that need them are skipped with the reason.
struct AttentionTraits {
  // Permuting the tokens permutes the flow (no mask, no positional term): a symmetric start stays
  // symmetric (Theorem 4.1), and the tokens' statistics do not depend on their order.
  bool exchangeable = true;
  // With QᵀK symmetric and V = QᵀK the flow is a gradient flow of E = Σ_jk exp(β <Qθ_j, Kθ_k>) (with a
  // positive metric): energy monotonicity and the synchronization argument of Theorem 3.1.
  bool energy_gradient = true;
};

// What the hypotheses are decided on: a small description of the run (not its configuration).
struct CheckContext {
  Scheme scheme = PostLN{};
  double n = 2.0;
  double d = 2.0;
  double beta = 1.0;
  QkvKind qkv = QkvKind::identity;
  AttentionNorms attention;           // measured over the run's layers
  InitKind init = InitKind::uniform;  // the start
  double r0 = 1.0;                    // radii at the start (orthonormal, uniform and cap starts)
  double horizon = 0.0;               // solver.t_end
  bool discrete = false;              // discrete layers (solver.method = "discrete") of step layer_step
  double layer_step = 0.0;
  AttentionTraits traits;
  // Non-empty when the attention is not the paper's (a mask, a bias, another normalizer): why every
  // check is skipped, naming the setting (e.g. `attention.mask = "causal": tokens are not exchangeable`).
  std::string attention_outside_paper;
  double norm_tolerance = 1e-12;  // slack on the norm bounds of the hypotheses
};
// The context of a run of `config` whose attention matrices have the norms `attention`.
CheckContext check_context(const RunConfig& config, const AttentionNorms& attention);

// Per-frame series of a run, as the theorem checks need them (empty or NaN where not measured).
struct CheckSeries {
  std::vector<double> t;
  std::vector<double> one_minus_mean_cosine;
  std::vector<double> one_minus_min_cosine;
  std::vector<double> variance;
  std::vector<double> normalized_energy;
  std::vector<double> min_radial_alignment;                                  // min_j <θ_j, A_j>; empty if not computed
  std::vector<double> min_radius_growth;                                     // min_j (r_j(t) − r_j(0))
  std::vector<double> mean_radius;                                           // empty: r0 throughout
  AttentionNorms attention;                                                  // Q = K = V = I unless set
  double max_attention_at_start = std::numeric_limits<double>::quiet_NaN();  // max_j |A_j(0)|
  double initial_slope_velocity = std::numeric_limits<double>::quiet_NaN();  // dγ/dt(0) from the velocity
                                                                             // (continuous runs only)
};

struct CheckOptions {
  double slope_tolerance = 1e-8;       // relative, slope from the velocity at t = 0 or from the first layer
                                       // of a discrete run (closed-form identities)
  double frame_slope_accuracy = 1e-2;  // relative, slope from the first frames (when the velocity is not
                                       // available): also the largest usable error estimate
  double frame_slope_span = 0.05;      // ... used only if γ changes by at most this over the first 5 frames
  double symmetry_tolerance = 1e-6;    // absolute spread of 1 − cosine
  double rate_tolerance = 0.05;        // relative, Theorem 4.1's decay
  double rate_resolution = 0.08;       // relative: Theorem 4.1's decay passes only if the run resolves this change
  double exponent_tolerance = 0.1;     // absolute, Theorem 4.3's b
  double energy_tolerance = 1e-6;      // relative decrease between consecutive frames
  double attention_constant = 1.0;     // C of Theorem 4.2
  RateFitOptions rate;                 // floor and window of theorem_4_1_decay_rate
};

// A hypothesis: why the context does not meet it, or nothing when it does.
using Hypothesis = std::function<std::optional<std::string>(const CheckContext&)>;

struct CheckInput {
  const CheckContext& context;
  const CheckSeries& series;
  const CheckOptions& options;
};
// A check's verdict, or (the series cannot decide it: too few frames, a quantity not computed) why not.
struct Undecided {
  std::string reason;
};
using CheckResult = std::variant<Check, Undecided>;

struct TheoremCheck {
  std::string name;
  std::string theorem;
  std::vector<Hypothesis> hypotheses;  // in order; the first unmet one is the reason for skipping
  std::function<CheckResult(const CheckInput&)> verdict;
};

// Every check, in report order.
const std::vector<TheoremCheck>& theorem_check_list();

// Runs every check of the list on one run.
Checks theorem_checks(const CheckContext& context, const CheckSeries& series, const CheckOptions& options = {});
// The same with the context of `config` and the series' attention norms.
Checks theorem_checks(const RunConfig& config, const CheckSeries& series, const CheckOptions& options = {});

}  // namespace normdyn::analysis
