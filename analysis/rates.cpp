#include "normdyn/analysis/rates.hpp"

#include <Eigen/Dense>
#include <cassert>
#include <cmath>
#include <limits>

namespace normdyn::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Index = Eigen::Index;

}  // namespace

std::string_view to_string(DecayLaw law) noexcept {
  switch (law) {
    case DecayLaw::exponential: return "exponential";
    case DecayLaw::power: return "power";
    case DecayLaw::stretched_exponential: return "stretched_exponential";
  }
  return "exponential";
}

std::optional<DecayLaw> decay_law_from_string(std::string_view s) noexcept {
  for (DecayLaw law : {DecayLaw::exponential, DecayLaw::power, DecayLaw::stretched_exponential})
    if (s == to_string(law)) return law;
  return std::nullopt;
}

double law_regressor(DecayLaw law, double t) {
  switch (law) {
    case DecayLaw::exponential: return t;
    case DecayLaw::power: return std::log(t);
    case DecayLaw::stretched_exponential: return std::sqrt(t);
  }
  return t;
}

std::optional<double> law_correction(DecayLaw law, double t) {
  switch (law) {
    case DecayLaw::exponential: return std::nullopt;
    case DecayLaw::power: return 1.0 / t;
    case DecayLaw::stretched_exponential: return 1.0 / std::sqrt(t);
  }
  return std::nullopt;
}

double law_value(DecayLaw law, double log_c, double parameter, double correction, double t) {
  const double h = law_correction(law, t).value_or(0.0);
  return std::exp(log_c - parameter * law_regressor(law, t) + correction * h);
}

LawFit fit_law(DecayLaw law, bool corrected, std::span<const double> t, std::span<const double> y,
               std::span<const std::size_t> use) {
  corrected = corrected && law_correction(law, 1.0).has_value();
  const Index m = static_cast<Index>(use.size());
  const Index p = corrected ? 3 : 2;
  Eigen::MatrixXd x(m, p);
  Eigen::VectorXd ly(m);
  for (Index i = 0; i < m; ++i) {
    const std::size_t f = use[static_cast<std::size_t>(i)];
    x(i, 0) = 1.0;
    x(i, 1) = -law_regressor(law, t[f]);
    if (corrected) x(i, 2) = *law_correction(law, t[f]);
    ly(i) = std::log(y[f]);
  }
  // For conditioning, the regressors are centred (the slopes and their errors do not change; the
  // intercept is restored below) and every column is scaled to unit norm.
  Eigen::VectorXd centre = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd scale(p);
  for (Index k = 0; k < p; ++k) {
    if (k > 0) {
      centre(k) = x.col(k).mean();
      x.col(k).array() -= centre(k);
    }
    scale(k) = x.col(k).norm();
    if (scale(k) == 0.0) scale(k) = 1.0;
    x.col(k) /= scale(k);
  }
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(x);
  const Eigen::VectorXd coef_scaled = qr.solve(ly);
  const Eigen::VectorXd residual = ly - x * coef_scaled;
  const Eigen::MatrixXd r = qr.matrixQR().topRows(p).template triangularView<Eigen::Upper>();
  const Eigen::MatrixXd r_inv = r.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(p, p));
  const Eigen::MatrixXd cov_unit = r_inv * r_inv.transpose();  // (XᵀX)^{-1} of the scaled design

  LawFit f;
  f.law = law;
  f.points = static_cast<std::size_t>(m);
  f.rss = residual.squaredNorm();
  const double mean = ly.mean();
  const double tss = (ly.array() - mean).square().sum();
  f.r_squared = tss > 0.0 ? 1.0 - f.rss / tss : 1.0;
  const double sigma2 = m > p ? f.rss / static_cast<double>(m - p) : kNaN;
  const Eigen::VectorXd coef = coef_scaled.cwiseQuotient(scale);
  f.log_c = coef(0) - coef.tail(p - 1).dot(centre.tail(p - 1));
  f.parameter = coef(1);
  f.parameter_stderr = std::sqrt(sigma2 * cov_unit(1, 1)) / scale(1);
  f.correction = corrected ? coef(2) : 0.0;
  return f;
}

RateFit fit_decay(std::span<const double> t, std::span<const double> y, const RateFitOptions& options) {
  assert(t.size() == y.size());
  RateFit out;
  out.window_automatic = !options.window.has_value();
  out.law_automatic = !options.law.has_value();

  // Usable frames: t > 0 and y > floor, from the first such frame up to the first that is not.
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(t[i] > 0.0)) continue;
    const bool good = std::isfinite(y[i]) && y[i] > options.floor && y[i] > 0.0;
    if (!good) {
      if (!usable.empty()) break;
      continue;
    }
    usable.push_back(i);
  }
  const std::size_t min_points = std::max<std::size_t>(options.min_points, 4);
  if (usable.size() < min_points) {
    out.problem = "only " + std::to_string(usable.size()) + " usable frames (t > 0, y > " +
                  std::to_string(options.floor) + " before the first that is not); need " + std::to_string(min_points);
    return out;
  }
  out.usable_until = t[usable.back()];

  TimeWindow w;
  if (options.window) {
    w = *options.window;
  } else {
    const double t0 = t[usable.front()], t1 = t[usable.back()];
    w = {t1 - options.late_fraction * (t1 - t0), t1};
  }
  std::vector<std::size_t> use;
  for (std::size_t i : usable)
    if (t[i] >= w.t_start && t[i] <= w.t_end) use.push_back(i);
  if (use.size() < min_points) {
    out.problem = "only " + std::to_string(use.size()) + " usable frames in the window [" + std::to_string(w.t_start) +
                  ", " + std::to_string(w.t_end) + "]; need " + std::to_string(min_points);
    return out;
  }
  out.window = {t[use.front()], t[use.back()]};
  out.points = use.size();
  out.decay_factor = y[use.front()] / y[use.back()];

  for (DecayLaw law : {DecayLaw::exponential, DecayLaw::power, DecayLaw::stretched_exponential})
    out.candidates.push_back(fit_law(law, false, t, y, use));
  if (options.law) {
    out.law = *options.law;
  } else {
    const LawFit* best = &out.candidates.front();
    for (const LawFit& c : out.candidates)
      if (c.rss < best->rss) best = &c;
    out.law = best->law;
  }
  for (const LawFit& c : out.candidates)
    if (c.law == out.law) out.uncorrected = c;

  out.corrected = options.correction && law_correction(out.law, 1.0).has_value();
  const LawFit chosen = out.corrected ? fit_law(out.law, true, t, y, use) : out.uncorrected;
  out.parameter = chosen.parameter;
  out.parameter_stderr = chosen.parameter_stderr;
  out.log_c = chosen.log_c;
  out.correction = chosen.correction;

  // The same fit on the later half of the window.
  const double t_mid = 0.5 * (out.window.t_start + out.window.t_end);
  std::vector<std::size_t> late;
  for (std::size_t i : use)
    if (t[i] >= t_mid) late.push_back(i);
  out.systematic = late.size() >= min_points ? std::abs(fit_law(out.law, out.corrected, t, y, late).parameter - out.parameter)
                                             : kNaN;
  out.ok = true;
  return out;
}

}  // namespace normdyn::analysis
