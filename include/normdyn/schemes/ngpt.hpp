#pragma once
// nGPT (Loshchilov et al., arXiv:2410.01131): x ← LN(x + h α_t (LN(A(X)) − x)), with the
// "eigen learning rate" α_t = alpha / (1 + t)^alpha_decay (alpha_decay = 0: constant α).
#include <cmath>

#include "normdyn/scheme.hpp"

namespace normdyn {

struct NGPT {
  static constexpr std::string_view key = "ngpt";
  static constexpr std::string_view title = "nGPT";
  static constexpr std::string_view speed_formula = "|A_j| / alpha_t,  alpha_t = alpha / (1 + t)^alpha_decay";
  static constexpr std::string_view radial_formula = "0";
  static constexpr std::string_view layer_formula = "x <- LN(x + h alpha_t (LN(A(X)) - x))";
  static constexpr bool has_radius = false;

  double alpha = 1.0;
  double alpha_decay = 0.0;
  static constexpr std::array<ParamSpec<NGPT>, 2> params{
      ParamSpec<NGPT>{"alpha", &NGPT::alpha, "step scale alpha > 0 of nGPT", 0.0, false},
      ParamSpec<NGPT>{"alpha_decay", &NGPT::alpha_decay,
                      "power p of the schedule alpha_t = alpha / (1 + t)^p (0: constant)", 0.0, true}};

  double alpha_at(double t) const { return alpha_decay == 0.0 ? alpha : alpha / std::pow(1.0 + t, alpha_decay); }
  double speed(const TokenContext& c) const { return c.a_norm / alpha_at(c.t); }
  double radial_rate(const TokenContext&) const { return 0.0; }
  LayerUpdate layer(const TokenContext& c) const {
    const double a = alpha_at(c.t);
    return {true, a / c.a_norm, -a};
  }
  std::vector<double> breakpoints() const { return {}; }
  // Theorem 4.1: 1 − γ ~ e^{−2 ∫α}. ∫_0^t α_s ds = α t (p = 0), 2α(sqrt(1+t) − 1) (p = 1/2),
  // α ln(1+t) (p = 1: a power law (1+t)^{−2α}), α((1+t)^{1−p} − 1)/(1 − p) otherwise (none of the
  // named laws; the checks fit it through the clock ∫ dt/s).
  std::optional<SchemeTheory> theory() const {
    if (alpha_decay == 0.0) return SchemeTheory{"exponential", 2.0 * alpha};
    if (alpha_decay == 0.5) return SchemeTheory{"stretched_exponential", 4.0 * alpha};
    if (alpha_decay == 1.0) return SchemeTheory{"power", 2.0 * alpha};
    return SchemeTheory{"", 0.0};
  }
};

}  // namespace normdyn
