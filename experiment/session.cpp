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
    : recorder_(recorder),
      options_(options),
      clock_(clock),
      start_(Clock::now()),
      last_event_(start_),
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
    case RunStatus::ok:
      summary.message = "reached t = " + std::to_string(result.t_reached);
      break;
    case RunStatus::synchronized:
      summary.message =
          "synchronized: every pairwise cosine exceeds 1 - " + std::to_string(config.solver.sync_epsilon) + at;
      break;
    case RunStatus::interrupted:
      summary.message =
          (stop_reason_ > 0 ? "interrupted by signal " + std::to_string(stop_reason_) : "interrupted") + at;
      if (!options_.resume_hint.empty()) summary.message += "; " + options_.resume_hint;
      break;
    default:
      summary.message = result.message;
  }
  return summary;
}

std::vector<NamedInput> inputs_of(const RunConfig& config, const std::string& whose) {
  std::vector<NamedInput> out;
  if (config.init.kind == InitKind::file) out.push_back({config.init.file, whose + " initial tokens (init.file)"});
  if (config.model.qkv == QkvKind::file)
    out.push_back({config.model.qkv_file, whose + " attention matrices (model.qkv_file)"});
  if (config.feedforward.weights == FeedForwardWeights::file)
    out.push_back({config.feedforward.file, whose + " feed-forward weights (feedforward.file)"});
  return out;
}

void require_not_an_input(const std::filesystem::path& out, const std::string& out_key,
                          const std::vector<NamedInput>& inputs, const std::string& product,
                          const std::string& force_name) {
  for (const NamedInput& input : inputs)
    if (!input.path.empty() && same_file(out, input.path))
      throw InputError(out_key, out.string() + " is " + input.what + "; " + product +
                                    " never replaces one of its inputs" +
                                    (force_name.empty() ? std::string() : ", not even with " + force_name) +
                                    ": choose another output");
}

void require_output_not_an_input(const RunConfig& config, const ExperimentOptions& options) {
  std::vector<NamedInput> inputs{{options.config_file, "the configuration file of this run"}};
  for (NamedInput& input : inputs_of(config, "this run's")) inputs.push_back(std::move(input));
  require_not_an_input(config.output.path, "output.path", inputs, "the run file",
                       options.force ? options.force_name : "");
}

}  // namespace normdyn
