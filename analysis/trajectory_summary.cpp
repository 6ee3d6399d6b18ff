#include "normdyn/analysis/trajectory_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace normdyn::analysis {
namespace {

// Fewest points of a fit, and of each half of it.
constexpr std::size_t kMinPoints = 6;

struct Line {
  double slope = std::numeric_limits<double>::quiet_NaN();
  double slope_stderr = std::numeric_limits<double>::quiet_NaN();
};

Line fit_line(const std::vector<double>& x, const std::vector<double>& y, std::size_t begin, std::size_t end) {
  Line l;
  const double m = static_cast<double>(end - begin);
  if (end - begin < 3) return l;
  double sx = 0, sy = 0;
  for (std::size_t i = begin; i < end; ++i) sx += x[i], sy += y[i];
  const double mx = sx / m, my = sy / m;
  double sxx = 0, sxy = 0;
  for (std::size_t i = begin; i < end; ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  if (!(sxx > 0)) return l;
  l.slope = sxy / sxx;
  double rss = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const double e = y[i] - my - l.slope * (x[i] - mx);
    rss += e * e;
  }
  l.slope_stderr = std::sqrt(rss / (m - 2.0) / sxx);
  return l;
}

}  // namespace

GrowthExponent growth_exponent(std::span<const double> t, std::span<const double> y, double steady_tolerance) {
  GrowthExponent g;
  const std::size_t frames = std::min(t.size(), y.size());
  if (frames < 2) {
    g.problem = "too_short: fewer than two frames";
    return g;
  }
  const double y0 = y[0];
  const double scale = std::max(std::abs(y0), 1e-300);
  std::vector<double> lt, ly;
  for (std::size_t i = 1; i < frames; ++i) {
    const double growth = y[i] - y0;
    // Growth below round-off of y0 is no growth.
    if (t[i] > 0 && std::isfinite(growth) && growth > 1e-12 * scale) {
      lt.push_back(std::log(t[i]));
      ly.push_back(std::log(growth));
    }
  }
  if (lt.empty() || !(y[frames - 1] - y0 > 1e-12 * scale)) {
    g.problem = "no_growth: the quantity does not grow beyond its first value";
    return g;
  }
  // The later half in ln t.
  const double mid = 0.5 * (lt.front() + lt.back());
  const std::size_t begin = static_cast<std::size_t>(std::lower_bound(lt.begin(), lt.end(), mid) - lt.begin());
  const std::size_t end = lt.size();
  g.points = end - begin;
  if (g.points < kMinPoints) {
    g.problem = "too_short: fewer than " + std::to_string(kMinPoints) + " growing frames in the later half of ln t";
    return g;
  }
  g.t_start = std::exp(lt[begin]);
  g.t_end = std::exp(lt[end - 1]);
  const Line all = fit_line(lt, ly, begin, end);
  g.exponent = all.slope;
  g.exponent_stderr = all.slope_stderr;
  const double late_mid = 0.5 * (lt[begin] + lt[end - 1]);
  const std::size_t late_begin =
      static_cast<std::size_t>(std::lower_bound(lt.begin() + begin, lt.end(), late_mid) - lt.begin());
  if (end - late_begin >= 3) g.late_exponent = fit_line(lt, ly, late_begin, end).slope;
  if (!std::isfinite(g.late_exponent) ||
      std::abs(g.late_exponent - g.exponent) > steady_tolerance * std::max(std::abs(g.exponent), 0.1)) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "not_steady: the later half of the window gives %.4g instead of %.4g",
                  g.late_exponent, g.exponent);
    g.problem = buffer;
  }
  return g;
}

ClockDiagnostic clock_diagnostic(std::span<const double> t, std::span<const double> clock_min,
                                 std::span<const double> clock_median, std::span<const double> min_radial_speed) {
  ClockDiagnostic c;
  const std::size_t frames = std::min({t.size(), clock_min.size(), clock_median.size()});
  if (frames == 0) return c;
  c.t_final = t[frames - 1];
  c.clock_min_final = clock_min[frames - 1];
  c.clock_median_final = clock_median[frames - 1];
  if (!min_radial_speed.empty()) {
    c.min_radial_speed_final = min_radial_speed.back();
    double lowest = std::numeric_limits<double>::infinity();
    for (std::size_t i = 1; i < min_radial_speed.size(); ++i)
      if (std::isfinite(min_radial_speed[i])) lowest = std::min(lowest, min_radial_speed[i]);
    if (std::isfinite(lowest)) c.min_radial_speed_min = lowest;
  }
  c.clock_growth = growth_exponent(t.first(frames), clock_median.first(frames));
  char buffer[400];
  if (std::isfinite(c.min_radial_speed_min) && c.min_radial_speed_min <= 0.0) {
    std::snprintf(buffer, sizeof buffer,
                  "min_j dr_j/dt reached %.3g <= 0: a radius stalls or shrinks (the alternative of Theorem 3.1(b)); "
                  "synchronization is not guaranteed",
                  c.min_radial_speed_min);
  } else if (std::isfinite(c.clock_median_final) && c.t_final > 0.0 && c.clock_median_final < 0.5 * c.t_final) {
    std::snprintf(buffer, sizeof buffer,
                  "every radius grows, but the Post-LN clock (median over tokens) reached only %.4g at t = %.4g "
                  "(growth exponent %.3g): the directions have moved as much as Post-LN by t = %.4g, so "
                  "synchronization is slow, not stalled",
                  c.clock_median_final, c.t_final, c.clock_growth.exponent, c.clock_median_final);
  } else {
    std::snprintf(buffer, sizeof buffer,
                  "every radius grows and the Post-LN clock keeps pace with t (median %.4g at t = %.4g)",
                  c.clock_median_final, c.t_final);
  }
  c.verdict = buffer;
  return c;
}

}  // namespace normdyn::analysis
