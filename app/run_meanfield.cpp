#include "run_meanfield.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "normdyn/errors.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "progress.hpp"
#include "signals.hpp"

namespace normdyn::app {
namespace {

IntegratorOptions integrator_options(const SolverConfig& s) {
  IntegratorOptions io;
  switch (s.method) {
    case Method::dopri5: io.stepper = StepperKind::dopri5; break;
    case Method::cash_karp54: io.stepper = StepperKind::cash_karp54; break;
    case Method::fehlberg78: io.stepper = StepperKind::fehlberg78; break;
    case Method::bulirsch_stoer: io.stepper = StepperKind::bulirsch_stoer; break;
    case Method::rk4: io.stepper = StepperKind::rk4; break;
    case Method::euler: io.stepper = StepperKind::euler; break;
    case Method::discrete: break;  // rejected by the configuration for mean-field runs
  }
  io.rtol = s.rtol;
  io.atol = s.atol;
  io.dt = s.dt;
  io.dt_min = s.dt_min;
  io.max_steps = s.max_steps;
  io.retract = s.project;
  return io;
}

// Writes the density frames, tracks mass and positivity, reports progress, honours interrupts.
class FieldRecorder final : public SampleObserver {
 public:
  FieldRecorder(RunWriter& writer, const MeanFieldCircle& system, ProgressLine& progress)
      : writer_(writer), system_(system), progress_(progress) {}

  std::optional<RunStatus> on_sample(std::size_t, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView&) override {
    const std::vector<double> density = system_.density(x.data());
    const std::vector<double> centres = system_.radial_centres(x.data());
    writer_.append_field_frame(0, t, step, density, centres);
    if (system_.has_radius()) writer_.append_field_frame(1, t, step, system_.angular_density(x.data()));
    const double mass = system_.mass(x.data());
    if (!initial_mass_) initial_mass_ = mass;
    mass_drift_ = std::max(mass_drift_, std::abs(mass - *initial_mass_));
    min_density_ = std::min(min_density_, *std::min_element(density.begin(), density.end()));
    return std::nullopt;
  }

  std::optional<RunStatus> on_step(double t, const Counters& c) override {
    progress_.update(t, c.accepted_steps);
    if (interrupt_requested()) return RunStatus::interrupted;
    return std::nullopt;
  }

  double mass_drift() const { return mass_drift_; }
  double min_density() const { return min_density_; }

 private:
  RunWriter& writer_;
  const MeanFieldCircle& system_;
  ProgressLine& progress_;
  std::optional<double> initial_mass_;
  double mass_drift_ = 0.0;
  double min_density_ = std::numeric_limits<double>::infinity();
};

Density config_density(const RunConfig& c) {
  if (c.init.kind == InitKind::file) return Density::from_cells(read_initial_density(c.init));
  return Density::from_config(c.init);
}

}  // namespace

std::vector<CircleAttention> circle_layers(const ModelConfig& model) {
  if (model.qkv == QkvKind::identity) return {CircleAttention{}};
  if (model.qkv != QkvKind::file)
    throw InputError("model.qkv", "the mean-field solver needs model.qkv = \"identity\" or \"file\"");
  const std::vector<AttentionMatrices> layers = read_attention_matrices(model.qkv_file, 2);
  std::vector<CircleAttention> out;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const auto c = circle_attention(layers[k]);
    if (!c)
      throw InputError("model.qkv_file",
                       "layer " + std::to_string(k) + ": the mean-field solver needs Q^T K = a I + b J and V = c I + e J "
                       "(J = [[0, -1], [1, 0]]), which commute with rotations of the plane");
    out.push_back(*c);
  }
  return out;
}

std::vector<double> initial_angular_density(const RunConfig& config) {
  return cell_averages(config_density(config), config.meanfield.grid);
}

MeanFieldSetup make_meanfield(const RunConfig& config) {
  MeanFieldSpec spec;
  spec.scheme = config.model.scheme;
  spec.beta = config.model.beta;
  spec.grid = config.meanfield.grid;
  spec.radial_grid = config.meanfield.radial_grid;
  spec.limiter = config.meanfield.limiter;
  spec.layers = circle_layers(config.model);
  spec.r0 = config.init.r0;
  MeanFieldSetup setup;
  setup.system = std::make_unique<MeanFieldCircle>(spec);
  setup.x0 = setup.system->initial_state(initial_angular_density(config), config.init.r0, config.init.radius_width);
  return setup;
}

RunSummary run_meanfield(const RunConfig& config, const RunOptions& options) {
  // Everything that can fail on bad input happens before the output file is created.
  MeanFieldSetup setup = make_meanfield(config);
  MeanFieldCircle& system = *setup.system;
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end);

  Provenance provenance{options.command_line, 1};
  RunFileOptions file_options;
  file_options.overwrite = options.force;
  file_options.particles = false;
  RunWriter writer(config.output.path, config, provenance, file_options);

  const auto m = static_cast<std::size_t>(system.cells());
  const std::string scheme(scheme_key(config.model.scheme));
  const FieldAxis phi{"phi", "rad", "cell centres (i + 1/2) 2 pi / M of the angle phi = atan2(theta_2, theta_1); "
                                    "cell i is [i, i + 1) 2 pi / M",
                      m, system.phi(), false};
  if (system.has_radius()) {
    const auto mr = static_cast<std::size_t>(system.radial_cells());
    writer.add_field(FieldSpec{"density",
                               "cell averages of the density of tokens in (phi, r), scheme " + scheme +
                                   "; integrates to 1 over phi and r",
                               "1/(rad * radius)",
                               {phi, FieldAxis{"r", "radius", "cell centres in the radius r", mr, {}, true}}});
    writer.add_field(FieldSpec{"angular_density",
                               "cell averages of the density of tokens in phi (the marginal of /fields/density)",
                               "1/rad",
                               {phi}});
  } else {
    writer.add_field(FieldSpec{"density",
                               "cell averages of the density of tokens in phi, scheme " + scheme + "; integrates to 1",
                               "1/rad",
                               {phi}});
  }

  ProgressLine progress(0.0, samples.back(), !options.quiet && ProgressLine::stderr_is_terminal());
  FieldRecorder recorder(writer, system, progress);
  const IntegrationResult result = integrate(system, setup.x0, 0.0, samples, integrator_options(config.solver), recorder);
  progress.finish();

  RunSummary summary;
  summary.status = result.status;
  summary.t_reached = result.t_reached;
  summary.frames = writer.frames();
  summary.accepted_steps = result.counters.accepted_steps;
  summary.rejected_steps = result.counters.rejected_steps;
  summary.rhs_evaluations = result.counters.rhs_evaluations;
  summary.wall_seconds = result.wall_seconds;
  summary.max_norm_drift = 0.0;  // no directions to renormalize
  summary.message = result.status == RunStatus::ok
                        ? "reached t_end = " + std::to_string(config.solver.t_end)
                        : result.status == RunStatus::interrupted
                              ? "interrupted by signal " + std::to_string(interrupt_signal()) +
                                    " at t = " + std::to_string(result.t_reached)
                              : result.message;
  writer.write_summary(summary);
  writer.set_summary_attribute("mass_drift", recorder.mass_drift());
  writer.set_summary_attribute("min_density", recorder.min_density());
  writer.set_summary_attribute("max_negative_density", result.counters.max_constraint_drift);
  writer.close();
  return summary;
}

bool uses_density_tokens(const RunConfig& c) {
  if (c.model.kind != ModelKind::particles) return false;
  if (c.init.kind == InitKind::perturbed_uniform || c.init.kind == InitKind::von_mises) return true;
  return c.init.kind == InitKind::uniform && (c.init.sampling != Sampling::sampled || c.init.radius_width > 0.0);
}

WeightedTokens initial_weighted_tokens(const RunConfig& c) {
  return density_tokens(Density::from_config(c.init), c.model.n, c.model.d, c.init.sampling, c.init.r0,
                        c.init.radius_width, c.init.seed);
}

Vector initial_masses(const RunConfig& c) {
  if (!uses_density_tokens(c)) return {};
  Vector masses = initial_weighted_tokens(c).masses;
  // Equal masses are the unweighted kernel (and the same arithmetic as a run without masses).
  if ((masses.array() == masses(0)).all()) return {};
  return masses;
}

}  // namespace normdyn::app
