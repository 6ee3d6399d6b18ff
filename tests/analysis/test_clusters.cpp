// Clusters on planted configurations: counts, sizes, centres, ids, the threshold itself, single
// linkage chains, merge and split events, and invariance under permutations and rotations.
#define BOOST_TEST_MODULE analysis_clusters
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>

#include "normdyn/analysis/clusters.hpp"
#include "normdyn/analysis/observables.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using namespace normdyn::analysis;

namespace {

struct Planted {
  RowMatrix theta;
  RowMatrix centres;
  std::vector<int> cluster_of;  // planted cluster of each token
};

// `sizes[c]` tokens within angle `spread` of centre c; centres pairwise cosine < 0.9. Tokens are
// interleaved (token j belongs to cluster j mod K while that cluster has room).
Planted plant(const std::vector<int>& sizes, Index d, double spread, std::uint64_t seed) {
  const auto k = static_cast<Index>(sizes.size());
  Planted p;
  p.centres = RowMatrix(k, d);
  Index found = 0;
  for (std::uint64_t s = seed; found < k; s += 7) {
    const RowMatrix c = test::random_tokens(1, d, s).theta;
    bool apart = true;
    for (Index i = 0; i < found; ++i) apart = apart && p.centres.row(i).dot(c.row(0)) < 0.9;
    if (apart) p.centres.row(found++) = c.row(0);
  }
  std::vector<int> left = sizes;
  int total = 0;
  for (int s : sizes) total += s;
  p.theta = RowMatrix(total, d);
  const Tokens noise = test::random_tokens(total, d, seed + 1000);
  for (int j = 0, c = 0; j < total; ++j) {
    while (left[static_cast<std::size_t>(c)] == 0) c = (c + 1) % int(k);
    --left[static_cast<std::size_t>(c)];
    p.theta.row(j) = (p.centres.row(c) + spread * noise.theta.row(j)).normalized();
    p.cluster_of.push_back(c);
    c = (c + 1) % int(k);
  }
  return p;
}

Clusters clusters_of(const RowMatrix& theta, double epsilon = 1e-3) {
  return find_clusters(half_squared_chords(theta), theta, {epsilon});
}

Clusters from_labels(const std::vector<std::int64_t>& label, Index d = 2) {
  // Clusters with the given labels (ids must be the smallest member), centres left zero.
  Clusters c;
  c.label = label;
  std::vector<std::int64_t> ids(label);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  c.ids = ids;
  for (auto id : ids) c.sizes.push_back(std::count(label.begin(), label.end(), id));
  c.centres = RowMatrix::Zero(static_cast<Index>(ids.size()), d);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(planted_clusters_are_found) {
  const std::vector<int> sizes{5, 1, 9, 3};
  const Planted p = plant(sizes, 4, 1e-3, 3);  // within-cluster 1 − cos ≤ 2e-6, between > 0.1
  const Clusters c = clusters_of(p.theta);
  BOOST_TEST(c.count() == sizes.size());
  std::vector<std::int64_t> found = c.sizes, planted(sizes.begin(), sizes.end());
  std::sort(found.begin(), found.end());
  std::sort(planted.begin(), planted.end());
  BOOST_TEST(found == planted, boost::test_tools::per_element());
  for (std::size_t j = 0; j < c.label.size(); ++j) {
    // Same planted cluster ⇔ same label; the id is the smallest member.
    for (std::size_t k = 0; k < c.label.size(); ++k)
      BOOST_TEST((c.label[j] == c.label[k]) == (p.cluster_of[j] == p.cluster_of[k]));
    BOOST_TEST(c.label[j] <= static_cast<std::int64_t>(j));
    BOOST_TEST(c.label[static_cast<std::size_t>(c.label[j])] == c.label[j]);
  }
  // Centres: within the spread of the planted centres.
  for (std::size_t i = 0; i < c.count(); ++i) {
    const int planted_cluster = p.cluster_of[static_cast<std::size_t>(c.ids[i])];
    BOOST_TEST((c.centres.row(static_cast<Index>(i)) - p.centres.row(planted_cluster)).norm() < 2e-3);
    BOOST_TEST(std::abs(c.centres.row(static_cast<Index>(i)).norm() - 1.0) < test::kRoundoff);
  }
  BOOST_TEST(std::is_sorted(c.ids.begin(), c.ids.end()));
}

BOOST_AUTO_TEST_CASE(the_threshold_is_cosine_above_one_minus_epsilon) {
  const double eps = 1e-3;
  for (double factor : {0.999, 1.001}) {
    const double angle = std::acos(1.0 - factor * eps);
    const RowMatrix t = (RowMatrix(2, 2) << 1.0, 0.0, std::cos(angle), std::sin(angle)).finished();
    BOOST_TEST(clusters_of(t, eps).count() == (factor < 1.0 ? 1u : 2u));
  }
}

BOOST_AUTO_TEST_CASE(single_linkage_joins_chains) {
  // Tokens along the circle 0.03 rad apart (1 − cos ≈ 4.5e-4 < 1e-3): one cluster although the
  // ends are far apart; 0.05 rad apart (1 − cos ≈ 1.25e-3): every token alone.
  for (const auto& [step, expected] : {std::pair{0.03, 1u}, std::pair{0.05, 20u}}) {
    RowMatrix t(20, 2);
    for (Index j = 0; j < 20; ++j) t.row(j) << std::cos(step * double(j)), std::sin(step * double(j));
    BOOST_TEST(clusters_of(t).count() == expected);
    BOOST_TEST(cluster_count(half_squared_chords(t), ClusterOptions{1e-3}) == expected);  // the count alone
  }
}

BOOST_AUTO_TEST_CASE(invariance_under_permutation_and_rotation) {
  const Planted p = plant({4, 4, 2, 7, 1}, 5, 2e-3, 8);
  const Index n = p.theta.rows();
  const RowMatrix rot = test::random_rotation(5, 9);
  Eigen::PermutationMatrix<Eigen::Dynamic> perm(n);
  perm.setIdentity();
  std::reverse(perm.indices().data(), perm.indices().data() + n);
  const RowMatrix moved = perm * (p.theta * rot.transpose());
  const Clusters a = clusters_of(p.theta), b = clusters_of(moved);
  BOOST_TEST(a.count() == b.count());
  std::vector<std::int64_t> sa = a.sizes, sb = b.sizes;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  BOOST_TEST(sa == sb, boost::test_tools::per_element());
  // Token j of the original is token perm(j) of the moved set: same partition.
  for (Index j = 0; j < n; ++j)
    for (Index k = 0; k < n; ++k)
      BOOST_TEST((a.label[std::size_t(j)] == a.label[std::size_t(k)]) ==
                 (b.label[std::size_t(perm.indices()(j))] == b.label[std::size_t(perm.indices()(k))]));
}

BOOST_AUTO_TEST_CASE(merge_and_split_events) {
  // Frame 0: {0,1} {2,3} {4,5} {6}; frame 1: {0,1,2,3} {4,5,6}; frame 2: {0,1,2,3} {4} {5,6}.
  const Clusters f0 = from_labels({0, 0, 2, 2, 4, 4, 6});
  const Clusters f1 = from_labels({0, 0, 0, 0, 4, 4, 4});
  const Clusters f2 = from_labels({0, 0, 0, 0, 4, 5, 5});
  const auto e01 = cluster_events(1.0, f0, 2.0, f1);
  BOOST_REQUIRE_EQUAL(e01.size(), 2u);
  BOOST_TEST((e01[0].kind == ClusterEvent::Kind::merge));
  BOOST_TEST(e01[0].t_before == 1.0);
  BOOST_TEST(e01[0].t == 2.0);
  BOOST_TEST(e01[0].whole == 0);
  BOOST_TEST(e01[0].whole_size == 4);
  BOOST_TEST(e01[0].parts == (std::vector<std::int64_t>{0, 2}), boost::test_tools::per_element());
  BOOST_TEST(e01[0].part_sizes == (std::vector<std::int64_t>{2, 2}), boost::test_tools::per_element());
  BOOST_TEST(e01[1].whole == 4);
  BOOST_TEST(e01[1].parts == (std::vector<std::int64_t>{4, 6}), boost::test_tools::per_element());
  const auto e12 = cluster_events(2.0, f1, 3.0, f2);
  BOOST_REQUIRE_EQUAL(e12.size(), 1u);
  BOOST_TEST((e12[0].kind == ClusterEvent::Kind::split));
  BOOST_TEST(e12[0].whole == 4);
  BOOST_TEST(e12[0].whole_size == 3);
  BOOST_TEST(e12[0].parts == (std::vector<std::int64_t>{4, 5}), boost::test_tools::per_element());
  BOOST_TEST(e12[0].part_sizes == (std::vector<std::int64_t>{1, 2}), boost::test_tools::per_element());
  BOOST_TEST(cluster_events(0.0, f1, 1.0, f1).empty());
}
