#pragma once
// LN-Scaling against the "curse of depth" (Sun et al., arXiv:2502.05795): the layer output is
// scaled by 1/sqrt(depth), here x ← LN(x + h A(X) / sqrt(t + 1)). By a time change it is Post-LN
// at time 2(sqrt(t+1) − 1).
#include <cmath>

#include "normdyn/scheme.hpp"

namespace normdyn {

struct LNScaling {
  static constexpr std::string_view key = "cod";
  static constexpr std::string_view title = "LN-Scaling";
  static constexpr std::string_view speed_formula = "sqrt(t + 1)";
  static constexpr std::string_view radial_formula = "0";
  static constexpr std::string_view layer_formula = "x <- LN(x + h A(X) / sqrt(t + 1))";
  static constexpr bool has_radius = false;
  static constexpr std::array<ParamSpec<LNScaling>, 0> params{};

  double speed(const TokenContext& c) const { return std::sqrt(c.t + 1.0); }
  double radial_rate(const TokenContext&) const { return 0.0; }
  LayerUpdate layer(const TokenContext& c) const { return {true, 1.0 / std::sqrt(c.t + 1.0), 0.0}; }
  std::vector<double> breakpoints() const { return {}; }
  // Theorem 4.1: 1 − γ ~ C e^{−4 sqrt(t)} (Post-LN at time 2(sqrt(t+1) − 1)).
  std::optional<SchemeTheory> theory() const { return SchemeTheory{"stretched_exponential", 4.0}; }
};

}  // namespace normdyn
