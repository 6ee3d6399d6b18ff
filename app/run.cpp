#include "run.hpp"

#include <cstdio>
#include <iostream>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "progress.hpp"
#include "run_meanfield.hpp"  // [meanfield]
#include "signals.hpp"

namespace normdyn::app {
namespace {

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

// Connects the integrator to the run file: writes every sample, checks the synchronization stop
// condition, reports progress and honours interrupts.
class Recorder final : public SampleObserver {
 public:
  Recorder(RunWriter& writer, const StateLayout& layout, double sync_epsilon, ProgressLine& progress)
      : writer_(writer), layout_(layout), sync_epsilon_(sync_epsilon), progress_(progress) {}

  std::optional<RunStatus> on_sample(std::size_t, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView&) override {
    const Tokens tokens = layout_.unpack(x.data());
    writer_.append_frame(t, step, tokens);
    if (sync_epsilon_ > 0.0 && analysis::all_cosines_above(tokens.theta, 1.0 - sync_epsilon_))
      return RunStatus::synchronized;
    return std::nullopt;
  }

  std::optional<RunStatus> on_step(double t, const Counters& c) override {
    progress_.update(t, c.accepted_steps);
    if (interrupt_requested()) return RunStatus::interrupted;
    return std::nullopt;
  }

 private:
  RunWriter& writer_;
  const StateLayout& layout_;
  double sync_epsilon_;
  ProgressLine& progress_;
};

std::string describe_end(const RunSummary& s, const RunConfig& c) {
  switch (s.status) {
    case RunStatus::ok: return "reached t_end = " + std::to_string(c.solver.t_end);
    case RunStatus::synchronized:
      return "synchronized: every pairwise cosine exceeds 1 - " + std::to_string(c.solver.sync_epsilon) +
             " at t = " + std::to_string(s.t_reached);
    case RunStatus::interrupted:
      return "interrupted by signal " + std::to_string(interrupt_signal()) + " at t = " + std::to_string(s.t_reached);
    default: return s.message;
  }
}

}  // namespace

AttentionDynamics make_dynamics(const RunConfig& config) {
  DynamicsSpec spec;
  spec.scheme = config.model.scheme;
  spec.beta = config.model.beta;
  spec.kernel.threads = config.solver.threads;
  spec.masses = initial_masses(config);  // [meanfield] weighted tokens (empty: equal masses)
  return AttentionDynamics(spec, make_qkv(config.model), config.model.n, config.model.d);
}

Tokens make_initial_tokens(const RunConfig& c) {
  const InitConfig& i = c.init;
  if (uses_density_tokens(c)) return initial_weighted_tokens(c).tokens;  // [meanfield]
  switch (i.kind) {
    case InitKind::uniform: return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::gaussian: return gaussian_tokens(c.model.n, c.model.d, i.seed);
    case InitKind::orthonormal: return orthonormal_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::cap: return cap_tokens(c.model.n, c.model.d, i.r0, i.delta, i.seed);
    case InitKind::file: return read_initial_tokens(i, c.model.n, c.model.d);
    case InitKind::perturbed_uniform:  // [meanfield] handled above
    case InitKind::von_mises: break;
  }
  return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
}

RunSummary run_experiment(const RunConfig& config, const RunOptions& options) {
  if (config.model.kind == ModelKind::meanfield) return run_meanfield(config, options);  // [meanfield]
  // Everything that can fail on bad input happens before the output file is created.
  AttentionDynamics dynamics = make_dynamics(config);
  const Tokens start = make_initial_tokens(config);
  const StateLayout& layout = dynamics.layout();
  std::vector<double> x0(layout.size());
  layout.pack(start, x0.data());
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end);

  Provenance provenance{options.command_line, dynamics.threads()};
  RunWriter writer(config.output.path, config, provenance, RunFileOptions{options.force});
  ProgressLine progress(0.0, samples.back(), !options.quiet && ProgressLine::stderr_is_terminal());
  Recorder recorder(writer, layout, config.solver.sync_epsilon, progress);
  if (const Vector& m = dynamics.spec().masses; m.size() > 0)  // [meanfield]
    writer.write_masses(std::span<const double>(m.data(), static_cast<std::size_t>(m.size())));

  IntegrationResult result;
  if (config.solver.method == Method::discrete) {
    result = run_layers(dynamics, x0, 0.0, config.solver.dt, samples, config.solver.max_steps, recorder);
  } else {
    IntegratorOptions io;
    io.stepper = stepper_of(config.solver.method);
    io.rtol = config.solver.rtol;
    io.atol = config.solver.atol;
    io.dt = config.solver.dt;
    io.dt_min = config.solver.dt_min;
    io.max_steps = config.solver.max_steps;
    io.retract = config.solver.project;
    result = integrate(dynamics, x0, 0.0, samples, io, recorder);
  }
  progress.finish();

  RunSummary summary;
  summary.status = result.status;
  summary.t_reached = result.t_reached;
  summary.frames = writer.frames();
  summary.accepted_steps = result.counters.accepted_steps;
  summary.rejected_steps = result.counters.rejected_steps;
  summary.rhs_evaluations = result.counters.rhs_evaluations;
  summary.wall_seconds = result.wall_seconds;
  summary.max_norm_drift = result.counters.max_constraint_drift;
  summary.message = result.message;
  summary.message = describe_end(summary, config);
  writer.write_summary(summary);
  writer.close();
  return summary;
}

int run_command(const RunRequest& request) {
  RunConfig config = load_config(request.config, request.sets);
  if (request.output) config.output.path = *request.output;
  if (request.threads) config.solver.threads = *request.threads;
  install_interrupt_handlers();
  const RunSummary s = run_experiment(config, request.options);
  if (!request.options.quiet || s.status != RunStatus::ok) {
    std::fprintf(stderr, "normdyn: %s: %s; %lld frames, %lld steps (%lld rejected), %lld rhs evaluations, %.3g s -> %s\n",
                 std::string(to_string(s.status)).c_str(), s.message.c_str(), static_cast<long long>(s.frames),
                 static_cast<long long>(s.accepted_steps), static_cast<long long>(s.rejected_steps),
                 static_cast<long long>(s.rhs_evaluations), s.wall_seconds, config.output.path.c_str());
  }
  return static_cast<int>(exit_code(s.status));
}

}  // namespace normdyn::app
