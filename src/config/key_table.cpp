// The key table: every key of the configuration, one row each, in the order of the reference.
#include "config/config_internal.hpp"

namespace normdyn::config_internal {

const std::vector<Key>& keys() {
  using C = RunConfig;
  static const std::vector<Key> table = [] {
    std::vector<Key> k{
        // ---- [model]
        scheme_key_row(),
        selector(field("model.kind", &C::model, &ModelConfig::kind,
                       "what is simulated: particles (n tokens, possibly weighted) | meanfield (density on the "
                       "circle, d = 2, or on the sphere S^2, model.d = 3)")),
        field("model.n", &C::model, &ModelConfig::n, "number of tokens n >= 1", {at_least(1)}, particles_only),
        field("model.d", &C::model, &ModelConfig::d,
              "dimension d >= 2 of the token space (tokens live on S^{d-1}); meanfield: 2 (the circle, default) or 3 "
              "(the sphere S^2)",
              {at_least(2)},
              [](const C& c) {
                // Written back only where it is not the circle's implied d = 2.
                if (c.model.kind == ModelKind::particles || c.model.d >= 3) return std::string();
                return std::string(
                    "does not apply to model.kind = \"meanfield\" on the circle (its default); "
                    "model.d = 3 puts it on the sphere S^2");
              }),
        field("model.beta", &C::model, &ModelConfig::beta,
              "inverse temperature beta >= 0 of the softmax (0: every key weighs the same)", {at_least(0)}),
        beta_rule_row(),
        selector(field("model.qkv", &C::model, &ModelConfig::qkv, "attention matrices: " + choices<QkvKind>())),
        field("model.qkv_seed", &C::model, &ModelConfig::qkv_seed, "seed of random Q, K, V (default: init.seed)",
              {at_least(0)},
              [](const C& c) {
                return only_for("model.qkv", c.model.qkv,
                                {QkvKind::gaussian, QkvKind::gaussian_per_layer, QkvKind::gaussian_unit_norm,
                                 QkvKind::gaussian_per_map_layer});
              }),
        field("model.qkv_sigma", &C::model, &ModelConfig::qkv_sigma,
              "gaussian_per_map_layer: sigma >= 0 of the fresh values V = I + (sigma/sqrt(h)) G_k of every layer k of "
              "the "
              "discrete maps (h = solver.dt, G_k standard normal; Q = K = I): the discrete model of noise.kind = "
              "\"value\" (required)",
              {at_least(0)},
              [](const C& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::gaussian_per_map_layer}); }),
        field("model.qkv_file", &C::model, &ModelConfig::qkv_file,
              "HDF5 file with datasets Q, K, V, each [d, d] or [layers, d, d]; with model.heads = H > 1, "
              "[H, d, d] or [layers, H, d, d]",
              {}, [](const C& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::file}); }),
        field("model.qkv_digest", &C::model, &ModelConfig::qkv_digest,
              "given: digest of the matrices given with the run (FNV-1a of their values, set by normdyn; the run "
              "file holds the matrices and is checked against it)",
              {}, [](const C& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::given}); }),
        field("model.heads", &C::model, &ModelConfig::heads,
              "attention heads H: A_i is the sum over heads of each head's attention, each with its own Q, K, V "
              "(the random model.qkv kinds draw every head; the first head's matrices are those of a one-head model)",
              {in_range(1, true, double(kMaxHeads - 1), true)}, particles_only),
    };
    for (Key& p : scheme_parameter_keys()) k.push_back(std::move(p));
    // ---- [attention]
    for (Key& a : attention_rows()) k.push_back(std::move(a));
    // ---- [feedforward]
    for (Key& f : feedforward_rows()) k.push_back(std::move(f));
    // ---- [noise]
    k.push_back(noise_kind_row());
    for (Key& p : noise_parameter_rows()) k.push_back(std::move(p));
    const auto with_noise = [](const C& c) {
      return c.noise.active() ? std::string() : std::string("applies only with noise (noise.kind is \"none\")");
    };
    k.push_back(field("noise.seed", &C::noise, &NoiseSpec::seed,
                      "seed of the noise's increments, each a pure function of (seed, step, token or matrix entry) "
                      "(default: init.seed)",
                      {}, with_noise));
    k.push_back(field("noise.calculus", &C::noise, &NoiseSpec::calculus,
                      "stratonovich, the flow on the spheres (stratonovich_heun; euler_maruyama where it converges "
                      "to the same flow) | ito, the noise's coefficient at the start of each step with retraction "
                      "(euler_maruyama; the depth limit of model.qkv = \"gaussian_per_map_layer\")",
                      {}, with_noise));
    k.push_back(field("noise.increments", &C::noise, &NoiseSpec::increment_draws,
                      "counter, each step's normals keyed by (seed, step number, token) | tree, the increment over "
                      "each step's interval of one Brownian path per token (a Brownian tree of unit cells bisected "
                      "to 2^-40), so that runs at h and h/2 follow the same path (strong errors, refinement studies; "
                      "solver.dt >= 2^-20)",
                      {}, [with_noise](const C& c) {
                        if (std::string why = with_noise(c); !why.empty()) return why;
                        if (c.model.kind == ModelKind::meanfield)
                          return std::string(
                              "applies only to particles (the mean field's Fokker-Planck equation draws "
                              "no increments)");
                        return std::string();
                      }));

    const std::vector<Key> rest{
        // ---- [meanfield]
        field("meanfield.grid", &C::meanfield, &MeanFieldConfig::grid,
              "cells M >= 8 of the uniform grid in the angle phi",
              {in_range(8, true, double(std::int64_t{1} << 24), true, {}, "2^24")}, circle_meanfield_only),
        field("meanfield.radial_grid", &C::meanfield, &MeanFieldConfig::radial_grid,
              "cells >= 4 of the radial grid, which moves with the support of the radii (schemes with a radius)",
              {in_range(4, true, 65536, true)},
              [](const C& c) {
                if (std::string why = circle_meanfield_only(c); !why.empty()) return why;
                if (scheme_has_radius(c.model.scheme)) return std::string();
                return "applies only to schemes with a radius (pre, mix, peri); model.scheme is " +
                       in_quotes(scheme_key(c.model.scheme));
              }),
        field("meanfield.degree", &C::meanfield, &MeanFieldConfig::degree,
              "model.d = 3: the largest degree L >= 1 of the spherical harmonics (grid: ceil((3L+1)/2) Gauss-Legendre "
              "rings x twice as many longitudes)",
              {in_range(1, true, 4096, true)},
              [](const C& c) {
                if (std::string why = meanfield_only(c); !why.empty()) return why;
                return c.model.d == 3 ? std::string() : std::string("applies only to model.d = 3 (the sphere)");
              }),
        field("meanfield.limiter", &C::meanfield, &MeanFieldConfig::limiter,
              "slope limiter of the fluxes: van_leer (2nd order) | minmod (2nd order) | upwind (1st order)", {},
              circle_meanfield_only),
        field("meanfield.method", &C::meanfield, &MeanFieldConfig::method,
              "transport of the split step (solver.method = \"split\"): finite_volume (the finite volumes by SSP-RK3; "
              "steps need h |v| < 2 pi / M) | semi_lagrangian (flux-form semi-Lagrangian; steps need h |d v / d phi| "
              "< 1 whatever M; schemes without a radius; solver.method = \"auto\" takes split)",
              {},
              [](const C& c) {
                if (std::string why = circle_meanfield_only(c); !why.empty()) return why;
                if (c.meanfield.method == MeanFieldMethod::semi_lagrangian && scheme_has_radius(c.model.scheme))
                  return "\"semi_lagrangian\" applies only to schemes without a radius (post, cod); model.scheme is " +
                         in_quotes(scheme_key(c.model.scheme));
                if (c.meanfield.method == MeanFieldMethod::semi_lagrangian && c.solver.method != Method::split)
                  return "\"semi_lagrangian\" is the transport of solver.method = \"split\" (or \"auto\"); "
                         "solver.method is " +
                         in_quotes(to_string(c.solver.method));
                return std::string();
              }),
        field("meanfield.cursor_grid", &C::meanfield, &MeanFieldConfig::cursor_grid,
              "cells M_sigma >= 1 of the uniform grid in the cursor sigma in (0, 1] (token i of n at i / n) of the "
              "causal mean field (attention.mask = \"causal\" or \"strictly_causal\")",
              {in_range(1, true, 65536, true)},
              [](const C& c) {
                if (std::string why = meanfield_only(c); !why.empty()) return why;
                if (!std::holds_alternative<NoMask>(c.attention.mask)) return std::string();
                return std::string(
                    "applies only to attention.mask = \"causal\" or \"strictly_causal\" (the mean "
                    "field over the cursor); attention.mask is \"none\"");
              }),

        // ---- [init]
        selector(field("init.kind", &C::init, &InitConfig::kind, "initial tokens or density: " + choices<InitKind>())),
        field("init.seed", &C::init, &InitConfig::seed, "seed of every random choice of the run (>= 0)", {at_least(0)}),
        field("init.r0", &C::init, &InitConfig::r0,
              "initial radius r0 > 0 of every token (kinds that do not set radii)", {above(0)},
              [](const C& c) {
                if (c.init.kind == InitKind::gaussian)
                  return std::string("does not apply to init.kind = \"gaussian\", which sets r_j = |x_j|");
                return std::string();
              }),
        field("init.delta", &C::init, &InitConfig::delta, "cap: every pairwise cosine >= 1 - delta, 0 < delta < 2",
              {in_range(0, false, 2, false)}, init_kind_is({InitKind::cap})),
        field("init.tokens_digest", &C::init, &InitConfig::tokens_digest,
              "given: digest of the tokens given with the run (FNV-1a of their values, set by normdyn; the run file "
              "holds the tokens and is checked against it)",
              {}, init_kind_is({InitKind::given})),
        field("init.rho", &C::init, &InitConfig::rho,
              "equiangular: every pairwise cosine rho, -1/(n-1) <= rho < 1 (needs model.d >= model.n)",
              {in_range(-1, true, 1, false)}, init_kind_is({InitKind::equiangular})),
        field("init.file", &C::init, &InitConfig::file, "file: HDF5 file holding the initial tokens", {},
              init_kind_is({InitKind::file})),
        field("init.dataset", &C::init, &InitConfig::dataset, "file: dataset of directions, [n, d] or [frames, n, d]",
              {}, init_kind_is({InitKind::file})),
        field("init.frame", &C::init, &InitConfig::frame,
              "file: frame of a 3-D dataset; negative counts from the end (-1: last)", {},
              init_kind_is({InitKind::file})),
        field("init.radius_dataset", &C::init, &InitConfig::radius_dataset,
              "file: dataset of radii, [n] or [frames, n]; empty: the run file's radii if present, else r0", {},
              [](const C& c) {
                if (std::string why = particles_only(c); !why.empty()) return why;
                return only_for("init.kind", c.init.kind, {InitKind::file});
              }),
        // Densities (mean field, and particles that sample them).
        field("init.mode", &C::init, &InitConfig::mode,
              "perturbed_uniform: mode m >= 1 of the density (1 + amplitude cos(m phi)) / (2 pi)", {at_least(1)},
              init_kind_is({InitKind::perturbed_uniform})),
        field("init.amplitude", &C::init, &InitConfig::amplitude,
              "perturbed_uniform: amplitude in [-1, 1] of the cosine perturbation",
              {in_range(-1, true, 1, true, "(the density must stay >= 0)")},
              init_kind_is({InitKind::perturbed_uniform})),
        field("init.centers", &C::init, &InitConfig::centers,
              "von_mises: angles (rad) of the bump centres, in the plane of the first two coordinates", not_empty(),
              init_kind_is({InitKind::von_mises})),
        kappa_row(),
        weights_row(),
        field("init.sampling", &C::init, &InitConfig::sampling,
              "particles from a density: sampled (i.i.d. from the density, equal masses) | weighted (i.i.d. uniform "
              "directions, masses proportional to the density) | grid (d = 2: equally spaced angles, masses = exact "
              "cell masses)",
              {},
              [](const C& c) {
                if (std::string why = particles_only(c); !why.empty()) return why;
                return only_for("init.kind", c.init.kind,
                                {InitKind::uniform, InitKind::perturbed_uniform, InitKind::von_mises});
              }),
        field("init.radius_width", &C::init, &InitConfig::radius_width,
              "radii uniform on [r0 - w/2, r0 + w/2], 0 <= w < 2 r0 (0: every radius r0); mean field with a radius "
              "needs w > 0",
              {at_least(0)},
              [](const C& c) {
                if (c.model.kind == ModelKind::meanfield) {
                  if (scheme_has_radius(c.model.scheme)) return std::string();
                  return "applies only to schemes with a radius (pre, mix, peri) when model.kind = \"meanfield\"; "
                         "model.scheme is " +
                         in_quotes(scheme_key(c.model.scheme));
                }
                return only_for("init.kind", c.init.kind,
                                {InitKind::uniform, InitKind::perturbed_uniform, InitKind::von_mises});
              }),

        // ---- [solver]
        method_row(),
        field("solver.rtol", &C::solver, &SolverConfig::rtol, "relative tolerance > 0 (adaptive methods)", {above(0)},
              adaptive_only),
        field("solver.atol", &C::solver, &SolverConfig::atol, "absolute tolerance > 0 (adaptive methods)", {above(0)},
              adaptive_only),
        field("solver.dt", &C::solver, &SolverConfig::dt,
              "step > 0: fixed step (" + fixed_step_names() +
                  "), layer step h (discrete), first trial step (adaptive); fixed steps and layers at least "
                  "t_end * 2^-52, below which they cannot advance t",
              {above(0)}),
        field("solver.t_end", &C::solver, &SolverConfig::t_end, "final time (depth) t_end > 0", {above(0)}),
        field("solver.t_start", &C::solver, &SolverConfig::t_start,
              "start time t_start >= 0: 0 for a new run; a run continued from another's last state "
              "(normdyn run --continue) starts where that one ended",
              {at_least(0)}),
        field("solver.dt_min", &C::solver, &SolverConfig::dt_min,
              "adaptive: a step below dt_min > 0 ends the run with status step_underflow", {above(0)}, adaptive_only),
        field("solver.max_steps", &C::solver, &SolverConfig::max_steps,
              "stop with status max_steps after this many steps (0: unlimited)", {at_least(0)}),
        field("solver.project", &C::solver, &SolverConfig::project,
              "renormalize the directions after every step (retraction onto the spheres); mean field: clip negative "
              "densities after every step, keeping the mass",
              {},
              [](const C& c) {
                return method_info(c.solver.method).control == StepControl::layers
                           ? "does not apply to solver.method = " + in_quotes(to_string(c.solver.method)) +
                                 " (layer maps renormalize by construction)"
                           : std::string();
              }),
        field("solver.sync_epsilon", &C::solver, &SolverConfig::sync_epsilon,
              "> 0: stop at the first sample time where every pairwise cosine exceeds 1 - sync_epsilon (0: off)",
              {in_range(0, true, 2, false)}, particles_only),
        field("solver.threads", &C::solver, &SolverConfig::threads,
              "threads of the attention kernel (0: OMP_NUM_THREADS, else all cores)", {in_range(0, true, 4096, true)},
              particles_only),

        // ---- [output]
        field("output.path", &C::output, &OutputConfig::path, "HDF5 file of the run (the -o flag overrides it)",
              not_empty()),
        field("output.samples", &C::output, &OutputConfig::samples,
              "number >= 2 of frames, equally spaced on [t_start, t_end] (default 201)", {at_least(2)}),
        times_row(),
        log_times_row(),
        field("output.flush_frames", &C::output, &OutputConfig::flush_frames,
              "flush the file after this many frames (>= 1); frames before the last flush survive a crash",
              {at_least(1)}),
        field("output.flush_seconds", &C::output, &OutputConfig::flush_seconds,
              "... or after this many seconds of wall time (> 0), whichever comes first", {above(0)}),
        field("output.observables", &C::output, &OutputConfig::observables,
              "write energy, variance and minimum cosine of every frame to /observables"),
        field("output.compression", &C::output, &OutputConfig::compression,
              "deflate level 0-9 (with shuffle) of the frame datasets; 0: none (the default: directions and radii are "
              "near-random doubles, level 1 saved 11% of the file and made a Pre-LN run at n = d = 256 five times "
              "slower)",
              {in_range(0, true, 9, true)}),
    };
    k.insert(k.end(), rest.begin(), rest.end());
    return k;
  }();
  return table;
}

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& k : keys()) {
      const auto s = section_of(k.path);
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
    return out;
  }();
  return names;
}

}  // namespace normdyn::config_internal
