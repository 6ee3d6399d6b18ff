#pragma once
// The run file: one HDF5 file per run in the H5MD 1.1 layout, written as it runs and readable with
// h5py alone. The layout is documented once, in README.md ("Output format").
//
// Particle runs write /particles/tokens (directions, radii; masses of weighted tokens) and
// /observables; mean-field runs write /fields/<name>/{value, time, step} with one dataset per axis
// (cell centres; [frames, cells] for an axis that moves).
//
// Crash safety: the file is written in SWMR mode (single writer, multiple readers). Every flush
// (every `flush_frames` frames or `flush_seconds` of wall time, whichever comes first) makes the
// frames written so far durable and stores a checkpoint of the integrator in one of two slots,
// switching the slot index only after the slot is complete. A process killed at any moment leaves a
// file that h5py opens with swmr=True holding every frame before the last flush, and from which
// `normdyn run --resume` continues with the same steps. Until its first flush the file is built as
// PATH.normdyn.tmp and enters SWMR mode only then, when it is published under PATH; a run that ends
// before (a small one) is written in one plain session and published whole, closed, by finish().
//
// No HDF5 type crosses this interface.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "normdyn/checkpoint.hpp"
#include "normdyn/config.hpp"
#include "normdyn/observable_registry.hpp"
#include "normdyn/status.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

class WriterLock;

// Where a run came from, beyond its configuration.
struct Provenance {
  std::string command_line;
  int threads = 1;
  int ranks = 1;  // processes sharing the run (mpirun -n P normdyn run)
};

// Counters and outcome of a run, as stored in /summary.
struct RunSummary {
  RunStatus status = RunStatus::ok;
  std::string message;  // why the run ended, in words
  double t_reached = 0.0;
  std::int64_t frames = 0;
  std::int64_t accepted_steps = 0;
  std::int64_t rejected_steps = 0;
  std::int64_t rhs_evaluations = 0;
  double wall_seconds = 0.0;                          // integration only, summed over resumed sessions
  double max_norm_drift = 0.0;                        // largest | |θ_j| − 1 | found before a retraction
  std::vector<std::pair<std::string, double>> extra;  // further /summary attributes (mean-field diagnostics)
  std::string warnings;  // results the run flags as doubtful, one "code: message" a line (/summary@warnings)
};

// The per-frame observables written beside the frames, in this order: the registry's entries
// marked during_run (observable_registry.hpp); their values come from
// analysis::compute_frame_observables(frame_observable_names(), ...).
inline const std::vector<std::string>& frame_observable_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& o : kFrameObservables)
      if (o.during_run) v.emplace_back(o.name);
    return v;
  }();
  return names;
}

// A field on a grid (mean-field runs), stored as /fields/<name>/{value, time, step} and one dataset
// per axis. Axis 0 of `value` is the frame; every attribute needed to read it is in the file.
struct FieldAxis {
  std::string name;  // dataset name beside value, e.g. "phi"
  std::string unit;  // e.g. "rad"
  std::string description;
  std::size_t cells = 0;
  std::vector<double> centres;  // fixed cell centres; empty for a moving axis
  bool moving = false;          // centres change with time: stored as [frames, cells]
};
struct FieldSpec {
  std::string name;  // group name under /fields
  std::string description;
  std::string unit;  // unit of the values
  std::vector<FieldAxis> axes;
};

// What the file holds besides /h5md, /parameters, /summary and /checkpoint; fixed at creation,
// since SWMR mode admits no new datasets afterwards.
struct RunFileOptions {
  bool overwrite = false;                  // replace an existing file (--force)
  std::string force_name = "--force";      // how the caller names `overwrite` in messages (force=True)
  bool particles = true;                   // /particles/tokens (and /observables when output.observables)
  std::vector<double> masses;              // /particles/tokens/mass of weighted tokens; empty: equal masses
  std::optional<FeedForward> feedforward;  // /parameters/feedforward/{a, omega}: the term's weights as run
  std::vector<FieldSpec> fields;           // /fields/<name> of mean-field runs
  std::size_t state_size = 0;              // size of the integrator state in checkpoints; 0: n d + n
};

// What a resumed run starts from.
struct ResumeState {
  RunConfig config;
  std::optional<Checkpoint> checkpoint;  // none: killed before its first flush; start over
  double wall_seconds = 0.0;             // integration time of the earlier sessions
  RunStatus previous_status = RunStatus::interrupted;
  bool crashed = false;  // the earlier session never wrote its summary
  // The checkpoint predates checkpoint checksums (layout 1.0) and was resumed from unchecked.
  bool checkpoint_unchecked = false;
};

// Counters of the writer itself, to measure the cost of crash safety (written to /summary).
struct WriterStats {
  std::int64_t flushes = 0;
  double flush_seconds = 0.0;  // time spent in flushes (including checkpoints)
  double write_seconds = 0.0;  // time spent handing buffered frames to HDF5 (chunking, compression), outside flushes
};

class RunWriter {
 public:
  // Creates the file (under the staging name) and writes /h5md, /parameters and the empty
  // datasets. Refuses an existing file unless options.overwrite.
  RunWriter(const std::filesystem::path& path, const RunConfig& config, const Provenance& provenance,
            const RunFileOptions& options = {});
  // Reopens a run that did not finish (crashed or interrupted) for `normdyn run --resume`: drops
  // frames written after its last checkpoint and re-enters SWMR mode. Throws InputError when the
  // run is complete or ended in a numerical failure.
  static RunWriter reopen_for_resume(const std::filesystem::path& path, const Provenance& provenance,
                                     ResumeState& state);
  ~RunWriter();
  RunWriter(RunWriter&&) noexcept;
  RunWriter& operator=(RunWriter&&) noexcept;

  // Appends one frame with its observables (frame_observable_names(), or empty when
  // output.observables is off) and the checkpoint to store at the next flush.
  void append_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                    const CheckpointView& checkpoint, double wall_seconds);
  // Appends one frame of every field (in the order of RunFileOptions::fields); `moving_centres`
  // holds, per field, the current centres of its moving axes, concatenated (empty if none).
  void append_field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                          const std::vector<std::span<const double>>& moving_centres, const CheckpointView& checkpoint,
                          double wall_seconds);
  // Flushes if flush_seconds have passed since the last flush (cheap; call it often).
  void flush_if_due();
  void flush();
  // Final flush, leaves SWMR mode, writes /summary and closes the file (publishing it, if no flush
  // did). A writer destroyed without finish() before its first flush leaves no file.
  void finish(const RunSummary& summary);

  const std::filesystem::path& path() const;
  std::int64_t frames() const;

 private:
  struct Impl;
  explicit RunWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Throws InputError naming `flag` unless `path` is an existing normdyn run file (a regular file).
void require_run_file(const std::filesystem::path& path, const std::string& flag);
// Whether `path` is a regular file that holds a normdyn run (never throws).
bool is_run_file(const std::filesystem::path& path);
// Why no reader opens `path` until a resume recovers it, with no live writer: a writer killed
// outside SWMR mode (HDF5's write flag set without the SWMR one), or a write that extended the file
// and failed (a full disk, a file-size limit: the file ends before the end HDF5 recorded).
enum class Recovery { none, killed_plain_session, failed_write };
Recovery recovery_needed(const std::filesystem::path& path);
// For a SWMR reader of `path` outside this library (h5py, in the Python package): when no live
// writer holds the file's lock, sets on its file-access property list (an hid_t of this process's
// HDF5) the few metadata read attempts this library's readers use, so that a damaged file fails at
// once instead of after HDF5's default of 100 attempts with doubling sleeps. True if it did.
bool limit_swmr_read_attempts(const std::filesystem::path& path, std::int64_t file_access_list);
// A run file left unreadable (recovery_needed) is recovered under its writer lock, as h5clear does:
// the write flag is cleared, and a file cut short by a failed write is extended to the end HDF5
// recorded (what was not written reads as zeros; the resume rewrites the frames after the
// checkpoint and checks the checkpoint). What a killed session had not closed is lost (the frames
// and the checkpoint were closed before it began). True if it did; false for any other file.
bool recover_killed_session(const std::filesystem::path& path);

class RunReader {
 public:
  // Opens a finished file, or one still being written or left by a killed writer (SWMR read).
  explicit RunReader(const std::filesystem::path& path);
  // The same, for the holder of the file's writer lock (a resume inspecting its file): no other
  // writer can be at work, so metadata that fails its checksum is damage at once, never retried as
  // half-written (HDF5's retries took minutes on a damaged file).
  RunReader(const std::filesystem::path& path, const WriterLock& own_lock);
  ~RunReader();
  RunReader(RunReader&&) noexcept;
  RunReader& operator=(RunReader&&) noexcept;

  RunConfig config() const;  // the stored resolved configuration
  std::string config_toml() const;
  std::string revision() const;
  bool has_particles() const;  // false for mean-field runs
  Index n() const;
  Index d() const;
  std::size_t frames() const;
  // The times of the complete frames, or of the first `count` of them (a resume reads the frames it
  // keeps, not a killed writer's torn tail past them). Refuses times that are not finite and increasing.
  std::vector<double> times(std::optional<std::size_t> count = std::nullopt) const;
  std::vector<std::int64_t> steps() const;
  Tokens frame(std::size_t index) const;
  // /observables/<name>/value, empty if absent.
  std::vector<double> observable(const std::string& name) const;
  // Mean-field runs: the names of /fields in writing order (empty for particle runs), and one frame
  // of a field, row-major over its grid axes (one value for a scalar per frame).
  std::vector<std::string> field_names() const;
  std::vector<double> field_frame(const std::string& name, std::size_t index) const;
  // Checks the first `count` complete frames (all by default) against the file's frame checksums
  // (the CRC-32 of each frame's rows, /checksums/frames); throws IoError naming the first frame that
  // does not match. Returns how many it checked; nothing for a file written before checksums.
  // The checksums, and every dataset they cover, must hold the frames the run committed
  // (/summary@frames once it ended; at least the checkpoint's after its writer was killed), and @covers
  // must list exactly the datasets of the file's frames. Past the checkpoint a killed writer's
  // extents may be torn (a dataset shorter than the checksums): not damage; the frames complete in
  // every dataset are the ones checked, and a resume cuts the rest.
  std::optional<std::size_t> verify_frames(std::optional<std::size_t> count = std::nullopt) const;
  // Checks the last checkpoint against its checksum (/checkpoint/<slot>/checksum); throws IoError
  // naming the checkpoint if it changed after it was written. False for a file whose layout predates
  // checkpoint checksums (nothing to check), true otherwise.
  bool verify_checkpoint() const;
  // The summary; nothing while the run is in progress or if its writer was killed.
  std::optional<RunSummary> summary() const;
  // The last checkpoint stored, if any.
  std::optional<Checkpoint> checkpoint() const;
  // The feed-forward term as run (/parameters/feedforward with the stored activation); nothing for a
  // run without one.
  std::optional<FeedForward> feedforward() const;

 private:
  RunReader(const std::filesystem::path& path, bool lock_is_ours);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What `normdyn verify` checks, the one check of every reader that trusts a run file's frames (the
// command line's verify, normdyn.load and normdyn.verify): `path` is a run file (InputError naming
// `flag` otherwise) whose frames match their checksums (IoError, FrameChecksumError for a frame,
// otherwise). Returns how many frames it checked; nothing for a file written before checksums.
std::optional<std::size_t> verify_run_file(const std::filesystem::path& path, const std::string& flag);

}  // namespace normdyn
