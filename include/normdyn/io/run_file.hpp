#pragma once
// The run file: one HDF5 file per run, in the H5MD 1.1 layout, readable with h5py alone.
//
//   /h5md                              version = [1, 1]; author/, creator/ (name, version)
//   /particles/tokens/box              dimension = d, boundary = ["none", ...]
//   /particles/tokens/direction/       value [frames, n, d] float64, time [frames], step [frames]
//   /particles/tokens/radius/          value [frames, n] float64, time [frames], step [frames]
//   /parameters                        config (the resolved TOML), seed, version, revision, ...;
//                                      one subgroup per section with every key as an attribute
//   /summary                           status, t_reached, counters, wall time (attributes)
//   /particles/tokens/mass             [n] float64, masses of weighted tokens (when written)
//   /fields/<name>/                    mean-field runs: value [frames, cells...], time, step, and one
//                                      dataset per axis (cell centres; [frames, cells] if it moves)
//
// Frames are appended as they are produced; no HDF5 type crosses this interface.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/status.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

// Where a run came from, beyond its configuration.
struct Provenance {
  std::string command_line;
  int threads = 1;
};

// Counters and outcome of a run, as stored in /summary.
struct RunSummary {
  RunStatus status = RunStatus::ok;
  std::string message;      // why the run ended, in words
  double t_reached = 0.0;
  std::int64_t frames = 0;
  std::int64_t accepted_steps = 0;
  std::int64_t rejected_steps = 0;
  std::int64_t rhs_evaluations = 0;
  double wall_seconds = 0.0;     // integration only (excludes set-up and I/O of parameters)
  double max_norm_drift = 0.0;   // largest | |θ_j| − 1 | found before a retraction
};

struct RunFileOptions {
  bool overwrite = false;   // replace an existing file (--force)
  int deflate_level = 1;    // shuffle + deflate on the frame datasets; 0: none
  bool particles = true;    // [meanfield] false: no /particles group (mean-field runs write /fields)
};

// [meanfield] A field on a grid, stored as /fields/<name>/{value, time, step} and one dataset per axis.
// Axis 0 of `value` is the frame; every attribute needed to read it is in the file.
struct FieldAxis {
  std::string name;          // dataset name beside value, e.g. "phi"
  std::string unit;          // e.g. "rad"
  std::string description;
  std::size_t cells = 0;
  std::vector<double> centres;  // fixed cell centres; empty for a moving axis
  bool moving = false;          // centres change with time: stored as [frames, cells]
};
struct FieldSpec {
  std::string name;         // group name under /fields
  std::string description;
  std::string unit;         // unit of the values
  std::vector<FieldAxis> axes;
};

class RunWriter {
 public:
  // Creates the file and writes /h5md and /parameters. Refuses an existing file unless overwrite.
  RunWriter(const std::filesystem::path& path, const RunConfig& config, const Provenance& provenance,
            const RunFileOptions& options = {});
  ~RunWriter();
  RunWriter(RunWriter&&) noexcept;
  RunWriter& operator=(RunWriter&&) noexcept;

  void append_frame(double t, std::int64_t step, const Tokens& tokens);
  void write_summary(const RunSummary& summary);

  // [meanfield] Masses of weighted tokens (time-independent), /particles/tokens/mass.
  void write_masses(std::span<const double> masses);
  // [meanfield] Fields of mean-field runs: declare, then append frames (index = order of declaration).
  // `moving_centres` holds the current centres of every moving axis, concatenated.
  std::size_t add_field(const FieldSpec& spec);
  void append_field_frame(std::size_t field, double t, std::int64_t step, std::span<const double> values,
                          std::span<const double> moving_centres = {});
  // [meanfield] An extra scalar attribute of /summary (mean-field diagnostics).
  void set_summary_attribute(const std::string& name, double value);
  void flush();
  void close();

  const std::filesystem::path& path() const;
  std::int64_t frames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class RunReader {
 public:
  explicit RunReader(const std::filesystem::path& path);
  ~RunReader();
  RunReader(RunReader&&) noexcept;
  RunReader& operator=(RunReader&&) noexcept;

  RunConfig config() const;          // the stored resolved configuration
  std::string config_toml() const;
  std::string revision() const;
  Index n() const;
  Index d() const;
  std::size_t frames() const;
  std::vector<double> times() const;
  std::vector<std::int64_t> steps() const;
  Tokens frame(std::size_t index) const;
  std::optional<RunSummary> summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace normdyn
