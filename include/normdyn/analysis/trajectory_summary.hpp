#pragma once
// Summaries of per-frame series that the paper's figures read off a trajectory: the growth exponent
// of the mean radius (r̄ − r̄(0) ∝ t^a: a = 1 for weight-tied Pre-LN, Theorem 4.3; a = 1/2 with fresh
// random weights per layer) and the Post-LN clock of Theorem 3.1(b), which says whether a run with a
// radius (Pre-, Mix-, Peri-LN) stalls or only synchronizes slowly. Pure functions, no I/O.
#include <cstddef>
#include <limits>
#include <span>
#include <string>

namespace normdyn::analysis {

struct GrowthExponent {
  double exponent = std::numeric_limits<double>::quiet_NaN();  // a in y − y(t_0) ∝ t^a
  double exponent_stderr = std::numeric_limits<double>::quiet_NaN();
  double late_exponent = std::numeric_limits<double>::quiet_NaN();  // the same over the later half of the window
  double t_start = std::numeric_limits<double>::quiet_NaN();
  double t_end = std::numeric_limits<double>::quiet_NaN();
  std::size_t points = 0;
  // Empty when the exponent can be cited; else one of "no_growth", "too_short", "not_steady" and a
  // sentence after a colon.
  std::string problem;
};

// Least squares of ln(y − y_0) against ln t over the later half (in ln t) of the frames with t > 0
// and y − y_0 > 0, y_0 the first frame's value. Flagged "not_steady" when the exponent of the later
// half of that window differs from it by more than `steady_tolerance` relative (at least 0.1 × that
// absolute): a logarithm, whose local exponent keeps falling, is not a power law.
GrowthExponent growth_exponent(std::span<const double> t, std::span<const double> y, double steady_tolerance = 0.05);

// Theorem 3.1(b): tokens with a radius move at angular speed |P A_j| / s_j; the Post-LN clock
// τ_j(t) = ∫_0^t 1/s_j dt is the time a Post-LN run would need for the same angular motion. A
// radial speed that reaches 0 means a stalling radius (the theorem's alternative); a clock that
// grows like log t (radii ∝ t) means synchronization is slow, not absent.
struct ClockDiagnostic {
  double t_final = std::numeric_limits<double>::quiet_NaN();
  double clock_min_final = std::numeric_limits<double>::quiet_NaN();
  double clock_median_final = std::numeric_limits<double>::quiet_NaN();
  double min_radial_speed_final = std::numeric_limits<double>::quiet_NaN();
  double min_radial_speed_min = std::numeric_limits<double>::quiet_NaN();  // over frames after the first
  GrowthExponent clock_growth;  // τ_median ∝ t^a: a ≈ 1 clock as fast as Post-LN, a → 0 logarithmic
  std::string verdict;          // one sentence
};

ClockDiagnostic clock_diagnostic(std::span<const double> t, std::span<const double> clock_min,
                                 std::span<const double> clock_median, std::span<const double> min_radial_speed);

}  // namespace normdyn::analysis
