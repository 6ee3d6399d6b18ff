#include "normdyn/analysis/theorems.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

namespace normdyn::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// dy/dt at t[0] of the polynomial through the first m frames (Lagrange weights).
double lagrange_derivative(std::span<const double> t, std::span<const double> y, std::size_t m) {
  const double t0 = t[0];
  double result = 0.0;
  for (std::size_t k = 0; k < m; ++k) {
    double w = 0.0;
    if (k == 0) {
      for (std::size_t j = 1; j < m; ++j) w += 1.0 / (t0 - t[j]);
    } else {
      double num = 1.0, den = 1.0;
      for (std::size_t j = 0; j < m; ++j) {
        if (j == k) continue;
        den *= t[k] - t[j];
        if (j != 0) num *= t0 - t[j];
      }
      w = num / den;
    }
    result += w * y[k];
  }
  return result;
}

std::string fmt(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

}  // namespace

double initial_slope_theory(const Scheme& scheme, double n, double beta, double r0) {
  const double e = std::exp(beta);
  return std::visit(
      [&](const auto& s) -> double {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, PreLN>) return 2.0 / (r0 * (e + n - 1.0));
        else if constexpr (std::is_same_v<S, MixLN>) return s.tau > 0.0 ? 2.0 / (e + n - 1.0) : 2.0 / (r0 * (e + n - 1.0));
        else if constexpr (std::is_same_v<S, PeriLN>) return 2.0 / (r0 * std::sqrt(e * e + n - 1.0));
        else if constexpr (std::is_same_v<S, NGPT>) return 2.0 * s.alpha_at(0.0) / std::sqrt(e * e + n - 1.0);
        else return 2.0 / (e + n - 1.0);  // post, cod
      },
      scheme);
}

std::optional<ExpectedDecay> symmetric_decay_theory(const Scheme& scheme) {
  return std::visit(
      [](const auto& s) -> std::optional<ExpectedDecay> {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, PostLN>) return ExpectedDecay{DecayLaw::exponential, 2.0};
        else if constexpr (std::is_same_v<S, PreLN> || std::is_same_v<S, MixLN> || std::is_same_v<S, PeriLN>)
          return ExpectedDecay{DecayLaw::power, 2.0};
        else if constexpr (std::is_same_v<S, LNScaling>) return ExpectedDecay{DecayLaw::stretched_exponential, 4.0};
        else if constexpr (std::is_same_v<S, NGPT>) {
          // e^{−2∫α}: ∫_0^t α ds = α t (constant), 2α (√(1+t) − 1) for α_t = α/√(1+t).
          if (s.alpha_decay == 0.0) return ExpectedDecay{DecayLaw::exponential, 2.0 * s.alpha};
          if (s.alpha_decay == 0.5) return ExpectedDecay{DecayLaw::stretched_exponential, 4.0 * s.alpha};
          return std::nullopt;
        }
        return std::nullopt;
      },
      scheme);
}

double variance_scale(const Scheme& scheme, double t) {
  return std::visit(
      [t](const auto& s) -> double {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, PostLN>) return 1.0;
        else if constexpr (std::is_same_v<S, PreLN> || std::is_same_v<S, PeriLN>) return t;
        else if constexpr (std::is_same_v<S, MixLN>) return t > s.tau ? t : 1.0;
        else if constexpr (std::is_same_v<S, LNScaling>) return std::sqrt(t);
        else return 1.0 / s.alpha_at(t);  // ngpt
      },
      scheme);
}

double variance_scale_exponent(const Scheme& scheme) {
  return std::visit(
      [](const auto& s) -> double {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, PostLN>) return 0.0;
        else if constexpr (std::is_same_v<S, PreLN> || std::is_same_v<S, PeriLN> || std::is_same_v<S, MixLN>) return 1.0;
        else if constexpr (std::is_same_v<S, LNScaling>) return 0.5;
        else return s.alpha_decay;  // ngpt: 1/α_t = (1 + t)^p / α
      },
      scheme);
}

double theorem_4_3_delta_bound(double n, double beta) {
  const double b = std::max(beta, 1.0);
  return 1.0 / (100.0 * n * n * b * b);
}

double corollary_radial_bound(double n, double beta) {
  // (e^β − n + 1)/(n e^β) = (1 − (n − 1) e^{−β}) / n, without overflow.
  return (1.0 - (n - 1.0) * std::exp(-beta)) / n;
}

double attention_bound(double n, double d) { return std::sqrt(std::log(n) / n) + std::log(n) / d; }

bool attention_bound_hypotheses(double n, double d) {
  const double nlogn = n * std::log(n);
  return std::sqrt(d) >= std::log(nlogn) && nlogn >= d;
}

std::optional<Derivative> derivative_at_start(std::span<const double> t, std::span<const double> y, std::size_t points) {
  const std::size_t m = std::min({points, std::size_t{5}, t.size()});
  if (m < 3) return std::nullopt;
  const double hi = lagrange_derivative(t, y, m);
  const double lo = lagrange_derivative(t, y, m - 1);
  return Derivative{hi, std::abs(hi - lo)};
}

ScaleFit fit_variance_scale(std::span<const double> t, std::span<const double> variance, const Scheme& scheme,
                            double floor) {
  ScaleFit f;
  // Usable frames: Var > floor from the start up to the first that is not.
  std::size_t end = 0;
  while (end < variance.size() && std::isfinite(variance[end]) && variance[end] > floor) ++end;
  std::vector<double> tm, k;
  for (std::size_t i = 0; i + 1 < end; ++i) {
    const double dt = t[i + 1] - t[i];
    const double rate = -(std::log(variance[i + 1]) - std::log(variance[i])) / dt;
    const double mid = 0.5 * (t[i] + t[i + 1]);
    if (mid > 0.0 && rate > 0.0) {
      tm.push_back(mid);
      k.push_back(rate);
    }
  }
  if (tm.size() < 5) {
    f.problem = "fewer than 5 frame pairs with decaying variance above the floor";
    return f;
  }
  const double t_cut = tm.back() - 0.5 * (tm.back() - tm.front());
  std::vector<std::size_t> use;
  for (std::size_t i = 0; i < tm.size(); ++i)
    if (tm[i] >= t_cut) use.push_back(i);
  if (use.size() < 4) {
    f.problem = "fewer than 4 frame pairs in the later half";
    return f;
  }
  // ln k = a − m ln t: the power-law fit machinery with y = k.
  const LawFit fit = fit_law(DecayLaw::power, false, tm, k, use);
  f.exponent = fit.parameter;
  f.exponent_stderr = fit.parameter_stderr;
  f.q_min = std::numeric_limits<double>::infinity();
  f.q_max = -f.q_min;
  for (std::size_t i : use) {
    const double q = k[i] * variance_scale(scheme, tm[i]);
    f.q_min = std::min(f.q_min, q);
    f.q_max = std::max(f.q_max, q);
  }
  f.t_start = tm[use.front()];
  f.t_end = tm[use.back()];
  f.points = use.size();
  f.ok = true;
  return f;
}

Checks theorem_checks(const RunConfig& config, const RunSeries& s, const CheckOptions& options) {
  Checks out;
  const Scheme& scheme = config.model.scheme;
  const std::string key(scheme_key(scheme));
  const auto n = static_cast<double>(config.model.n);
  const auto d = static_cast<double>(config.model.d);
  const double beta = config.model.beta;
  const bool identity = config.model.qkv == QkvKind::identity;
  const bool starts_at_zero = !s.t.empty() && s.t.front() == 0.0;
  auto skip = [&](std::string name, std::string reason) { out.skipped.push_back({std::move(name), std::move(reason)}); };

  // ---- Theorem 4.1: the symmetric start.
  {
    std::string why;
    if (config.init.kind != InitKind::orthonormal) why = "needs init.kind = \"orthonormal\" (the symmetric start)";
    else if (!identity) why = "needs model.qkv = \"identity\"";
    else if (config.model.d < config.model.n) why = "needs d >= n";
    else if (!starts_at_zero) why = "the run has no frame at t = 0";
    if (!why.empty()) {
      for (const char* name : {"theorem_4_1_initial_slope", "theorem_4_1_symmetry", "theorem_4_1_decay_rate"})
        skip(name, why);
    } else {
      // Initial slope.
      std::vector<double> gamma(s.one_minus_mean_cosine.size());
      for (std::size_t i = 0; i < gamma.size(); ++i) gamma[i] = 1.0 - s.one_minus_mean_cosine[i];
      const auto slope = derivative_at_start(s.t, gamma);
      const double theory = initial_slope_theory(scheme, n, beta, config.init.r0);
      const bool from_velocity = std::isfinite(s.initial_slope_velocity);
      // The polynomial through the first frames is trusted only where gamma is nearly linear: a small
      // change over those frames and agreement of the last two degrees.
      const std::size_t m = std::min<std::size_t>(5, gamma.size());
      const bool frames_fine = slope && std::abs(gamma[m - 1] - gamma[0]) <= options.frame_slope_span &&
                               slope->error <= options.frame_slope_accuracy * std::abs(theory);
      if (!from_velocity && !frames_fine) {
        skip("theorem_4_1_initial_slope",
             slope ? "the velocity at t = 0 was not computed and the first frames are too far apart to measure the "
                     "slope (gamma changes by " + fmt(std::abs(gamma[m - 1] - gamma[0])) + " over them, error estimate " +
                         fmt(slope->error) + ")"
                   : "needs at least 3 frames or the velocity at t = 0");
      } else {
        Check c;
        c.name = "theorem_4_1_initial_slope";
        c.statement = "d gamma/dt(0) = (1/s_j + 1/s_k) / (e^beta + n - 1) for scheme " + key;
        c.theory = theory;
        if (from_velocity) {
          c.criterion = "|measured - theory| <= " + fmt(options.slope_tolerance) + " |theory|";
          c.measured = s.initial_slope_velocity;
          c.ok = std::abs(c.measured - c.theory) <= options.slope_tolerance * std::abs(c.theory);
          c.note = "measured: 2n/(n-1) <mean theta, mean velocity> at t = 0, from the run's velocity field";
        } else {
          c.criterion = "|measured - theory| <= " + fmt(options.frame_slope_accuracy) +
                        " |theory| + 3 x (error estimate of the derivative from the first frames)";
          c.measured = slope->value;
          c.ok = std::abs(c.measured - c.theory) <=
                 options.frame_slope_accuracy * std::abs(c.theory) + 3.0 * slope->error;
          c.note = "measured: derivative at t = 0 of the polynomial through the first frames of the mean cosine";
        }
        c.details = {{"relative_error", (c.measured - c.theory) / c.theory},
                     {"from_frames", slope ? slope->value : kNaN},
                     {"from_frames_error_estimate", slope ? slope->error : kNaN}};
        out.checks.push_back(std::move(c));
      }
      // Symmetry.
      {
        Check c;
        c.name = "theorem_4_1_symmetry";
        c.statement = "all pairwise cosines stay equal to one value gamma(t)";
        c.criterion = "max over frames of (1 - min cosine) - (1 - mean cosine) <= " + fmt(options.symmetry_tolerance);
        c.theory = 0.0;
        double spread = 0.0;
        for (std::size_t i = 0; i < s.t.size(); ++i)
          spread = std::max(spread, s.one_minus_min_cosine[i] - s.one_minus_mean_cosine[i]);
        c.measured = spread;
        c.ok = spread <= options.symmetry_tolerance;
        out.checks.push_back(std::move(c));
      }
      // Decay law.
      const auto expected = symmetric_decay_theory(scheme);
      if (!expected) {
        skip("theorem_4_1_decay_rate", "1 - gamma ~ exp(-2 int alpha) is none of the three laws for this alpha_decay");
      } else {
        RateFitOptions ro = options.rate;
        ro.law.reset();
        const RateFit automatic = fit_decay(s.t, s.one_minus_mean_cosine, ro);
        if (!automatic.ok) {
          skip("theorem_4_1_decay_rate", "no rate fit: " + automatic.problem);
        } else {
          ro.law = expected->law;
          const RateFit forced = fit_decay(s.t, s.one_minus_mean_cosine, ro);
          Check c;
          c.name = "theorem_4_1_decay_rate";
          c.statement = "1 - gamma decays like the " + std::string(to_string(expected->law)) + " law with parameter " +
                        fmt(expected->parameter) + " for scheme " + key;
          c.criterion = "the automatically chosen law is " + std::string(to_string(expected->law)) +
                        " and |parameter - theory| <= " + fmt(options.rate_tolerance) + " theory";
          c.theory = expected->parameter;
          c.measured = forced.parameter;
          c.ok = automatic.law == expected->law &&
                 std::abs(forced.parameter - expected->parameter) <= options.rate_tolerance * expected->parameter;
          c.details = {{"stderr", forced.parameter_stderr},
                       {"systematic", forced.systematic},
                       {"relative_error", (forced.parameter - expected->parameter) / expected->parameter},
                       {"window_start", forced.window.t_start},
                       {"window_end", forced.window.t_end}};
          c.note = "automatically chosen law: " + std::string(to_string(automatic.law));
          out.checks.push_back(std::move(c));
        }
      }
    }
  }

  // ---- Theorem 4.2: attention at a uniform start.
  {
    std::string why;
    if (config.init.kind != InitKind::uniform) why = "needs init.kind = \"uniform\"";
    else if (beta != 1.0) why = "needs model.beta = 1";
    else if (!identity) why = "needs model.qkv = \"identity\"";
    else if (!std::isfinite(s.max_attention_at_start)) why = "max_j |A_j(0)| was not computed";
    if (!why.empty()) {
      skip("theorem_4_2_attention_at_start", why);
    } else {
      Check c;
      c.name = "theorem_4_2_attention_at_start";
      c.statement = "max_j |A_j(0)| <= C (sqrt(log n / n) + log n / d) with high probability";
      c.criterion = "measured <= C x theory with C = " + fmt(options.attention_constant);
      c.theory = attention_bound(n, d);
      c.measured = s.max_attention_at_start;
      c.ok = c.measured <= options.attention_constant * c.theory;
      const bool hyp = attention_bound_hypotheses(n, d);
      c.details = {{"ratio", c.measured / c.theory}, {"hypotheses_hold", hyp ? 1.0 : 0.0}};
      c.note = hyp ? "e^sqrt(d) >= n log n >= d holds" : "outside the theorem's range e^sqrt(d) >= n log n >= d";
      out.checks.push_back(std::move(c));
    }
  }

  // ---- Theorem 4.3: near-consensus start.
  {
    std::string why;
    const double bound = theorem_4_3_delta_bound(n, beta);
    const double delta = s.one_minus_min_cosine.empty() ? kNaN : s.one_minus_min_cosine.front();
    if (!identity) why = "needs model.qkv = \"identity\"";
    else if (!starts_at_zero) why = "the run has no frame at t = 0";
    else if (!(delta < bound))
      why = "needs every cosine >= 1 - delta at t = 0 with delta < 1/(100 n^2 max(beta,1)^2) = " + fmt(bound) +
            "; the run starts with delta = " + fmt(delta);
    if (!why.empty()) {
      skip("theorem_4_3_variance_scale", why);
      skip("theorem_4_3_radial_growth", why);
    } else {
      const ScaleFit f = fit_variance_scale(s.t, s.variance, scheme, options.rate.floor);
      if (!f.ok) {
        skip("theorem_4_3_variance_scale", f.problem);
      } else {
        Check c;
        c.name = "theorem_4_3_variance_scale";
        c.statement = "dVar/dt = -Theta(Var / scale(t)), scale ~ t^m with m = " + fmt(variance_scale_exponent(scheme)) +
                      " for scheme " + key;
        c.criterion = "|fitted m - m| <= " + fmt(options.exponent_tolerance) +
                      ", m fitted from -d ln Var/dt ~ t^-m over the later half of the frames";
        c.theory = variance_scale_exponent(scheme);
        c.measured = f.exponent;
        c.ok = std::abs(f.exponent - c.theory) <= options.exponent_tolerance;
        c.details = {{"stderr", f.exponent_stderr}, {"q_min", f.q_min}, {"q_max", f.q_max},
                     {"window_start", f.t_start}, {"window_end", f.t_end}, {"delta", delta}};
        c.note = "q = (-d ln Var/dt) x scale(t) is the Theta(1) factor (2 near consensus)";
        out.checks.push_back(std::move(c));
      }
      const bool radial = std::holds_alternative<PreLN>(scheme) || std::holds_alternative<PeriLN>(scheme);
      if (!radial) {
        skip("theorem_4_3_radial_growth", "only for schemes pre and peri");
      } else {
        Check c;
        c.name = "theorem_4_3_radial_growth";
        c.statement = "r_j(t) - r_j(0) >= (1 - delta) t";
        c.criterion = "min over frames t > 0 and tokens of (r_j(t) - r_j(0)) / t >= (1 - delta)(1 - 1e-9)";
        c.theory = 1.0 - delta;
        double m = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < s.t.size(); ++i)
          if (s.t[i] > 0.0) m = std::min(m, s.min_radius_growth[i] / s.t[i]);
        c.measured = m;
        c.ok = m >= c.theory * (1.0 - 1e-9);
        out.checks.push_back(std::move(c));
      }
    }
  }

  // ---- Corollary of Theorem 3.1.
  {
    std::string why;
    const bool radial = std::holds_alternative<PreLN>(scheme) || std::holds_alternative<PeriLN>(scheme);
    if (!radial) why = "only for schemes pre and peri";
    else if (!identity) why = "needs model.qkv = \"identity\"";
    else if (!(n <= std::exp(beta))) why = "needs n <= e^beta";
    else if (s.min_radial_alignment.empty()) why = "<theta_j, A_j> was not computed";
    if (!why.empty()) {
      skip("corollary_radial_lower_bound", why);
    } else {
      Check c;
      c.name = "corollary_radial_lower_bound";
      c.statement = "<theta_j, A_j> >= (e^beta - n + 1) / (n e^beta) along the flow";
      c.criterion = "min over frames and tokens >= theory - 1e-12";
      c.theory = corollary_radial_bound(n, beta);
      c.measured = *std::min_element(s.min_radial_alignment.begin(), s.min_radial_alignment.end());
      c.ok = c.measured >= c.theory - 1e-12;
      out.checks.push_back(std::move(c));
    }
  }

  // ---- Energy.
  if (!identity) {
    skip("energy_monotonicity", "the energy sum exp(beta <theta_j, theta_k>) is monotone for Q = K = V = I");
  } else if (s.normalized_energy.size() < 2) {
    skip("energy_monotonicity", "needs at least 2 frames");
  } else {
    Check c;
    c.name = "energy_monotonicity";
    c.statement = "E = sum_jk exp(beta <theta_j, theta_k>) is non-decreasing";
    c.criterion = "largest relative decrease between consecutive frames <= " + fmt(options.energy_tolerance);
    c.theory = 0.0;
    double worst = -std::numeric_limits<double>::infinity();
    double where = 0.0;
    for (std::size_t i = 0; i + 1 < s.normalized_energy.size(); ++i) {
      const double drop = (s.normalized_energy[i] - s.normalized_energy[i + 1]) / s.normalized_energy[i];
      if (drop > worst) {
        worst = drop;
        where = s.t[i + 1];
      }
    }
    c.measured = worst;
    c.ok = worst <= options.energy_tolerance;
    c.details = {{"at_t", where}};
    c.note = "measured < 0: the energy increased between every pair of frames";
    if (config.solver.method == Method::discrete) c.note += "; discrete layers follow the gradient flow only up to O(h)";
    out.checks.push_back(std::move(c));
  }
  return out;
}

}  // namespace normdyn::analysis
