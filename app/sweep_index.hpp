#pragma once
// The index of a sweep: DIR/index.h5 (every run's parameters, status and figures, their per-frame
// series, and the ensemble statistics) and DIR/index.csv (the same table of runs, one line each).
// The layout is documented in README.md, "Sweeps and ensembles".
#include <filesystem>
#include <string>
#include <vector>

#include "normdyn/io/table_file.hpp"
#include "normdyn/sweep.hpp"
#include "sweep_jobs.hpp"

namespace normdyn::app {

// A point as the index needs it: no resolved configuration.
struct IndexedPoint {
  std::size_t index = 0;
  std::vector<std::size_t> coordinates;  // index of the value on each axis
  std::string name;
  std::vector<ConfigScalar> columns;  // the resolved value of each of sweep_columns(spec)
};

// The index's format: the "schema" attribute of index.h5 (CHANGELOG.md lists the versions).
inline constexpr const char* kSweepIndexSchema = "normdyn.sweep/2";

struct IndexContent {
  const SweepSpec* spec = nullptr;
  const std::vector<IndexedPoint>* points = nullptr;
  const std::vector<JobResult>* results = nullptr;  // one per point, in point order
  std::string command_line;
  int ranks = 1;
  int jobs_per_rank = 1;
  double wall_seconds = 0.0;
  bool complete = false;  // false while the sweep is still running
};

// The groups of points that differ only on the ensemble axis (spec.ensemble.over): group[i] of
// point i, numbered in order of first appearance.
std::vector<std::int64_t> ensemble_groups(const SweepSpec& spec, const std::vector<IndexedPoint>& points);

TableFile index_table(const IndexContent& content);
// Writes index.h5 and index.csv into `dir`, each atomically.
void write_index(const std::filesystem::path& dir, const IndexContent& content);

}  // namespace normdyn::app
