#include "normdyn/analysis/rates.hpp"

#include <Eigen/Dense>
#include <cassert>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "normdyn/tokens.hpp"

namespace normdyn::analysis {
namespace {

using Index = Eigen::Index;

}  // namespace

std::string_view to_string(DecayLaw law) noexcept {
  switch (law) {
    case DecayLaw::exponential:
      return "exponential";
    case DecayLaw::power:
      return "power";
    case DecayLaw::stretched_exponential:
      return "stretched_exponential";
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
    case DecayLaw::exponential:
      return t;
    case DecayLaw::power:
      return std::log(t);
    case DecayLaw::stretched_exponential:
      return std::sqrt(t);
  }
  return t;
}

std::optional<double> law_correction(DecayLaw law, double t) {
  switch (law) {
    case DecayLaw::exponential:
      return std::nullopt;
    case DecayLaw::power:
      return 1.0 / t;
    case DecayLaw::stretched_exponential:
      return 1.0 / std::sqrt(t);
  }
  return std::nullopt;
}

double law_value(DecayLaw law, double log_c, double parameter, double correction, double t, double origin) {
  const double h = law_correction(law, t + origin).value_or(0.0);
  return std::exp(log_c - parameter * law_regressor(law, t + origin) + correction * h);
}

LawFit fit_law(DecayLaw law, bool corrected, std::span<const double> t, std::span<const double> y,
               std::span<const std::size_t> use, double origin) {
  corrected = corrected && law_correction(law, 1.0).has_value();
  const Index m = static_cast<Index>(use.size());
  const Index p = corrected ? 3 : 2;
  Eigen::MatrixXd x(m, p);
  Eigen::VectorXd ly(m);
  for (Index i = 0; i < m; ++i) {
    const std::size_t f = use[static_cast<std::size_t>(i)];
    x(i, 0) = 1.0;
    x(i, 1) = -law_regressor(law, t[f] + origin);
    if (corrected) x(i, 2) = *law_correction(law, t[f] + origin);
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

namespace {

std::string fmt(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}

constexpr DecayLaw kLaws[] = {DecayLaw::exponential, DecayLaw::power, DecayLaw::stretched_exponential};

// The law fitted in t + t₀ with t₀ chosen by golden-section search of the RSS on (lo, hi); the plain
// fit unless the shifted one is better, its parameter positive and t₀ not at a bound.
LawFit fit_with_origin(DecayLaw law, std::span<const double> t, std::span<const double> y,
                       std::span<const std::size_t> use, double& origin) {
  const LawFit plain = fit_law(law, false, t, y, use);
  origin = 0.0;
  if (law == DecayLaw::exponential) return plain;
  const double t0 = t[use.front()], t1 = t[use.back()];
  double lo = -0.9 * t0, hi = t1;
  auto rss = [&](double o) { return fit_law(law, false, t, y, use, o).rss; };
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double a = lo, b = hi, c = b - g * (b - a), d = a + g * (b - a);
  double fc = rss(c), fd = rss(d);
  for (int k = 0; k < 80 && b - a > 1e-10 * (1.0 + std::abs(b)); ++k) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = rss(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = rss(d);
    }
  }
  const double best = 0.5 * (a + b);
  const LawFit shifted = fit_law(law, false, t, y, use, best);
  const double margin = 1e-3 * (hi - lo);
  if (shifted.rss < plain.rss && shifted.parameter > 0.0 && best > lo + margin && best < hi - margin) {
    origin = best;
    return shifted;
  }
  return plain;
}

// The local exponent −d ln y / d g(t) at frame k of `idx` (central differences over ±m frames).
std::vector<double> local_exponent(DecayLaw law, std::span<const double> t, std::span<const double> y,
                                   const std::vector<std::size_t>& idx, std::size_t m) {
  std::vector<double> out(idx.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = m; k + m < idx.size(); ++k) {
    const std::size_t a = idx[k - m], b = idx[k + m];
    out[k] = -(std::log(y[b]) - std::log(y[a])) / (law_regressor(law, t[b]) - law_regressor(law, t[a]));
  }
  return out;
}

// The final steady stretch of a local-exponent series: first index of idx where it begins (idx.size()
// if none), with its reference value (median of the last few exponents). Isolated outliers are
// tolerated; three in a row end the stretch.
std::pair<std::size_t, double> steady_stretch(const std::vector<double>& e, double tolerance, std::size_t m) {
  std::vector<double> tail;
  std::size_t last = e.size();
  while (last > 0 && !std::isfinite(e[last - 1])) --last;
  for (std::size_t k = last; k > 0 && tail.size() < std::max<std::size_t>(3, m); --k)
    if (std::isfinite(e[k - 1])) tail.push_back(e[k - 1]);
  if (tail.size() < 3) return {e.size(), kNaN};
  std::nth_element(tail.begin(), tail.begin() + tail.size() / 2, tail.end());
  const double ref = tail[tail.size() / 2];
  if (!(ref > 0.0)) return {e.size(), ref};
  std::size_t start = last, misses = 0;
  for (std::size_t k = last; k > 0; --k) {
    const double v = e[k - 1];
    if (!std::isfinite(v)) break;
    if (std::abs(v - ref) <= tolerance * ref) {
      start = k - 1;
      misses = 0;
    } else if (++misses >= 3) {
      break;
    }
  }
  // The central differences reach m frames beyond the stretch of exponents.
  return {start >= m ? start - m : 0, ref};
}

// What would make the fit one not to cite, in order of precedence (the first problem found is
// kept): `steady_ref` is the reference exponent of the chosen law's steady stretch,
// `no_steady_stretch` that the stretch is shorter than min_points frames.
void flag_uncitable_fit(RateFit& out, const RateFitOptions& options, std::span<const double> y,
                        const std::vector<std::size_t>& usable, double steady_ref, bool no_steady_stretch,
                        std::size_t min_points, const LawFit& fit) {
  auto flag = [&](std::string token, std::string sentence) {
    if (out.problem.empty()) {
      out.problem = std::move(token);
      out.detail = std::move(sentence);
    }
  };
  double y_max = 0.0;
  for (std::size_t i : usable) y_max = std::max(y_max, y[i]);
  const double overall = y_max / y[usable.back()];
  const bool several = options.final_clusters > 1;
  if (out.decay_factor < 2.0 || (!(steady_ref > 0.0) && out.decay_factor < options.min_decay)) {
    if (several)
      flag("metastable", "the run ends with " + std::to_string(options.final_clusters) +
                             " clusters and the quantity falls only by a factor " + fmt(out.decay_factor) +
                             " over the window: a metastable state, not the final collapse");
    else if (overall >= options.min_decay)
      flag("metastable", "the quantity fell by a factor " + fmt(overall) + " and then stopped decaying (a factor " +
                             fmt(out.decay_factor) + " over the window [" + fmt(out.window.t_start) + ", " +
                             fmt(out.window.t_end) + "]): a plateau, no law to fit");
    else
      flag("no_decay", "the quantity falls only by a factor " + fmt(out.decay_factor) + " over the window [" +
                           fmt(out.window.t_start) + ", " + fmt(out.window.t_end) + "] (" + fmt(overall) +
                           " over all usable frames): nothing decays");
  }
  if (out.decay_factor < options.min_decay) {
    if (several)
      flag("metastable", "the run ends with " + std::to_string(options.final_clusters) +
                             " clusters; the window decays by " + fmt(out.decay_factor) + " only");
    else
      flag("too_short", "the last regime decays by a factor " + fmt(out.decay_factor) + " over [" +
                            fmt(out.window.t_start) + ", " + fmt(out.window.t_end) + "]; a citable fit needs " +
                            fmt(options.min_decay) + " (run longer)");
  }
  if (!(out.parameter > 0.0))
    flag("not_positive",
         "the fitted parameter " + fmt(out.parameter) + " is not positive: the quantity does not decay by this law");
  if (out.law_automatic && no_steady_stretch)
    flag("noisy", "the local exponent of no law is steady (within " + fmt(options.steady_tolerance) + ") over " +
                      std::to_string(min_points) + " frames at the end");
  {
    const double rms = std::sqrt(fit.rss / static_cast<double>(fit.points));
    const double range = std::log(out.decay_factor);
    if (range > 0.0 && rms > options.noise_tolerance * range)
      flag("noisy", "the residuals of ln y (rms " + fmt(rms) + ") are more than " + fmt(options.noise_tolerance) +
                        " of its decay over the window");
  }
  if (out.law_automatic && out.runner_up_decay * options.preference > out.steady_decay)
    flag("law_ambiguous", "the " + std::string(to_string(out.law)) + " law is steady over a decay of ln y by " +
                              fmt(out.steady_decay) + ", another law over " + fmt(out.runner_up_decay) +
                              ": not clearly preferred");
  if (!std::isfinite(out.half_window_parameter))
    flag("too_short", "the later half of the window has fewer than " + std::to_string(min_points) + " frames");
  else if (std::abs(out.half_window_parameter - out.parameter) > options.stability_tolerance * std::abs(out.parameter))
    flag("unstable", "the parameter moves from " + fmt(out.parameter) + " to " + fmt(out.half_window_parameter) +
                         " when the window is halved");
}

}  // namespace

RateFit fit_decay(std::span<const double> t, std::span<const double> y, const RateFitOptions& options) {
  assert(t.size() == y.size());
  RateFit out;
  out.window_automatic = !options.window.has_value();
  out.law_automatic = !options.law.has_value();

  // Usable frames: t > 0 (and after the last merge) and y > floor, up to the first that is not.
  std::vector<std::size_t> usable;
  const double after = options.window ? -1e300 : options.after;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(t[i] > 0.0) || !(t[i] > after)) continue;
    const bool good = std::isfinite(y[i]) && y[i] > options.floor && y[i] > 0.0;
    if (!good) {
      if (!usable.empty()) break;
      continue;
    }
    usable.push_back(i);
  }
  const std::size_t min_points = std::max<std::size_t>(options.min_points, 4);
  // A round-off floor below `floor`: y has stopped falling at a tiny fraction of its size.
  if (!usable.empty()) {
    double y_max = 0.0;
    for (std::size_t i : usable) y_max = std::max(y_max, y[i]);
    while (usable.size() > min_points) {
      const std::size_t last = usable.back(), before = usable[usable.size() - 3];
      if (y[last] < 1e-8 * y_max && y[last] >= y[before])
        usable.pop_back();
      else
        break;
    }
  }
  if (usable.size() < min_points) {
    out.problem = "too_short";
    out.detail =
        "only " + std::to_string(usable.size()) + " usable frames (t > 0" +
        (options.after > -1e300 && !options.window ? ", after the last merge at t = " + fmt(options.after) : "") +
        ", y > " + fmt(options.floor) + " before the first that is not); need " + std::to_string(min_points);
    return out;
  }
  out.usable_until = t[usable.back()];

  std::vector<std::size_t> span_idx;  // frames the law selection may use
  for (std::size_t i : usable)
    if (!options.window || (t[i] >= options.window->t_start && t[i] <= options.window->t_end)) span_idx.push_back(i);
  if (span_idx.size() < min_points) {
    out.problem = "too_short";
    out.detail = "only " + std::to_string(span_idx.size()) + " usable frames in the window [" +
                 fmt(options.window->t_start) + ", " + fmt(options.window->t_end) + "]; need " +
                 std::to_string(min_points);
    return out;
  }

  // Steady stretch of each law.
  const std::size_t m = std::max<std::size_t>(1, span_idx.size() / 50);
  struct Steady {
    std::size_t start;
    double decay;
    double ref;
  };
  Steady steady[3];
  for (std::size_t l = 0; l < 3; ++l) {
    const auto e = local_exponent(kLaws[l], t, y, span_idx, m);
    const auto [start, ref] = steady_stretch(e, options.steady_tolerance, m);
    steady[l] = {start, start < span_idx.size() ? std::log(y[span_idx[start]] / y[span_idx.back()]) : 0.0, ref};
  }
  std::size_t best = 0;
  for (std::size_t l = 1; l < 3; ++l)
    if (steady[l].decay > steady[best].decay) best = l;
  double runner = 0.0;
  for (std::size_t l = 0; l < 3; ++l)
    if (l != best) runner = std::max(runner, steady[l].decay);
  out.law = options.law ? *options.law : kLaws[best];
  std::size_t chosen = 0;
  for (std::size_t l = 0; l < 3; ++l)
    if (kLaws[l] == out.law) chosen = l;
  out.steady_decay = steady[chosen].decay;
  out.runner_up_decay = options.law ? steady[best == chosen ? (chosen == 0 ? 1 : 0) : best].decay : runner;

  // The window: the given one, or the chosen law's steady stretch (the later part of the range if
  // the law has none of min_points frames).
  std::vector<std::size_t> use;
  if (options.window) {
    use = span_idx;
  } else if (steady[chosen].start + min_points <= span_idx.size()) {
    use.assign(span_idx.begin() + static_cast<std::ptrdiff_t>(steady[chosen].start), span_idx.end());
  } else {
    const double t0 = t[span_idx.front()], t1 = t[span_idx.back()];
    for (std::size_t i : span_idx)
      if (t[i] >= t1 - options.late_fraction * (t1 - t0)) use.push_back(i);
    if (use.size() < min_points) use = span_idx;
  }
  out.window = {t[use.front()], t[use.back()]};
  out.points = use.size();
  out.decay_factor = y[use.front()] / y[use.back()];

  for (DecayLaw law : kLaws) out.candidates.push_back(fit_law(law, false, t, y, use));
  out.uncorrected = out.candidates[chosen];
  double origin = 0.0;
  const LawFit fit = options.correction ? fit_with_origin(out.law, t, y, use, origin) : out.uncorrected;
  out.corrected = origin != 0.0;
  out.origin = origin;
  out.parameter = fit.parameter;
  out.parameter_stderr = fit.parameter_stderr;
  out.log_c = fit.log_c;
  out.correction = 0.0;
  out.ok = true;

  // The same fit over the later half of the window.
  const double t_mid = 0.5 * (out.window.t_start + out.window.t_end);
  std::vector<std::size_t> late;
  for (std::size_t i : use)
    if (t[i] >= t_mid) late.push_back(i);
  out.half_window_parameter = kNaN;
  if (late.size() >= min_points) {
    double o = 0.0;
    out.half_window_parameter =
        (options.correction ? fit_with_origin(out.law, t, y, late, o) : fit_law(out.law, false, t, y, late)).parameter;
  }
  out.systematic = std::abs(out.half_window_parameter - out.parameter);

  flag_uncitable_fit(out, options, y, usable, steady[chosen].ref, steady[chosen].start + min_points > span_idx.size(),
                     min_points, fit);
  return out;
}

}  // namespace normdyn::analysis
