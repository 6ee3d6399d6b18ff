#pragma once
// No noise: the deterministic flow of the paper.
#include <array>
#include <string_view>

#include "normdyn/alternatives.hpp"
#include "normdyn/noises/draw.hpp"

namespace normdyn {

struct NoNoise {
  static constexpr std::string_view key = "none";
  static constexpr std::string_view title = "deterministic flow";
  static constexpr std::string_view formula = "dN_i = 0";
  static constexpr std::array<ParamSpec<NoNoise>, 0> params{};
  static constexpr bool needs_means = false;

  void increments(const NoiseDraw&, Eigen::Ref<const RowMatrix>, Eigen::Ref<RowMatrix> dn) const { dn.setZero(); }
};

}  // namespace normdyn
