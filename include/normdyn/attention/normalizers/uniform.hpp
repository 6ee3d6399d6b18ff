#pragma once
// Unnormalized self-attention (USA; Geshkovski, Letrouit, Polyanskiy, Rigollet, "A mathematical
// perspective on transformers", section 2): the exponential weights divided by a normalizer that
// does not depend on the tokens, Z_i = sum over the allowed keys of m_j e^{b_ij} (n without mask,
// bias and masses), so that w_ij = m_j e^{s_ij} / Z_i.
#include <cmath>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct Uniform {
  static constexpr std::string_view key = "uniform";
  static constexpr std::string_view title = "unnormalized self-attention (USA)";
  static constexpr std::string_view formula = "w_ij = m_j e^{s_ij} / sum_k m_k e^{b_ik}";
  static constexpr std::array<ParamSpec<Uniform>, 0> params{};
  // The numerators u_ij of the weights from the scores of the allowed keys (in place) and the row's
  // largest score: e^{s_ij - max}.
  template <class Row>
  void numerators(Row&& scores, double row_max) const {
    scores = (scores.array() - row_max).exp();
  }
  static constexpr bool needs_reference_sum = true;

  double factor(double row_max, double, double reference_sum) const { return std::exp(row_max) / reference_sum; }
  Traits traits() const { return {}; }
};

}  // namespace normdyn
