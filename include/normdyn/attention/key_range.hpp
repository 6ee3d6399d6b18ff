#pragma once
// What every alternative of the attention lists includes: the list machinery and the index type.
#include "normdyn/alternatives.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

// The keys [first, last) that one row may attend to: one contiguous range (an empty one gives A_i = 0).
struct KeyRange {
  Index first = 0, last = 0;
};

}  // namespace normdyn
