#include "session.hpp"

#include "normdyn/errors.hpp"
#include "normdyn/io/atomic_file.hpp"

#include <string>

namespace normdyn {

SessionClock SessionClock::of(const std::vector<double>& samples, double t_start, const Checkpoint* resume,
                              double earlier_wall_seconds) {
  SessionClock c;
  c.t_start = t_start;
  c.t_begin = resume ? resume->t : t_start;
  c.t_end = samples.empty() ? 0.0 : samples.back();
  c.steps_before = resume ? resume->counters.accepted_steps : 0;
  c.frames_before = resume ? resume->next_sample : 0;
  c.total_frames = samples.size();
  c.earlier_wall_seconds = earlier_wall_seconds;
  return c;
}

Session::Session(Recorder* recorder, const ExperimentOptions& options, const SessionClock& clock)
    : recorder_(recorder), options_(options), clock_(clock), start_(Clock::now()), last_event_(start_),
      frames_(clock.frames_before) {}

void Session::emit(double t, std::int64_t steps, bool done) {
  ProgressEvent e;
  e.t = t;
  e.t_start = clock_.t_start;
  e.t_begin = clock_.t_begin;
  e.t_end = clock_.t_end;
  e.steps = steps;
  e.session_steps = steps - clock_.steps_before;
  e.session_seconds = seconds_since(start_);
  e.frames = frames_;
  e.total_frames = clock_.total_frames;
  e.done = done;
  options_.progress(e);
}

std::optional<RunStatus> Session::on_step(double t, const Counters& c) {
  const auto start = Clock::now();
  if (options_.progress && std::chrono::duration<double>(start - last_event_).count() >= options_.progress_interval) {
    last_event_ = start;
    emit(t, c.accepted_steps, false);
  }
  if (recorder_) recorder_->flush_if_due();
  own_seconds_ += seconds_since(start);
  if (options_.stop_requested) {
    if (const int reason = options_.stop_requested(); reason != 0) {
      stop_reason_ = reason;
      return RunStatus::interrupted;
    }
  }
  return std::nullopt;
}

double Session::integration_seconds() const {
  return clock_.earlier_wall_seconds + seconds_since(start_) - own_seconds_;
}

RunSummary Session::summarize(const IntegrationResult& result, const RunConfig& config) {
  if (options_.progress) emit(result.t_reached, result.counters.accepted_steps, true);
  RunSummary summary;
  summary.status = result.status;
  summary.t_reached = result.t_reached;
  summary.frames = static_cast<std::int64_t>(result.samples_emitted);
  summary.accepted_steps = result.counters.accepted_steps;
  summary.rejected_steps = result.counters.rejected_steps;
  summary.rhs_evaluations = result.counters.rhs_evaluations;
  summary.wall_seconds = clock_.earlier_wall_seconds + result.wall_seconds;
  const std::string at = " at t = " + std::to_string(result.t_reached);
  switch (result.status) {
    case RunStatus::ok: summary.message = "reached t = " + std::to_string(result.t_reached); break;
    case RunStatus::synchronized:
      summary.message = "synchronized: every pairwise cosine exceeds 1 - " +
                        std::to_string(config.solver.sync_epsilon) + at;
      break;
    case RunStatus::interrupted:
      summary.message = (stop_reason_ > 0 ? "interrupted by signal " + std::to_string(stop_reason_) : "interrupted") + at;
      if (!options_.resume_hint.empty()) summary.message += "; " + options_.resume_hint;
      break;
    default: summary.message = result.message;
  }
  return summary;
}

void require_output_not_an_input(const RunConfig& config, const ExperimentOptions& options) {
  const std::filesystem::path& out = config.output.path;
  auto refuse_if = [&](bool used, const std::filesystem::path& input, const std::string& what) {
    if (used && !input.empty() && same_file(out, input))
      throw InputError("output.path", out.string() + " is " + what + "; the run file never replaces one of its inputs" +
                                          (options.force ? ", not even with --force" : "") + ": choose another output");
  };
  refuse_if(true, options.config_file, "the configuration file of this run");
  refuse_if(config.init.kind == InitKind::file, config.init.file, "this run's initial tokens (init.file)");
  refuse_if(config.model.qkv == QkvKind::file, config.model.qkv_file, "this run's attention matrices (model.qkv_file)");
}

}  // namespace normdyn
