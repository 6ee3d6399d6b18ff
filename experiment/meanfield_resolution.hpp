#pragma once
// The resolution of the clusters of a mean-field run, shared by the circle and the causal mean field.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "normdyn/analysis/density_modes.hpp"
#include "density_run.hpp"
#include "normdyn/experiment/experiment.hpp"

namespace normdyn {

// The field holding the resolution of every frame.
constexpr const char* kResolutionField = "narrowest_cluster_cells";

// The resolution of the clusters over a run's frames: the narrowest cluster of the angular density
// in grid cells (analysis::narrowest_cluster_cells), per frame, and when it first fell below
// analysis::kResolvedClusterCells.
class ClusterResolution {
 public:
  // `recorded`: the run records the value of every frame as the field kResolutionField.
  explicit ClusterResolution(bool recorded = true) : recorded_(recorded) {}
  bool recorded() const { return recorded_; }

  // The value of one frame (+inf, the minimum over no cluster, when there is none).
  double add(double t, std::span<const double> angular_density) {
    return record(
        t, analysis::narrowest_cluster_cells(analysis::density_clusters(angular_density), angular_density.size()));
  }
  // The causal mean field: the narrowest cluster over the `slices` slices of `density` (slice-major),
  // each a density in phi (their average is wider where the slices' clusters differ).
  double add(double t, std::span<const double> density, std::size_t slices) {
    const std::size_t m = density.size() / slices;
    double cells = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < slices; ++j) {
      const std::span<const double> slice = density.subspan(j * m, m);
      cells = std::min(cells, analysis::narrowest_cluster_cells(analysis::density_clusters(slice), m));
    }
    return record(t, cells);
  }

  // /summary@narrowest_cluster_cells (over every frame; +inf without clusters) and
  // @under_resolved_since (+inf: never), and a warning appended to the summary's message.
  void summarize(RunSummary& summary, std::int64_t grid) const {
    summary.extra.emplace_back("narrowest_cluster_cells", narrowest_);
    summary.extra.emplace_back("under_resolved_since",
                               under_resolved_since_.value_or(std::numeric_limits<double>::infinity()));
    if (!under_resolved_since_) return;
    char buffer[300];
    std::snprintf(buffer, sizeof buffer,
                  "clusters narrower than %g grid cell from t = %g (narrowest %.2f), merges may come late: check "
                  "with meanfield.grid = %lld",
                  analysis::kResolvedClusterCells, *under_resolved_since_, narrowest_,
                  static_cast<long long>(2 * grid));
    add_summary_warning(summary, "under_resolved", buffer);
  }

 private:
  double record(double t, double cells) {
    narrowest_ = std::min(narrowest_, cells);
    if (cells < analysis::kResolvedClusterCells && !under_resolved_since_) under_resolved_since_ = t;
    return cells;
  }

  bool recorded_ = true;
  double narrowest_ = std::numeric_limits<double>::infinity();
  std::optional<double> under_resolved_since_;
};

}  // namespace normdyn
