#include "run.hpp"

#include <chrono>
#include <cstdio>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "progress.hpp"
#include "signals.hpp"

namespace normdyn::app {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

QkvSource make_qkv(const ModelConfig& m) {
  switch (m.qkv) {
    case QkvKind::identity: return QkvSource::identity();
    case QkvKind::gaussian: return QkvSource::gaussian(m.d, m.qkv_seed);
    case QkvKind::gaussian_per_layer: return QkvSource::gaussian_per_layer(m.d, m.qkv_seed);
    case QkvKind::file: return QkvSource::layers(read_attention_matrices(m.qkv_file, m.d));
  }
  return QkvSource::identity();
}

StepperKind stepper_of(Method m) {
  switch (m) {
    case Method::dopri5: return StepperKind::dopri5;
    case Method::cash_karp54: return StepperKind::cash_karp54;
    case Method::fehlberg78: return StepperKind::fehlberg78;
    case Method::bulirsch_stoer: return StepperKind::bulirsch_stoer;
    case Method::rk4: return StepperKind::rk4;
    case Method::euler: return StepperKind::euler;
    case Method::discrete: break;
  }
  return StepperKind::dopri5;
}

// Connects the integrator to the run file: writes every sample with its observables and
// checkpoint, checks the synchronization stop condition, keeps the flush cadence, reports progress
// and honours interrupts.
class Recorder final : public SampleObserver {
 public:
  Recorder(RunWriter& writer, const RunConfig& config, const StateLayout& layout, ProgressLine& progress,
           double earlier_wall_seconds)
      : writer_(writer), config_(config), layout_(layout), progress_(progress), earlier_(earlier_wall_seconds) {}

  std::optional<RunStatus> on_sample(std::size_t, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView& checkpoint) override {
    const auto start = Clock::now();
    const Tokens tokens = layout_.unpack(x.data());
    std::vector<double> observables;
    if (config_.output.observables) {
      const auto pairs = analysis::pairwise_summary(tokens.theta, config_.model.beta);
      observables = {pairs.energy, analysis::variance(tokens.theta), pairs.min_cosine};
    }
    writer_.append_frame(t, step, tokens, observables, checkpoint, integration_seconds());
    std::optional<RunStatus> stop;
    const double eps = config_.solver.sync_epsilon;
    if (eps > 0.0 && analysis::all_cosines_above(tokens.theta, 1.0 - eps)) stop = RunStatus::synchronized;
    own_seconds_ += seconds_since(start);
    return stop;
  }

  std::optional<RunStatus> on_step(double t, const Counters& c) override {
    const auto start = Clock::now();
    progress_.update(t, c.accepted_steps);
    writer_.flush_if_due();
    own_seconds_ += seconds_since(start);
    if (interrupt_requested()) return RunStatus::interrupted;
    return std::nullopt;
  }

  // Integration time so far, over every session of the run.
  double integration_seconds() const { return earlier_ + seconds_since(start_) - own_seconds_; }

 private:
  RunWriter& writer_;
  const RunConfig& config_;
  const StateLayout& layout_;
  ProgressLine& progress_;
  double earlier_;
  Clock::time_point start_ = Clock::now();
  double own_seconds_ = 0.0;
};

std::string describe_end(RunStatus status, const IntegrationResult& r, const RunConfig& c) {
  switch (status) {
    case RunStatus::ok: return "reached t = " + std::to_string(r.t_reached);
    case RunStatus::synchronized:
      return "synchronized: every pairwise cosine exceeds 1 - " + std::to_string(c.solver.sync_epsilon) + " at t = " +
             std::to_string(r.t_reached);
    case RunStatus::interrupted:
      return "interrupted by signal " + std::to_string(interrupt_signal()) + " at t = " + std::to_string(r.t_reached) +
             "; continue with: normdyn run --resume " + c.output.path.string();
    default: return r.message;
  }
}

// Integrates (fresh or from a checkpoint) into an open writer and finishes the file.
RunSummary integrate_into(RunWriter& writer, const RunConfig& config, AttentionDynamics& dynamics,
                          const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds,
                          const RunOptions& options) {
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end);
  const double t_begin = resume ? resume->t : 0.0;
  ProgressLine progress(t_begin, samples.back(), !options.quiet && ProgressLine::stderr_is_terminal());
  Recorder recorder(writer, config, dynamics.layout(), progress, earlier_wall_seconds);

  IntegrationResult result;
  if (config.solver.method == Method::discrete) {
    result = run_layers(dynamics, x0, 0.0, config.solver.dt, samples, config.solver.max_steps, recorder, resume);
  } else {
    IntegratorOptions io;
    io.stepper = stepper_of(config.solver.method);
    io.rtol = config.solver.rtol;
    io.atol = config.solver.atol;
    io.dt = config.solver.dt;
    io.dt_min = config.solver.dt_min;
    io.max_steps = config.solver.max_steps;
    io.retract = config.solver.project;
    result = integrate(dynamics, x0, 0.0, samples, io, recorder, resume);
  }
  progress.finish();

  RunSummary summary;
  summary.status = result.status;
  summary.t_reached = result.t_reached;
  summary.frames = writer.frames();
  summary.accepted_steps = result.counters.accepted_steps;
  summary.rejected_steps = result.counters.rejected_steps;
  summary.rhs_evaluations = result.counters.rhs_evaluations;
  summary.wall_seconds = earlier_wall_seconds + result.wall_seconds;
  summary.max_norm_drift = result.counters.max_constraint_drift;
  summary.message = describe_end(result.status, result, config);
  writer.finish(summary);
  return summary;
}

int report(const RunSummary& s, const RunConfig& config, const RunOptions& options) {
  if (!options.quiet || s.status != RunStatus::ok) {
    std::fprintf(stderr, "normdyn: %s: %s; %lld frames, %lld steps (%lld rejected), %lld rhs evaluations, %.3g s -> %s\n",
                 std::string(to_string(s.status)).c_str(), s.message.c_str(), static_cast<long long>(s.frames),
                 static_cast<long long>(s.accepted_steps), static_cast<long long>(s.rejected_steps),
                 static_cast<long long>(s.rhs_evaluations), s.wall_seconds, config.output.path.c_str());
  }
  return static_cast<int>(exit_code(s.status));
}

}  // namespace

AttentionDynamics make_dynamics(const RunConfig& config) {
  DynamicsSpec spec;
  spec.scheme = config.model.scheme;
  spec.beta = config.model.beta;
  spec.kernel.threads = config.solver.threads;
  return AttentionDynamics(spec, make_qkv(config.model), config.model.n, config.model.d);
}

Tokens make_initial_tokens(const RunConfig& c) {
  const InitConfig& i = c.init;
  switch (i.kind) {
    case InitKind::uniform: return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::gaussian: return gaussian_tokens(c.model.n, c.model.d, i.seed);
    case InitKind::orthonormal: return orthonormal_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::cap: return cap_tokens(c.model.n, c.model.d, i.r0, i.delta, i.seed);
    case InitKind::file: return read_initial_tokens(i, c.model.n, c.model.d);
  }
  return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
}

RunSummary run_experiment(const RunConfig& config, const RunOptions& options) {
  // Everything that can fail on bad input happens before the output file is created.
  AttentionDynamics dynamics = make_dynamics(config);
  const Tokens start = make_initial_tokens(config);
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(start, x0.data());
  RunWriter writer(config.output.path, config, Provenance{options.command_line, dynamics.threads()},
                   RunFileOptions{options.force});
  return integrate_into(writer, config, dynamics, x0, nullptr, 0.0, options);
}

RunSummary resume_experiment(const std::filesystem::path& path, std::optional<int> threads, const RunOptions& options,
                             RunConfig& config) {
  ResumeState state;
  require_run_file(path, "--resume");
  {
    // Validate the stored configuration and inputs before touching the file.
    const RunReader reader(path);
    config = reader.config();
  }
  config.output.path = path;
  if (threads) config.solver.threads = *threads;
  AttentionDynamics dynamics = make_dynamics(config);
  // A run killed before its first flush has no checkpoint: it starts over from its initial state.
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(make_initial_tokens(config), x0.data());
  RunWriter writer = RunWriter::reopen_for_resume(path, Provenance{options.command_line, dynamics.threads()}, state);
  if (!state.checkpoint) return integrate_into(writer, config, dynamics, x0, nullptr, 0.0, options);
  if (state.checkpoint->x.size() != dynamics.layout().size())
    throw IoError(path.string() + ": checkpoint state has the wrong size");
  return integrate_into(writer, config, dynamics, state.checkpoint->x, &*state.checkpoint, state.wall_seconds, options);
}

int run_command(const RunRequest& request) {
  install_interrupt_handlers();
  if (request.resume) {
    RunConfig config;
    const RunSummary s = resume_experiment(*request.resume, request.threads, request.options, config);
    return report(s, config, request.options);
  }
  RunConfig config = load_config(request.config, request.sets);
  if (request.output) config.output.path = *request.output;
  if (request.threads) config.solver.threads = *request.threads;
  const RunSummary s = run_experiment(config, request.options);
  return report(s, config, request.options);
}

}  // namespace normdyn::app
