#include "normdyn/analysis/ensemble.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "normdyn/analysis/clusters.hpp"
#include "normdyn/analysis/observables.hpp"

namespace normdyn::analysis {
namespace {}  // namespace

FrameFigures frame_figures(Eigen::Ref<const RowMatrix> theta, const FigureOptions& options) {
  FrameFigures f;
  const Index n = theta.rows();
  f.variance = variance(theta);
  f.one_minus_mean_cosine = one_minus_mean_cosine(theta);
  if (n < 2) return f;
  const RowMatrix h = half_squared_chords(theta);
  f.cluster_count = static_cast<std::int64_t>(cluster_count(h, ClusterOptions{options.cluster_epsilon}));
  // cosine > c  ⟺  1 − cosine < 1 − c.
  const double below = 1.0 - options.pair_cosine;
  std::int64_t close = 0;
  for (Index j = 0; j < n; ++j)
    for (Index k = j + 1; k < n; ++k)
      if (h(j, k) < below) ++close;
  f.pair_fraction = static_cast<double>(close) / (0.5 * static_cast<double>(n) * static_cast<double>(n - 1));
  return f;
}

void RunSeries::push_back(double time, const FrameFigures& f) {
  t.push_back(time);
  variance.push_back(f.variance);
  one_minus_mean_cosine.push_back(f.one_minus_mean_cosine);
  cluster_count.push_back(static_cast<double>(f.cluster_count));
  pair_fraction.push_back(f.pair_fraction);
}

RunFigures run_figures(const RunSeries& s, const RateFitOptions& rate_options) {
  RunFigures r;
  r.t_sync = kNaN;
  if (s.size() == 0) {
    r.final_variance = r.final_one_minus_mean_cosine = r.final_pair_fraction = kNaN;
    r.rate.problem = "too_short";
    r.rate.detail = "no frames";
    return r;
  }
  r.final_variance = s.variance.back();
  r.final_one_minus_mean_cosine = s.one_minus_mean_cosine.back();
  r.final_cluster_count = static_cast<std::int64_t>(s.cluster_count.back());
  r.final_pair_fraction = s.pair_fraction.back();
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.pair_fraction[i] >= 1.0) {
      r.t_sync = s.t[i];
      break;
    }
  RateFitOptions o = rate_options;
  if (o.final_clusters == 0 && r.final_cluster_count > 0)
    o.final_clusters = static_cast<std::size_t>(r.final_cluster_count);
  r.rate = fit_decay(s.t, s.one_minus_mean_cosine, o);
  return r;
}

EnsembleSeries ensemble_series(std::span<const EnsembleMember> members) {
  EnsembleSeries e;
  const RunSeries* longest = nullptr;
  for (const auto& m : members)
    if (!longest || m.series->size() > longest->size()) longest = m.series;
  if (!longest) return e;
  e.t = longest->t;
  for (const auto& m : members)
    if (!std::equal(m.series->t.begin(), m.series->t.end(), e.t.begin()))
      throw std::invalid_argument("the runs of an ensemble have different sample times");

  const std::size_t frames = e.t.size();
  e.runs.assign(frames, 0);
  e.cluster_mean.assign(frames, kNaN);
  e.cluster_std.assign(frames, kNaN);
  e.cluster_min.assign(frames, kNaN);
  e.cluster_max.assign(frames, kNaN);
  e.pair_fraction_mean.assign(frames, kNaN);
  e.pair_fraction_std.assign(frames, kNaN);
  e.sync_probability.assign(frames, kNaN);

  std::vector<double> t_sync;
  for (const auto& m : members) t_sync.push_back(run_figures(*m.series).t_sync);

  for (std::size_t f = 0; f < frames; ++f) {
    std::vector<double> clusters, pairs;
    std::size_t synchronized = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const RunSeries& s = *members[i].series;
      const std::optional<std::size_t> frame = member_frame(s.size(), f, members[i].hold_last);
      if (!frame) continue;
      const std::size_t g = *frame;
      clusters.push_back(s.cluster_count[g]);
      pairs.push_back(s.pair_fraction[g]);
      if (t_sync[i] <= e.t[f]) ++synchronized;
    }
    const auto m = clusters.size();
    e.runs[f] = static_cast<std::int64_t>(m);
    if (m == 0) continue;
    auto mean_std = [m](const std::vector<double>& v, double& mean, double& sd) {
      double sum = 0.0;
      for (double x : v) sum += x;
      mean = sum / static_cast<double>(m);
      if (m < 2) return;
      double sq = 0.0;
      for (double x : v) sq += (x - mean) * (x - mean);
      sd = std::sqrt(sq / static_cast<double>(m - 1));
    };
    mean_std(clusters, e.cluster_mean[f], e.cluster_std[f]);
    mean_std(pairs, e.pair_fraction_mean[f], e.pair_fraction_std[f]);
    e.cluster_min[f] = *std::min_element(clusters.begin(), clusters.end());
    e.cluster_max[f] = *std::max_element(clusters.begin(), clusters.end());
    e.sync_probability[f] = static_cast<double>(synchronized) / static_cast<double>(m);
  }
  return e;
}

}  // namespace normdyn::analysis
