#include "normdyn/analysis/observables.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

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

double one_minus_mean_cosine(Eigen::Ref<const RowMatrix> theta) {
  const Index n = theta.rows();
  if (n < 2) return 0.0;
  return static_cast<double>(n) / static_cast<double>(n - 1) * variance(theta);
}

RowMatrix half_squared_chords(Eigen::Ref<const RowMatrix> theta) {
  const Index n = theta.rows();
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  const RowMatrix c = theta.rowwise() - mean;
  RowMatrix h(n, n);
  h.noalias() = -c * c.transpose();
  const Vector sq = h.diagonal();  // −|c_j|²
  for (Index j = 0; j < n; ++j) {
    for (Index k = 0; k < n; ++k) h(j, k) = std::max(0.0, h(j, k) - 0.5 * (sq(j) + sq(k)));
    h(j, j) = 0.0;
  }
  // Symmetric to the last bit (the product need not be).
  for (Index j = 0; j < n; ++j)
    for (Index k = j + 1; k < n; ++k) h(k, j) = h(j, k);
  return h;
}

double max_one_minus_cosine(Eigen::Ref<const RowMatrix> h) { return h.rows() < 2 ? 0.0 : h.maxCoeff(); }

double geodesic_diameter(Eigen::Ref<const RowMatrix> h) {
  // |θ_j − θ_k| = 2 sin(φ/2) and H = |θ_j − θ_k|²/2, so φ = 2 asin(sqrt(H/2)).
  return 2.0 * std::asin(std::min(1.0, std::sqrt(0.5 * max_one_minus_cosine(h))));
}

double normalized_energy(Eigen::Ref<const RowMatrix> h, double beta) {
  const auto n = static_cast<double>(h.rows());
  return (-beta * h.array()).exp().sum() / (n * n);
}

std::vector<double> moment_eigenvalues(Eigen::Ref<const RowMatrix> theta) {
  const Index n = theta.rows(), d = theta.cols();
  // The smaller of ΘᵀΘ/n (d×d) and ΘΘᵀ/n (n×n): same nonzero eigenvalues.
  Eigen::MatrixXd m = d <= n ? Eigen::MatrixXd(theta.transpose() * theta) : Eigen::MatrixXd(theta * theta.transpose());
  m /= static_cast<double>(n);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m, Eigen::EigenvaluesOnly);
  std::vector<double> values(eig.eigenvalues().data(), eig.eigenvalues().data() + eig.eigenvalues().size());
  std::sort(values.begin(), values.end(), std::greater<>());
  return values;
}

int effective_rank(Eigen::Ref<const RowMatrix> theta, double threshold) {
  const std::vector<double> values = moment_eigenvalues(theta);
  double trace = 0.0;
  for (double v : values) trace += v;
  int rank = 0;
  for (double v : values)
    if (v > threshold * trace) ++rank;
  return rank;
}

double mean_angular_speed(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const RowMatrix> velocity) {
  const Index n = theta.rows();
  double sum = 0.0;
  for (Index j = 0; j < n; ++j) {
    const double radial = velocity.row(j).dot(theta.row(j));
    sum += (velocity.row(j) - radial * theta.row(j)).norm();
  }
  return sum / static_cast<double>(n);
}

double mean_angular_speed_between(Eigen::Ref<const RowMatrix> theta0, Eigen::Ref<const RowMatrix> theta1,
                                  double dt) {
  const Index n = theta0.rows();
  double sum = 0.0;
  for (Index j = 0; j < n; ++j)
    sum += 2.0 * std::asin(std::min(1.0, 0.5 * (theta1.row(j) - theta0.row(j)).norm()));
  return sum / (static_cast<double>(n) * dt);
}

double min_radial_alignment(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const RowMatrix> attention) {
  double m = std::numeric_limits<double>::infinity();
  for (Index j = 0; j < theta.rows(); ++j) m = std::min(m, theta.row(j).dot(attention.row(j)));
  return m;
}

double max_row_norm(Eigen::Ref<const RowMatrix> m) {
  double best = 0.0;
  for (Index j = 0; j < m.rows(); ++j) best = std::max(best, m.row(j).norm());
  return best;
}

FrameObservables frame_observables(const Tokens& tokens, Eigen::Ref<const RowMatrix> h,
                                   const ObservableOptions& options) {
  FrameObservables o;
  const double n = static_cast<double>(tokens.n());
  o.variance = variance(tokens.theta);
  o.one_minus_mean_cosine = tokens.n() < 2 ? 0.0 : n / (n - 1.0) * o.variance;
  o.mean_cosine = 1.0 - o.one_minus_mean_cosine;
  o.one_minus_min_cosine = max_one_minus_cosine(h);
  o.min_cosine = 1.0 - o.one_minus_min_cosine;
  o.diameter = geodesic_diameter(h);
  o.normalized_energy = normalized_energy(h, options.beta);
  o.energy = o.normalized_energy * n * n * std::exp(options.beta);
  o.mean_radius = tokens.r.size() > 0 ? tokens.r.mean() : 1.0;
  o.effective_rank = effective_rank(tokens.theta, options.rank_threshold);
  return o;
}

}  // namespace normdyn::analysis
