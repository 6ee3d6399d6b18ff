#include "normdyn/analysis/clusters.hpp"

#include <algorithm>
#include <cassert>
#include <map>
#include <numeric>
#include <set>

namespace normdyn::analysis {
namespace {

// Union–find whose representative is the smallest index of each set.
struct DisjointSets {
  std::vector<std::int64_t> parent;
  explicit DisjointSets(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::int64_t find(std::int64_t x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      auto& p = parent[static_cast<std::size_t>(x)];
      p = parent[static_cast<std::size_t>(p)];
      x = p;
    }
    return x;
  }
  void join(std::int64_t a, std::int64_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) parent[static_cast<std::size_t>(b)] = a;
    else parent[static_cast<std::size_t>(a)] = b;
  }
};

}  // namespace

Clusters find_clusters(Eigen::Ref<const RowMatrix> h, Eigen::Ref<const RowMatrix> theta, const ClusterOptions& options) {
  const Index n = h.rows();
  assert(theta.rows() == n);
  DisjointSets sets(static_cast<std::size_t>(n));
  for (Index j = 0; j < n; ++j)
    for (Index k = j + 1; k < n; ++k)
      if (h(j, k) < options.epsilon) sets.join(j, k);

  Clusters c;
  c.label.resize(static_cast<std::size_t>(n));
  std::map<std::int64_t, std::size_t> slot;  // id → position in ids
  for (Index j = 0; j < n; ++j) {
    const std::int64_t id = sets.find(j);
    c.label[static_cast<std::size_t>(j)] = id;
    if (id == j) slot.emplace(id, 0);
  }
  for (auto& [id, pos] : slot) {
    pos = c.ids.size();
    c.ids.push_back(id);
  }
  c.sizes.assign(c.ids.size(), 0);
  c.centres = RowMatrix::Zero(static_cast<Index>(c.ids.size()), theta.cols());
  for (Index j = 0; j < n; ++j) {
    const std::size_t pos = slot.at(c.label[static_cast<std::size_t>(j)]);
    ++c.sizes[pos];
    c.centres.row(static_cast<Index>(pos)) += theta.row(j);
  }
  for (Index i = 0; i < c.centres.rows(); ++i) {
    const double norm = c.centres.row(i).norm();
    if (norm > 0.0) c.centres.row(i) /= norm;
  }
  return c;
}

std::vector<ClusterEvent> cluster_events(double t0, const Clusters& before, double t1, const Clusters& after) {
  assert(before.label.size() == after.label.size());
  std::map<std::int64_t, std::set<std::int64_t>> sources;  // later id → earlier ids
  std::map<std::int64_t, std::set<std::int64_t>> targets;  // earlier id → later ids
  for (std::size_t j = 0; j < before.label.size(); ++j) {
    sources[after.label[j]].insert(before.label[j]);
    targets[before.label[j]].insert(after.label[j]);
  }
  auto size_of = [](const Clusters& c, std::int64_t id) {
    const auto it = std::lower_bound(c.ids.begin(), c.ids.end(), id);
    return c.sizes[static_cast<std::size_t>(it - c.ids.begin())];
  };
  std::vector<ClusterEvent> events;
  for (const auto& [into, from] : sources) {
    if (from.size() < 2) continue;
    ClusterEvent e;
    e.kind = ClusterEvent::Kind::merge;
    e.t_before = t0;
    e.t = t1;
    e.whole = into;
    e.whole_size = size_of(after, into);
    for (std::int64_t id : from) {
      e.parts.push_back(id);
      e.part_sizes.push_back(size_of(before, id));
    }
    events.push_back(std::move(e));
  }
  for (const auto& [from, into] : targets) {
    if (into.size() < 2) continue;
    ClusterEvent e;
    e.kind = ClusterEvent::Kind::split;
    e.t_before = t0;
    e.t = t1;
    e.whole = from;
    e.whole_size = size_of(before, from);
    for (std::int64_t id : into) {
      e.parts.push_back(id);
      e.part_sizes.push_back(size_of(after, id));
    }
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace normdyn::analysis
