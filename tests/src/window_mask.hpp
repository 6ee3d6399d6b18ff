#pragma once
// A mask that exists only in the tests: the recipe of docs/ARCHITECTURE.md ("Adding an attention
// alternative") followed to the letter, one header here and one list entry (NORMDYN_EXTRA_MASKS in
// tests/CMakeLists.txt, which stands for the line of attention_spec.hpp).
//
// A causal sliding window of `width` keys, as in local attention: token i attends to
// i - width + 1, ..., i. The width is an integer parameter (attention.window).
#include <algorithm>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct WindowMask {
  static constexpr std::string_view key = "window";
  static constexpr std::string_view title = "causal sliding window";
  static constexpr std::string_view formula = "j in [max(0, i - width + 1), i]";
  std::int64_t width = 3;
  static constexpr std::array<ParamSpec<WindowMask>, 1> params{
      {{"window", &WindowMask::width, "keys of the sliding window, the token's own included", 1.0, true}}};

  KeyRange keys(Index i, Index) const { return {std::max<Index>(0, i - width + 1), i + 1}; }
  Traits traits() const {
    Traits t;
    t.exchangeable = t.symmetric = t.has_energy = t.meanfield = false;
    return t;
  }
};

}  // namespace normdyn
