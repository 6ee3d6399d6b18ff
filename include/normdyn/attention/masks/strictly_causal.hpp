#pragma once
// Strictly causal attention: token i attends to the tokens j < i; token 0 has no key and A_0 = 0.
#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct StrictlyCausalMask {
  static constexpr std::string_view key = "strictly_causal";
  static constexpr std::string_view title = "strictly causal mask";
  static constexpr std::string_view formula = "j in [0, i), A_0 = 0";
  static constexpr std::array<ParamSpec<StrictlyCausalMask>, 0> params{};

  KeyRange keys(Index i, Index) const { return {0, i}; }
  // The mean field: the kinetic equation over the cursor (solvers/meanfield_causal).
  Traits traits() const {
    Traits t;
    t.exchangeable = t.symmetric = t.has_energy = false;
    return t;
  }
};

}  // namespace normdyn
