#pragma once
// What the random-weight and metastability studies of `normdyn reproduce` keep of a run: per frame
// 1 − mean cosine, the mean radius, the mean angle each token turned since the previous frame and
// (optionally) the cluster count and normalized energy, computed as the frames arrive so that no
// trajectory is held. The run itself is the library's experiment (run_experiment) of a
// configuration given as TOML, exactly what `normdyn run` does with that file.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "normdyn/analysis/clusters.hpp"
#include "normdyn/analysis/observables.hpp"
#include "normdyn/config.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"

namespace normdyn::studies {

class FrameStatistics final : public Recorder {
 public:
  explicit FrameStatistics(bool clusters = false, double beta = 1.0, double cluster_epsilon = 1e-3)
      : clusters_(clusters), beta_(beta), epsilon_(cluster_epsilon) {}

  std::vector<double> t, one_minus_cos, mean_radius, mean_square_radius, angle;  // angle[0] is NaN (no previous frame)
  std::vector<std::int64_t> cluster_count;                                       // with `clusters`
  std::vector<double> energy;  // normalized energy E/(n² e^β), with `clusters`
  RunSummary summary;

  void begin(const RunLayout& layout) override { samples_ = layout.sample_times.size(); }
  void particle_frame(double time, std::int64_t, const Tokens& x, std::span<const double>, const CheckpointView&,
                      double) override {
    t.push_back(time);
    one_minus_cos.push_back(analysis::one_minus_mean_cosine(x.theta));
    mean_radius.push_back(x.r.mean());
    mean_square_radius.push_back(x.r.squaredNorm() / double(x.n()));
    double a = std::numeric_limits<double>::quiet_NaN();
    if (previous_.rows() == x.theta.rows()) {
      a = 0.0;
      for (Index j = 0; j < x.n(); ++j) a += std::acos(std::clamp(previous_.row(j).dot(x.theta.row(j)), -1.0, 1.0));
      a /= double(x.n());
    }
    angle.push_back(a);
    previous_ = x.theta;
    if (clusters_) {
      const RowMatrix h = analysis::half_squared_chords(x.theta);
      cluster_count.push_back(std::int64_t(analysis::find_clusters(h, x.theta, {epsilon_}).count()));
      energy.push_back(analysis::normalized_energy(h, beta_));
    }
  }
  void field_frame(double, std::int64_t, const std::vector<std::span<const double>>&,
                   const std::vector<std::span<const double>>&, const CheckpointView&, double) override {}
  void end(const RunSummary& s) override { summary = s; }

  // The run ended normally with every sample recorded.
  bool complete() const { return summary.status == RunStatus::ok && t.size() == samples_; }

 private:
  bool clusters_;
  double beta_, epsilon_;
  RowMatrix previous_;
  std::size_t samples_ = 0;
};

// Runs the configuration `toml` in memory (no run file) into `stats`.
inline void run_in_memory(const std::string& toml, FrameStatistics& stats) {
  const RunConfig config = parse_config(toml, "reproduce");
  ExperimentOptions options;
  options.write_file = false;
  options.size_check = false;
  run_experiment(config, options, {&stats});
}

// Element-wise mean of equally long series.
inline std::vector<double> mean_series(const std::vector<std::vector<double>>& runs) {
  std::vector<double> m(runs.empty() ? 0 : runs.front().size(), 0.0);
  for (const auto& r : runs)
    for (std::size_t i = 0; i < m.size(); ++i) m[i] += r[i] / double(runs.size());
  return m;
}

// Mean of series[first..last] (inclusive, clamped).
inline double window_mean(const std::vector<double>& s, std::size_t first, std::size_t last) {
  double sum = 0.0;
  std::size_t m = 0;
  for (std::size_t i = first; i <= last && i < s.size(); ++i)
    if (std::isfinite(s[i])) sum += s[i], ++m;
  return m ? sum / double(m) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace normdyn::studies
