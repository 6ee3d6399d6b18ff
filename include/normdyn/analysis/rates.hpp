#pragma once
// Late-time decay rates. Pure functions over a series (t_i, y_i) with y_i > 0 decaying to 0.
//
// Three laws, each a straight line in ln y:
//   exponential            y = c e^{−λ t}      ln y = ln c − λ t
//   power                  y = c t^{−p}        ln y = ln c − p ln t
//   stretched_exponential  y = c e^{−κ √t}     ln y = ln c − κ √t
// fitted by linear least squares of ln y over a late window (relative errors weigh equally).
//
// Window (automatic): the last regime the series reaches. Usable frames have t > 0, t > `after`
// (the last merge of clusters, given by the caller) and y above `floor`, up to the first frame that
// is not; trailing frames where y has stopped falling at a round-off level (below 1e-8 of the
// window's largest y) are dropped. For each law the local parameter −d ln y / d g(t) (central
// differences over a few frames) is computed; the law's steady stretch is the longest final run of
// frames where it stays within `steady_tolerance` (relative) of its value at the end. The window is
// the steady stretch of the chosen law; or it is given.
//
// Law (automatic): the one whose steady stretch covers the largest decay of ln y: the local
// exponent's stability, not the RSS. It is clearly preferred when its decay exceeds that of every
// other law by the factor `preference`. Or the law is given.
//
// Origin. A late window is not yet asymptotic: a shift of the time origin (Pre-LN on the symmetric
// start has 1 − γ ≈ C/(t + t₀)²) biases a plain power or stretched-exponential fit by O(t₀/t). With
// `correction` (default) the chosen law is refitted as a function of t + t₀ with t₀ fitted too
// (bounded, −0.9 t_start < t₀ ≤ t_end); the shifted fit is kept only if its parameter is positive and
// its residual smaller, so it never flips the sign (an exponential needs none: a shift only
// rescales c). `systematic` is how much the parameter moves when the window is halved (its later half).
//
// Problem. `problem` is empty only for a fit one can cite: y falls by at least `min_decay` over the
// window, the parameter is positive and moves by at most `stability_tolerance` (relative) when the
// window is halved, the law is clearly preferred and the residuals are small. Otherwise it is one
// of these tokens (kProblemTokens), with a sentence in `detail`:
//   too_short       fewer usable frames than needed, or the last regime decays by less than min_decay
//   no_decay        the series does not decay in its last regime (nothing to fit)
//   metastable      the series decayed and then stopped, or the run ends with several clusters
//   noisy           the local exponent of no law is steady, or the residuals are large
//   law_ambiguous   another law describes the window almost as well
//   unstable        the parameter changes by more than stability_tolerance when the window is halved
//   not_positive    the fitted parameter is not positive
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace normdyn::analysis {

enum class DecayLaw { exponential, power, stretched_exponential };

std::string_view to_string(DecayLaw law) noexcept;
std::optional<DecayLaw> decay_law_from_string(std::string_view s) noexcept;
// The regressor g(t) of the law (t, ln t or √t) and the correction term h(t) (none, 1/t, 1/√t).
double law_regressor(DecayLaw law, double t);
std::optional<double> law_correction(DecayLaw law, double t);
// c e^{−θ g(t) + a h(t)}: the fitted curve.
// c e^{−θ g(t + origin)}; `correction` is kept for old reports (always 0 now).
double law_value(DecayLaw law, double log_c, double parameter, double correction, double t, double origin = 0.0);

// The problem tokens, in the order of precedence, for documentation and validation.
inline constexpr std::string_view kProblemTokens[] = {"too_short",     "no_decay", "metastable",  "noisy",
                                                      "law_ambiguous", "unstable", "not_positive"};

struct TimeWindow {
  double t_start = 0.0;
  double t_end = 0.0;
};

struct RateFitOptions {
  std::optional<DecayLaw> law;       // nothing: automatic
  std::optional<TimeWindow> window;  // nothing: automatic
  double late_fraction = 0.5;        // forced law without a steady stretch: this fraction of the usable range
  double floor = 1e-12;              // y ≤ floor is unusable
  bool correction = true;            // fit the origin shift t₀
  std::size_t min_points = 5;
  double after = -1e300;              // automatic window: only frames after this time (the last merge)
  std::size_t final_clusters = 0;     // clusters at the last frame (0: unknown)
  double steady_tolerance = 0.05;     // relative band of the local exponent in a steady stretch
  double min_decay = 10.0;            // citable: y falls by at least this factor over the window
  double stability_tolerance = 0.05;  // citable: relative change of the parameter under halving the window
  double preference = 1.5;            // citable: the law's steady decay (in ln y) exceeds the others' by this
  double noise_tolerance = 0.02;      // citable: rms residual of ln y at most this fraction of its decay
};

// A two-parameter (plain) or three-parameter (corrected) least-squares fit of one law.
struct LawFit {
  DecayLaw law = DecayLaw::exponential;
  double parameter = 0.0;  // λ, p or κ
  double parameter_stderr = 0.0;
  double log_c = 0.0;
  double correction = 0.0;  // coefficient a of the correction term (0 for a plain fit)
  double rss = 0.0;         // residual sum of squares of ln y
  double r_squared = 0.0;
  std::size_t points = 0;
};

struct RateFit {
  bool ok = false;      // a fit was computed (parameter and window are set)
  std::string problem;  // empty: citable; else a token of kProblemTokens
  std::string detail;   // the problem in a sentence
  bool citable() const { return ok && problem.empty(); }
  double origin = 0.0;                 // fitted shift t₀ of the time origin (0: none)
  double half_window_parameter = 0.0;  // the same fit over the later half of the window (NaN: too few points)
  double steady_decay = 0.0;           // ln y covered by the chosen law's steady stretch
  double runner_up_decay = 0.0;        // the same for the next best law
  DecayLaw law = DecayLaw::exponential;
  bool law_automatic = true;
  bool corrected = false;  // `parameter` comes from the origin-shifted fit
  double parameter = 0.0;
  double parameter_stderr = 0.0;
  double systematic = 0.0;  // NaN if the later half of the window has too few points
  double log_c = 0.0;
  double correction = 0.0;
  LawFit uncorrected;              // the plain fit of the chosen law
  std::vector<LawFit> candidates;  // plain fits of all three laws over the window
  TimeWindow window;               // the window used (times of its first and last frame)
  bool window_automatic = true;
  std::size_t points = 0;
  double usable_until = 0.0;  // time of the last usable frame
  // y at the window's first frame / y at its last: near 1, the quantity does not decay there (e.g.
  // a metastable state) and no law describes a decay.
  double decay_factor = 1.0;
};

// Least squares of ln y on the law's regressors over the frames whose index is in `use`.
// With `origin`, the regressors are those of t + origin.
LawFit fit_law(DecayLaw law, bool corrected, std::span<const double> t, std::span<const double> y,
               std::span<const std::size_t> use, double origin = 0.0);

RateFit fit_decay(std::span<const double> t, std::span<const double> y, const RateFitOptions& options = {});

}  // namespace normdyn::analysis
