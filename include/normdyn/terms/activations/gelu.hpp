#pragma once
// The Gaussian error linear unit σ(u) = u Φ(u), Φ the standard normal distribution function, with
// antiderivative S(u) = ((u² − 1) Φ(u) + u φ(u)) / 2 + 1/4 (so that S(0) = 0), φ the normal density.
#include <array>
#include <cmath>
#include <numbers>
#include <string_view>

#include "normdyn/alternatives.hpp"

namespace normdyn {

struct Gelu {
  static constexpr std::string_view key = "gelu";
  static constexpr std::string_view title = "Gaussian error linear unit (exact, not the tanh approximation)";
  static constexpr std::string_view formula = "sigma(u) = u Phi(u)";
  static constexpr std::array<ParamSpec<Gelu>, 0> params{};

  static double cdf(double u) { return 0.5 * std::erfc(-u / std::numbers::sqrt2); }
  static double density(double u) {
    return std::exp(-0.5 * u * u) * (0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  }
  static double value(double u) { return u * cdf(u); }
  static double antiderivative(double u) { return 0.5 * ((u * u - 1.0) * cdf(u) + u * density(u)) + 0.25; }
};

}  // namespace normdyn
