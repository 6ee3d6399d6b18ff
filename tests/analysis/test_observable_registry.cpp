// The registry of per-frame observables: every entry has its function, the run file's list is the
// registry's, the observables reference page lists every entry, the threaded pairwise pass equals
// the plain one, and the trajectory observables (layer angle, clocks, radial speed) on planted
// trajectories.
#define BOOST_TEST_MODULE analysis_observable_registry
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <numbers>
#include <random>
#include <set>
#include <sstream>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/observable_registry.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using namespace normdyn::analysis;

namespace {

RowMatrix random_directions(Index n, Index d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  RowMatrix x(n, d);
  for (Index j = 0; j < n; ++j)
    for (Index c = 0; c < d; ++c) x(j, c) = g(rng);
  x.rowwise().normalize();
  return x;
}

Tokens tokens_of(const RowMatrix& theta, double r = 1.0) {
  Tokens t;
  t.theta = theta;
  t.r = Vector::Constant(theta.rows(), r);
  return t;
}

// 2-D tokens at angles phi_j.
RowMatrix circle(const std::vector<double>& phi) {
  RowMatrix x(static_cast<Index>(phi.size()), 2);
  for (std::size_t j = 0; j < phi.size(); ++j) x.row(static_cast<Index>(j)) << std::cos(phi[j]), std::sin(phi[j]);
  return x;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_entry_has_a_function_and_a_unique_name) {
  std::set<std::string_view> names;
  for (const auto& o : kFrameObservables) {
    BOOST_TEST_INFO(o.name);
    BOOST_TEST(has_function(o.name));
    BOOST_TEST(names.insert(o.name).second);
    BOOST_TEST(!o.description.empty());
    BOOST_TEST(!o.unit.empty());
  }
  for (const auto& o : kDensityObservables) BOOST_TEST(names.insert(o.name).second);
  BOOST_TEST(!has_function("no_such_observable"));
  BOOST_CHECK_THROW(FrameObservableComputer({"no_such_observable"}, {}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(the_run_file_writes_the_registry_entries_marked_during_run) {
  // The recorder's historic order (energy, variance, min_cosine) is the registry's.
  BOOST_TEST(frame_observable_names() == (std::vector<std::string>{"energy", "variance", "min_cosine"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_reference_lists_every_observable) {
  std::ifstream in(std::string(NORMDYN_SOURCE_DIR) + "/docs/reference/observables.md");
  BOOST_REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  for (const auto& list :
       {std::span<const ObservableInfo>(kFrameObservables), std::span<const ObservableInfo>(kDensityObservables)})
    for (const auto& o : list) {
      BOOST_TEST_INFO(o.name);
      BOOST_TEST(readme.find("| `" + std::string(o.name) + "`") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(recorder_values_equal_the_direct_formulas) {
  const RowMatrix theta = random_directions(300, 5, 7);  // two tiles and a remainder
  const double beta = 2.5;
  const std::vector<double> v = compute_frame_observables(frame_observable_names(), tokens_of(theta), beta, 2);
  BOOST_TEST(v.size() == 3u);
  BOOST_TEST(v[0] == interaction_energy(theta, beta), boost::test_tools::tolerance(test::kRoundoff));
  BOOST_TEST(v[1] == variance(theta), boost::test_tools::tolerance(test::kRoundoff));
  BOOST_TEST(v[2] == min_pairwise_cosine(theta), boost::test_tools::tolerance(test::kRoundoff));
  BOOST_CHECK_THROW(compute_frame_observables({"layer_angle"}, tokens_of(theta), beta), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(threaded_pairwise_pass_is_independent_of_threads) {
  const RowMatrix theta = random_directions(700, 16, 3);
  const PairwiseSummary one = pairwise_summary_threaded(theta, 1.5, 1);
  const PairwiseSummary two = pairwise_summary_threaded(theta, 1.5, 2);
  BOOST_TEST(one.energy == two.energy);  // bit for bit: tiles summed in a fixed order
  BOOST_TEST(one.min_cosine == two.min_cosine);
  BOOST_TEST(one.mean_cosine == two.mean_cosine);
  const PairwiseSummary plain = pairwise_summary(theta, 1.5);
  BOOST_TEST(one.energy == plain.energy, boost::test_tools::tolerance(test::kRoundoff));
  BOOST_TEST(one.min_cosine == plain.min_cosine);
  BOOST_TEST(one.mean_cosine == plain.mean_cosine, boost::test_tools::tolerance(1e-12));
  // The blocked, threaded chords: symmetric, and 1 − cos of the direct Gram matrix.
  const RowMatrix h = half_squared_chords(theta);
  BOOST_TEST((h - h.transpose()).cwiseAbs().maxCoeff() == 0.0);
  const RowMatrix gram = theta * theta.transpose();
  double worst = 0.0;
  for (Index j = 0; j < theta.rows(); ++j)
    for (Index k = 0; k < theta.rows(); ++k)
      if (j != k) worst = std::max(worst, std::abs(h(j, k) - (1.0 - gram(j, k))));
  BOOST_TEST(worst < 1e-14);
}

BOOST_AUTO_TEST_CASE(layer_angle_and_layer_rate_of_a_planted_rotation) {
  // Every token turns by 0.3 rad between frames 4 layers apart: 0.075 rad per layer.
  const std::vector<double> phi0{0.0, 0.5, 2.0, 4.0};
  std::vector<double> phi1;
  for (double p : phi0) phi1.push_back(p + 0.3);
  FrameComputeOptions o;
  o.discrete = true;
  FrameObservableComputer c({"layer_angle", "mean_cosine", "mean_cosine_layer_rate", "min_radial_speed"}, o);
  const Tokens a = tokens_of(circle(phi0), 1.0), b = tokens_of(circle(phi1), 1.8);
  FrameInput in;
  in.tokens = &a;
  in.t = 0.0;
  in.step = 0;
  const auto first = c.compute(in);
  BOOST_TEST(std::isnan(first[0]));
  BOOST_TEST(std::isnan(first[3]));
  in.tokens = &b;
  in.t = 4.0;
  in.step = 4;
  const auto second = c.compute(in);
  BOOST_TEST(second[0] == 0.075, boost::test_tools::tolerance(test::kRoundoff));
  // A rigid rotation keeps every cosine: no change of gamma.
  BOOST_TEST(std::abs(second[2]) < 1e-15);
  BOOST_TEST(second[3] == 0.8 / 4.0, boost::test_tools::tolerance(test::kRoundoff));
}

BOOST_AUTO_TEST_CASE(clock_integrates_the_inverse_speed) {
  // 1/s_j = 1/(1 + t) for token 0 and 1/2 for token 1: clocks ln(1 + t) (trapezoid: close) and t/2.
  FrameObservableComputer c({"clock_min", "clock_median"}, {});
  const Tokens x = tokens_of(circle({0.0, 1.0}));
  const RowMatrix zero = RowMatrix::Zero(2, 2);
  const Vector zero_r = Vector::Zero(2);
  std::vector<double> last;
  const int steps = 2000;
  for (int i = 0; i <= steps; ++i) {
    const double t = 10.0 * i / steps;
    Vector inverse(2);
    inverse << 1.0 / (1.0 + t), 0.5;
    FrameInput in;
    in.tokens = &x;
    in.t = t;
    in.velocity = &zero;
    in.attention = &zero;
    in.radial_velocity = &zero_r;
    in.inverse_speed = &inverse;
    last = c.compute(in);
  }
  BOOST_TEST(last[0] == std::log(11.0), boost::test_tools::tolerance(1e-5));
  BOOST_TEST(last[1] == 0.5 * (std::log(11.0) + 5.0), boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(inverse_speed_factors_follow_the_scheme) {
  const RowMatrix theta = circle({0.0, 1.0});
  Vector r(2);
  r << 2.0, 4.0;
  const RowMatrix a = 0.5 * theta;
  BOOST_TEST(inverse_speed_factors(PostLN{}, 3.0, 3.0, theta, r, a)(1) == 1.0);
  BOOST_TEST(inverse_speed_factors(PreLN{}, 3.0, 3.0, theta, r, a)(1) == 0.25);
  BOOST_TEST(inverse_speed_factors(LNScaling{}, 3.0, 3.0, theta, r, a)(0) == 0.5,
             boost::test_tools::tolerance(test::kRoundoff));
}

BOOST_AUTO_TEST_CASE(tiled_pass_equals_the_pairwise_reference) {
  // Tile edges: one full tile and a one-row remainder (a diagonal tile without pairs), and a
  // clustered case where the minimum sits in an off-diagonal tile.
  for (const Index n : {Index{257}, Index{600}}) {
    RowMatrix theta = random_directions(n, 8, 11);
    if (n == 600) {
      theta.topRows(300).rowwise() += 4.0 * theta.row(0);
      theta.rowwise().normalize();
    }
    const double beta = 1.5;
    double energy = 0.0, min_cos = 1.0, sum_cos = 0.0;
    for (Index j = 0; j < n; ++j)
      for (Index k = 0; k < n; ++k) {
        const double c = theta.row(j).dot(theta.row(k));
        energy += std::exp(beta * c);
        if (j == k) continue;
        min_cos = std::min(min_cos, c);
        sum_cos += c;
      }
    const PairwiseSummary tiled = pairwise_summary_threaded(theta, beta, 2);
    BOOST_TEST_INFO("n = " << n);
    BOOST_TEST(tiled.energy == energy, boost::test_tools::tolerance(test::kRoundoff));
    BOOST_TEST(std::abs(tiled.min_cosine - min_cos) <= test::kFramePassCosine);
    BOOST_TEST(std::abs(tiled.mean_cosine - sum_cos / (double(n) * double(n - 1))) <= test::kFramePassCosine);
    BOOST_TEST(min_pairwise_cosine(theta) == tiled.min_cosine);  // the same tiles, the same minimum
  }
}
