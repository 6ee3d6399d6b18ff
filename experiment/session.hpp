#pragma once
// What every run does between steps and samples, particles or mean field: progress events, the
// recorder's flush cadence, interrupts, and the integration time excluding its own (summed over
// resumed sessions). Subclasses record the samples. Private to experiment/.
#include <chrono>
#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "normdyn/checkpoint.hpp"
#include "normdyn/config.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/stopwatch.hpp"

namespace normdyn {

using Clock = SteadyClock;

// Where a session starts within its run.
struct SessionClock {
  double t_start = 0.0;
  double t_begin = 0.0;
  double t_end = 0.0;
  std::int64_t steps_before = 0;  // accepted steps of earlier sessions
  std::size_t frames_before = 0;  // frames recorded by earlier sessions
  std::size_t total_frames = 0;
  double earlier_wall_seconds = 0.0;

  static SessionClock of(const std::vector<double>& samples, double t_start, const Checkpoint* resume,
                         double earlier_wall_seconds);
};

class Session : public SampleObserver {
 public:
  Session(Recorder* recorder, const ExperimentOptions& options, const SessionClock& clock);
  std::optional<RunStatus> on_step(double t, const Counters& counters) override;
  // Integration time over every session, excluding the recorders'.
  double integration_seconds() const;
  // The summary of an integration: status, counters, wall time over every session, message.
  RunSummary summarize(const IntegrationResult& result, const RunConfig& config);

 protected:
  // After sample `index` was recorded.
  void sampled(std::size_t index) { frames_ = index + 1; }

  Recorder* recorder_;
  double own_seconds_ = 0.0;  // time spent here and in on_sample, not integrating

 private:
  void emit(double t, std::int64_t steps, bool done);

  const ExperimentOptions& options_;
  SessionClock clock_;
  Clock::time_point start_, last_event_;
  std::size_t frames_;
  int stop_reason_ = 0;
};

// The recorders of a session: the run file (when written) followed by the caller's.
struct Recorders {
  std::unique_ptr<RunFileRecorder> file;
  std::vector<Recorder*> all;
  std::optional<RecorderFan> fan;

  Recorders(std::unique_ptr<RunFileRecorder> run_file, const std::vector<Recorder*>& others)
      : file(std::move(run_file)) {
    if (file) all.push_back(file.get());
    all.insert(all.end(), others.begin(), others.end());
    if (all.size() > 1) fan.emplace(all);
  }
  Recorder* get() {
    if (fan) return &*fan;
    return all.empty() ? nullptr : all.front();
  }
};

// A file a run or an ensemble reads, and how a message names it.
struct NamedInput {
  std::filesystem::path path;
  std::string what;  // "this run's initial tokens (init.file)"
};
// The files a configuration reads (init.file, model.qkv_file, feedforward.file: those it uses);
// `whose` begins their descriptions ("this run's").
std::vector<NamedInput> inputs_of(const RunConfig& config, const std::string& whose);
// The one check of every writer (run files, ensembles): InputError(out_key) when `out` is one of
// `inputs` (the same file, by any name). `product` names the writer ("the run file"); `force_name`,
// when force was given, is said to change nothing.
void require_not_an_input(const std::filesystem::path& out, const std::string& out_key,
                          const std::vector<NamedInput>& inputs, const std::string& product,
                          const std::string& force_name);
// Throws InputError("output.path") when the run file would replace one of the run's inputs.
void require_output_not_an_input(const RunConfig& config, const ExperimentOptions& options);

// The run file of a fresh run, when one is written.
inline std::unique_ptr<RunFileRecorder> fresh_file(const RunConfig& config, const ExperimentOptions& options) {
  if (!options.write_file) return nullptr;
  require_output_not_an_input(config, options);
  return std::make_unique<RunFileRecorder>(config.output.path, options.force, options.force_name);
}

}  // namespace normdyn
