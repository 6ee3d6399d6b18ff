// Runs of the causal mean field (model.kind = "meanfield" with attention.mask = "causal" or
// "strictly_causal"): the density on the (sigma, phi) grid, its angular marginal (the density of all
// tokens, which analyze and the plots read) and the resolution of the narrowest cluster of any slice.
#include <algorithm>
#include <cmath>
#include <limits>

#include "density_run.hpp"
#include "meanfield_resolution.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/experiment/setup.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn {

bool is_causal_meanfield(const RunConfig& config) {
  return config.model.kind == ModelKind::meanfield && !std::holds_alternative<NoMask>(config.attention.mask);
}

std::unique_ptr<MeanFieldCausal> make_meanfield_causal(const RunConfig& config) {
  CursorSpec cursor;
  cursor.cells = config.meanfield.cursor_grid;
  if (const auto* alibi = std::get_if<Alibi>(&config.attention.bias)) cursor.alibi_slope = alibi->lambda;
  return std::make_unique<MeanFieldCausal>(meanfield_spec(config), cursor);
}

std::vector<FieldSpec> causal_field_layout(const RunConfig& config, const MeanFieldCausal& system) {
  const auto m = static_cast<std::size_t>(system.cells());
  const auto slices = static_cast<std::size_t>(system.cursor_cells());
  const FieldAxis phi = circle_phi_axis(m, system.phi());
  const FieldAxis sigma{"sigma",
                        "1",
                        "cell centres (j - 1/2) / M_sigma of the cursor sigma (token i of n at i / n); cell j is "
                        "((j - 1) / M_sigma, j / M_sigma]",
                        slices,
                        system.sigma(),
                        false};
  const std::string mask(alternative_key(config.attention.mask));
  return {FieldSpec{"density",
                    "cell averages of the density of tokens in phi at each cursor sigma (attention.mask = " + mask +
                        "); every slice integrates to 1 over phi",
                    "1/rad",
                    {sigma, phi}},
          FieldSpec{"angular_density",
                    "cell averages of the density of all tokens in phi (the mean over sigma of /fields/density)",
                    "1/rad",
                    {phi}},
          FieldSpec{kResolutionField,
                    "second-moment width, in grid cells, of the narrowest cluster of any slice of the density (an arc "
                    "above twice the uniform density holding at least 1 % of the slice's mass); +inf without "
                    "clusters; below 1 the cluster is under-resolved",
                    "1",
                    {}}};
}

namespace {

// Records the frames with the checkpoint; tracks the mass of every slice, positivity and resolution.
class CausalFieldSession final : public Session {
 public:
  CausalFieldSession(Recorder* recorder, const MeanFieldCausal& system, const ExperimentOptions& options,
                     const SessionClock& clock, ClusterResolution& resolution)
      : Session(recorder, options, clock), system_(system), resolution_(resolution) {}

  std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView& checkpoint) override {
    const auto start = Clock::now();
    const std::vector<double> angular = system_.angular_density(x.data());
    const double narrowest = resolution_.add(t, x, static_cast<std::size_t>(system_.cursor_cells()));
    std::vector<std::span<const double>> values{x, angular};
    std::vector<std::span<const double>> moving{{}, {}};
    if (resolution_.recorded()) {
      values.emplace_back(&narrowest, 1);
      moving.emplace_back();
    }
    if (recorder_) recorder_->field_frame(t, step, values, moving, checkpoint, integration_seconds());
    balance_.add(system_.slice_masses(x.data()), x);
    sampled(index);
    own_seconds_ += seconds_since(start);
    return std::nullopt;
  }

  const DensityBalance& balance() const { return balance_; }

 private:
  const MeanFieldCausal& system_;
  ClusterResolution& resolution_;
  DensityBalance balance_;
};

RunSummary integrate_causal(Recorder* recorder, const RunConfig& config, MeanFieldCausal& system,
                            const std::vector<double>& x0, const Checkpoint* resume, double earlier_wall_seconds,
                            const ExperimentOptions& options, ClusterResolution resolution = ClusterResolution()) {
  const std::vector<double> samples = config.output.sample_times(config.solver.t_end, config.solver.t_start);
  CausalFieldSession session(recorder, system, options,
                             SessionClock::of(samples, config.solver.t_start, resume, earlier_wall_seconds),
                             resolution);
  const IntegrationResult result =
      integrate(system, x0, config.solver.t_start, samples, integrator_options(config.solver), session, resume);
  RunSummary summary = session.summarize(result, config);
  summary.max_norm_drift = 0.0;
  // mass_drift: the largest change of any slice's mass (each is conserved).
  summary.extra = {{"mass_drift", session.balance().mass_drift()},
                   {"min_density", session.balance().min_density()},
                   {"max_negative_density", result.counters.max_constraint_drift}};
  resolution.summarize(summary, config.meanfield.grid);
  if (recorder) recorder->end(summary);
  return summary;
}

RunFileOptions causal_contents(const RunConfig& config, const MeanFieldCausal& system) {
  return density_contents(causal_field_layout(config, system), system.size());
}

}  // namespace

RunSummary run_meanfield_causal(const RunConfig& config, const ExperimentOptions& options,
                                const std::vector<Recorder*>& recorders) {
  const std::unique_ptr<MeanFieldCausal> system = make_meanfield_causal(config);
  const std::vector<double> x0 = system->initial_state(initial_angular_density(config));
  return start_density_run(
      config, options, recorders, causal_contents(config, *system), x0,
      [&](Recorder* recorder, const std::vector<double>& x, const Checkpoint* resume, double earlier_wall_seconds) {
        return integrate_causal(recorder, config, *system, x, resume, earlier_wall_seconds, options);
      });
}

RunSummary resume_meanfield_causal(const std::filesystem::path& path, const RunConfig& config,
                                   const ExperimentOptions& options) {
  const std::unique_ptr<MeanFieldCausal> system = make_meanfield_causal(config);
  const std::vector<double> x0 = system->initial_state(initial_angular_density(config));
  // The resolution of the frames the file holds, read before it is reopened for writing (none if they
  // cannot be read now: it then covers the resumed frames only).
  std::vector<double> times;
  std::vector<std::vector<double>> stored;
  try {
    const RunReader reader(path);
    times = reader.times();
    for (std::size_t i = 0; i < std::min(reader.frames(), times.size()); ++i)
      stored.push_back(reader.field_frame("density", i));
  } catch (const std::exception&) {
    stored.clear();
  }
  const ReopenedDensityRun run = reopen_density_run(path, config, options, causal_contents(config, *system));
  ClusterResolution resolution;
  if (const Checkpoint* c = run.checkpoint())
    for (std::size_t i = 0; i < std::min(c->next_sample, stored.size()); ++i)
      resolution.add(times[i], stored[i], static_cast<std::size_t>(system->cursor_cells()));
  return integrate_causal(run.file.get(), config, *system, run.x(x0), run.checkpoint(), run.earlier_wall_seconds(),
                          options, std::move(resolution));
}

}  // namespace normdyn
