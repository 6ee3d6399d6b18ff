#pragma once
// Every token attends to every token (the model of the paper).
#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct NoMask {
  static constexpr std::string_view key = "none";
  static constexpr std::string_view title = "no mask";
  static constexpr std::string_view formula = "j in [0, n)";
  static constexpr std::array<ParamSpec<NoMask>, 0> params{};

  KeyRange keys(Index, Index n) const { return {0, n}; }
};

}  // namespace normdyn
