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
    if (a < b)
      parent[static_cast<std::size_t>(b)] = a;
    else
      parent[static_cast<std::size_t>(a)] = b;
  }
};

}  // namespace

std::size_t cluster_count(Eigen::Ref<const RowMatrix> h, const ClusterOptions& options) {
  const Index n = h.rows();
  DisjointSets sets(static_cast<std::size_t>(n));
  for (Index j = 0; j < n; ++j)
    for (Index k = j + 1; k < n; ++k)
      if (h(j, k) < options.epsilon) sets.join(j, k);
  std::size_t roots = 0;
  for (Index j = 0; j < n; ++j)
    if (sets.find(j) == j) ++roots;
  return roots;
}

Clusters find_clusters(Eigen::Ref<const RowMatrix> h, Eigen::Ref<const RowMatrix> theta,
                       const ClusterOptions& options) {
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
  // One cluster `whole` of `whole_side` made of (merge) or split into (split) several of `parts_side`.
  auto add_events = [&](const auto& links, ClusterEvent::Kind kind, const Clusters& whole_side,
                        const Clusters& parts_side) {
    for (const auto& [whole, parts] : links) {
      if (parts.size() < 2) continue;
      ClusterEvent e;
      e.kind = kind;
      e.t_before = t0;
      e.t = t1;
      e.whole = whole;
      e.whole_size = size_of(whole_side, whole);
      for (std::int64_t id : parts) {
        e.parts.push_back(id);
        e.part_sizes.push_back(size_of(parts_side, id));
      }
      events.push_back(std::move(e));
    }
  };
  add_events(sources, ClusterEvent::Kind::merge, after, before);
  add_events(targets, ClusterEvent::Kind::split, before, after);
  return events;
}

}  // namespace normdyn::analysis
