#include "normdyn/experiment/experiment.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/setup.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/given.hpp"
#include "normdyn/init.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/resources.hpp"
#include "normdyn/sharded_dynamics.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "session.hpp"
#include "team_observer.hpp"

namespace normdyn {
namespace {

// Records every sample of a particle run with its observables and checkpoint, and stops the run
// when the synchronization condition holds.
class ParticleSession final : public Session {
 public:
  ParticleSession(Recorder* recorder, const RunConfig& config, const StateLayout& layout, const BlockTerms& terms,
                  const ExperimentOptions& options, const SessionClock& clock)
      : Session(recorder, options, clock), config_(config), layout_(layout), terms_(terms) {}

  std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView& checkpoint) override {
    const auto start = Clock::now();
    const Tokens tokens = layout_.unpack(x.data());
    std::vector<double> observables;
    if (config_.output.observables)
      observables = analysis::compute_frame_observables(frame_observable_names(), tokens, config_.model.beta,
                                                        config_.solver.threads, &terms_);
    if (recorder_) recorder_->particle_frame(t, step, tokens, observables, checkpoint, integration_seconds());
    std::optional<RunStatus> stop;
    const double eps = config_.solver.sync_epsilon;
    if (eps > 0.0 && analysis::all_cosines_above(tokens.theta, 1.0 - eps)) stop = RunStatus::synchronized;
    sampled(index);
    own_seconds_ += seconds_since(start);
    return stop;
  }

 private:
  const RunConfig& config_;
  const StateLayout& layout_;
  const BlockTerms& terms_;
};

// The contents of a particle run: the token masses of weighted tokens.
RunFileOptions particle_contents(const AttentionDynamics& dynamics) {
  RunFileOptions contents;
  const Vector& masses = dynamics.spec().masses;
  contents.masses.assign(masses.data(), masses.data() + masses.size());
  for (const Term& t : dynamics.spec().terms.terms)
    if (const auto* f = std::get_if<FeedForward>(&t)) contents.feedforward = *f;
  return contents;
}

// Q, K, V of shape [k, d, d] with one head are k layers, as documented; said aloud, since [heads, d, d]
// is what a user with k heads meant (the summary line, and a Python warning from it).
std::string layers_note(const RunConfig& c) {
  if (c.model.qkv != QkvKind::file || c.model.heads != 1) return {};
  const std::size_t k = read_attention_matrices(c.model.qkv_file, c.model.d, 1).size();
  if (k < 2) return {};
  return "; Q, K, V [" + std::to_string(k) + ", d, d] read as " + std::to_string(k) +
         " layers; set model.heads = " + std::to_string(k) + " for heads";
}

// The team of a sharded run: the processes sharing it, when there are several.
Team* sharing_team(const ExperimentOptions& options) {
  return options.team && options.team->size() > 1 ? options.team : nullptr;
}

// Integrates (fresh or from a checkpoint) into the recorder (nullptr on the other processes of a
// sharded run) and ends it.
RunSummary integrate_into(Recorder* recorder, const RunConfig& config, AttentionDynamics& dynamics,
                          const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds,
                          const ExperimentOptions& options) {
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end, config.solver.t_start);
  const SessionClock clock = SessionClock::of(samples, config.solver.t_start, resume, earlier_wall_seconds);
  ParticleSession session(recorder, config, dynamics.layout(), dynamics.spec().terms, options, clock);
  // Sharded: each process evaluates its rows; every stop is decided together.
  OdeSystem* system = &dynamics;
  SampleObserver* observer = &session;
  std::optional<ShardedDynamics> sharded;
  std::optional<TeamObserver> team_observer;
  if (Team* team = sharing_team(options)) {
    sharded.emplace(dynamics, *team);
    system = &*sharded;
    team_observer.emplace(*team, recorder ? &session : nullptr, options.stop_requested);
    observer = &*team_observer;
  }

  IntegrationResult result;
  if (config.solver.method == Method::discrete)
    result = run_layers(dynamics, x0, config.solver.t_start, config.solver.dt, samples, config.solver.max_steps,
                        *observer, resume);
  else
    result =
        integrate(*system, x0, config.solver.t_start, samples, integrator_options(config.solver), *observer, resume);
  RunSummary summary = session.summarize(result, config);
  summary.message += layers_note(config);
  summary.max_norm_drift = result.counters.max_constraint_drift;
  if (recorder) recorder->end(summary);
  return summary;
}

void reject_unshardable(const RunConfig& config) {
  if (config.model.kind == ModelKind::meanfield)
    throw InputError("model.kind", "mean-field runs cannot be sharded across MPI processes; run them without mpirun");
  if (config.solver.method == Method::discrete)
    throw InputError("solver.method",
                     "the discrete layer maps are not sharded over MPI processes; run them without mpirun");
  if (const std::string setting = config.attention.breaking_setting(&Traits::shardable); !setting.empty())
    throw InputError(setting.substr(0, setting.find(' ')),
                     setting + " needs every row of the attention at once; run it without mpirun");
}

// One run shared by the processes of an MPI launch. Every process builds the dynamics; rank 0
// builds the initial state and creates the file. Then the team agrees that set-up succeeded (a
// process that failed reports its error to main, which agrees with its exit code) and rank 0 hands
// the initial state to the others.
RunSummary run_sharded(const RunConfig& config, const ExperimentOptions& options, const std::vector<Recorder*>& others,
                       Team& team) {
  reject_unshardable(config);
  AttentionDynamics dynamics = make_dynamics(config);
  std::vector<double> x0(dynamics.layout().size());
  std::optional<Recorders> recorders;
  if (team.is_root()) {
    dynamics.layout().pack(make_initial_tokens(config), x0.data());
    recorders.emplace(fresh_file(config, options), others);
    if (Recorder* r = recorders->get())
      r->begin(RunLayout{&config, Provenance{options.command_line, dynamics.threads(), team.size()},
                         particle_contents(dynamics),
                         config.output.sample_times(config.solver.t_end, config.solver.t_start)});
  }
  if (const int code = team.agree(0); code != 0) {
    if (recorders && recorders->get()) recorders->get()->abandon();  // leave no file that looks like a run
    throw PeerFailure{code};
  }
  team.broadcast(x0);
  return integrate_into(recorders ? recorders->get() : nullptr, config, dynamics, x0, nullptr, 0.0, options);
}

RunSummary resume_sharded(const std::filesystem::path& path, std::optional<int> threads,
                          const ExperimentOptions& options, RunConfig& config, Team& team) {
  std::optional<AttentionDynamics> dynamics;
  std::unique_ptr<RunFileRecorder> file;
  ResumeState state;
  std::vector<double> start;
  std::string toml;
  auto set_up = [&] {
    config.output.path = path;
    if (threads)
      config.solver.threads = *threads;
    else if (config.solver.threads == 0)
      config.solver.threads = team.default_threads();
    // The user's terms supplied again: rank 0 matches them to the file's record; the others, whose
    // configuration comes from the text, which holds only the [[terms]] libraries, take them as given.
    if (team.is_root())
      bind_user_terms(config.terms, options.terms);
    else
      config.terms.insert(config.terms.end(), options.terms.begin(), options.terms.end());
    reject_unshardable(config);
    dynamics.emplace(make_dynamics(config));
  };
  if (team.is_root()) {
    config = RunReader(path).config();
    set_up();
    start.resize(dynamics->layout().size());
    dynamics->layout().pack(make_initial_tokens(config), start.data());
    file = RunFileRecorder::reopen(path, Provenance{options.command_line, dynamics->threads(), team.size()}, state);
    if (state.checkpoint) {
      if (state.checkpoint->x.size() != dynamics->layout().size())
        throw IoError(path.string() + ": checkpoint state has the wrong size");
      start = state.checkpoint->x;
    }
    toml = to_toml(config);
  }
  if (const int code = team.agree(0); code != 0) throw PeerFailure{code};
  team.broadcast(toml);
  // Matrices given with the run are not in its text: they travel beside it.
  std::vector<double> given = team.is_root() ? given_qkv_values(config.model) : std::vector<double>{};
  team.broadcast(given);
  std::vector<double> bias;
  if (const RowMatrix* b = team.is_root() ? given_score_bias(config) : nullptr)
    bias.assign(b->data(), b->data() + b->size());
  team.broadcast(bias);
  if (!team.is_root()) {
    config = parse_config(toml, path.string());
    if (config.model.qkv == QkvKind::given) give_qkv_values(config, given, "model.qkv");
    if (score_bias_digest(config)) give_score_bias(config, bias, config.model.n, config.model.n, "attention.bias");
    set_up();
  }
  team.broadcast(start);
  // The checkpoint's record travels in the run file's own encoding.
  std::vector<double> record;
  if (team.is_root()) {
    record = {state.checkpoint ? 1.0 : 0.0};
    const auto scalars = encode_checkpoint_record(state.checkpoint.value_or(Checkpoint{}), state.wall_seconds);
    record.insert(record.end(), scalars.begin(), scalars.end());
  }
  team.broadcast(record);
  Recorder* recorder = nullptr;
  if (file) {
    file->begin(RunLayout{&config, Provenance{options.command_line, dynamics->threads(), team.size()},
                          particle_contents(*dynamics),
                          config.output.sample_times(config.solver.t_end, config.solver.t_start)});
    recorder = file.get();
  }
  if (record[0] == 0.0) return integrate_into(recorder, config, *dynamics, start, nullptr, 0.0, options);
  double wall_seconds = 0.0;
  Checkpoint checkpoint = decode_checkpoint_record(std::span<const double>(record).subspan(1), wall_seconds);
  checkpoint.x = start;
  return integrate_into(recorder, config, *dynamics, start, &checkpoint, wall_seconds, options);
}

}  // namespace

QkvSource make_qkv(const RunConfig& config) {
  const ModelConfig& m = config.model;
  switch (m.qkv) {
    case QkvKind::identity:
      return QkvSource::identity(m.heads);
    case QkvKind::gaussian:
      return QkvSource::gaussian(m.d, m.qkv_seed, m.heads);
    case QkvKind::gaussian_per_layer:
      return QkvSource::gaussian_per_layer(m.d, m.qkv_seed, m.heads);
    case QkvKind::gaussian_per_map_layer:
      return QkvSource::gaussian_per_map_layer(m.d, m.qkv_seed, m.qkv_sigma, config.solver.dt, config.solver.t_start);
    case QkvKind::gaussian_unit_norm:
      return QkvSource::gaussian_unit_norm(m.d, m.qkv_seed, false, m.heads);
    case QkvKind::file:
      return QkvSource::layers(read_attention_matrices(m.qkv_file, m.d, m.heads));
    case QkvKind::given:
      if (!m.given_qkv)
        throw InputError("model.qkv",
                         "\"given\" needs the matrices: pass them with the run (Python: "
                         "normdyn.run(..., qkv=(Q, K, V))) or use model.qkv = \"file\"");
      return QkvSource::layers(*m.given_qkv);
  }
  return QkvSource::identity(m.heads);
}

IntegratorOptions integrator_options(const SolverConfig& s) {
  IntegratorOptions io;
  io.method = s.method;
  io.rtol = s.rtol;
  io.atol = s.atol;
  io.dt = s.dt;
  io.dt_min = s.dt_min;
  io.max_steps = s.max_steps;
  io.retract = s.project;
  return io;
}

BlockTerms make_terms(const RunConfig& config, std::optional<FeedForward> weights) {
  BlockTerms terms;
  if (weights) terms.terms.emplace_back(std::move(*weights));
  std::vector<UserTermSpec> specs = config.terms;
  for (UserTerm& t : make_user_terms(specs)) terms.terms.emplace_back(std::move(t));
  terms.block = config.feedforward.block;
  return terms;
}

AttentionDynamics make_dynamics(const RunConfig& config) {
  return make_dynamics(config, make_terms(config, read_feedforward(config)));
}

AttentionDynamics make_dynamics(const RunConfig& config, BlockTerms terms) {
  if (score_bias_to_read(config))
    throw InputError("attention.bias",
                     "\"matrix\" needs the matrix: read attention.bias_file first (read_score_bias) "
                     "or give it (Python: normdyn.run(..., score_bias=B))");
  DynamicsSpec spec;
  spec.scheme = config.model.scheme;
  spec.beta = config.model.beta;
  spec.attention = config.attention;
  spec.noise = config.noise;
  spec.terms = std::move(terms);
  spec.kernel.threads = config.solver.threads;
  spec.masses = initial_masses(config);  // weighted tokens (empty: equal masses)
  return AttentionDynamics(spec, make_qkv(config), config.model.n, config.model.d);
}

Tokens make_initial_tokens(const RunConfig& c) {
  const InitConfig& i = c.init;
  if (uses_density_tokens(c)) return initial_weighted_tokens(c).tokens;
  switch (i.kind) {
    case InitKind::uniform:
      return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::gaussian:
      return gaussian_tokens(c.model.n, c.model.d, i.seed);
    case InitKind::orthonormal:
      return orthonormal_tokens(c.model.n, c.model.d, i.r0, i.seed);
    case InitKind::cap:
      return cap_tokens(c.model.n, c.model.d, i.r0, i.delta, i.seed);
    case InitKind::equiangular:
      return equiangular_tokens(c.model.n, c.model.d, i.rho, i.r0, i.seed);
    case InitKind::file:
      return read_initial_tokens(i, c.model.n, c.model.d);
    case InitKind::given:
      if (!i.given_tokens)
        throw InputError("init.kind",
                         "\"given\" needs the tokens: pass them with the run (Python: "
                         "normdyn.run(..., tokens=X0)) or use init.kind = \"file\"");
      return i.given_tokens->tokens;
    case InitKind::perturbed_uniform:  // handled above
    case InitKind::von_mises:
      break;
  }
  return uniform_tokens(c.model.n, c.model.d, i.r0, i.seed);
}

RunSummary run_experiment(const RunConfig& config, const ExperimentOptions& options,
                          const std::vector<Recorder*>& recorders) {
  // The score bias of attention.bias_file is read once, when the run starts: the run file keeps it.
  if (score_bias_to_read(config)) {
    RunConfig with_bias = config;
    read_score_bias(with_bias);
    return run_experiment(with_bias, options, recorders);
  }
  // Bounds before allocation: nothing is built for a run the machine cannot hold.
  if (options.size_check) check_resources(config, config.output.path, options.write_file);
  if (Team* team = sharing_team(options)) return run_sharded(config, options, recorders, *team);
  if (config.model.kind == ModelKind::meanfield) return run_meanfield(config, options, recorders);
  // Everything that can fail on bad input happens before anything is recorded.
  AttentionDynamics dynamics = make_dynamics(config);
  const Tokens start = make_initial_tokens(config);
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(start, x0.data());
  Recorders out(fresh_file(config, options), recorders);
  if (Recorder* r = out.get())
    r->begin(RunLayout{&config, Provenance{options.command_line, dynamics.threads()}, particle_contents(dynamics),
                       config.output.sample_times(config.solver.t_end, config.solver.t_start)});
  return integrate_into(out.get(), config, dynamics, x0, nullptr, 0.0, options);
}

RunSummary resume_experiment(const std::filesystem::path& path, std::optional<int> threads,
                             const ExperimentOptions& options, RunConfig& config) {
  Team* team = sharing_team(options);
  // Before anything reads it (rank 0 alone reads and writes it under MPI).
  if (!team || team->is_root()) recover_killed_session(path);
  if (team) return resume_sharded(path, threads, options, config, *team);
  require_run_file(path, "--resume");
  {
    // Validate the stored configuration and inputs before touching the file.
    const RunReader reader(path);
    config = reader.config();
  }
  bind_user_terms(config.terms, options.terms);
  config.output.path = path;
  if (threads) config.solver.threads = *threads;
  if (options.size_check) {
    std::error_code ec;
    const auto existing = std::filesystem::file_size(path, ec);
    check_resources(config, path, true, ec ? 0.0 : static_cast<double>(existing));
  }
  if (config.model.kind == ModelKind::meanfield) return resume_meanfield(path, config, options);
  AttentionDynamics dynamics = make_dynamics(config);
  // A run killed before its first flush has no checkpoint: it starts over from its initial state.
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(make_initial_tokens(config), x0.data());
  ResumeState state;
  auto file = RunFileRecorder::reopen(path, Provenance{options.command_line, dynamics.threads()}, state);
  if (state.checkpoint && state.checkpoint->x.size() != dynamics.layout().size())
    throw IoError(path.string() + ": checkpoint state has the wrong size");
  file->begin(RunLayout{&config, Provenance{options.command_line, dynamics.threads()}, particle_contents(dynamics),
                        config.output.sample_times(config.solver.t_end, config.solver.t_start)});
  if (!state.checkpoint) return integrate_into(file.get(), config, dynamics, x0, nullptr, 0.0, options);
  return integrate_into(file.get(), config, dynamics, state.checkpoint->x, &*state.checkpoint, state.wall_seconds,
                        options);
}

}  // namespace normdyn
