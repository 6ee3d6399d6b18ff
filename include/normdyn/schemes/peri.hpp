#pragma once
// Peri-LN: x ← x + h LN(A(LN(X))). The update has unit length, so tokens move at angular speed
// |P_θ A| / (r |A|) from the first layer on, while the radius grows by at most h per layer.
#include "normdyn/scheme.hpp"

namespace normdyn {

struct PeriLN {
  static constexpr std::string_view key = "peri";
  static constexpr std::string_view title = "Peri-LN";
  static constexpr std::string_view speed_formula = "r_j |A_j|";
  static constexpr std::string_view radial_formula = "<theta_j, A_j> / |A_j|";
  static constexpr std::string_view layer_formula = "x <- x + h LN(A(LN(X)))";
  static constexpr bool has_radius = true;
  static constexpr std::array<ParamSpec<PeriLN>, 0> params{};

  double speed(const TokenContext& c) const { return c.r * c.a_norm; }
  double radial_rate(const TokenContext& c) const { return c.theta_dot_a / c.a_norm; }
  LayerUpdate layer(const TokenContext& c) const { return {false, 1.0 / c.a_norm, 0.0}; }
  std::vector<double> breakpoints() const { return {}; }
  // Theorem 4.1: 1 − γ ~ C/t²; Theorem 4.3 and the Corollary of Theorem 3.1 on the radius.
  std::optional<SchemeTheory> theory() const { return SchemeTheory{"power", 2.0, true, true}; }
};

}  // namespace normdyn
