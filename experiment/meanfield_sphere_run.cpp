// The mean-field path of the experiment on the sphere S^2 (model.d = 3): set-up from the
// configuration, the run file's fields, and the session that records them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "normdyn/density.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/sphere_setup.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "density_run.hpp"

namespace normdyn {
namespace {

// The field holding the resolution of every frame, and the share of the top third of the degrees
// above which a frame is under-resolved (a smooth density has far less; the Gibbs oscillations of a
// cluster narrower than the grid, more).
constexpr const char* kSphereTailField = "spectral_tail";
constexpr double kSphereTailResolved = 1e-3;

// Records the density frames with the checkpoint of the coefficients, and tracks mass, the smallest
// grid value and the resolution.
class SphereFieldSession final : public Session {
 public:
  SphereFieldSession(Recorder* recorder, const MeanFieldSphere& system, const ExperimentOptions& options,
                     const SessionClock& clock)
      : Session(recorder, options, clock), system_(system) {}

  std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView& checkpoint) override {
    const auto start = Clock::now();
    const std::vector<double> density = system_.density(x.data());
    const double tail = system_.spectral_tail(x.data());
    largest_tail_ = std::max(largest_tail_, tail);
    if (tail > kSphereTailResolved && !under_resolved_since_) under_resolved_since_ = t;
    std::vector<std::span<const double>> values{density, std::span<const double>(&tail, 1)};
    std::vector<std::span<const double>> moving{{}, {}};
    if (recorder_) recorder_->field_frame(t, step, values, moving, checkpoint, integration_seconds());
    const double mass = system_.mass(x.data());
    balance_.add(std::span<const double>(&mass, 1), density);
    sampled(index);
    own_seconds_ += seconds_since(start);
    return std::nullopt;
  }

  // /summary@mass_drift, @min_density, @largest_spectral_tail, @under_resolved_since (+inf: never),
  // and the warning.
  void summarize_field(RunSummary& summary, std::int64_t degree) const {
    summary.extra = {{"mass_drift", balance_.mass_drift()},
                     {"min_density", balance_.min_density()},
                     {"largest_spectral_tail", largest_tail_},
                     {"under_resolved_since", under_resolved_since_.value_or(std::numeric_limits<double>::infinity())}};
    if (!under_resolved_since_) return;
    char buffer[300];
    std::snprintf(buffer, sizeof buffer,
                  "the top third of the harmonic degrees holds more than %g of the density from t = %g (largest "
                  "%.3g): check with meanfield.degree = %lld",
                  kSphereTailResolved, *under_resolved_since_, largest_tail_, static_cast<long long>(2 * degree));
    add_summary_warning(summary, "under_resolved", buffer);
  }

 private:
  const MeanFieldSphere& system_;
  DensityBalance balance_;
  double largest_tail_ = 0.0;
  std::optional<double> under_resolved_since_;
};

RunSummary integrate_sphere_field(Recorder* recorder, const RunConfig& config, MeanFieldSphere& system,
                                  const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds,
                                  const ExperimentOptions& options) {
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end, config.solver.t_start);
  SphereFieldSession session(recorder, system, options,
                             SessionClock::of(samples, config.solver.t_start, resume, earlier_wall_seconds));
  const IntegrationResult result =
      integrate(system, x0, config.solver.t_start, samples, integrator_options(config.solver), session, resume);
  RunSummary summary = session.summarize(result, config);
  summary.max_norm_drift = 0.0;  // no directions to renormalize
  session.summarize_field(summary, config.meanfield.degree);
  if (recorder) recorder->end(summary);
  return summary;
}

RunFileOptions sphere_field_contents(const MeanFieldSphere& system) {
  return density_contents(sphere_field_layout(system), system.size());
}

}  // namespace

std::vector<SphereAttention> sphere_layers(const ModelConfig& model) {
  if (model.qkv == QkvKind::identity) return {SphereAttention{}};
  if (model.qkv != QkvKind::file)
    throw InputError("model.qkv", "the mean-field solver on the sphere needs model.qkv = \"identity\" or \"file\"");
  const std::vector<AttentionMatrices> layers = read_attention_matrices(model.qkv_file, 3);
  std::vector<SphereAttention> out;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const auto a = sphere_attention(layers[k]);
    if (!a)
      throw InputError("model.qkv_file", "layer " + std::to_string(k) +
                                             ": the mean-field solver on the sphere needs Q^T K = a I and V = c I, "
                                             "which commute with every rotation");
    out.push_back(*a);
  }
  return out;
}

SphereMeanFieldSpec sphere_spec(const RunConfig& config) {
  SphereMeanFieldSpec spec;
  spec.beta = config.model.beta;
  spec.degree = static_cast<int>(config.meanfield.degree);
  spec.layers = sphere_layers(config.model);
  spec.uniform_normalizer = std::holds_alternative<Uniform>(config.attention.normalizer);
  return spec;
}

std::vector<double> initial_sphere_density(const RunConfig& config, const MeanFieldSphere& system) {
  const Density density = Density::from_config(config.init);
  const SphereTransform& t = system.transform();
  std::vector<double> out(t.points());
  const auto longitudes = static_cast<std::size_t>(t.longitudes());
  for (std::size_t i = 0; i < t.colatitudes().size(); ++i) {
    const double theta = t.colatitudes()[i];
    for (std::size_t j = 0; j < longitudes; ++j) {
      const double phi = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(longitudes);
      const double x[3] = {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)};
      out[i * longitudes + j] = relative_density(density, x, 3) / (4.0 * std::numbers::pi);
    }
  }
  return out;
}

std::vector<FieldSpec> sphere_field_layout(const MeanFieldSphere& system) {
  const SphereTransform& t = system.transform();
  std::vector<double> phi(static_cast<std::size_t>(t.longitudes()));
  for (std::size_t j = 0; j < phi.size(); ++j)
    phi[j] = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(phi.size());
  const FieldAxis theta_axis{"theta",
                             "rad",
                             "colatitudes theta_i = arccos(x_i) of the Gauss-Legendre nodes x_i (north to south) of a "
                             "direction (sin theta cos phi, sin theta sin phi, cos theta); the area of a grid point "
                             "is w_i 2 pi / (longitudes), w_i the Gauss-Legendre weight",
                             t.colatitudes().size(),
                             t.colatitudes(),
                             false};
  const FieldAxis phi_axis{"phi", "rad", "longitudes phi_j = 2 pi j / (longitudes)", phi.size(), phi, false};
  return {FieldSpec{"density",
                    "density of tokens per unit area on the sphere S^2 at the grid points (the synthesis of its "
                    "spherical harmonics of degree <= " +
                        std::to_string(t.lmax()) + "); integrates to 1",
                    "1/sr",
                    {theta_axis, phi_axis}},
          FieldSpec{kSphereTailField,
                    "share sqrt(sum_{l > 2L/3} |mu_l|^2 / sum_l |mu_l|^2) of the top third of the harmonic degrees; "
                    "above 1e-3 the density is under-resolved",
                    "1",
                    {}}};
}

RunSummary run_meanfield_sphere(const RunConfig& config, const ExperimentOptions& options,
                                const std::vector<Recorder*>& recorders) {
  // Everything that can fail on bad input happens before anything is recorded.
  MeanFieldSphere system(sphere_spec(config));
  const std::vector<double> x0 = system.initial_state(initial_sphere_density(config, system));
  return start_density_run(
      config, options, recorders, sphere_field_contents(system), x0,
      [&](Recorder* recorder, const std::vector<double>& x, const Checkpoint* resume, double earlier_wall_seconds) {
        return integrate_sphere_field(recorder, config, system, x, resume, earlier_wall_seconds, options);
      });
}

RunSummary resume_meanfield_sphere(const std::filesystem::path& path, const RunConfig& config,
                                   const ExperimentOptions& options) {
  MeanFieldSphere system(sphere_spec(config));
  const std::vector<double> x0 = system.initial_state(initial_sphere_density(config, system));
  const ReopenedDensityRun run = reopen_density_run(path, config, options, sphere_field_contents(system));
  // The resolution and mass summaries cover the frames of this session.
  return integrate_sphere_field(run.file.get(), config, system, run.x(x0), run.checkpoint(), run.earlier_wall_seconds(),
                                options);
}

}  // namespace normdyn
