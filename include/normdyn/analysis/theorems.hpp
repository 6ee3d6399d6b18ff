#pragma once
// The facts of spec section 4 as checks of a run: each gives the theory's value beside the measured
// one and whether they agree under a stated criterion. Pure functions over per-frame series and the
// run's typed configuration; checks whose hypotheses the run does not meet are listed as skipped,
// with the reason.
//
//   theorem_4_1_initial_slope   orthonormal start, Q=K=V=I, d ≥ n: dγ/dt(0) in closed form, against the
//                               slope from the run's velocity at t = 0 (or, without it, a polynomial
//                               derivative through the first frames of the mean cosine)
//   theorem_4_1_symmetry        same start: all pairwise cosines stay equal (max spread over frames)
//   theorem_4_1_decay_rate      same start: 1 − γ decays like e^{−2t} (post), C/t² (pre, mix, peri),
//                               e^{−2αt} (ngpt, constant α), e^{−4α√t} (ngpt, α_t = α/√(1+t)),
//                               C e^{−4√t} (cod): law chosen automatically and parameter within 5%
//   theorem_4_2_attention_at_start  uniform start, β = 1, Q=K=V=I: max_j |A_j(0)| ≤ C (sqrt(log n / n)
//                               + log n / d), with C = 1 declared here (the theorem leaves C open)
//   theorem_4_3_variance_scale  Q=K=V=I, start with all cosines ≥ 1 − δ, δ < 1/(100 n² max(β,1)²):
//                               −dVar/dt / Var ∝ 1/scale(t), scale ∝ t^m with m = 0 (post), 1 (pre,
//                               mix, peri), 1/2 (cod), alpha_decay (ngpt): fitted m within 0.1
//   theorem_4_3_radial_growth   same hypotheses, pre / peri: r_j(t) − r_j(0) ≥ (1 − δ) t
//   corollary_radial_lower_bound  pre / peri, Q=K=V=I, n ≤ e^β: <θ_j, A_j> ≥ (e^β − n + 1)/(n e^β)
//   energy_monotonicity         Q=K=V=I: the interaction energy never decreases (relative tolerance)
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/analysis/rates.hpp"
#include "normdyn/config.hpp"

namespace normdyn::analysis {

// ---- The theory's values.
// Theorem 4.1: dγ/dt(0) = (1/s_j + 1/s_k)/(e^β + n − 1) at the symmetric start (radii r0).
double initial_slope_theory(const Scheme& scheme, double n, double beta, double r0);
// Theorem 4.1, t → ∞: the law and parameter of 1 − γ, or nothing if it is none of the three laws.
struct ExpectedDecay {
  DecayLaw law = DecayLaw::exponential;
  double parameter = 0.0;
};
std::optional<ExpectedDecay> symmetric_decay_theory(const Scheme& scheme);
// Theorem 4.3: scale(t) of dVar/dt = −Θ(Var / scale(t)) and its exponent m (scale ∝ t^m for large t).
double variance_scale(const Scheme& scheme, double t);
double variance_scale_exponent(const Scheme& scheme);
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
std::optional<Derivative> derivative_at_start(std::span<const double> t, std::span<const double> y, std::size_t points = 5);

// Theorem 4.3: the rate k = −d ln Var/dt (differences of consecutive frames, at their midpoints) over
// the later half of the usable frames (Var > floor), and the exponent m of k ∝ t^{−m} fitted there;
// q = k · scale(t) is the Θ(1) factor of the theorem (→ 2 near consensus).
struct ScaleFit {
  bool ok = false;
  std::string problem;
  double exponent = 0.0;
  double exponent_stderr = 0.0;
  double q_min = 0.0, q_max = 0.0;
  double t_start = 0.0, t_end = 0.0;
  std::size_t points = 0;
};
ScaleFit fit_variance_scale(std::span<const double> t, std::span<const double> variance, const Scheme& scheme,
                            double floor);

// ---- The checks of one run.
struct Check {
  std::string name;
  std::string statement;  // what the theory says, in words
  std::string criterion;  // how "ok" is decided
  double theory = 0.0;
  double measured = 0.0;
  bool ok = false;
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

// Per-frame series of a run (empty or NaN where not measured).
struct RunSeries {
  std::vector<double> t;
  std::vector<double> one_minus_mean_cosine;
  std::vector<double> one_minus_min_cosine;
  std::vector<double> variance;
  std::vector<double> normalized_energy;
  std::vector<double> min_radial_alignment;  // min_j <θ_j, A_j>; empty if not computed
  std::vector<double> min_radius_growth;     // min_j (r_j(t) − r_j(0))
  double max_attention_at_start = std::numeric_limits<double>::quiet_NaN();   // max_j |A_j(0)|
  double initial_slope_velocity = std::numeric_limits<double>::quiet_NaN();  // dγ/dt(0) from the velocity
};

struct CheckOptions {
  double slope_tolerance = 1e-8;       // relative, slope from the velocity at t = 0 (a closed-form identity)
  double frame_slope_accuracy = 1e-2;  // relative, slope from the first frames (when the velocity is not
                                       // available): also the largest usable error estimate
  double frame_slope_span = 0.05;      // ... used only if γ changes by at most this over the first 5 frames
  double symmetry_tolerance = 1e-6;  // absolute spread of 1 − cosine
  double rate_tolerance = 0.05;      // relative
  double exponent_tolerance = 0.1;   // absolute, Theorem 4.3's m
  double energy_tolerance = 1e-6;    // relative decrease between consecutive frames
  double attention_constant = 1.0;   // C of Theorem 4.2
  RateFitOptions rate;               // the fit behind theorem_4_1_decay_rate (law and window: automatic)
};

Checks theorem_checks(const RunConfig& config, const RunSeries& series, const CheckOptions& options = {});

}  // namespace normdyn::analysis
