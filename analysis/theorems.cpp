#include "normdyn/analysis/theorems.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>
#include <type_traits>

namespace normdyn::analysis {
namespace {

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

namespace {

// The attention weights of a symmetric configuration (pairwise cosine γ, QᵀK = V = I), scaled by
// e^{−β} against overflow: w_self on θ_j, w_other on every other token.
struct SymmetricWeights {
  double self = 0.0, other = 0.0;
};
SymmetricWeights symmetric_weights(double n, double beta, double gamma) {
  const double e = std::exp(beta * (gamma - 1.0));
  const double z = 1.0 + (n - 1.0) * e;
  return {1.0 / z, e / z};
}

// A time inside the first smooth piece of the scheme (Mix-LN with τ = 0 is Pre-LN from the start).
double first_piece_time(const Scheme& scheme) {
  const auto b = scheme_breakpoints(scheme, 0.0, 1.0);
  return 0.5 * (b.empty() ? 1.0 : b.front());
}

}  // namespace

TokenContext symmetric_context(double n, double beta, double gamma, double r, double t) {
  const SymmetricWeights w = symmetric_weights(n, beta, gamma);
  TokenContext c;
  c.t = t;
  c.t_regime = t;
  c.r = r;
  c.theta_dot_a = w.self + w.other * (n - 1.0) * gamma;
  c.a_norm = std::sqrt(w.self * w.self + 2.0 * w.self * w.other * (n - 1.0) * gamma +
                       w.other * w.other * ((n - 1.0) + (n - 1.0) * (n - 2.0) * gamma));
  return c;
}

double symmetric_start_speed(const Scheme& scheme, double n, double beta, double r0) {
  TokenContext c = symmetric_context(n, beta, 0.0, r0, 0.0);
  c.t_regime = first_piece_time(scheme);
  return scheme_speed(scheme, c);
}

double initial_slope_theory(const Scheme& scheme, double n, double beta, double r0) {
  // dγ/dt = (1/s_j + 1/s_k)(<A_j, θ_k> − <θ_j, A_j> γ) and, at γ = 0, <A_j, θ_k> = w_other.
  return 2.0 * symmetric_weights(n, beta, 0.0).other / symmetric_start_speed(scheme, n, beta, r0);
}

double initial_layer_slope_theory(const Scheme& scheme, double n, double beta, double r0, double h) {
  TokenContext c = symmetric_context(n, beta, 0.0, r0, 0.0);
  c.t_regime = first_piece_time(scheme);
  const LayerUpdate u = scheme_layer(scheme, c);
  const SymmetricWeights w = symmetric_weights(n, beta, 0.0);
  // θ_j + h u_j (renormalized) or r0 θ_j + h u_j (residual) = a θ_j + b Σ_{k≠j} θ_k.
  const double a = (u.renormalized ? 1.0 : r0) + h * (u.coef_theta + u.coef_attention * w.self);
  const double b = h * u.coef_attention * w.other;
  const double gamma = (2.0 * a * b + (n - 2.0) * b * b) / (a * a + (n - 1.0) * b * b);
  return gamma / h;
}

double symmetric_speed(const Scheme& scheme, double n, double beta, double gamma, double r, double t) {
  return scheme_speed(scheme, symmetric_context(n, beta, gamma, r, t));
}

std::optional<ExpectedDecay> symmetric_decay_theory(const Scheme& scheme) {
  const auto theory = scheme_theory(scheme);
  if (!theory) return std::nullopt;
  const auto law = decay_law_from_string(theory->symmetric_law);
  if (!law) return std::nullopt;
  return ExpectedDecay{*law, theory->symmetric_parameter};
}

double variance_scale(const Scheme& scheme, double t, double r) {
  TokenContext c;
  c.t = t;
  c.t_regime = t;
  c.r = r;
  c.theta_dot_a = 1.0;
  c.a_norm = 1.0;
  return scheme_speed(scheme, c);
}

std::string_view to_string(Outcome o) noexcept {
  switch (o) {
    case Outcome::ok:
      return "ok";
    case Outcome::fail:
      return "fail";
    case Outcome::not_asymptotic:
      return "not_asymptotic";
  }
  return "fail";
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

std::optional<Derivative> derivative_at_start(std::span<const double> t, std::span<const double> y,
                                              std::size_t points) {
  const std::size_t m = std::min({points, std::size_t{5}, t.size()});
  if (m < 3) return std::nullopt;
  const double hi = lagrange_derivative(t, y, m);
  const double lo = lagrange_derivative(t, y, m - 1);
  return Derivative{hi, std::abs(hi - lo)};
}

namespace {

// Least squares y = a + b x; returns b and its standard error.
std::pair<double, double> line_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const auto m = static_cast<double>(x.size());
  double mx = 0.0, my = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= m;
  my /= m;
  double sxx = 0.0, sxy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  const double b = sxx > 0.0 ? sxy / sxx : 0.0;
  double rss = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) rss += std::pow(y[i] - my - b * (x[i] - mx), 2);
  const double se = (x.size() > 2 && sxx > 0.0) ? std::sqrt(rss / (m - 2.0) / sxx) : kNaN;
  return {b, se};
}

double radius_at(std::span<const double> radius, std::size_t i, double fallback) {
  return i < radius.size() && std::isfinite(radius[i]) ? radius[i] : fallback;
}

}  // namespace

ScaleFit fit_variance_scale(std::span<const double> t, std::span<const double> variance, std::span<const double> radius,
                            const Scheme& scheme, double floor) {
  return fit_variance_scale(
      t, variance, radius, [&](double time, double r) { return variance_scale(scheme, time, r); }, floor);
}

ScaleFit fit_variance_scale(std::span<const double> t, std::span<const double> variance, std::span<const double> radius,
                            const std::function<double(double t, double r)>& scale_of, double floor) {
  ScaleFit f;
  // Usable frames: Var > floor from the start up to the first that is not.
  std::size_t end = 0;
  while (end < variance.size() && std::isfinite(variance[end]) && variance[end] > floor) ++end;
  std::vector<double> tm, k, scale;
  for (std::size_t i = 0; i + 1 < end; ++i) {
    const double dt = t[i + 1] - t[i];
    const double rate = -(std::log(variance[i + 1]) - std::log(variance[i])) / dt;
    const double mid = 0.5 * (t[i] + t[i + 1]);
    const double r = 0.5 * (radius_at(radius, i, 1.0) + radius_at(radius, i + 1, 1.0));
    if (mid > 0.0 && rate > 0.0) {
      tm.push_back(mid);
      k.push_back(rate);
      // The pair's own regime: the scale at its midpoint (Mix-LN's switch falls between frames).
      scale.push_back(scale_of(mid, r));
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
  std::vector<double> lt, lk, lq, lt_late, lq_late;
  f.q_min = std::numeric_limits<double>::infinity();
  f.q_max = -f.q_min;
  const double t_late = tm[use.front()] + 0.5 * (tm[use.back()] - tm[use.front()]);
  for (std::size_t i : use) {
    const double q = k[i] * scale[i];
    lt.push_back(std::log(tm[i]));
    lk.push_back(std::log(k[i]));
    lq.push_back(std::log(q));
    if (tm[i] >= t_late) {
      lt_late.push_back(std::log(tm[i]));
      lq_late.push_back(std::log(q));
    }
    f.q_min = std::min(f.q_min, q);
    f.q_max = std::max(f.q_max, q);
  }
  const auto [mk, mk_se] = line_slope(lt, lk);
  f.exponent = -mk;
  f.exponent_stderr = mk_se;
  std::tie(f.q_exponent, f.q_exponent_stderr) = line_slope(lt, lq);
  f.q_exponent_late = lt_late.size() >= 3 ? line_slope(lt_late, lq_late).first : kNaN;
  const std::size_t i0 = use.front(), i1 = use.back();
  f.scale_exponent = std::log(scale[i1] / scale[i0]) / std::log(tm[i1] / tm[i0]);
  f.t_start = tm[i0];
  f.t_end = tm[i1];
  f.points = use.size();
  f.ok = true;
  return f;
}

namespace {

// The clock T(t_i) = ∫_0^t ds / s(s) of Theorem 4.1 along the run's own symmetric trajectory
// (trapezoids over the frames; s from the header at the frame's γ and radius).
std::vector<double> symmetric_clock(const Scheme& scheme, const CheckSeries& s, double n, double beta, double r0) {
  std::vector<double> clock(s.t.size(), 0.0);
  auto inv_speed = [&](std::size_t i, double t_regime) {
    TokenContext c =
        symmetric_context(n, beta, 1.0 - s.one_minus_mean_cosine[i], radius_at(s.mean_radius, i, r0), s.t[i]);
    c.t_regime = t_regime;
    return 1.0 / scheme_speed(scheme, c);
  };
  for (std::size_t i = 1; i < s.t.size(); ++i) {
    const double mid = 0.5 * (s.t[i - 1] + s.t[i]);  // the interval's regime for both ends
    clock[i] = clock[i - 1] + 0.5 * (s.t[i] - s.t[i - 1]) * (inv_speed(i - 1, mid) + inv_speed(i, mid));
  }
  return clock;
}

}  // namespace

AsymptoticVerdict asymptotic_verdict(double claim, double early, double late, double tolerance, double resolution) {
  const double unit = claim != 0.0 ? std::abs(claim) : 1.0;
  AsymptoticVerdict v;
  v.deviation = std::abs(late - claim) / unit;
  v.drift = std::abs(late - early) / unit;
  if (!std::isfinite(v.drift)) v.drift = std::numeric_limits<double>::infinity();
  v.detectable = tolerance + v.drift;
  if (!std::isfinite(v.deviation))
    v.outcome = Outcome::fail;
  else if (v.deviation <= tolerance && v.detectable <= resolution)
    v.outcome = Outcome::ok;
  else if (v.deviation > tolerance + v.drift)
    v.outcome = Outcome::fail;
  else
    v.outcome = Outcome::not_asymptotic;
  return v;
}

CheckContext check_context(const RunConfig& config, const AttentionNorms& attention) {
  CheckContext c;
  c.scheme = config.model.scheme;
  c.n = static_cast<double>(config.model.n);
  c.d = static_cast<double>(config.model.d);
  c.beta = config.model.beta;
  c.qkv = config.model.qkv;
  c.attention = attention;
  c.init = config.init.kind;
  c.r0 = config.init.r0;
  c.horizon = config.solver.t_end;
  c.discrete = config.solver.method == Method::discrete;
  c.layer_step = config.solver.dt;
  if (const AttentionSpec& a = config.attention; !a.is_default()) {
    const Traits traits = a.traits();
    c.traits.exchangeable = traits.exchangeable;
    c.traits.energy_gradient = traits.has_energy;
    c.attention_outside_paper = describe(a) + ": the paper's theorems are stated for softmax attention over all tokens";
    if (const std::string b = a.breaking_setting(&Traits::exchangeable); !b.empty())
      c.attention_outside_paper = b + ": tokens are not exchangeable (the paper's theorems need exchangeable tokens)";
  }
  if (config.feedforward.active())
    c.attention_outside_paper = "feedforward.weights = \"" + std::string(to_string(config.feedforward.weights)) +
                                "\": the paper's theorems are stated for attention alone";
  if (!config.terms.empty()) {
    c.traits.energy_gradient = false;
    c.traits.exchangeable = false;
    c.attention_outside_paper =
        "the term '" + config.terms.front().name +
        "' of the user's: no gradient flow (the paper's theorems are stated for attention alone)";
  }
  if (!config.noise.traits().deterministic)
    c.attention_outside_paper = describe(config.noise) + ": the paper's theorems are stated for the deterministic flow";
  if (config.model.heads > 1 && c.attention_outside_paper.empty())
    c.attention_outside_paper = "model.heads = " + std::to_string(config.model.heads) +
                                ": the paper's theorems are stated for one attention head";
  return c;
}

namespace {

// ---- Hypotheses (each returns why the context does not meet it).

using Why = std::optional<std::string>;

Hypothesis needs(std::string why, std::function<bool(const CheckContext&)> holds) {
  return [why = std::move(why), holds = std::move(holds)](const CheckContext& c) -> Why {
    if (holds(c)) return std::nullopt;
    return why;
  };
}

bool identity_like(const CheckContext& c) {
  return c.attention.max_qk_minus_identity <= c.norm_tolerance && c.attention.max_v_minus_identity <= c.norm_tolerance;
}

// QᵀK = I and V = I over the run: the laws of Q = K = V = I (e.g. orthogonal Q = K).
Hypothesis identity_attention() {
  return [](const CheckContext& c) -> Why {
    if (identity_like(c)) return std::nullopt;
    return "needs QᵀK = I and V = I over the run (max |QᵀK - I| = " + fmt(c.attention.max_qk_minus_identity) +
           ", max |V - I| = " + fmt(c.attention.max_v_minus_identity) + ")";
  };
}

Hypothesis start_is(InitKind kind, std::string what) {
  return needs("needs init.kind = \"" + std::string(to_string(kind)) + "\"" + (what.empty() ? "" : " (" + what + ")"),
               [kind](const CheckContext& c) { return c.init == kind; });
}

Hypothesis exchangeable_tokens() {
  return needs("needs exchangeable tokens (the attention treats every token alike: no mask, no positions)",
               [](const CheckContext& c) { return c.traits.exchangeable; });
}

Hypothesis declares_theory() {
  return [](const CheckContext& c) -> Why {
    if (scheme_theory(c.scheme)) return std::nullopt;
    return "scheme " + std::string(scheme_key(c.scheme)) + " declares no theory (no theory() in its header)";
  };
}

Hypothesis v_identity() {
  return [](const CheckContext& c) -> Why {
    if (c.attention.max_v_minus_identity <= c.norm_tolerance) return std::nullopt;
    return "needs V = I (max |V - I| = " + fmt(c.attention.max_v_minus_identity) + ")";
  };
}

Hypothesis qk_norm_at_most_one() {
  return [](const CheckContext& c) -> Why {
    if (c.attention.max_qk_norm <= 1.0 + c.norm_tolerance) return std::nullopt;
    return "needs |Q^T K| <= 1 (max 2-norm " + fmt(c.attention.max_qk_norm) + ")";
  };
}

Hypothesis unit_norm_attention_at_start() {
  return [](const CheckContext& c) -> Why {
    if (std::max(c.attention.qk_norm_at_start, c.attention.v_norm_at_start) <= 1.0 + c.norm_tolerance)
      return std::nullopt;
    return "needs max(|Q^T K|, |V|) <= 1 at t = 0 (2-norms " + fmt(c.attention.qk_norm_at_start) + ", " +
           fmt(c.attention.v_norm_at_start) + ")";
  };
}

// The interaction energy Σ exp(β <Qθ_j, Kθ_k>) is a Lyapunov function: QᵀK symmetric, V = QᵀK and
// softmax self-attention.
Hypothesis energy_structure() {
  return [](const CheckContext& c) -> Why {
    if (!c.traits.energy_gradient) return "needs an attention whose flow is a gradient flow of the interaction energy";
    if (c.attention.max_energy_asymmetry <= c.norm_tolerance) return std::nullopt;
    return "the energy sum exp(beta <Q theta_j, K theta_k>) is monotone when Q^T K is symmetric and V = Q^T K (max "
           "asymmetry " +
           fmt(c.attention.max_energy_asymmetry) + ")";
  };
}

Hypothesis theory_flag(bool SchemeTheory::*flag, std::string what) {
  return [flag, what = std::move(what)](const CheckContext& c) -> Why {
    const auto theory = scheme_theory(c.scheme);
    if (theory && (*theory).*flag) return std::nullopt;
    return "scheme " + std::string(scheme_key(c.scheme)) + " declares no " + what;
  };
}

// ---- Verdict helpers.

void decide(Check& c, bool ok, bool asymptotic_undecided) {
  c.outcome = ok ? Outcome::ok : (asymptotic_undecided ? Outcome::not_asymptotic : Outcome::fail);
  c.ok = c.outcome == Outcome::ok;
}

void decide(Check& c, Outcome outcome) {
  c.outcome = outcome;
  c.ok = outcome == Outcome::ok;
}

bool starts_at_zero(const CheckSeries& s) { return !s.t.empty() && s.t.front() == 0.0; }

std::vector<double> gamma_series(const CheckSeries& s) {
  std::vector<double> gamma(s.one_minus_mean_cosine.size());
  for (std::size_t i = 0; i < gamma.size(); ++i) gamma[i] = 1.0 - s.one_minus_mean_cosine[i];
  return gamma;
}

// ---- Theorem 4.1: the symmetric start (d ≥ n, orthonormal tokens, QᵀK = V = I).

std::vector<Hypothesis> symmetric_start() {
  return {start_is(InitKind::orthonormal, "the symmetric start"), identity_attention(), exchangeable_tokens(),
          needs("needs d >= n", [](const CheckContext& c) { return c.d >= c.n; })};
}

CheckResult initial_slope(const CheckInput& in) {
  const CheckContext& x = in.context;
  const CheckSeries& s = in.series;
  const CheckOptions& options = in.options;
  if (!starts_at_zero(s)) return Undecided{"the run has no frame at t = 0"};
  const std::string key(scheme_key(x.scheme));
  const std::vector<double> gamma = gamma_series(s);
  const double ode_theory = initial_slope_theory(x.scheme, x.n, x.beta, x.r0);
  Check c;
  c.name = "theorem_4_1_initial_slope";
  if (x.discrete) {
    // The run's own first layer against the header's layer map at the symmetric start.
    const double h = x.layer_step;
    const bool one_layer = s.t.size() >= 2 && std::abs((s.t[1] - s.t[0]) - h) <= 1e-9 * h;
    if (!one_layer)
      return Undecided{"discrete run: needs a frame after the first layer (frames every layer at the start)"};
    c.statement =
        "one layer of step h from the symmetric start changes gamma by h x (the header's layer map in "
        "closed form); its h -> 0 limit is (1/s_j + 1/s_k) / (e^beta + n - 1) for scheme " +
        key;
    c.criterion = "|measured - theory| <= " + fmt(options.slope_tolerance) + " |theory|";
    c.theory = initial_layer_slope_theory(x.scheme, x.n, x.beta, x.r0, h);
    c.measured = (gamma[1] - gamma[0]) / (s.t[1] - s.t[0]);
    decide(c, std::abs(c.measured - c.theory) <= options.slope_tolerance * std::abs(c.theory), false);
    c.details = {{"relative_error", (c.measured - c.theory) / c.theory}, {"ode_slope", ode_theory}, {"h", h}};
    c.note = "measured: (gamma after the first layer - gamma(0)) / h, from the run's frames";
    return c;
  }
  const auto slope = derivative_at_start(s.t, gamma);
  const bool from_velocity = std::isfinite(s.initial_slope_velocity);
  // The polynomial through the first frames is trusted only where gamma is nearly linear: a small
  // change over those frames and agreement of the last two degrees.
  const std::size_t m = std::min<std::size_t>(5, gamma.size());
  const bool frames_fine = slope && std::abs(gamma[m - 1] - gamma[0]) <= options.frame_slope_span &&
                           slope->error <= options.frame_slope_accuracy * std::abs(ode_theory);
  if (!from_velocity && !frames_fine)
    return Undecided{slope ? "the velocity at t = 0 was not computed and the first frames are too far apart to measure "
                             "the slope (gamma changes by " +
                                 fmt(std::abs(gamma[m - 1] - gamma[0])) + " over them, error estimate " +
                                 fmt(slope->error) + ")"
                           : "needs at least 3 frames or the velocity at t = 0"};
  c.statement = "d gamma/dt(0) = (1/s_j + 1/s_k) / (e^beta + n - 1) for scheme " + key +
                " (s_j from the header's speed at the symmetric start)";
  c.theory = ode_theory;
  bool ok = false;
  if (from_velocity) {
    c.criterion = "|measured - theory| <= " + fmt(options.slope_tolerance) + " |theory|";
    c.measured = s.initial_slope_velocity;
    ok = std::abs(c.measured - c.theory) <= options.slope_tolerance * std::abs(c.theory);
    c.note = "measured: 2n/(n-1) <mean theta, mean velocity> at t = 0, from the run's velocity field";
  } else {
    c.criterion = "|measured - theory| <= " + fmt(options.frame_slope_accuracy) +
                  " |theory| + 3 x (error estimate of the derivative from the first frames)";
    c.measured = slope->value;
    ok = std::abs(c.measured - c.theory) <= options.frame_slope_accuracy * std::abs(c.theory) + 3.0 * slope->error;
    c.note = "measured: derivative at t = 0 of the polynomial through the first frames of the mean cosine";
  }
  decide(c, ok, false);
  c.details = {{"relative_error", (c.measured - c.theory) / c.theory},
               {"from_frames", slope ? slope->value : kNaN},
               {"from_frames_error_estimate", slope ? slope->error : kNaN}};
  return c;
}

CheckResult symmetry(const CheckInput& in) {
  const CheckSeries& s = in.series;
  if (!starts_at_zero(s)) return Undecided{"the run has no frame at t = 0"};
  Check c;
  c.name = "theorem_4_1_symmetry";
  c.statement = "all pairwise cosines stay equal to one value gamma(t)";
  c.criterion = "max over frames of (1 - min cosine) - (1 - mean cosine) <= " + fmt(in.options.symmetry_tolerance);
  c.theory = 0.0;
  double spread = 0.0;
  for (std::size_t i = 0; i < s.t.size(); ++i)
    spread = std::max(spread, s.one_minus_min_cosine[i] - s.one_minus_mean_cosine[i]);
  c.measured = spread;
  decide(c, spread <= in.options.symmetry_tolerance, false);
  return c;
}

// ln(1 − γ) against the clock T = ∫ dt/s in the later half of the usable frames.
CheckResult decay_rate(const CheckInput& in) {
  const CheckContext& x = in.context;
  const CheckSeries& s = in.series;
  const CheckOptions& options = in.options;
  if (!starts_at_zero(s)) return Undecided{"the run has no frame at t = 0"};
  const std::string key(scheme_key(x.scheme));
  const auto theory = scheme_theory(x.scheme);
  const std::vector<double> clock = symmetric_clock(x.scheme, s, x.n, x.beta, x.r0);
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < s.t.size(); ++i) {
    const double u = s.one_minus_mean_cosine[i];
    if (!(std::isfinite(u) && u > options.rate.floor)) break;
    if (s.t[i] > 0.0) usable.push_back(i);
  }
  TimeWindow w;
  if (options.rate.window)
    w = *options.rate.window;
  else if (usable.size() >= 2)
    w = {s.t[usable.back()] - 0.5 * (s.t[usable.back()] - s.t[usable.front()]), s.t[usable.back()]};
  std::vector<double> x_all, y_all, x_late, y_late;
  const double t_mid = 0.5 * (w.t_start + w.t_end);
  for (std::size_t i : usable)
    if (s.t[i] >= w.t_start && s.t[i] <= w.t_end) {
      const double cx = -2.0 * clock[i], cy = std::log(s.one_minus_mean_cosine[i]);
      x_all.push_back(cx);
      y_all.push_back(cy);
      if (s.t[i] >= t_mid) x_late.push_back(cx), y_late.push_back(cy);
    }
  if (x_all.size() < 5 || x_late.size() < 3)
    return Undecided{"fewer than 5 usable frames (1 - gamma > " + fmt(options.rate.floor) + ") in the window"};
  // Slope of ln(1 − γ) against −2T: 1 when 1 − γ ~ C exp(−2T). The whole window and its later half
  // are the two windows of the asymptotic verdict.
  const auto [k, k_se] = line_slope(x_all, y_all);
  const double k_late = line_slope(x_late, y_late).first;
  const double decay = std::exp(y_all.front() - y_all.back());
  const auto named = symmetric_decay_theory(x.scheme);
  const AsymptoticVerdict v = asymptotic_verdict(1.0, k, k_late, options.rate_tolerance, options.rate_resolution);
  Check c;
  c.name = "theorem_4_1_decay_rate";
  c.statement =
      "1 - gamma ~ C exp(-2 T(t)), T = int dt / s_j along the run" +
      (named ? " (the " + std::string(to_string(named->law)) + " law with parameter " + fmt(named->parameter) + ")"
             : std::string(theory->symmetric_law.empty() ? " (none of the named laws)" : "")) +
      " for scheme " + key;
  c.criterion =
      "the slope k of ln(1 - gamma) against 2T over the later half of the usable frames (the window) and "
      "k' over the window's later half: ok if |k' - 1| <= " +
      fmt(options.rate_tolerance) + " and the run resolves a change of " + fmt(options.rate_resolution) +
      " (tolerance + |k' - k|); fail if |k' - 1| exceeds the tolerance plus that drift and 1 - gamma falls "
      "by at least 10x over the window; otherwise not_asymptotic";
  c.theory = 1.0;
  c.measured = k_late;
  decide(c, decay < 10.0 && v.outcome == Outcome::fail ? Outcome::not_asymptotic : v.outcome);
  c.details = {{"stderr", k_se},        {"whole_window", k},         {"resolution", v.detectable},
               {"decay_factor", decay}, {"window_start", w.t_start}, {"window_end", w.t_end}};
  if (named) c.details.emplace_back("named_parameter_implied", named->parameter * k_late);
  c.note = "measured on the run's own trajectory (the speed factor at its gamma and radius)";
  if (x.discrete) c.note += "; discrete layers follow the ODE only up to O(h)";
  return c;
}

// ---- Theorem 4.2: attention at a uniform start.

CheckResult attention_at_start(const CheckInput& in) {
  const CheckContext& x = in.context;
  const CheckSeries& s = in.series;
  if (!std::isfinite(s.max_attention_at_start)) return Undecided{"max_j |A_j(0)| was not computed"};
  Check c;
  c.name = "theorem_4_2_attention_at_start";
  c.statement = "max_j |A_j(0)| <= C (sqrt(log n / n) + log n / d) with high probability";
  c.criterion = "measured <= C x theory with C = " + fmt(in.options.attention_constant);
  c.theory = attention_bound(x.n, x.d);
  c.measured = s.max_attention_at_start;
  decide(c, c.measured <= in.options.attention_constant * c.theory, false);
  const bool hyp = attention_bound_hypotheses(x.n, x.d);
  c.details = {{"ratio", c.measured / c.theory},
               {"hypotheses_hold", hyp ? 1.0 : 0.0},
               {"qk_norm", x.attention.qk_norm_at_start},
               {"v_norm", x.attention.v_norm_at_start}};
  c.note = hyp ? "e^sqrt(d) >= n log n >= d holds" : "outside the theorem's range e^sqrt(d) >= n log n >= d";
  return c;
}

// ---- Theorem 4.3: near-consensus start. Its δ is measured on the run's first frame.

std::optional<std::string> cap_hypothesis(const CheckInput& in, double& delta) {
  const CheckSeries& s = in.series;
  if (!starts_at_zero(s)) return "the run has no frame at t = 0";
  const double bound = theorem_4_3_delta_bound(in.context.n, in.context.beta);
  delta = s.one_minus_min_cosine.empty() ? kNaN : s.one_minus_min_cosine.front();
  if (!(delta < bound))
    return "needs every cosine >= 1 - delta at t = 0 with delta < 1/(100 n^2 max(beta,1)^2) = " + fmt(bound) +
           "; the run starts with delta = " + fmt(delta);
  return std::nullopt;
}

CheckResult variance_scale_check(const CheckInput& in) {
  const CheckContext& x = in.context;
  const CheckSeries& s = in.series;
  double delta = kNaN;
  if (auto why = cap_hypothesis(in, delta)) return Undecided{*why};
  const ScaleFit f = fit_variance_scale(s.t, s.variance, s.mean_radius, x.scheme, in.options.rate.floor);
  if (!f.ok) return Undecided{f.problem};
  const double tol = in.options.exponent_tolerance;
  Check c;
  c.name = "theorem_4_3_variance_scale";
  c.statement = "dVar/dt = -Theta(Var / scale(t)), scale(t) = the speed factor of scheme " +
                std::string(scheme_key(x.scheme)) + " near consensus at the run's radius";
  c.criterion = "q = (-d ln Var/dt) x scale(t) ~ t^b over the later half of the frames with |b| <= " + fmt(tol) +
                "; not_asymptotic if b is outside and moves by more than that in the later half of the window";
  c.theory = 0.0;
  c.measured = f.q_exponent;
  const bool close = std::abs(f.q_exponent) <= tol;
  const bool drifting = std::isfinite(f.q_exponent_late) && std::abs(f.q_exponent_late - f.q_exponent) > tol;
  decide(c, close, drifting);
  c.details = {{"stderr", f.q_exponent_stderr},
               {"late_half", f.q_exponent_late},
               {"rate_exponent", f.exponent},
               {"scale_exponent", f.scale_exponent},
               {"q_min", f.q_min},
               {"q_max", f.q_max},
               {"window_start", f.t_start},
               {"window_end", f.t_end},
               {"delta", delta}};
  c.note =
      "q is the Theta(1) factor (2 near consensus); rate_exponent m of -d ln Var/dt ~ t^-m against "
      "scale_exponent of scale(t)";
  return c;
}

CheckResult radial_growth(const CheckInput& in) {
  const CheckSeries& s = in.series;
  double delta = kNaN;
  if (auto why = cap_hypothesis(in, delta)) return Undecided{*why};
  if (s.min_radius_growth.size() < s.t.size()) return Undecided{"min_j (r_j(t) - r_j(0)) was not computed"};
  Check c;
  c.name = "theorem_4_3_radial_growth";
  c.statement = "r_j(t) - r_j(0) >= (1 - delta) t";
  c.criterion = "min over frames t > 0 and tokens of (r_j(t) - r_j(0)) / t >= (1 - delta)(1 - 1e-9)";
  c.theory = 1.0 - delta;
  double m = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < s.t.size(); ++i)
    if (s.t[i] > 0.0) m = std::min(m, s.min_radius_growth[i] / s.t[i]);
  c.measured = m;
  decide(c, m >= c.theory * (1.0 - 1e-9), false);
  return c;
}

// ---- Corollary of Theorem 3.1.

CheckResult radial_lower_bound(const CheckInput& in) {
  const CheckSeries& s = in.series;
  if (s.min_radial_alignment.empty()) return Undecided{"<theta_j, A_j> was not computed"};
  Check c;
  c.name = "corollary_radial_lower_bound";
  c.statement = "<theta_j, A_j> >= (e^beta - n + 1) / (n e^beta) along the flow";
  c.criterion = "min over frames and tokens >= theory - 1e-12";
  c.theory = corollary_radial_bound(in.context.n, in.context.beta);
  c.measured = *std::min_element(s.min_radial_alignment.begin(), s.min_radial_alignment.end());
  decide(c, c.measured >= c.theory - 1e-12, false);
  return c;
}

// ---- Energy.

CheckResult energy_monotonicity(const CheckInput& in) {
  const CheckSeries& s = in.series;
  if (s.normalized_energy.size() < 2) return Undecided{"needs at least 2 frames"};
  Check c;
  c.name = "energy_monotonicity";
  c.statement = "E = sum_jk exp(beta <theta_j, theta_k>) is non-decreasing";
  c.criterion = "largest relative decrease between consecutive frames <= " + fmt(in.options.energy_tolerance);
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
  decide(c, worst <= in.options.energy_tolerance, false);
  c.details = {{"at_t", where}};
  c.note = "measured < 0: the energy increased between every pair of frames";
  if (in.context.discrete) c.note += "; discrete layers follow the gradient flow only up to O(h)";
  return c;
}

std::vector<TheoremCheck> make_check_list() {
  const std::vector<Hypothesis> sym = symmetric_start();
  auto with = [](std::vector<Hypothesis> h, std::initializer_list<Hypothesis> more) {
    h.insert(h.end(), more.begin(), more.end());
    return h;
  };
  const std::vector<Hypothesis> cap = {declares_theory(), v_identity(), qk_norm_at_most_one()};
  return {
      {"theorem_4_1_initial_slope", "Theorem 4.1", sym, initial_slope},
      {"theorem_4_1_symmetry", "Theorem 4.1", sym, symmetry},
      {"theorem_4_1_decay_rate", "Theorem 4.1", with(sym, {declares_theory()}), decay_rate},
      {"theorem_4_2_attention_at_start",
       "Theorem 4.2",
       {start_is(InitKind::uniform, ""),
        needs("needs model.beta = 1", [](const CheckContext& c) { return c.beta == 1.0; }),
        unit_norm_attention_at_start()},
       attention_at_start},
      {"theorem_4_3_variance_scale", "Theorem 4.3", cap, variance_scale_check},
      {"theorem_4_3_radial_growth", "Theorem 4.3",
       with(cap, {theory_flag(&SchemeTheory::radial_growth, "radial growth (Theorem 4.3 states it for pre and peri)")}),
       radial_growth},
      {"corollary_radial_lower_bound",
       "Corollary of Theorem 3.1",
       {declares_theory(),
        theory_flag(&SchemeTheory::radial_alignment_bound, "radial bound (the Corollary is stated for pre and peri)"),
        identity_attention(),
        needs("needs n <= e^beta", [](const CheckContext& c) { return c.n <= std::exp(c.beta); })},
       radial_lower_bound},
      {"energy_monotonicity",
       "Energy (spec 4.1)",
       {energy_structure(),
        needs("the recorded energy is that of Q = K = V = I; the run's Q^T K is another symmetric matrix",
              identity_like)},
       energy_monotonicity},
  };
}

}  // namespace

const std::vector<TheoremCheck>& theorem_check_list() {
  static const std::vector<TheoremCheck> list = make_check_list();
  return list;
}

Checks theorem_checks(const CheckContext& context, const CheckSeries& series, const CheckOptions& options) {
  Checks out;
  const CheckInput in{context, series, options};
  for (const TheoremCheck& check : theorem_check_list()) {
    std::optional<std::string> why;
    if (!context.attention_outside_paper.empty()) {
      why = context.attention_outside_paper;
    } else {
      for (const Hypothesis& h : check.hypotheses)
        if ((why = h(context))) break;
    }
    if (why) {
      out.skipped.push_back({check.name, *why});
      continue;
    }
    CheckResult r = check.verdict(in);
    if (auto* u = std::get_if<Undecided>(&r)) {
      out.skipped.push_back({check.name, std::move(u->reason)});
    } else {
      Check& c = std::get<Check>(r);
      c.name = check.name;
      c.theorem = check.theorem;
      out.checks.push_back(std::move(c));
    }
  }
  return out;
}

Checks theorem_checks(const RunConfig& config, const CheckSeries& series, const CheckOptions& options) {
  return theorem_checks(check_context(config, series.attention), series, options);
}

}  // namespace normdyn::analysis
