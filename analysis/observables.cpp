#include "normdyn/analysis/observables.hpp"

#include <algorithm>
#include <cmath>

namespace normdyn::analysis {

double variance(Eigen::Ref<const RowMatrix> theta) {
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  return (theta.rowwise() - mean).rowwise().squaredNorm().mean();
}

double interaction_energy(Eigen::Ref<const RowMatrix> theta, double beta) {
  const RowMatrix gram = theta * theta.transpose();
  return (beta * gram.array()).exp().sum();
}

double min_pairwise_cosine(Eigen::Ref<const RowMatrix> theta) {
  if (theta.rows() < 2) return 1.0;
  const RowMatrix gram = theta * theta.transpose();
  double m = 1.0;
  for (Index j = 0; j < gram.rows(); ++j)
    for (Index k = j + 1; k < gram.cols(); ++k) m = std::min(m, gram(j, k));
  return m;
}

PairwiseSummary pairwise_summary(Eigen::Ref<const RowMatrix> theta, double beta) {
  const Index n = theta.rows();
  PairwiseSummary s;
  if (n == 0) return s;
  constexpr Index kBlock = 256;
  double energy = 0.0, min_cos = 1.0, sum_cos = 0.0;
  RowMatrix gram;
  for (Index begin = 0; begin < n; begin += kBlock) {
    const Index rows = std::min(kBlock, n - begin);
    gram.noalias() = theta.middleRows(begin, rows) * theta.transpose();
    energy += (beta * gram.array()).exp().sum();
    for (Index i = 0; i < rows; ++i)
      for (Index k = 0; k < n; ++k) {
        if (k == begin + i) continue;
        min_cos = std::min(min_cos, gram(i, k));
        sum_cos += gram(i, k);
      }
  }
  s.energy = energy;
  s.min_cosine = n > 1 ? min_cos : 1.0;
  s.mean_cosine = n > 1 ? sum_cos / (static_cast<double>(n) * static_cast<double>(n - 1)) : 1.0;
  return s;
}

bool all_cosines_above(Eigen::Ref<const RowMatrix> theta, double threshold) {
  const Index n = theta.rows();
  if (n < 2) return true;
  // For unit vectors |θ_j − θ_k|² = 2 − 2 <θ_j, θ_k>: the condition is a diameter bound D.
  const double diameter = std::sqrt(std::max(0.0, 2.0 - 2.0 * threshold));
  // Necessary: every token within D of the first.
  double from_first = 0.0;
  for (Index j = 1; j < n; ++j) from_first = std::max(from_first, (theta.row(j) - theta.row(0)).norm());
  if (from_first > diameter) return false;
  // Sufficient: every token within D/2 of the mean direction (triangle inequality).
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  double from_mean = 0.0;
  for (Index j = 0; j < n; ++j) from_mean = std::max(from_mean, (theta.row(j) - mean).norm());
  if (2.0 * from_mean < diameter) return true;
  return min_pairwise_cosine(theta) > threshold;
}

}  // namespace normdyn::analysis
