#pragma once
// The pieces of a mean-field run (model.kind = "meanfield"), and the initial weighted tokens of
// particle runs that discretize a density (init.kind = perturbed_uniform, von_mises, or uniform
// with init.sampling / init.radius_width). They read input files and write nothing.
#include <memory>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/density.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/solvers/meanfield_causal.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"

namespace normdyn {

// The circle form of the configured attention matrices, one per layer. Throws InputError naming
// model.qkv_file when a layer's Q^T K or V does not commute with rotations.
std::vector<CircleAttention> circle_layers(const ModelConfig& model);

// The initial angular density of a mean-field run: cell averages per radian on meanfield.grid cells.
std::vector<double> initial_angular_density(const RunConfig& config);

// The solver's specification from the configuration (the circle; the slices of the causal mean field).
MeanFieldSpec meanfield_spec(const RunConfig& config);

struct MeanFieldSetup {
  std::unique_ptr<MeanFieldCircle> system;
  std::vector<double> x0;
};
// The solver and its initial state (reads input files; writes nothing).
MeanFieldSetup make_meanfield(const RunConfig& config);

// The /fields layout of a mean-field run.
std::vector<FieldSpec> field_layout(const RunConfig& config, const MeanFieldCircle& system);

// The causal mean field (attention.mask = "causal" or "strictly_causal"): its solver and /fields layout
// (the density on the (sigma, phi) grid, its angular marginal, the resolution), and its runs.
bool is_causal_meanfield(const RunConfig& config);
std::unique_ptr<MeanFieldCausal> make_meanfield_causal(const RunConfig& config);
std::vector<FieldSpec> causal_field_layout(const RunConfig& config, const MeanFieldCausal& system);
RunSummary run_meanfield_causal(const RunConfig& config, const ExperimentOptions& options,
                                const std::vector<Recorder*>& recorders);
RunSummary resume_meanfield_causal(const std::filesystem::path& path, const RunConfig& config,
                                   const ExperimentOptions& options);

// The mean-field entries of run_experiment / resume_experiment: the circle, the cursor (causal
// masks) or the sphere S^2 (model.d = 3), as the configuration says.
RunSummary run_meanfield(const RunConfig& config, const ExperimentOptions& options,
                         const std::vector<Recorder*>& recorders);
RunSummary resume_meanfield(const std::filesystem::path& path, const RunConfig& config,
                            const ExperimentOptions& options);

// Particle runs: whether the initial tokens come from a density (weighted or sampled).
bool uses_density_tokens(const RunConfig& config);
// The initial tokens and masses (summing to 1) of a particle run that discretizes a density.
WeightedTokens initial_weighted_tokens(const RunConfig& config);
// The token masses of a particle run: empty (equal masses) unless the discretization weights them.
Vector initial_masses(const RunConfig& config);

}  // namespace normdyn
