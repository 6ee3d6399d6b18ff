#pragma once
// A normalizer that exists only in the tests: the recipe of docs/ARCHITECTURE.md ("Adding an attention
// alternative") followed to the letter, one header here and one list entry (NORMDYN_EXTRA_NORMALIZERS in
// tests/CMakeLists.txt, which stands for the line of attention_spec.hpp).
//
// Top-k attention: the softmax over the k largest scores of the row (ties at the k-th score all kept),
// the other keys weigh 0. A row-local normalizer that needs the whole row of scores. The k is an
// integer parameter (attention.top_k).
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct TopK {
  static constexpr std::string_view key = "top_k";
  static constexpr std::string_view title = "top-k softmax";
  static constexpr std::string_view formula =
      "w_ij = m_j e^{s_ij} / sum_{k in top} m_k e^{s_ik} over the k largest s_ij";
  std::int64_t k = 4;
  static constexpr std::array<ParamSpec<TopK>, 1> params{
      {{"top_k", &TopK::k, "keys kept in each row, those of the largest scores", 1.0, true}}};
  static constexpr bool needs_reference_sum = false;

  template <class Row>
  void numerators(Row&& scores, double row_max) const {
    const Index count = scores.size();
    if (k < count) {
      std::vector<double> sorted(scores.data(), scores.data() + count);
      std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<>());
      const double threshold = sorted[static_cast<std::size_t>(k - 1)];
      for (Index j = 0; j < count; ++j) scores(j) = scores(j) >= threshold ? std::exp(scores(j) - row_max) : 0.0;
      return;
    }
    for (Index j = 0; j < count; ++j) scores(j) = std::exp(scores(j) - row_max);
  }
  double factor(double, double weight_sum, double) const { return 1.0 / weight_sum; }
  // The selection depends on row i's ranking: not symmetric, no energy, no mean field.
  Traits traits() const {
    Traits t;
    t.symmetric = t.has_energy = t.meanfield = false;
    return t;
  }
};

}  // namespace normdyn
