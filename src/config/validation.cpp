// Cross-key rules: checks of the configuration that involve more than one key.
#include "config/config_internal.hpp"

namespace normdyn::config_internal {

// Inline weights fit model.d: a holds M rows of d entries for the M entries of omega.
void validate_feedforward(const RunConfig& c, const std::map<std::string, const toml::node*>& present) {
  const FeedForwardConfig& f = c.feedforward;
  if (f.weights == FeedForwardWeights::inline_values) {
    for (const char* key : {"feedforward.a", "feedforward.omega"})
      if (!present.count(key)) throw InputError(key, "is required when feedforward.weights = \"inline\"");
    const auto d = static_cast<std::size_t>(c.model.d);
    if (f.a.size() != f.omega.size() * d)
      throw InputError("feedforward.a",
                       "must hold M = " + std::to_string(f.omega.size()) + " rows of model.d = " + std::to_string(d) +
                           " entries (the length of feedforward.omega times d = " + std::to_string(f.omega.size() * d) +
                           "), got " + std::to_string(f.a.size()));
  }
  if (f.weights == FeedForwardWeights::file && !present.count("feedforward.file"))
    throw InputError("feedforward.file", "is required when feedforward.weights = \"file\"");
}

// Cross-key rules of the densities, the mean-field model and weighted particles.
// Whether a scheme's speed factor s_j depends on the attention A_j (then the noise's coefficient
// P_θ / s depends on θ_j beyond P_θ, and the Itô-Stratonovich correction has more than the spheres'
// curvature).
bool speed_depends_on_attention(const Scheme& scheme) {
  return std::visit(
      [](const auto& s) {
        const TokenContext a{1.0, 1.0, 1.5, 0.5, 1.0}, b{1.0, 1.0, 1.5, 0.25, 2.0};
        return s.speed(a) != s.speed(b);
      },
      scheme);
}

// A method of the base configuration that noise set on top of it cannot use is a conflict of the base
// (`--set noise.kind:=...` drops it); otherwise the error names solver.method.
void validate_noise(const RunConfig& c, const std::map<std::string, const toml::node*>& present,
                    const std::set<std::string>& overridden) {
  if (!c.noise.active()) return;
  const std::string noise = "noise.kind = " + in_quotes(alternative_key(c.noise.kind));
  if (!present.count("noise.sigma")) throw InputError("noise.sigma", "is required when " + noise);
  const Method m = c.solver.method;
  if (c.model.kind == ModelKind::meanfield) {  // the Fokker-Planck equation: deterministic
    if (speed_depends_on_attention(c.model.scheme))
      throw InputError("model.scheme", in_quotes(scheme_key(c.model.scheme)) + " with " + noise +
                                           " does not apply to model.kind = \"meanfield\": its speed factor depends "
                                           "on |A|, so the noise's coefficient depends on the density; valid: post, "
                                           "pre, mix, cod");
    if (method_info(m).control == StepControl::stochastic)
      throw InputError("solver.method", in_quotes(to_string(m)) + " is a stochastic method; the mean field's " +
                                            "Fokker-Planck equation is deterministic: use \"split\" (its diffusion "
                                            "exact) or solver.method = \"auto\"");
    return;
  }
  const auto refuse_method = [&](const std::string& why) {
    if (!overridden.empty() && !overridden.count("solver.method") && present.count("solver.method"))
      throw BaseConflict{"solver.method", why};
    throw InputError("solver.method", why);
  };
  if (m == Method::discrete)
    refuse_method("\"discrete\" layer maps have no noise; " + noise +
                  " needs a stochastic method: stratonovich_heun | euler_maruyama");
  if (method_info(m).control != StepControl::stochastic)
    refuse_method(in_quotes(to_string(m)) + " is not a stochastic method; " + noise +
                  " needs stratonovich_heun | euler_maruyama (or solver.method = \"auto\")");
  if (c.noise.calculus == NoiseCalculus::ito) {
    if (m != Method::euler_maruyama)
      refuse_method(in_quotes(to_string(m)) +
                    " converges to the Stratonovich flow; noise.calculus = \"ito\" needs "
                    "\"euler_maruyama\" (or solver.method = \"auto\")");
  } else if (m == Method::euler_maruyama) {
    const std::string use = "; use \"stratonovich_heun\", or noise.calculus = \"ito\" for the Ito flow";
    if (c.noise.needs_means())
      throw InputError("solver.method", "\"euler_maruyama\" does not converge to the Stratonovich flow of " + noise +
                                            " (its coefficient depends on every token)" + use);
    if (speed_depends_on_attention(c.model.scheme))
      throw InputError("solver.method",
                       "\"euler_maruyama\" does not converge to the Stratonovich flow of model.scheme = " +
                           in_quotes(scheme_key(c.model.scheme)) +
                           " with noise (its speed factor depends on the attention)" + use);
  }
  if (c.noise.needs_means() && c.model.heads > 1)
    throw InputError("model.heads",
                     noise + " is defined for one attention head; model.heads = " + std::to_string(c.model.heads));
  // Below this the tree's last level (2^-40) is no longer small against a step: the variance of an
  // increment would fall short of h by more than 2^-21 h.
  if (c.noise.increment_draws == NoiseIncrements::tree && c.solver.dt < std::ldexp(1.0, -20))
    throw InputError("solver.dt", format_number(c.solver.dt) +
                                      " is below 2^-20, the finest step that noise.increments = "
                                      "\"tree\" resolves");
}

// model.kind = "meanfield" with model.d = 3: the spectral solver on S^2 (solvers/meanfield_sphere.hpp) is
// written for Post-LN with rotation-invariant attention (Q^T K, V multiples of I, checked when the
// matrices are read), without noise, masks, biases or positions, and softmax or uniform normalizer.
void validate_sphere_meanfield(const RunConfig& c) {
  const std::string on_sphere = " on the sphere (model.kind = \"meanfield\", model.d = 3)";
  if (!std::holds_alternative<PostLN>(c.model.scheme))
    throw InputError("model.scheme",
                     in_quotes(scheme_key(c.model.scheme)) + " does not apply" + on_sphere + "; valid: post");
  if (c.noise.active())
    throw InputError("noise.kind", in_quotes(alternative_key(c.noise.kind)) + " does not apply" + on_sphere);
  if (!is_first_alternative(c.attention.mask))
    throw InputError("attention.mask", in_quotes(alternative_key(c.attention.mask)) + " does not apply" + on_sphere);
  if (!is_first_alternative(c.attention.bias))
    throw InputError("attention.bias", in_quotes(alternative_key(c.attention.bias)) + " does not apply" + on_sphere);
  if (!is_first_alternative(c.attention.positions))
    throw InputError("attention.positions",
                     in_quotes(alternative_key(c.attention.positions)) + " does not apply" + on_sphere);
  if (!std::holds_alternative<Softmax>(c.attention.normalizer) &&
      !std::holds_alternative<Uniform>(c.attention.normalizer))
    throw InputError("attention.normalizer", in_quotes(alternative_key(c.attention.normalizer)) + " does not apply" +
                                                 on_sphere + "; valid: softmax, uniform");
  if (c.init.kind == InitKind::file)
    throw InputError("init.kind",
                     "\"file\" does not apply" + on_sphere + "; valid: uniform, perturbed_uniform, von_mises");
  if (c.solver.method == Method::split)
    throw InputError("solver.method", "\"split\" does not apply" + on_sphere +
                                          " (no diffusion to split off); use an adaptive method or \"auto\"");
}

void validate_densities(RunConfig& c, const std::map<std::string, const toml::node*>& present) {
  const InitConfig& i = c.init;
  if (c.init.kind == InitKind::von_mises) {
    const std::size_t bumps = i.centers.size();
    if (i.kappa.size() != 1 && i.kappa.size() != bumps)
      throw InputError("init.kappa", "needs one entry or one per centre (" + std::to_string(bumps) + "), got " +
                                         std::to_string(i.kappa.size()));
    if (i.kappa.size() == 1) c.init.kappa.assign(bumps, i.kappa.front());
    if (i.weights.empty()) c.init.weights.assign(bumps, 1.0 / static_cast<double>(bumps));
    if (c.init.weights.size() != bumps)
      throw InputError("init.weights", "needs one entry per centre (" + std::to_string(bumps) + "), got " +
                                           std::to_string(i.weights.size()));
  }
  if (i.radius_width > 0.0 && !(i.radius_width < 2.0 * i.r0))
    throw InputError("init.radius_width", "must be < 2 init.r0 = " + format_number(2.0 * i.r0) +
                                              " (radii stay positive), got " + format_number(i.radius_width));
  if (c.model.kind == ModelKind::particles) {
    if (c.solver.method == Method::split)
      throw InputError("solver.method",
                       "\"split\" applies only to model.kind = \"meanfield\" (the mean-field "
                       "solver's own step)");
    if (c.init.sampling == Sampling::grid && c.model.d != 2 && present.count("init.sampling"))
      throw InputError("init.sampling", "\"grid\" needs model.d = 2 (got " + std::to_string(c.model.d) + ")");
    return;
  }
  // model.kind = "meanfield": a density on the circle, or on the sphere S^2 with model.d = 3.
  if (!present.count("model.d")) c.model.d = 2;
  if (c.model.d > 3)
    throw InputError("model.d", "must be 2 (the circle) or 3 (the sphere S^2) for model.kind = \"meanfield\", got " +
                                    std::to_string(c.model.d));
  if (c.model.d == 3) validate_sphere_meanfield(c);
  if (c.model.d == 2 && present.count("meanfield.degree"))
    throw InputError("meanfield.degree",
                     "applies only to model.d = 3 (the sphere); the circle's resolution is "
                     "meanfield.grid");
  // The causal mean field is the kinetic equation over the cursor (solvers/meanfield_causal).
  const bool causal = !std::holds_alternative<NoMask>(c.attention.mask);
  if (!causal && !std::holds_alternative<NoBias>(c.attention.bias))
    throw InputError("attention.bias", in_quotes(alternative_key(c.attention.bias)) +
                                           " applies to model.kind = \"meanfield\" only with attention.mask = "
                                           "\"causal\" or \"strictly_causal\" (the mean field over the cursor)");
  if (causal && scheme_has_radius(c.model.scheme))
    throw InputError("model.scheme", in_quotes(scheme_key(c.model.scheme)) +
                                         " with attention.mask = " + in_quotes(alternative_key(c.attention.mask)) +
                                         " does not apply to model.kind = \"meanfield\": the causal mean field is "
                                         "implemented for schemes without a radius (post, cod)");
  if (!is_density_kind(c.init.kind) && c.init.kind != InitKind::file)
    throw InputError("init.kind", "\"" + std::string(enum_name(c.init.kind)) +
                                      "\" does not apply to model.kind = \"meanfield\"; valid: uniform, "
                                      "perturbed_uniform, von_mises, file");
  if (c.init.kind == InitKind::file && !present.count("init.dataset")) c.init.dataset = "/fields/density/value";
  if (c.model.qkv != QkvKind::identity && c.model.qkv != QkvKind::file)
    throw InputError("model.qkv", "\"" + std::string(enum_name(c.model.qkv)) +
                                      "\" does not apply to model.kind = \"meanfield\": the FFT solver needs Q^T K "
                                      "and V that commute with rotations (identity, or a file of such matrices)");
  if (c.solver.method == Method::discrete)
    throw InputError("solver.method",
                     "\"discrete\" applies only to model.kind = \"particles\" (the mean-field "
                     "solver integrates the continuous-depth equation)");
  if (scheme_has_radius(c.model.scheme) && !(c.init.radius_width > 0.0))
    throw InputError("init.radius_width",
                     "must be > 0 for model.kind = \"meanfield\" with scheme " + in_quotes(scheme_key(c.model.scheme)) +
                         ": the radial grid needs an initial band of radii of positive width (e.g. 0.05)");
}

// solver.method = "auto": the mean-field solver keeps dopri5 (the cost model was measured on particle
// runs), or its split step with noise (exact diffusion); particle runs take auto_method's choice for
// their sample times.
Method resolve_auto_method(const RunConfig& c) {
  if (c.model.kind != ModelKind::particles)
    return c.noise.active() || c.meanfield.method == MeanFieldMethod::semi_lagrangian ? Method::split : Method::dopri5;
  if (c.noise.active())
    return c.noise.calculus == NoiseCalculus::ito ? Method::euler_maruyama : Method::stratonovich_heun;
  const double t0 = c.solver.t_start, t1 = c.solver.t_end;
  std::vector<std::pair<double, double>> intervals;
  if (c.output.samples) {  // equally spaced, without listing them (output.samples may be large)
    intervals.emplace_back((t1 - t0) / static_cast<double>(std::max<std::int64_t>(*c.output.samples - 1, 1)),
                           static_cast<double>(std::max<std::int64_t>(*c.output.samples - 1, 1)));
  } else {
    double previous = t0;
    for (const double t : c.output.times) {
      intervals.emplace_back(t - previous, 1.0);
      previous = t;
    }
    intervals.emplace_back(t1 - previous, 1.0);
  }
  return auto_method(c.solver.rtol, intervals);
}

}  // namespace normdyn::config_internal
