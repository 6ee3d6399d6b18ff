#pragma once
// Where a run's frames go. The experiment (experiment.hpp) produces frames and a summary; a
// Recorder stores them. Two implementations: RunFileRecorder, the crash-safe run file of
// io/run_file.hpp, and MemoryRecorder, which keeps everything in memory (the Python package
// hands its buffers to numpy without a copy). A run may feed several recorders at once.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/checkpoint.hpp"
#include "normdyn/config.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

// What a run will record, known before its first frame.
struct RunLayout {
  const RunConfig* config = nullptr;  // the resolved configuration
  Provenance provenance;
  RunFileOptions contents;           // particles or fields, masses, checkpoint state size
  std::vector<double> sample_times;  // every sample of the run, including those already recorded
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  // Once, before the first frame of this session.
  virtual void begin(const RunLayout& layout) = 0;
  // One particle frame with its per-frame observables (frame_observable_names(), or empty) and the
  // point from which integration can restart after it.
  virtual void particle_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                              const CheckpointView& checkpoint, double integration_seconds) = 0;
  // One mean-field frame: every field in the order of RunLayout::contents.fields, and per field the
  // current centres of its moving axes (empty if none).
  virtual void field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                           const std::vector<std::span<const double>>& moving_centres, const CheckpointView& checkpoint,
                           double integration_seconds) = 0;
  // Between steps: a chance to make frames durable (cheap; called after every step).
  virtual void flush_if_due() {}
  // The run ended (with any status): the last call.
  virtual void end(const RunSummary& summary) = 0;
  // Set-up failed after begin() (another process of a sharded run): leave nothing that looks like
  // a run.
  virtual void abandon() {}
};

// The crash-safe run file. Created at begin() (everything that can fail on bad input has been
// checked by then), or reopened for a resume before the run is set up.
class RunFileRecorder final : public Recorder {
 public:
  RunFileRecorder(std::filesystem::path path, bool overwrite, std::string force_name = "--force");
  // An unfinished run file, reopened to continue it: `state` receives its checkpoint.
  static std::unique_ptr<RunFileRecorder> reopen(const std::filesystem::path& path, const Provenance& provenance,
                                                 ResumeState& state);
  ~RunFileRecorder() override;

  void begin(const RunLayout& layout) override;
  void particle_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                      const CheckpointView& checkpoint, double integration_seconds) override;
  void field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                   const std::vector<std::span<const double>>& moving_centres, const CheckpointView& checkpoint,
                   double integration_seconds) override;
  void flush_if_due() override;
  void end(const RunSummary& summary) override;
  void abandon() override;

  const std::filesystem::path& path() const { return path_; }
  std::int64_t frames() const;

 private:
  RunFileRecorder(std::filesystem::path path, RunWriter writer);
  std::filesystem::path path_;
  bool overwrite_ = false;
  std::string force_name_;
  std::optional<RunWriter> writer_;
};

// Everything in memory, laid out as the run file lays it out (row-major, frame first). Buffers are
// reserved for every sample at begin(), so a run that ends early holds fewer frames.
class MemoryRecorder final : public Recorder {
 public:
  struct Field {
    FieldSpec spec;
    std::vector<double> values;               // [frames, cells...]
    std::vector<std::vector<double>> moving;  // per moving axis: [frames, cells]
  };

  void begin(const RunLayout& layout) override;
  void particle_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                      const CheckpointView& checkpoint, double integration_seconds) override;
  void field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                   const std::vector<std::span<const double>>& moving_centres, const CheckpointView& checkpoint,
                   double integration_seconds) override;
  void end(const RunSummary& summary) override;

  std::size_t frames() const { return times.size(); }
  bool particles() const { return has_particles; }

  // Filled as the run goes; the buffers may be moved out (std::move) once the run has ended.
  std::string config_toml;
  Provenance provenance;
  bool has_particles = true;
  Index n = 0, d = 0;
  std::vector<double> times;
  std::vector<std::int64_t> steps;
  std::vector<double> direction;  // [frames, n, d]
  std::vector<double> radius;     // [frames, n]
  std::vector<double> mass;       // [n]; empty: equal masses
  std::vector<std::string> observable_names;
  std::vector<std::vector<double>> observables;  // per name: [frames]
  std::vector<Field> fields;
  std::optional<RunSummary> summary;
};

// Forwards every call to several recorders, in order.
class RecorderFan final : public Recorder {
 public:
  explicit RecorderFan(std::vector<Recorder*> recorders) : recorders_(std::move(recorders)) {}
  void begin(const RunLayout& layout) override;
  void particle_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                      const CheckpointView& checkpoint, double integration_seconds) override;
  void field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                   const std::vector<std::span<const double>>& moving_centres, const CheckpointView& checkpoint,
                   double integration_seconds) override;
  void flush_if_due() override;
  void end(const RunSummary& summary) override;
  void abandon() override;

 private:
  std::vector<Recorder*> recorders_;
};

}  // namespace normdyn
