#pragma once
// Late-time decay rates. Pure functions over a series (t_i, y_i) with y_i > 0 decaying to 0.
//
// Three laws, each a straight line in ln y:
//   exponential            y = c e^{−λ t}      ln y = ln c − λ t
//   power                  y = c t^{−p}        ln y = ln c − p ln t
//   stretched_exponential  y = c e^{−κ √t}     ln y = ln c − κ √t
// fitted by linear least squares of ln y over a late window (relative errors weigh equally).
//
// Window. Frames with t > 0 and y above `floor` are usable up to the first frame that is not (the
// floor cuts off round-off and integration noise once y has collapsed). The automatic window is
// the later `late_fraction` (default half) of the usable time range; or it is given.
//
// Law. The law with the smallest residual sum of squares of ln y over the window (all three have
// two parameters, so this is also the AIC / BIC choice); or it is given.
//
// Sub-leading corrections. A late window is not yet asymptotic: a shift of the time origin, the
// typical first correction (e.g. Pre-LN on the symmetric start has 1 − γ ≈ C/(t + t₀)²), changes
// ln y by −p t₀/t for a power law and by −κ t₀/(2√t) for a stretched exponential, which biases the
// plain fit by O(t₀/t). With `correction` (default) the chosen law is refitted with that term,
//   power:                  ln y = ln c − p ln t + a/t
//   stretched_exponential:  ln y = ln c − κ √t + a/√t
// (an exponential needs none: a time shift only rescales c), and `parameter` is the corrected value.
// `systematic` is how much the reported parameter moves when the fit is restricted to the later half
// of the window: an indicator of what corrections remain (the regression standard error measures
// misfit, not such a bias, for deterministic data).
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
double law_value(DecayLaw law, double log_c, double parameter, double correction, double t);

struct TimeWindow {
  double t_start = 0.0;
  double t_end = 0.0;
};

struct RateFitOptions {
  std::optional<DecayLaw> law;       // nothing: automatic
  std::optional<TimeWindow> window;  // nothing: automatic
  double late_fraction = 0.5;        // automatic window: this fraction of the usable range, at its end
  double floor = 1e-12;              // y ≤ floor is unusable
  bool correction = true;
  std::size_t min_points = 5;
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
  bool ok = false;
  std::string problem;  // why there is no fit (too few usable frames, ...)
  DecayLaw law = DecayLaw::exponential;
  bool law_automatic = true;
  bool corrected = false;  // `parameter` comes from the corrected fit
  double parameter = 0.0;
  double parameter_stderr = 0.0;
  double systematic = 0.0;  // NaN if the later half of the window has too few points
  double log_c = 0.0;
  double correction = 0.0;
  LawFit uncorrected;             // the plain fit of the chosen law
  std::vector<LawFit> candidates; // plain fits of all three laws over the window
  TimeWindow window;              // the window used (times of its first and last frame)
  bool window_automatic = true;
  std::size_t points = 0;
  double usable_until = 0.0;      // time of the last usable frame
  // y at the window's first frame / y at its last: near 1, the quantity does not decay there (e.g.
  // a metastable state) and no law describes a decay.
  double decay_factor = 1.0;
};

// Least squares of ln y on the law's regressors over the frames whose index is in `use`.
LawFit fit_law(DecayLaw law, bool corrected, std::span<const double> t, std::span<const double> y,
               std::span<const std::size_t> use);

RateFit fit_decay(std::span<const double> t, std::span<const double> y, const RateFitOptions& options = {});

}  // namespace normdyn::analysis
