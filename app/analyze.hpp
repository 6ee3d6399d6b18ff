#pragma once
// `normdyn analyze`: run file → per-frame observables (written back under /observables), clusters
// and their merges, plateaus, the late-time rate fit and the theorem checks → report (text + JSON).
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/analysis/clusters.hpp"
#include "normdyn/analysis/density_modes.hpp"
#include "normdyn/analysis/metastability.hpp"
#include "normdyn/analysis/observables.hpp"
#include "normdyn/analysis/rates.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/analysis/trajectory_summary.hpp"
#include "normdyn/config.hpp"
#include "normdyn/io/observables_file.hpp"
#include "normdyn/io/run_file.hpp"

namespace normdyn::app {

// The series whose late-time decay is fitted.
enum class RateQuantity { one_minus_mean_cosine, variance, one_minus_min_cosine, diameter };
std::string_view to_string(RateQuantity q) noexcept;
std::optional<RateQuantity> rate_quantity_from_string(std::string_view s) noexcept;
std::vector<std::string> rate_quantity_names();

struct AnalyzeOptions {
  double rank_threshold = 1e-3;
  analysis::ClusterOptions clusters;
  analysis::PlateauOptions plateaus;
  RateQuantity quantity = RateQuantity::one_minus_mean_cosine;
  analysis::RateFitOptions rate;
  analysis::CheckOptions checks;
  analysis::DensityOptions density;  // mean-field runs
  bool use_velocity = true;  // angular speed and <θ_j, A_j> from the run's dynamics (else finite differences)
  // Threads of the attention kernel when the dynamics is rebuilt (0: all cores). Default: 1 when
  // n² d < 2^24 (small kernels lose more to OpenMP synchronization than they gain), else the run's.
  std::optional<int> threads;
};

// Everything the analysis found, before it is written anywhere.
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
  // The figures of the paper read off the series (trajectory_summary.hpp).
  analysis::GrowthExponent radius_growth;         // mean radius − its first value ∝ t^a
  std::optional<analysis::ClockDiagnostic> clock;  // schemes with a radius, with the dynamics
};

AnalysisResult analyze_run(const RunReader& reader, const AnalyzeOptions& options);

// The per-frame series of a quantity.
std::vector<double> quantity_series(const AnalysisResult& r, RateQuantity q);

struct AnalyzeRequest {
  std::filesystem::path run_file;
  std::optional<std::filesystem::path> json;               // --json
  std::optional<std::filesystem::path> observables_file;   // --observables-file (else automatic)
  bool write_observables = true;                           // --no-write turns it off
  bool quiet = false;
  bool fail_on_check = false;
  AnalyzeOptions options;
};

// Where the observables went, for the report.
struct ObservablesDestination {
  std::filesystem::path file;  // empty: not written
  bool in_run_file = false;
  std::vector<std::string> series;
};

// The report as JSON text (keys documented in README.md, section "Analysis") and as text for people.
std::string report_json(const AnalysisResult& r, const AnalyzeRequest& request, const ObservablesDestination& where);
void print_report(std::FILE* out, const AnalysisResult& r, const AnalyzeRequest& request,
                  const ObservablesDestination& where);

// The writers both branches share. The observables file goes through ObservablesFile::replace (under
// its writer lock, a copy swapped into place; the staging file removed if a signal ends the process).
void write_observables_file(const std::filesystem::path& path, const std::filesystem::path& run_file,
                            const std::function<void(ObservablesFile&)>& fill);
// The report: a character device (e.g. /dev/stdout) written directly, a file replaced atomically.
void write_report(const std::filesystem::path& path, const std::string& text);

// The command: analyzes, writes the observables (into RUN.observables.h5, or --observables-file;
// never into the run file) and the report, each replaced atomically. Returns the process exit code.
int analyze_command(const AnalyzeRequest& request);
// The same for a mean-field run file (analyze_meanfield.cpp); analyze_command calls it.
int analyze_meanfield_command(const AnalyzeRequest& request);

}  // namespace normdyn::app
