#pragma once
// Clusters of tokens and how they merge. Pure functions: no I/O, no solver.
//
// Two tokens are joined when their cosine exceeds 1 − ε (ε = `epsilon`, default 1e-3), i.e. when
// |θ_j − θ_k|²/2 < ε; clusters are the connected components of that graph (single linkage), so a
// chain of close tokens is one cluster. A cluster's id is the smallest index of its tokens, which
// makes ids deterministic and lets a cluster keep its id through merges with higher-numbered ones.
#include <cstdint>
#include <vector>

#include "normdyn/tokens.hpp"

namespace normdyn::analysis {

struct ClusterOptions {
  double epsilon = 1e-3;  // join when cosine > 1 − epsilon
};

// Clusters of one frame. `label[j]` is the id of token j's cluster; `ids`, `sizes` and `centres`
// list the clusters in increasing id. A centre is the normalized mean direction of its tokens.
struct Clusters {
  std::vector<std::int64_t> label;
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> sizes;
  RowMatrix centres;  // count × d

  std::size_t count() const { return ids.size(); }
};

// From H = half_squared_chords(θ) (observables.hpp) and the directions θ (for the centres).
Clusters find_clusters(Eigen::Ref<const RowMatrix> h, Eigen::Ref<const RowMatrix> theta, const ClusterOptions& options);
// find_clusters(h, θ, options).count() without the labels and centres (the figures of every frame).
std::size_t cluster_count(Eigen::Ref<const RowMatrix> h, const ClusterOptions& options);

// What happened to the clusters between two consecutive frames.
struct ClusterEvent {
  enum class Kind { merge, split };
  Kind kind = Kind::merge;
  double t_before = 0.0;  // last frame before the event
  double t = 0.0;         // first frame after it
  // merge: the clusters of the earlier frame (ids, sizes) that became one cluster `into` of the later
  // frame; split: one cluster `from` of the earlier frame whose tokens went to several later clusters.
  std::vector<std::int64_t> parts;
  std::vector<std::int64_t> part_sizes;
  std::int64_t whole = -1;  // merge: id of the resulting cluster; split: id of the cluster that split
  std::int64_t whole_size = 0;
};

// Merges (a later cluster drawing tokens from several earlier ones) and splits (an earlier cluster
// whose tokens went to several later ones) between the frames at t0 and t1. Merges come first, each
// list in increasing id.
std::vector<ClusterEvent> cluster_events(double t0, const Clusters& before, double t1, const Clusters& after);

}  // namespace normdyn::analysis
