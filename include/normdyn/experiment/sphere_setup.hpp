#pragma once
// The pieces of a mean-field run on the sphere S^2 (model.kind = "meanfield", model.d = 3); the
// circle's are in setup.hpp. They read input files and write nothing until the run begins.
#include <filesystem>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/solvers/meanfield_sphere.hpp"

namespace normdyn {

// The sphere form of the configured attention matrices, one per layer. Throws InputError naming
// model.qkv_file when a layer's Q^T K or V is not a multiple of the identity.
std::vector<SphereAttention> sphere_layers(const ModelConfig& model);

// The solver of the configuration.
SphereMeanFieldSpec sphere_spec(const RunConfig& config);
// The initial density (init.kind uniform, perturbed_uniform or von_mises, relative to the uniform
// measure) per unit area on the solver's grid.
std::vector<double> initial_sphere_density(const RunConfig& config, const MeanFieldSphere& system);

// The /fields layout of a run on the sphere: the density on the Gauss–Legendre grid (theta, phi) and
// its spectral tail per frame.
std::vector<FieldSpec> sphere_field_layout(const MeanFieldSphere& system);

// The entries of run_experiment / resume_experiment for model.d = 3.
RunSummary run_meanfield_sphere(const RunConfig& config, const ExperimentOptions& options,
                                const std::vector<Recorder*>& recorders);
RunSummary resume_meanfield_sphere(const std::filesystem::path& path, const RunConfig& config,
                                   const ExperimentOptions& options);

}  // namespace normdyn
