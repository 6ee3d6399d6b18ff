#pragma once
// No positional encoding: the scores depend on the tokens only.
#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct NoPositions {
  static constexpr std::string_view key = "none";
  static constexpr std::string_view title = "no positional encoding";
  static constexpr std::string_view formula = "s_ij = beta <Q x_i, K x_j> + b_ij";
  static constexpr std::array<ParamSpec<NoPositions>, 0> params{};

  template <class Rows>
  void rotate(Rows&&, Index) const {}
};

}  // namespace normdyn
