#pragma once
// Where the analysis reads a run's frames from: a run file (RunFileSource), or a run held in memory
// (MemorySource: the buffers of a MemoryRecorder, or the arrays of a Python Dataset, viewed without
// a copy). The analysis (analyze.hpp) sees only this interface, so that `normdyn analyze`, the
// Python package and in-process clients analyze a run the same way whether or not it was written.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

class MemoryRecorder;

class FrameSource {
 public:
  virtual ~FrameSource() = default;

  virtual const RunConfig& config() const = 0;            // the resolved configuration of the run
  virtual std::string revision() const = 0;               // the normdyn revision that wrote it
  virtual std::optional<RunSummary> summary() const = 0;  // none while running or after a kill
  // The run file, if the frames come from one (the report names it).
  virtual std::optional<std::filesystem::path> file() const = 0;
  // The feed-forward term the run had (its weights as run), if any.
  virtual std::optional<FeedForward> feedforward() const = 0;

  // The frames: complete in every dataset, with increasing finite times.
  virtual std::size_t frames() const = 0;
  virtual std::vector<double> times() const = 0;
  virtual std::vector<std::int64_t> steps() const = 0;

  // Particle runs: n tokens in R^d per frame.
  virtual bool has_particles() const = 0;
  virtual Index n() const = 0;
  virtual Index d() const = 0;
  virtual Tokens frame(std::size_t index) const = 0;

  // Mean-field runs: the fields (density, angular_density, ...) and one frame of one, row-major over
  // its grid axes.
  virtual std::vector<std::string> field_names() const = 0;
  virtual std::vector<double> field_frame(const std::string& name, std::size_t index) const = 0;
};

// A run file, opened as a reader (a run still being written, or left by a killed writer, is read up
// to its last flushed frame).
class RunFileSource final : public FrameSource {
 public:
  explicit RunFileSource(const std::filesystem::path& path);

  const RunConfig& config() const override { return config_; }
  std::string revision() const override { return reader_.revision(); }
  std::optional<RunSummary> summary() const override { return reader_.summary(); }
  std::optional<std::filesystem::path> file() const override { return path_; }
  std::optional<FeedForward> feedforward() const override { return reader_.feedforward(); }
  std::size_t frames() const override { return frames_; }
  std::vector<double> times() const override;
  std::vector<std::int64_t> steps() const override;
  bool has_particles() const override { return particles_; }
  Index n() const override;
  Index d() const override;
  Tokens frame(std::size_t index) const override;
  std::vector<std::string> field_names() const override { return reader_.field_names(); }
  std::vector<double> field_frame(const std::string& name, std::size_t index) const override;

 private:
  std::filesystem::path path_;
  RunReader reader_;
  RunConfig config_;
  bool particles_ = true;
  std::size_t frames_ = 0;
};

// A run in memory, laid out as the run file lays it out (row-major, frame first). The source views
// the buffers it is given; they must outlive it.
class MemorySource final : public FrameSource {
 public:
  struct Particles {
    std::span<const double> direction;  // [frames, n, d]
    std::span<const double> radius;     // [frames, n]
    Index n = 0, d = 0;
  };
  // One field: `values` holds frames × cells values.
  struct Field {
    std::span<const double> values;
    std::size_t cells = 0;  // values per frame
  };

  // A particle run. Throws InputError naming `what` if the buffers do not fit the configuration.
  MemorySource(RunConfig config, std::span<const double> time, std::span<const std::int64_t> step,
               const Particles& particles, std::optional<RunSummary> summary, std::string revision,
               const std::string& what = "run");
  // A mean-field run.
  MemorySource(RunConfig config, std::span<const double> time, std::span<const std::int64_t> step,
               std::map<std::string, Field> fields, std::optional<RunSummary> summary, std::string revision,
               const std::string& what = "run");
  // The buffers of a MemoryRecorder (after its run, or during it: the frames recorded so far).
  static MemorySource view(const MemoryRecorder& recorder);

  const RunConfig& config() const override { return config_; }
  std::string revision() const override { return revision_; }
  std::optional<RunSummary> summary() const override { return summary_; }
  std::optional<std::filesystem::path> file() const override { return std::nullopt; }
  // From the configuration (inline weights, or feedforward.file).
  std::optional<FeedForward> feedforward() const override;
  std::size_t frames() const override { return time_.size(); }
  std::vector<double> times() const override { return {time_.begin(), time_.end()}; }
  std::vector<std::int64_t> steps() const override { return {step_.begin(), step_.end()}; }
  bool has_particles() const override { return particles_.has_value(); }
  Index n() const override { return particles_ ? particles_->n : 0; }
  Index d() const override { return particles_ ? particles_->d : 0; }
  Tokens frame(std::size_t index) const override;
  std::vector<std::string> field_names() const override;
  std::vector<double> field_frame(const std::string& name, std::size_t index) const override;

 private:
  void check_times(const std::string& what) const;

  RunConfig config_;
  std::span<const double> time_;
  std::span<const std::int64_t> step_;
  std::optional<Particles> particles_;
  std::map<std::string, Field> fields_;
  std::optional<RunSummary> summary_;
  std::string revision_;
};

}  // namespace normdyn
