#pragma once
// The rectifier σ(u) = max(u, 0), with antiderivative S(u) = max(u, 0)² / 2.
#include <algorithm>
#include <array>
#include <string_view>

#include "normdyn/alternatives.hpp"

namespace normdyn {

struct Relu {
  static constexpr std::string_view key = "relu";
  static constexpr std::string_view title = "rectified linear unit";
  static constexpr std::string_view formula = "sigma(u) = max(u, 0)";
  static constexpr std::array<ParamSpec<Relu>, 0> params{};

  static double value(double u) { return std::max(u, 0.0); }
  static double antiderivative(double u) { return u > 0.0 ? 0.5 * u * u : 0.0; }
};

}  // namespace normdyn
