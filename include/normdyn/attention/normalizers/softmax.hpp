#pragma once
// The softmax: A_i = sum_j w_ij v_j with w_ij = m_j e^{s_ij} / sum_k m_k e^{s_ik} over the allowed keys.
#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct Softmax {
  static constexpr std::string_view key = "softmax";
  static constexpr std::string_view title = "softmax";
  static constexpr std::string_view formula = "w_ij = m_j e^{s_ij} / sum_k m_k e^{s_ik}";
  static constexpr std::array<ParamSpec<Softmax>, 0> params{};
  // The numerators u_ij of the weights from the scores of the allowed keys (in place) and the row's
  // largest score: e^{s_ij - max}.
  template <class Row>
  void numerators(Row&& scores, double row_max) const {
    scores = (scores.array() - row_max).exp();
  }
  static constexpr bool needs_reference_sum = false;

  // The factor that turns sum_j m_j e^{s_ij - row_max} v_j into A_i, given the weight sum
  // sum_j m_j e^{s_ij - row_max} and the reference sum Z_i = sum_j m_j e^{b_ij} over the allowed keys.
  double factor(double, double weight_sum, double) const { return 1.0 / weight_sum; }
};

}  // namespace normdyn
