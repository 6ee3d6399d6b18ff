#pragma once
// No score bias: s_ij = beta <Q x_i, K x_j>.
#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct NoBias {
  static constexpr std::string_view key = "none";
  static constexpr std::string_view title = "no bias";
  static constexpr std::string_view formula = "b_ij = 0";
  static constexpr std::array<ParamSpec<NoBias>, 0> params{};

  double bias(Index, Index, Index) const { return 0.0; }
};

}  // namespace normdyn
