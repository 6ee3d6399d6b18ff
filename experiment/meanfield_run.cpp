#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "normdyn/analysis/density_modes.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/setup.hpp"
#include "normdyn/experiment/sphere_setup.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "density_run.hpp"
#include "meanfield_resolution.hpp"

namespace normdyn {
namespace {

// Records the density frames with the checkpoint of the solver state, and tracks mass, positivity
// and the resolution of the clusters.
class FieldSession final : public Session {
 public:
  FieldSession(Recorder* recorder, const MeanFieldCircle& system, const ExperimentOptions& options,
               const SessionClock& clock, ClusterResolution& resolution)
      : Session(recorder, options, clock), system_(system), resolution_(resolution) {}

  std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView& checkpoint) override {
    const auto start = Clock::now();
    const std::vector<double> density = system_.density(x.data());
    std::vector<std::span<const double>> values{density};
    std::vector<std::span<const double>> moving{{}};
    std::vector<double> centres, angular;
    if (system_.has_radius()) {
      centres = system_.radial_centres(x.data());
      angular = system_.angular_density(x.data());
      values.push_back(angular);
      moving = {centres, {}};
    }
    const double narrowest = resolution_.add(t, system_.has_radius() ? angular : density);
    if (resolution_.recorded()) {
      values.emplace_back(&narrowest, 1);
      moving.emplace_back();
    }
    if (recorder_) recorder_->field_frame(t, step, values, moving, checkpoint, integration_seconds());
    const double mass = system_.mass(x.data());
    balance_.add(std::span<const double>(&mass, 1), density);
    sampled(index);
    own_seconds_ += seconds_since(start);
    return std::nullopt;
  }

  const DensityBalance& balance() const { return balance_; }

 private:
  const MeanFieldCircle& system_;
  ClusterResolution& resolution_;
  DensityBalance balance_;
};

// The /fields layout of a mean-field run: the density on the (φ) or (φ, r) grid, and its angular
// marginal for radius schemes.
}  // namespace

std::vector<FieldSpec> field_layout(const RunConfig& config, const MeanFieldCircle& system) {
  const auto m = static_cast<std::size_t>(system.cells());
  const std::string scheme(scheme_key(config.model.scheme));
  const FieldAxis phi = circle_phi_axis(m, system.phi());
  // A scalar per frame, stored beside the density it describes.
  const FieldSpec resolution{
      kResolutionField,
      "second-moment width, in grid cells, of the narrowest cluster of the angular density (an arc above twice the "
      "uniform density holding at least 1 % of the mass); +inf without clusters; below 1 the cluster is under-resolved",
      "1",
      {}};
  if (!system.has_radius())
    return {FieldSpec{"density",
                      "cell averages of the density of tokens in phi, scheme " + scheme + "; integrates to 1",
                      "1/rad",
                      {phi}},
            resolution};
  const auto mr = static_cast<std::size_t>(system.radial_cells());
  return {FieldSpec{"density",
                    "cell averages of the density of tokens in (phi, r), scheme " + scheme +
                        "; integrates to 1 over phi and r",
                    "1/(rad * radius)",
                    {phi, FieldAxis{"r", "radius", "cell centres in the radius r", mr, {}, true}}},
          FieldSpec{"angular_density",
                    "cell averages of the density of tokens in phi (the marginal of /fields/density)",
                    "1/rad",
                    {phi}},
          resolution};
}

namespace {

// Integrates (fresh or from a checkpoint) into the recorder and ends it.
RunSummary integrate_field(Recorder* recorder, const RunConfig& config, MeanFieldCircle& system,
                           const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds,
                           const ExperimentOptions& options, ClusterResolution resolution = ClusterResolution()) {
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end, config.solver.t_start);
  FieldSession session(recorder, system, options,
                       SessionClock::of(samples, config.solver.t_start, resume, earlier_wall_seconds), resolution);
  const IntegrationResult result =
      integrate(system, x0, config.solver.t_start, samples, integrator_options(config.solver), session, resume);
  RunSummary summary = session.summarize(result, config);
  summary.max_norm_drift = 0.0;  // no directions to renormalize
  // Mass and positivity over the frames of this session.
  summary.extra = {{"mass_drift", session.balance().mass_drift()},
                   {"min_density", session.balance().min_density()},
                   {"max_negative_density", result.counters.max_constraint_drift}};
  resolution.summarize(summary, config.meanfield.grid);
  if (recorder) recorder->end(summary);
  return summary;
}

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
      throw InputError("model.qkv_file", "layer " + std::to_string(k) +
                                             ": the mean-field solver needs Q^T K = a I + b J and V = c I + e J "
                                             "(J = [[0, -1], [1, 0]]), which commute with rotations of the plane");
    out.push_back(*c);
  }
  return out;
}

std::vector<double> initial_angular_density(const RunConfig& config) {
  return cell_averages(config_density(config), config.meanfield.grid);
}

MeanFieldSpec meanfield_spec(const RunConfig& config) {
  MeanFieldSpec spec;
  spec.scheme = config.model.scheme;
  spec.beta = config.model.beta;
  spec.grid = config.meanfield.grid;
  spec.radial_grid = config.meanfield.radial_grid;
  spec.limiter = config.meanfield.limiter;
  spec.method = config.meanfield.method;
  spec.layers = circle_layers(config.model);
  spec.r0 = config.init.r0;
  // The configuration admits independent noise alone with the mean field (its Fokker-Planck equation).
  if (const auto* noise = std::get_if<IndependentNoise>(&config.noise.kind)) spec.sigma = noise->sigma;
  spec.uniform_normalizer = std::holds_alternative<Uniform>(config.attention.normalizer);
  return spec;
}

MeanFieldSetup make_meanfield(const RunConfig& config) {
  MeanFieldSetup setup;
  setup.system = std::make_unique<MeanFieldCircle>(meanfield_spec(config));
  setup.x0 = setup.system->initial_state(initial_angular_density(config), config.init.r0, config.init.radius_width);
  return setup;
}

RunSummary run_meanfield(const RunConfig& config, const ExperimentOptions& options,
                         const std::vector<Recorder*>& recorders) {
  if (config.model.d == 3) return run_meanfield_sphere(config, options, recorders);
  if (is_causal_meanfield(config)) return run_meanfield_causal(config, options, recorders);
  // Everything that can fail on bad input happens before anything is recorded.
  MeanFieldSetup setup = make_meanfield(config);
  return start_density_run(
      config, options, recorders, density_contents(field_layout(config, *setup.system), setup.system->size()), setup.x0,
      [&](Recorder* recorder, const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds) {
        return integrate_field(recorder, config, *setup.system, x0, resume, earlier_wall_seconds, options);
      });
}

namespace {

// What a resumed run needs of the frames its file holds, read before the file is reopened for
// writing: whether it records the resolution (files written before it was recorded do not), and the
// angular densities with their times. No frames if they cannot be read now (a file that only the
// reopening recovers): the resolution then covers the resumed frames only.
struct StoredFrames {
  bool records_resolution = true;
  std::vector<double> times;
  std::vector<std::vector<double>> angular_densities;
};

StoredFrames stored_frames(const std::filesystem::path& path, const RunConfig& config) {
  StoredFrames out;
  try {
    const RunReader reader(path);
    const auto names = reader.field_names();
    out.records_resolution = std::find(names.begin(), names.end(), kResolutionField) != names.end();
    out.times = reader.times();
    const std::string field = scheme_has_radius(config.model.scheme) ? "angular_density" : "density";
    for (std::size_t i = 0; i < std::min(reader.frames(), out.times.size()); ++i)
      out.angular_densities.push_back(reader.field_frame(field, i));
  } catch (const std::exception&) {
    out.times.clear();
    out.angular_densities.clear();
  }
  return out;
}

}  // namespace

RunSummary resume_meanfield(const std::filesystem::path& path, const RunConfig& config,
                            const ExperimentOptions& options) {
  if (config.model.d == 3) return resume_meanfield_sphere(path, config, options);
  if (is_causal_meanfield(config)) return resume_meanfield_causal(path, config, options);
  MeanFieldSetup setup = make_meanfield(config);
  const StoredFrames stored = stored_frames(path, config);
  const ReopenedDensityRun run = reopen_density_run(
      path, config, options, density_contents(field_layout(config, *setup.system), setup.system->size()));
  ClusterResolution resolution(stored.records_resolution);
  if (const Checkpoint* c = run.checkpoint())
    for (std::size_t i = 0; i < std::min(c->next_sample, stored.angular_densities.size()); ++i)
      resolution.add(stored.times[i], stored.angular_densities[i]);
  return integrate_field(run.file.get(), config, *setup.system, run.x(setup.x0), run.checkpoint(),
                         run.earlier_wall_seconds(), options, std::move(resolution));
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

}  // namespace normdyn
