#pragma once
// Causal (decoder) attention: token i attends to the tokens j <= i, its position being its index in
// the initial tokens.
#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct CausalMask {
  static constexpr std::string_view key = "causal";
  static constexpr std::string_view title = "causal mask";
  static constexpr std::string_view formula = "j in [0, i]";
  static constexpr std::array<ParamSpec<CausalMask>, 0> params{};

  KeyRange keys(Index i, Index) const { return {0, i + 1}; }
  // Positions break the exchangeability and the symmetry of the scores, hence the energy; the mean field
  // is the kinetic equation over the cursor (solvers/meanfield_causal). Rows need only the keys before
  // them: shardable.
  Traits traits() const {
    Traits t;
    t.exchangeable = t.symmetric = t.has_energy = false;
    return t;
  }
};

}  // namespace normdyn
