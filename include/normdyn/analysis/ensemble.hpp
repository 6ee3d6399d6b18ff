#pragma once
// Figures of the runs of a sweep and their ensemble statistics. Pure functions: no I/O, no solver.
//
// Per frame of a run (frame_figures): the variance, 1 − mean cosine, the number of clusters (cosine
// > 1 − ε, single linkage: exactly the clusters of `normdyn analyze`) and the fraction of token pairs
// j < k whose cosine exceeds `pair_cosine` (0.999 by default). A run is synchronized at the first
// frame where that fraction is 1 (every pair); its synchronization time is that frame's time.
//
// Per group of runs that repeat one configuration with different seeds (ensemble_series), at each
// sample time: mean, sample standard deviation, minimum and maximum of the cluster count; mean and
// standard deviation of the pair fraction; and the probability of synchronization by that time, the
// fraction of the runs whose synchronization time is at most t (an empirical distribution function).
// A run stopped early by its synchronization stop (solver.sync_epsilon) stands at its last frame
// for the remaining times (`hold_last`); another run that ended early contributes up to its end.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "normdyn/analysis/rates.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn::analysis {

struct FigureOptions {
  double cluster_epsilon = 1e-3;  // clusters: join tokens with cosine > 1 − epsilon
  double pair_cosine = 0.999;     // synchronized pairs: cosine > pair_cosine
};

struct FrameFigures {
  double variance = 0.0;
  double one_minus_mean_cosine = 0.0;
  std::int64_t cluster_count = 1;
  double pair_fraction = 1.0;  // pairs j < k with cosine > pair_cosine, over n(n−1)/2 (1 when n = 1)
};

// O(n² d) time, O(n²) memory (the matrix of 1 − cosines, from differences as in observables.hpp).
FrameFigures frame_figures(Eigen::Ref<const RowMatrix> theta, const FigureOptions& options);

// The per-frame figures of one run.
struct RunSeries {
  std::vector<double> t;
  std::vector<double> variance;
  std::vector<double> one_minus_mean_cosine;
  std::vector<double> cluster_count;
  std::vector<double> pair_fraction;

  void push_back(double time, const FrameFigures& f);
  std::size_t size() const { return t.size(); }
};

// The summary of one run.
struct RunFigures {
  double final_variance = 0.0;
  double final_one_minus_mean_cosine = 0.0;
  std::int64_t final_cluster_count = -1;  // -1: no frame
  double final_pair_fraction = 0.0;
  double t_sync = 0.0;  // first time every pair is synchronized; NaN if never
  RateFit rate;         // late-time decay of 1 − mean cosine (as `normdyn analyze`)
};

// NaN figures when the series is empty.
RunFigures run_figures(const RunSeries& series, const RateFitOptions& rate_options = {});

struct EnsembleMember {
  const RunSeries* series = nullptr;
  bool hold_last = false;  // stopped by synchronization: its last frame stands for the remaining times
};

// The frame of a member of `frames` frames that stands for sample f, or nothing when the member
// does not contribute at f (it has no frame, or ended early without hold_last).
inline std::optional<std::size_t> member_frame(std::size_t frames, std::size_t f, bool hold_last) {
  if (f < frames) return f;
  if (frames == 0 || !hold_last) return std::nullopt;
  return frames - 1;
}

struct EnsembleSeries {
  std::vector<double> t;           // the common sample times
  std::vector<std::int64_t> runs;  // runs contributing at each time
  std::vector<double> cluster_mean, cluster_std, cluster_min, cluster_max;
  std::vector<double> pair_fraction_mean, pair_fraction_std;
  std::vector<double> sync_probability;  // fraction of the contributing runs synchronized by t
};

// Statistics over runs whose sample times agree (each a prefix of the longest). Standard deviations
// are sample standard deviations (NaN for fewer than two runs). Throws std::invalid_argument when
// the sample times of two members differ.
EnsembleSeries ensemble_series(std::span<const EnsembleMember> members);

}  // namespace normdyn::analysis
