// Figures of sweep runs and their ensemble statistics, on planted configurations and
// hand-made series whose answers are known exactly.
#define BOOST_TEST_MODULE ensemble
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "normdyn/analysis/ensemble.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using namespace normdyn::analysis;

namespace {

// Tokens in clusters: `sizes[c]` tokens within angle `spread` of direction c (well separated
// directions on S^{d-1}).
RowMatrix planted(const std::vector<int>& sizes, double spread, Index d, std::uint64_t seed) {
  const RowMatrix centres = test::random_rotation(d, seed);  // orthonormal: clusters 90° apart
  Random rng(seed, RandomStream::initial_tokens, 5);
  Index n = 0;
  for (int s : sizes) n += s;
  RowMatrix theta(n, d);
  Index j = 0;
  for (std::size_t c = 0; c < sizes.size(); ++c)
    for (int k = 0; k < sizes[c]; ++k, ++j) {
      Eigen::RowVectorXd noise(d);
      for (Index i = 0; i < d; ++i) noise(i) = rng.normal();
      theta.row(j) = centres.row(static_cast<Index>(c)) + spread * noise / std::sqrt(static_cast<double>(d));
      theta.row(j).normalize();
    }
  return theta;
}

RunSeries series(std::vector<double> t, std::vector<double> clusters, std::vector<double> pairs) {
  RunSeries s;
  for (std::size_t i = 0; i < t.size(); ++i) {
    FrameFigures f;
    f.cluster_count = static_cast<std::int64_t>(clusters[i]);
    f.pair_fraction = pairs[i];
    f.variance = f.one_minus_mean_cosine = std::exp(-t[i]);
    s.push_back(t[i], f);
  }
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(frame_figures_count_planted_clusters_and_close_pairs) {
  // Tight clusters (cosines within a cluster > 1 − 1e-5), far apart: 3 clusters of 5, 3 and 1
  // tokens; the close pairs are those inside a cluster: C(5,2) + C(3,2) = 13 of C(9,2) = 36.
  const RowMatrix theta = planted({5, 3, 1}, 1e-3, 4, 11);
  const FrameFigures f = frame_figures(theta, FigureOptions{});
  BOOST_TEST(f.cluster_count == 3);
  BOOST_TEST(f.pair_fraction == 13.0 / 36.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(f.variance == 1.0 - (theta.colwise().mean()).squaredNorm(), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(f.one_minus_mean_cosine == 9.0 / 8.0 * f.variance, boost::test_tools::tolerance(1e-12));
  // A threshold beyond the clusters' spread: no pair is close, each token its own cluster.
  const FrameFigures strict = frame_figures(theta, FigureOptions{1e-12, 1.0 - 1e-12});
  BOOST_TEST(strict.cluster_count == 9);
  BOOST_TEST(strict.pair_fraction == 0.0);
  // One cluster: every pair.
  const FrameFigures one = frame_figures(planted({7}, 1e-4, 3, 2), FigureOptions{});
  BOOST_TEST(one.cluster_count == 1);
  BOOST_TEST(one.pair_fraction == 1.0);
  // One token.
  BOOST_TEST(frame_figures(planted({1}, 0.0, 3, 2), FigureOptions{}).pair_fraction == 1.0);
}

BOOST_AUTO_TEST_CASE(the_pair_threshold_is_a_cosine) {
  // Two tokens at a known angle: close for thresholds below their cosine only.
  const double angle = 0.05;
  RowMatrix theta(2, 2);
  theta << 1.0, 0.0, std::cos(angle), std::sin(angle);
  const double c = std::cos(angle);
  BOOST_TEST(frame_figures(theta, FigureOptions{1e-3, c - 1e-9}).pair_fraction == 1.0);
  BOOST_TEST(frame_figures(theta, FigureOptions{1e-3, c + 1e-9}).pair_fraction == 0.0);
}

BOOST_AUTO_TEST_CASE(run_figures_take_the_last_frame_the_first_synchronized_one_and_the_rate) {
  std::vector<double> t, clusters, pairs;
  for (int i = 0; i <= 40; ++i) {
    t.push_back(0.5 * i);
    clusters.push_back(i < 10 ? 4 : i < 25 ? 2 : 1);
    pairs.push_back(i < 10 ? 0.2 : i < 25 ? 0.6 : 1.0);
  }
  const RunFigures f = run_figures(series(t, clusters, pairs));
  BOOST_TEST(f.final_cluster_count == 1);
  BOOST_TEST(f.final_pair_fraction == 1.0);
  BOOST_TEST(f.t_sync == 12.5);
  BOOST_TEST(f.final_variance == std::exp(-20.0));
  // 1 − mean cosine = e^{−t}: an exponential with rate 1.
  BOOST_TEST(f.rate.ok);
  BOOST_TEST(to_string(f.rate.law) == "exponential");
  BOOST_TEST(f.rate.parameter == 1.0, boost::test_tools::tolerance(test::kExactFit));
  // Never synchronized; no frames.
  pairs.back() = 0.99;
  for (double& p : pairs) p = std::min(p, 0.99);
  BOOST_TEST(std::isnan(run_figures(series(t, clusters, pairs)).t_sync));
  const RunFigures empty = run_figures(RunSeries{});
  BOOST_TEST(empty.final_cluster_count == -1);
  BOOST_TEST(!empty.rate.ok);
}

BOOST_AUTO_TEST_CASE(ensemble_statistics_over_runs) {
  const std::vector<double> t{0, 1, 2, 3};
  const RunSeries a = series(t, {8, 4, 2, 1}, {0.0, 0.5, 0.8, 1.0});
  const RunSeries b = series(t, {8, 6, 3, 3}, {0.0, 0.3, 0.6, 0.6});
  const RunSeries c = series(t, {8, 5, 1, 1}, {0.0, 0.4, 1.0, 1.0});
  const std::vector<EnsembleMember> members{{&a, false}, {&b, false}, {&c, false}};
  const EnsembleSeries e = ensemble_series(members);
  BOOST_TEST(e.t == t);
  BOOST_TEST(e.runs == std::vector<std::int64_t>(4, 3));
  BOOST_TEST(e.cluster_mean[1] == 5.0);
  BOOST_TEST(e.cluster_std[1] == 1.0, boost::test_tools::tolerance(1e-15));  // sample sd of 4, 6, 5
  BOOST_TEST(e.cluster_min[3] == 1.0);
  BOOST_TEST(e.cluster_max[3] == 3.0);
  BOOST_TEST(e.cluster_std[0] == 0.0);
  BOOST_TEST(e.pair_fraction_mean[2] == 0.8, boost::test_tools::tolerance(1e-15));
  // Synchronized by t: c at t = 2, a at t = 3, b never.
  BOOST_TEST(e.sync_probability[1] == 0.0);
  BOOST_TEST(e.sync_probability[2] == 1.0 / 3.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(e.sync_probability[3] == 2.0 / 3.0, boost::test_tools::tolerance(1e-15));
  // One run: no spread.
  const EnsembleSeries single = ensemble_series(std::vector<EnsembleMember>{{&b, false}});
  BOOST_TEST(std::isnan(single.cluster_std[1]));
  BOOST_TEST(single.cluster_mean[1] == 6.0);
}

BOOST_AUTO_TEST_CASE(runs_that_ended_early_hold_their_last_frame_only_when_synchronized) {
  const std::vector<double> t{0, 1, 2, 3};
  const RunSeries full = series(t, {6, 4, 3, 2}, {0.0, 0.5, 0.7, 0.9});
  const RunSeries stopped = series({0, 1}, {6, 1}, {0.2, 1.0});  // stopped by its sync condition at t = 1
  const std::vector<EnsembleMember> held{{&full, false}, {&stopped, true}};
  const EnsembleSeries e = ensemble_series(held);
  BOOST_TEST(e.runs == std::vector<std::int64_t>(4, 2));
  BOOST_TEST(e.cluster_mean[3] == 1.5);
  BOOST_TEST(e.sync_probability[3] == 0.5);
  const std::vector<EnsembleMember> cut{{&full, false}, {&stopped, false}};
  const EnsembleSeries f = ensemble_series(cut);
  BOOST_TEST((f.runs == std::vector<std::int64_t>{2, 2, 1, 1}));
  BOOST_TEST(f.cluster_mean[3] == 2.0);
  BOOST_TEST(f.sync_probability[3] == 0.0);
  // Different sample times are not one ensemble.
  const RunSeries shifted = series({0, 1.5}, {6, 5}, {0.0, 0.1});
  const std::vector<EnsembleMember> bad{{&full, false}, {&shifted, false}};
  BOOST_CHECK_THROW(ensemble_series(bad), std::invalid_argument);
}
