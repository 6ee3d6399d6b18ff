#pragma once
// σ(u) = tanh u, with antiderivative S(u) = log cosh u (written to stay finite for large |u|).
#include <array>
#include <cmath>
#include <numbers>
#include <string_view>

#include "normdyn/alternatives.hpp"

namespace normdyn {

struct Tanh {
  static constexpr std::string_view key = "tanh";
  static constexpr std::string_view title = "hyperbolic tangent";
  static constexpr std::string_view formula = "sigma(u) = tanh(u)";
  static constexpr std::array<ParamSpec<Tanh>, 0> params{};

  static double value(double u) { return std::tanh(u); }
  // log cosh u = |u| + log(1 + e^{-2|u|}) - log 2.
  static double antiderivative(double u) {
    const double a = std::abs(u);
    return a + std::log1p(std::exp(-2.0 * a)) - std::numbers::ln2;
  }
};

}  // namespace normdyn
