// Per-frame observables on configurations with known answers: planted angles, tight clusters
// (relative accuracy of 1 − cosine), subspaces (effective rank), rotations (angular speed), and
// invariance under permuting and rotating the tokens.
#define BOOST_TEST_MODULE analysis_observables
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "normdyn/analysis/observables.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using namespace normdyn::analysis;

namespace {

RowMatrix circle_points(const std::vector<double>& angles) {
  RowMatrix t(static_cast<Index>(angles.size()), 2);
  for (std::size_t j = 0; j < angles.size(); ++j)
    t.row(static_cast<Index>(j)) << std::cos(angles[j]), std::sin(angles[j]);
  return t;
}

Tokens with_unit_radii(const RowMatrix& theta) { return {theta, Vector::Ones(theta.rows())}; }

// 1 − <θ_j, θ_k> of every pair in long double, by differences.
long double exact_half_chord(const RowMatrix& t, Index j, Index k) {
  long double s = 0;
  for (Index i = 0; i < t.cols(); ++i) {
    const long double d = static_cast<long double>(t(j, i)) - static_cast<long double>(t(k, i));
    s += d * d;
  }
  return s / 2;
}

}  // namespace

BOOST_AUTO_TEST_CASE(planted_angles_on_the_circle) {
  // Three tokens at 0, 0.3, 1.1 rad: cosines cos 0.3, cos 1.1, cos 0.8.
  const RowMatrix t = circle_points({0.0, 0.3, 1.1});
  const RowMatrix h = half_squared_chords(t);
  const double c01 = std::cos(0.3), c02 = std::cos(1.1), c12 = std::cos(0.8);
  const double mean = (c01 + c02 + c12) / 3.0;
  BOOST_TEST(std::abs(one_minus_mean_cosine(t) - (1.0 - mean)) < test::kRoundoff);
  BOOST_TEST(std::abs(max_one_minus_cosine(h) - (1.0 - c02)) < test::kRoundoff);
  BOOST_TEST(std::abs(geodesic_diameter(h) - 1.1) < test::kRoundoff);
  const double beta = 3.0;
  const double e = 3.0 * std::exp(beta) + 2.0 * (std::exp(beta * c01) + std::exp(beta * c02) + std::exp(beta * c12));
  const FrameObservables o = frame_observables(with_unit_radii(t), h, {beta, 1e-3});
  BOOST_TEST(std::abs(o.energy - e) < test::kRoundoff * e);
  BOOST_TEST(std::abs(o.energy - interaction_energy(t, beta)) < test::kRoundoff * e);
  BOOST_TEST(std::abs(o.normalized_energy - e / (9.0 * std::exp(beta))) < test::kRoundoff);
  BOOST_TEST(std::abs(o.min_cosine - c02) < test::kRoundoff);
  BOOST_TEST(std::abs(o.mean_cosine - mean) < test::kRoundoff);
  // Var = 1 − |θ̄|².
  const double mean_norm_sq = t.colwise().mean().squaredNorm();
  BOOST_TEST(std::abs(o.variance - (1.0 - mean_norm_sq)) < test::kRoundoff);
  BOOST_TEST(o.effective_rank == 2);
}

BOOST_AUTO_TEST_CASE(antipodal_diameter_and_single_token) {
  const RowMatrix t = circle_points({0.2, 0.2 + M_PI});
  BOOST_TEST(std::abs(geodesic_diameter(half_squared_chords(t)) - M_PI) < 1e-7);  // asin near 1: sqrt(round-off)
  const RowMatrix one = circle_points({0.7});
  const FrameObservables o = frame_observables(with_unit_radii(one), half_squared_chords(one), {});
  BOOST_TEST(o.one_minus_mean_cosine == 0.0);
  BOOST_TEST(o.min_cosine == 1.0);
  BOOST_TEST(o.diameter == 0.0);
  BOOST_TEST(std::abs(o.normalized_energy - 1.0) < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(one_minus_cosine_keeps_relative_accuracy_in_a_tight_cluster) {
  // Tokens within 1e-7 rad of a common direction: 1 − cos ~ 1e-14, which 1 − <θ_j, θ_k> would
  // return as round-off.
  const Index n = 12, d = 5;
  const Tokens base = test::random_tokens(n, d, 4);
  const RowMatrix centre = test::random_tokens(1, d, 5).theta;
  RowMatrix t(n, d);
  for (Index j = 0; j < n; ++j) t.row(j) = (centre.row(0) + 1e-7 * base.theta.row(j)).normalized();
  const RowMatrix h = half_squared_chords(t);
  long double sum = 0, worst = 0;
  for (Index j = 0; j < n; ++j)
    for (Index k = 0; k < n; ++k) {
      if (j == k) continue;
      const long double exact = exact_half_chord(t, j, k);
      sum += exact;
      worst = std::max(worst, std::abs(static_cast<long double>(h(j, k)) - exact) / exact);
    }
  const long double mean = sum / static_cast<long double>(n * (n - 1));
  BOOST_TEST_MESSAGE("1 - mean cos = " << static_cast<double>(mean) << ", worst pairwise relative error "
                                       << static_cast<double>(worst));
  BOOST_TEST(mean < 1e-13L);
  BOOST_TEST(std::abs(one_minus_mean_cosine(t) - static_cast<double>(mean)) <
             test::kOneMinusCosine * static_cast<double>(mean));
  BOOST_TEST(static_cast<double>(worst) < 1e-6);  // centred Gram: ~1e-16 × |c|² / (1 − cos)
}

BOOST_AUTO_TEST_CASE(effective_rank_of_planted_subspaces) {
  const Index n = 40, d = 8;
  for (Index k : {1, 2, 3, 5, 8}) {
    // Tokens spanning exactly k coordinates.
    Tokens x = test::random_tokens(n, d, 10 + static_cast<std::uint64_t>(k));
    x.theta.rightCols(d - k).setZero();
    normalize_rows(x.theta);
    BOOST_TEST(effective_rank(x.theta, 1e-3) == k);
  }
  // Two tight clusters on orthogonal axes: rank 2; the eigenvalues are the cluster weights.
  RowMatrix t = RowMatrix::Zero(10, 4);
  for (Index j = 0; j < 10; ++j) t(j, j < 3 ? 0 : 1) = 1.0;
  const std::vector<double> eig = moment_eigenvalues(t);
  BOOST_TEST(std::abs(eig[0] - 0.7) < test::kRoundoff);
  BOOST_TEST(std::abs(eig[1] - 0.3) < test::kRoundoff);
  BOOST_TEST(effective_rank(t, 1e-3) == 2);
}

BOOST_AUTO_TEST_CASE(angular_speed_of_a_rigid_rotation) {
  // θ̇ = Ω θ with Ω skew: rotation in the (0, 1) plane at rate ω; |θ̇_j| = ω |P θ_j| in that plane.
  const Index n = 7, d = 4;
  const Tokens x = test::random_tokens(n, d, 21);
  const double omega = 0.37;
  RowMatrix velocity(n, d);
  velocity.setZero();
  double expected = 0.0;
  for (Index j = 0; j < n; ++j) {
    velocity(j, 0) = -omega * x.theta(j, 1);
    velocity(j, 1) = omega * x.theta(j, 0);
    expected += velocity.row(j).norm();
  }
  expected /= double(n);
  BOOST_TEST(std::abs(mean_angular_speed(x.theta, velocity) - expected) < test::kRoundoff);
  // A radial component does not count.
  const RowMatrix with_radial = velocity + 5.0 * x.theta;
  BOOST_TEST(std::abs(mean_angular_speed(x.theta, with_radial) - expected) < test::kRoundoff);
  // Between frames on the circle: rotation by ω dt exactly gives ω.
  const RowMatrix c0 = circle_points({0.1, 1.0, 2.0}), c1 = circle_points({0.1 + 0.25, 1.25, 2.25});
  BOOST_TEST(std::abs(mean_angular_speed_between(c0, c1, 0.25 / omega) - omega) < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(radial_alignment_and_attention_norm) {
  const RowMatrix t = circle_points({0.0, 1.0});
  RowMatrix a(2, 2);
  a << 0.5, 0.0, 0.0, 2.0;
  BOOST_TEST(std::abs(min_radial_alignment(t, a) - std::min(0.5, 2.0 * std::sin(1.0))) < test::kRoundoff);
  BOOST_TEST(std::abs(max_row_norm(a) - 2.0) < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(invariance_under_permutation_and_rotation) {
  const Index n = 15, d = 6;
  const Tokens x = test::random_tokens(n, d, 31);
  const RowMatrix rot = test::random_rotation(d, 32);
  Eigen::PermutationMatrix<Eigen::Dynamic> perm(n);
  perm.setIdentity();
  std::reverse(perm.indices().data(), perm.indices().data() + n);
  std::swap(perm.indices()(2), perm.indices()(9));
  const Tokens moved{perm * (x.theta * rot.transpose()), perm * x.r};
  const ObservableOptions options{2.5, 1e-3};
  const FrameObservables a = frame_observables(x, half_squared_chords(x.theta), options);
  const FrameObservables b = frame_observables(moved, half_squared_chords(moved.theta), options);
  auto close = [](double u, double v) { return std::abs(u - v) <= test::kInvariance * std::max(1.0, std::abs(u)); };
  BOOST_TEST(close(a.one_minus_mean_cosine, b.one_minus_mean_cosine));
  BOOST_TEST(close(a.one_minus_min_cosine, b.one_minus_min_cosine));
  BOOST_TEST(close(a.variance, b.variance));
  BOOST_TEST(close(a.diameter, b.diameter));
  BOOST_TEST(close(a.energy, b.energy));
  BOOST_TEST(close(a.normalized_energy, b.normalized_energy));
  BOOST_TEST(close(a.mean_radius, b.mean_radius));
  BOOST_TEST(a.effective_rank == b.effective_rank);
  const auto ea = moment_eigenvalues(x.theta), eb = moment_eigenvalues(moved.theta);
  for (std::size_t i = 0; i < ea.size(); ++i) BOOST_TEST(close(ea[i], eb[i]));
}
