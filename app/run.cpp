#include "run.hpp"

#include <chrono>
#include <cstdio>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/sharded_dynamics.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "mpi.hpp"
#include "progress.hpp"
#include "run_meanfield.hpp"
#include "signals.hpp"
#include "team_observer.hpp"

namespace normdyn::app {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }


// Writes every sample of a particle run with its observables and checkpoint, and stops the run
// when the synchronization condition holds.
class ParticleRecorder final : public RunRecorder {
 public:
  ParticleRecorder(RunWriter& writer, const RunConfig& config, const StateLayout& layout, ProgressLine& progress,
                   double earlier_wall_seconds)
      : RunRecorder(writer, progress, earlier_wall_seconds), config_(config), layout_(layout) {}

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

 private:
  const RunConfig& config_;
  const StateLayout& layout_;
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

// The file options of a particle run: overwrite permission and the token masses.
RunFileOptions file_options_of(const AttentionDynamics& dynamics, const RunOptions& options) {
  RunFileOptions file_options;
  file_options.overwrite = options.force;
  const Vector& masses = dynamics.spec().masses;
  file_options.masses.assign(masses.data(), masses.data() + masses.size());
  return file_options;
}

// The team of a sharded run: the processes sharing it, when there are several.
Team* sharing_team(const RunOptions& options) {
  return options.team && options.team->size() > 1 ? options.team : nullptr;
}

// Integrates (fresh or from a checkpoint) into an open writer and finishes the file. In a
// sharded run every process calls it; only rank 0 has a writer.
RunSummary integrate_into(RunWriter* writer, const RunConfig& config, AttentionDynamics& dynamics,
                          const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds,
                          const RunOptions& options) {
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end);
  const double t_begin = resume ? resume->t : 0.0;
  ProgressLine progress(t_begin, samples.back(), writer && !options.quiet && ProgressLine::stderr_is_terminal());
  std::optional<ParticleRecorder> recorder;
  if (writer) recorder.emplace(*writer, config, dynamics.layout(), progress, earlier_wall_seconds);
  // Sharded: each process evaluates its rows; every stop is decided together.
  OdeSystem* system = &dynamics;
  SampleObserver* observer = recorder ? &*recorder : nullptr;
  std::optional<ShardedDynamics> sharded;
  std::optional<TeamObserver> team_observer;
  if (Team* team = sharing_team(options)) {
    sharded.emplace(dynamics, *team);
    system = &*sharded;
    team_observer.emplace(*team, observer);
    observer = &*team_observer;
  }

  IntegrationResult result;
  if (config.solver.method == Method::discrete)
    result = run_layers(dynamics, x0, 0.0, config.solver.dt, samples, config.solver.max_steps, *observer, resume);
  else
    result = integrate(*system, x0, 0.0, samples, integrator_options(config.solver), *observer, resume);
  progress.finish();
  const std::int64_t frames = writer ? writer->frames() : static_cast<std::int64_t>(result.samples_emitted);
  RunSummary summary = summarize(result, frames, config, earlier_wall_seconds);
  summary.max_norm_drift = result.counters.max_constraint_drift;
  if (writer) writer->finish(summary);
  return summary;
}

int report(const RunSummary& s, const RunConfig& config, const RunOptions& options) {
  if (sharing_team(options) && !options.team->is_root()) return static_cast<int>(exit_code(s.status));
  if (!options.quiet || s.status != RunStatus::ok) {
    std::fprintf(stderr, "normdyn: %s: %s; %lld frames, %lld steps (%lld rejected), %lld rhs evaluations, %.3g s -> %s\n",
                 std::string(to_string(s.status)).c_str(), s.message.c_str(), static_cast<long long>(s.frames),
                 static_cast<long long>(s.accepted_steps), static_cast<long long>(s.rejected_steps),
                 static_cast<long long>(s.rhs_evaluations), s.wall_seconds, config.output.path.c_str());
  }
  return static_cast<int>(exit_code(s.status));
}

}  // namespace

IntegratorOptions integrator_options(const SolverConfig& s) {
  IntegratorOptions io;
  switch (s.method) {
    case Method::dopri5: io.stepper = StepperKind::dopri5; break;
    case Method::cash_karp54: io.stepper = StepperKind::cash_karp54; break;
    case Method::fehlberg78: io.stepper = StepperKind::fehlberg78; break;
    case Method::bulirsch_stoer: io.stepper = StepperKind::bulirsch_stoer; break;
    case Method::rk4: io.stepper = StepperKind::rk4; break;
    case Method::euler: io.stepper = StepperKind::euler; break;
    case Method::discrete: break;  // run by run_layers, not an integrator
  }
  io.rtol = s.rtol;
  io.atol = s.atol;
  io.dt = s.dt;
  io.dt_min = s.dt_min;
  io.max_steps = s.max_steps;
  io.retract = s.project;
  return io;
}

RunRecorder::RunRecorder(RunWriter& writer, ProgressLine& progress, double earlier_wall_seconds)
    : writer_(writer), progress_(progress), earlier_(earlier_wall_seconds), start_(Clock::now()) {}

std::optional<RunStatus> RunRecorder::on_step(double t, const Counters& c) {
  const auto start = Clock::now();
  progress_.update(t, c.accepted_steps);
  writer_.flush_if_due();
  own_seconds_ += seconds_since(start);
  if (interrupt_requested()) return RunStatus::interrupted;
  return std::nullopt;
}

double RunRecorder::integration_seconds() const { return earlier_ + seconds_since(start_) - own_seconds_; }

RunSummary summarize(const IntegrationResult& result, std::int64_t frames, const RunConfig& config,
                     double earlier_wall_seconds) {
  RunSummary summary;
  summary.status = result.status;
  summary.t_reached = result.t_reached;
  summary.frames = frames;
  summary.accepted_steps = result.counters.accepted_steps;
  summary.rejected_steps = result.counters.rejected_steps;
  summary.rhs_evaluations = result.counters.rhs_evaluations;
  summary.wall_seconds = earlier_wall_seconds + result.wall_seconds;
  summary.message = describe_end(result.status, result, config);
  return summary;
}

QkvSource make_qkv(const ModelConfig& m) {
  switch (m.qkv) {
    case QkvKind::identity: return QkvSource::identity();
    case QkvKind::gaussian: return QkvSource::gaussian(m.d, m.qkv_seed);
    case QkvKind::gaussian_per_layer: return QkvSource::gaussian_per_layer(m.d, m.qkv_seed);
    case QkvKind::file: return QkvSource::layers(read_attention_matrices(m.qkv_file, m.d));
  }
  return QkvSource::identity();
}

AttentionDynamics make_dynamics(const RunConfig& config) {
  DynamicsSpec spec;
  spec.scheme = config.model.scheme;
  spec.beta = config.model.beta;
  spec.kernel.threads = config.solver.threads;
  spec.masses = initial_masses(config);  // weighted tokens (empty: equal masses)
  return AttentionDynamics(spec, make_qkv(config.model), config.model.n, config.model.d);
}

Tokens make_initial_tokens(const RunConfig& c) {
  const InitConfig& i = c.init;
  if (uses_density_tokens(c)) return initial_weighted_tokens(c).tokens;
  switch (i.kind) {
    case InitKind::uniform: return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::gaussian: return gaussian_tokens(c.model.n, c.model.d, i.seed);
    case InitKind::orthonormal: return orthonormal_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::cap: return cap_tokens(c.model.n, c.model.d, i.r0, i.delta, i.seed);
    case InitKind::file: return read_initial_tokens(i, c.model.n, c.model.d);
    case InitKind::perturbed_uniform:  // handled above
    case InitKind::von_mises: break;
  }
  return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
}

namespace {

// One run shared by the processes of an MPI launch. Every process builds the dynamics; rank 0
// builds the initial state and creates the file. Then the team agrees that set-up succeeded (a
// process that failed reports its error to main, which agrees with its exit code) and rank 0 hands
// the initial state to the others.
void reject_unshardable(const RunConfig& config) {
  if (config.model.kind == ModelKind::meanfield)
    throw InputError("model.kind", "mean-field runs cannot be sharded across MPI processes; run them without mpirun");
  if (config.solver.method == Method::discrete)
    throw InputError("solver.method", "the discrete layer maps are not sharded over MPI processes; run them without mpirun");
}

RunSummary run_sharded(const RunConfig& config, const RunOptions& options, Team& team) {
  reject_unshardable(config);
  AttentionDynamics dynamics = make_dynamics(config);
  std::vector<double> x0(dynamics.layout().size());
  std::optional<RunWriter> writer;
  if (team.is_root()) {
    dynamics.layout().pack(make_initial_tokens(config), x0.data());
    writer.emplace(config.output.path, config, Provenance{options.command_line, dynamics.threads(), team.size()},
                   file_options_of(dynamics, options));
  }
  if (const int code = team.agree(0); code != 0) {
    if (writer) {  // another process failed: leave no file that looks like a run
      writer.reset();
      std::error_code ec;
      std::filesystem::remove(config.output.path, ec);
    }
    throw PeerFailure{code};
  }
  team.broadcast(x0);
  return integrate_into(writer ? &*writer : nullptr, config, dynamics, x0, nullptr, 0.0, options);
}

RunSummary resume_sharded(const std::filesystem::path& path, std::optional<int> threads, const RunOptions& options,
                          RunConfig& config, Team& team) {
  std::optional<AttentionDynamics> dynamics;
  std::optional<RunWriter> writer;
  ResumeState state;
  std::vector<double> start;
  std::string toml;
  auto set_up = [&] {
    config.output.path = path;
    if (threads) config.solver.threads = *threads;
    else if (config.solver.threads == 0) config.solver.threads = team.default_threads();
    reject_unshardable(config);
    dynamics.emplace(make_dynamics(config));
  };
  if (team.is_root()) {
    config = RunReader(path).config();
    set_up();
    start.resize(dynamics->layout().size());
    dynamics->layout().pack(make_initial_tokens(config), start.data());
    writer.emplace(RunWriter::reopen_for_resume(
        path, Provenance{options.command_line, dynamics->threads(), team.size()}, state));
    if (state.checkpoint) {
      if (state.checkpoint->x.size() != dynamics->layout().size())
        throw IoError(path.string() + ": checkpoint state has the wrong size");
      start = state.checkpoint->x;
    }
    toml = to_toml(config);
  }
  if (const int code = team.agree(0); code != 0) throw PeerFailure{code};
  team.broadcast(toml);
  if (!team.is_root()) {
    config = parse_config(toml, path.string());
    set_up();
  }
  team.broadcast(start);
  // The checkpoint's scalars: present, t, dt, counters, next sample, earlier wall seconds.
  std::vector<double> record;
  if (team.is_root()) {
    const Checkpoint c = state.checkpoint.value_or(Checkpoint{});
    record = {state.checkpoint ? 1.0 : 0.0, c.t, c.dt, static_cast<double>(c.counters.accepted_steps),
              static_cast<double>(c.counters.rejected_steps), static_cast<double>(c.counters.rhs_evaluations),
              c.counters.max_constraint_drift, static_cast<double>(c.next_sample), state.wall_seconds};
  }
  team.broadcast(record);
  if (record[0] == 0.0) return integrate_into(writer ? &*writer : nullptr, config, *dynamics, start, nullptr, 0.0, options);
  Checkpoint checkpoint{record[1], record[2], start,
                        Counters{static_cast<std::int64_t>(record[3]), static_cast<std::int64_t>(record[4]),
                                 static_cast<std::int64_t>(record[5]), record[6]},
                        static_cast<std::size_t>(record[7])};
  return integrate_into(writer ? &*writer : nullptr, config, *dynamics, start, &checkpoint, record[8], options);
}

}  // namespace

RunSummary run_experiment(const RunConfig& config, const RunOptions& options) {
  if (Team* team = sharing_team(options)) return run_sharded(config, options, *team);
  if (config.model.kind == ModelKind::meanfield) return run_meanfield(config, options);
  // Everything that can fail on bad input happens before the output file is created.
  AttentionDynamics dynamics = make_dynamics(config);
  const Tokens start = make_initial_tokens(config);
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(start, x0.data());
  RunWriter writer(config.output.path, config, Provenance{options.command_line, dynamics.threads()},
                   file_options_of(dynamics, options));
  return integrate_into(&writer, config, dynamics, x0, nullptr, 0.0, options);
}

RunSummary resume_experiment(const std::filesystem::path& path, std::optional<int> threads, const RunOptions& options,
                             RunConfig& config) {
  if (Team* team = sharing_team(options)) return resume_sharded(path, threads, options, config, *team);
  ResumeState state;
  require_run_file(path, "--resume");
  {
    // Validate the stored configuration and inputs before touching the file.
    const RunReader reader(path);
    config = reader.config();
  }
  config.output.path = path;
  if (threads) config.solver.threads = *threads;
  if (config.model.kind == ModelKind::meanfield) return resume_meanfield(path, config, options);
  AttentionDynamics dynamics = make_dynamics(config);
  // A run killed before its first flush has no checkpoint: it starts over from its initial state.
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(make_initial_tokens(config), x0.data());
  RunWriter writer = RunWriter::reopen_for_resume(path, Provenance{options.command_line, dynamics.threads()}, state);
  if (!state.checkpoint) return integrate_into(&writer, config, dynamics, x0, nullptr, 0.0, options);
  if (state.checkpoint->x.size() != dynamics.layout().size())
    throw IoError(path.string() + ": checkpoint state has the wrong size");
  return integrate_into(&writer, config, dynamics, state.checkpoint->x, &*state.checkpoint, state.wall_seconds, options);
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
  // Processes sharing a machine share its cores.
  else if (Team* team = sharing_team(request.options); team && config.solver.threads == 0)
    config.solver.threads = team->default_threads();
  const RunSummary s = run_experiment(config, request.options);
  return report(s, config, request.options);
}

}  // namespace normdyn::app
