#pragma once
// Pre-LN: x ← x + h A(LN(X)). The unnormalized residual stream grows; the direction moves at speed
// 1/r_j, so large radii slow the angular dynamics down.
#include "normdyn/scheme.hpp"

namespace normdyn {

struct PreLN {
  static constexpr std::string_view key = "pre";
  static constexpr std::string_view title = "Pre-LN";
  static constexpr std::string_view speed_formula = "r_j";
  static constexpr std::string_view radial_formula = "<theta_j, A_j>";
  static constexpr std::string_view layer_formula = "x <- x + h A(LN(X))";
  static constexpr bool has_radius = true;
  static constexpr std::array<ParamSpec<PreLN>, 0> params{};

  double speed(const TokenContext& c) const { return c.r; }
  double radial_rate(const TokenContext& c) const { return c.theta_dot_a; }
  LayerUpdate layer(const TokenContext&) const { return {false, 1.0, 0.0}; }
  std::vector<double> breakpoints() const { return {}; }
  // Theorem 4.1: 1 − γ ~ C/t²; Theorem 4.3 and the Corollary of Theorem 3.1 on the radius.
  std::optional<SchemeTheory> theory() const { return SchemeTheory{"power", 2.0, true, true}; }
};

}  // namespace normdyn
