#pragma once
// What the paper states of each scheme, written out here per scheme type from the statements of spec
// section 4, independently of the scheme headers' speed() and radial_rate() (which the engine, the
// reduced ODE and the analysis checks use). The rows of `normdyn reproduce` compare the engine's
// trajectories with these values, so that a wrong speed factor or radial rate in the code cannot
// agree with itself. A scheme without an entry here (a scheme added later) gets nothing: its rows
// are not measured, and the report says so.
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "normdyn/schemes.hpp"

namespace normdyn::studies {

// Theorem 4.1: dγ/dt(0) at the symmetric start (orthonormal tokens, radii r0, Q = K = V = I):
// 2/(e^β + n − 1) for Post-LN, Mix-LN (τ > 0) and LN-Scaling, 2/(r0 (e^β + n − 1)) for Pre-LN (and
// Mix-LN with τ = 0), 2/(r0 sqrt(e^{2β} + n − 1)) for Peri-LN, 2 α_0/sqrt(e^{2β} + n − 1) for nGPT.
inline std::optional<double> stated_initial_slope(const Scheme& s, double n, double beta, double r0) {
  const double e = std::exp(beta);
  const double plain = 2.0 / (e + n - 1.0);
  const double unit = 2.0 / std::sqrt(e * e + n - 1.0);
  return std::visit(
      [&](const auto& x) -> std::optional<double> {
        using S = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<S, PostLN> || std::is_same_v<S, LNScaling>)
          return plain;
        else if constexpr (std::is_same_v<S, PreLN>)
          return plain / r0;
        else if constexpr (std::is_same_v<S, MixLN>)
          return x.tau > 0.0 ? plain : plain / r0;
        else if constexpr (std::is_same_v<S, PeriLN>)
          return unit / r0;
        else if constexpr (std::is_same_v<S, NGPT>)
          return x.alpha * unit;  // α_0 = α for every schedule
        else
          return std::nullopt;
      },
      s);
}

// nGPT's ∫_0^t α_s ds for α_t = α/(1 + t)^p.
inline double integrated_alpha(const NGPT& x, double t) {
  const double p = x.alpha_decay;
  if (p == 0.0) return x.alpha * t;
  if (p == 1.0) return x.alpha * std::log1p(t);
  return x.alpha * (std::pow(1.0 + t, 1.0 - p) - 1.0) / (1.0 - p);
}

// Theorem 4.1, t → ∞: ln(1 − γ) ≈ const + slope · clock(t), with the clock and slope of the stated law:
//   Post-LN e^{−2t}, Pre- and Peri-LN C/t², Mix-LN C/(t − τ)², nGPT e^{−2 ∫α}, LN-Scaling C e^{−4 sqrt(t)}.
// The clocks are those of the law's leading term (ln t for the power laws: the shift of the origin
// is a lower-order effect that the windows of the rows resolve).
struct StatedLaw {
  std::string text;  // "C/t^2", ...
  std::string clock_name;
  double slope = 0.0;  // of ln(1 − γ) against the clock
  double (*clock)(double t, double parameter) = nullptr;
  double parameter = 0.0;  // the clock's parameter (nGPT's decay power)
};

inline std::optional<StatedLaw> stated_symmetric_law(const Scheme& s) {
  auto linear = [](double t, double) { return t; };
  auto logarithm = [](double t, double) { return std::log(t); };
  auto root = [](double t, double) { return std::sqrt(t + 1.0); };
  return std::visit(
      [&](const auto& x) -> std::optional<StatedLaw> {
        using S = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<S, PostLN>)
          return StatedLaw{"C exp(-2 t)", "t", -2.0, linear};
        else if constexpr (std::is_same_v<S, PreLN> || std::is_same_v<S, PeriLN>)
          return StatedLaw{"C/t^2", "ln t", -2.0, logarithm};
        else if constexpr (std::is_same_v<S, MixLN>)
          return StatedLaw{"C/(t - tau)^2", "ln t", -2.0, logarithm};
        else if constexpr (std::is_same_v<S, LNScaling>)
          return StatedLaw{"C exp(-4 sqrt(t + 1))", "sqrt(t + 1)", -4.0, root};
        else if constexpr (std::is_same_v<S, NGPT>) {
          // e^{−2∫α}: the clock ∫α/α, which is t, 2 sqrt(1 + t) − 2, ln(1 + t), ... by the schedule.
          auto alpha_clock = [](double t, double p) {
            return p == 0.0 ? t : p == 1.0 ? std::log1p(t) : (std::pow(1.0 + t, 1.0 - p) - 1.0) / (1.0 - p);
          };
          return StatedLaw{"C exp(-2 int alpha)", "int_0^t ds/(1 + s)^p", -2.0 * x.alpha, alpha_clock, x.alpha_decay};
        } else
          return std::nullopt;
      },
      s);
}

// Theorem 4.3: scale(t) in dVar/dt = −Θ(Var / scale(t)): 1 (Post-LN), t (Pre-, Mix-, Peri-LN), sqrt(t)
// (LN-Scaling), 1/α_t (nGPT).
inline std::optional<double> stated_variance_scale(const Scheme& s, double t) {
  return std::visit(
      [&](const auto& x) -> std::optional<double> {
        using S = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<S, PostLN>)
          return 1.0;
        else if constexpr (std::is_same_v<S, PreLN> || std::is_same_v<S, PeriLN> || std::is_same_v<S, MixLN>)
          return t;
        else if constexpr (std::is_same_v<S, LNScaling>)
          return std::sqrt(t);
        else if constexpr (std::is_same_v<S, NGPT>)
          return std::pow(1.0 + t, x.alpha_decay) / x.alpha;
        else
          return std::nullopt;
      },
      s);
}

inline std::string stated_scale_text(const Scheme& s) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using S = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<S, PostLN>)
          return "1";
        else if constexpr (std::is_same_v<S, PreLN> || std::is_same_v<S, PeriLN> || std::is_same_v<S, MixLN>)
          return "t";
        else if constexpr (std::is_same_v<S, LNScaling>)
          return "sqrt(t)";
        else if constexpr (std::is_same_v<S, NGPT>)
          return x.alpha_decay == 0.0 ? "1/alpha" : "(1 + t)^p / alpha";
        else
          return "-";
      },
      s);
}

}  // namespace normdyn::studies
