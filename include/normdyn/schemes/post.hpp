#pragma once
// Post-LN: x ← LN(x + h A(X)). Unit speed on the sphere; r is constant.
#include "normdyn/scheme.hpp"

namespace normdyn {

struct PostLN {
  static constexpr std::string_view key = "post";
  static constexpr std::string_view title = "Post-LN";
  static constexpr std::string_view speed_formula = "1";
  static constexpr std::string_view radial_formula = "0";
  static constexpr std::string_view layer_formula = "x <- LN(x + h A(X))";
  static constexpr bool has_radius = false;
  static constexpr std::array<ParamSpec<PostLN>, 0> params{};

  double speed(const TokenContext&) const { return 1.0; }
  double radial_rate(const TokenContext&) const { return 0.0; }
  LayerUpdate layer(const TokenContext&) const { return {true, 1.0, 0.0}; }
  std::vector<double> breakpoints() const { return {}; }
  // Theorem 4.1: 1 − γ ~ e^{−2t}.
  std::optional<SchemeTheory> theory() const { return SchemeTheory{"exponential", 2.0}; }
};

}  // namespace normdyn
