#pragma once
// The analysis of a run (what `normdyn analyze` and normdyn.analyze report): from a FrameSource to
// the per-frame observables of the registry, clusters and their merges, plateaus, the late-time rate
// fit and the theorem checks (particle runs), or the density's modes, clusters, W1 and linear rates
// (mean-field runs); with the warnings a reader must see next to the numbers. No file is written
// here (outputs.hpp writes them); nothing is printed.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "normdyn/analysis/clusters.hpp"
#include "normdyn/analysis/density_modes.hpp"
#include "normdyn/analysis/metastability.hpp"
#include "normdyn/analysis/observables.hpp"
#include "normdyn/analysis/rates.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/analysis/trajectory_summary.hpp"
#include "normdyn/analyze/frame_source.hpp"
#include "normdyn/config.hpp"

namespace normdyn {

// The series whose late-time decay is fitted.
enum class RateQuantity { one_minus_mean_cosine, variance, one_minus_min_cosine, diameter };
std::string_view to_string(RateQuantity q) noexcept;
std::optional<RateQuantity> rate_quantity_from_string(std::string_view s) noexcept;
std::vector<std::string> rate_quantity_names();

// Every option of the analysis; options.hpp lists them once for the command line and Python.
struct AnalyzeOptions {
  double rank_threshold = 1e-3;
  analysis::ClusterOptions clusters;
  analysis::PlateauOptions plateaus;
  RateQuantity quantity = RateQuantity::one_minus_mean_cosine;
  analysis::RateFitOptions rate;
  analysis::CheckOptions checks;
  analysis::DensityOptions density;  // mean-field runs
  bool use_velocity = true;          // angular speed and <θ_j, A_j> from the run's dynamics (else finite differences)
  // Threads of the attention kernel when the dynamics is rebuilt (0: all cores). Default: 1 when
  // n² d < 2^24 (small kernels lose more to OpenMP synchronization than they gain), else the run's.
  std::optional<int> threads;
};

// Something a reader must know next to the numbers, with the frames it concerns.
struct AnalysisWarning {
  std::string code;     // stable token, e.g. "under_resolved"
  std::string message;  // one sentence: what, why it matters, what to do
  std::vector<std::size_t> frames;
  std::vector<double> times;
};

// A particle run: everything the analysis found.
struct AnalysisResult {
  RunConfig config;
  std::string revision;
  std::optional<RunSummary> summary;
  std::vector<double> t;
  std::vector<std::int64_t> step;
  std::vector<analysis::FrameObservables> frames;
  // The registry's per-frame series this run gives (observable_registry.hpp), in registry order.
  std::vector<std::string> observable_names;
  std::vector<std::vector<double>> observable_values;
  const std::vector<double>* observable(std::string_view name) const {
    for (std::size_t k = 0; k < observable_names.size(); ++k)
      if (observable_names[k] == name) return &observable_values[k];
    return nullptr;
  }
  std::vector<double> mean_angular_speed;
  std::string angular_speed_method;          // "velocity" or "finite_difference"
  std::vector<double> min_radial_alignment;  // empty without the dynamics
  std::vector<double> max_attention_norm;    // empty without the dynamics
  std::vector<double> min_radius_growth;
  std::vector<analysis::Clusters> clusters;
  std::vector<analysis::ClusterEvent> events;
  std::vector<analysis::Plateau> plateaus;
  analysis::RateFit rate_fit;
  RateQuantity quantity = RateQuantity::one_minus_mean_cosine;
  analysis::Checks checks;
  std::vector<std::string> notes;  // e.g. why the velocity was not available
  std::vector<AnalysisWarning> warnings;
  // The figures of the paper read off the series (trajectory_summary.hpp).
  analysis::GrowthExponent radius_growth;          // mean radius − its first value ∝ t^a
  std::optional<analysis::ClockDiagnostic> clock;  // schemes with a radius, with the dynamics
};

// A mean-field run: per frame the angular density's Fourier modes, clusters (with their width in
// grid cells) and W1 to the uniform density; per mode its growth rate in the linear regime beside
// the closed-form rate of the uniform state.
struct MeanFieldAnalysis {
  RunConfig config;
  std::string revision;
  std::optional<RunSummary> summary;
  std::string field;  // the field read: density, or angular_density for schemes with a radius
  std::vector<double> t;
  std::vector<std::int64_t> step;
  std::vector<analysis::DensityFigures> frames;
  std::vector<analysis::ModeRate> measured;  // per mode k = 1..K
  std::vector<std::string> problems;         // per mode: empty, or why the rate is not the linear one
  std::vector<double> theory;                // Re λ_k(0) of the uniform state; NaN where not available
  std::vector<std::string> notes;
  std::vector<AnalysisWarning> warnings;
};

// The analysis of either kind of run.
struct RunAnalysis {
  std::optional<AnalysisResult> particles;
  std::optional<MeanFieldAnalysis> meanfield;
  const std::vector<AnalysisWarning>& warnings() const { return particles ? particles->warnings : meanfield->warnings; }
};

AnalysisResult analyze_particles(const FrameSource& source, const AnalyzeOptions& options);
MeanFieldAnalysis analyze_meanfield(const FrameSource& source, const AnalyzeOptions& options);
RunAnalysis analyze_run(const FrameSource& source, const AnalyzeOptions& options);

// The per-frame series of a quantity.
std::vector<double> quantity_series(const AnalysisResult& r, RateQuantity q);

// The per-frame series of an analysis, as normdyn.observables gives them and the observables file
// stores them: the registry's entries the run gives (observable_registry.hpp), in its order, then
// the analysis' own (cluster counts, labels, ids, sizes, centres of particle runs).
struct ObservableSeriesOut {
  std::string name;
  std::string unit;
  std::string description;
  bool integer = false;
  std::vector<std::uint64_t> inner;                             // dimensions after the frame axis
  std::vector<std::string> inner_names;                         // their names (xarray dimensions)
  std::vector<double> values;                                   // frames × Π inner, row-major
  std::vector<std::pair<std::string, std::string>> attributes;  // further string attributes
};
// `all`: also the per-token and per-cluster arrays of particle runs (labels, ids, sizes, centres);
// else the per-frame scalars and the mode amplitudes only.
std::vector<ObservableSeriesOut> observable_series(const RunAnalysis& a, bool all);

}  // namespace normdyn
