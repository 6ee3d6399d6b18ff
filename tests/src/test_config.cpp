// Configuration: defaults, every key's validation with the key named in the message, overrides,
// and the round trip through the resolved TOML stored in every run file.
#define BOOST_TEST_MODULE config
#include <boost/test/unit_test.hpp>

#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"

using namespace normdyn;

namespace {
// The message of the InputError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    parse_config(text, "test.toml", sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

BOOST_AUTO_TEST_CASE(empty_file_gives_the_documented_defaults) {
  const RunConfig c = parse_config("", "empty.toml");
  BOOST_TEST(scheme_key(c.model.scheme) == "post");
  BOOST_TEST(c.model.n == 32);
  BOOST_TEST(c.model.d == 3);
  BOOST_TEST(c.model.beta == 1.0);
  BOOST_TEST(c.solver.t_end == 20.0);
  BOOST_TEST(c.solver.rtol == 1e-8);
  BOOST_TEST(c.output.sample_times(c.solver.t_end).size() == 201u);
  BOOST_TEST(c.output.sample_times(c.solver.t_end).back() == 20.0);
  BOOST_TEST(c.model.qkv_seed == c.init.seed);
}

BOOST_AUTO_TEST_CASE(scheme_parameters_are_read_into_the_scheme) {
  const RunConfig mix = parse_config("[model]\nscheme = \"mix\"\ntau = 2.5\n", "t");
  BOOST_TEST(std::get<MixLN>(mix.model.scheme).tau == 2.5);
  const RunConfig ngpt = parse_config("[model]\nscheme = \"ngpt\"\nalpha = 3\nalpha_decay = 0.5\n", "t");
  BOOST_TEST(std::get<NGPT>(ngpt.model.scheme).alpha == 3.0);
  BOOST_TEST(std::get<NGPT>(ngpt.model.scheme).alpha_decay == 0.5);
}

BOOST_AUTO_TEST_CASE(errors_name_the_key) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[model]\nbeta = -1\n", "model.beta: must be >= 0"},
      {"[model]\nbeta = \"hot\"\n", "model.beta: expected a number"},
      {"[model]\nbeta = inf\n", "model.beta: must be finite"},
      {"[model]\nn = 0\n", "model.n: must be >= 1"},
      {"[model]\nn = 2.5\n", "model.n: expected an integer"},
      {"[model]\nd = 1\n", "model.d: must be >= 2"},
      {"[model]\nscheme = \"pots\"\n",
       "model.scheme: unknown scheme \"pots\"; valid: post, pre, mix, peri, ngpt, cod (did you mean \"post\"?)"},
      {"[model]\ntau = 1.0\n", "model.tau: applies only to model.scheme = \"mix\" (model.scheme is \"post\")"},
      {"[model]\nscheme = \"ngpt\"\nalpha = 0\n", "model.alpha: must be > 0"},
      {"[model]\nbta = 1.0\n", "model.bta: unknown key; did you mean model.beta?"},
      {"[modle]\nbeta = 1.0\n",
       "[modle]: unknown section; valid: [model], [attention], [feedforward], [noise], [meanfield], [init], [solver], "
       "[output] (did you mean [model]?)"},
      {"beta = 1.0\n", "beta: unknown key"},
      {"[model]\nqkv = \"random\"\n", "model.qkv: unknown value \"random\""},
      {"[model]\nqkv = \"file\"\n", "model.qkv_file: is required"},
      {"[model]\nqkv_seed = 3\n",
       "model.qkv_seed: applies only to model.qkv = \"gaussian\" or \"gaussian_per_layer\" or \"gaussian_unit_norm\""},
      {"[init]\nkind = \"orthonormal\"\n", "init.kind: \"orthonormal\" needs model.d >= model.n"},
      {"[init]\nkind = \"cap\"\ndelta = 2.5\n", "init.delta: must be in (0, 2)"},
      {"[init]\ndelta = 0.1\n", "init.delta: applies only to init.kind = \"cap\""},
      {"[init]\nkind = \"gaussian\"\nr0 = 2.0\n", "init.r0: does not apply to init.kind = \"gaussian\""},
      {"[init]\nkind = \"file\"\n", "init.file: is required"},
      {"[init]\nseed = -1\n", "init.seed: must be >= 0"},
      {"[solver]\nmethod = \"rk45\"\n", "solver.method: unknown value \"rk45\""},
      {"[solver]\nmethod = \"rk4\"\nrtol = 1e-6\n", "solver.rtol: applies only to solver.method ="},
      {"[solver]\nrtol = 0\n", "solver.rtol: must be > 0"},
      {"[solver]\nt_end = 0\n", "solver.t_end: must be > 0"},
      {"[solver]\nmethod = \"discrete\"\ndt = 0.3\nt_end = 1.0\n", "solver.dt: with solver.method = \"discrete\""},
      {"[solver]\nmethod = \"discrete\"\nproject = false\n", "solver.project: does not apply"},
      {"[solver]\nthreads = -2\n", "solver.threads: must be in [0, 4096]"},
      {"[output]\nsamples = 1\n", "output.samples: must be >= 2"},
      {"[output]\ntimes = [0.0, 2.0, 1.0]\n", "output.times: must be strictly increasing"},
      {"[output]\ntimes = [0.0, 50.0]\n", "output.times: the last sample time 50 exceeds solver.t_end = 20"},
      {"[output]\nsamples = 5\ntimes = [0.0]\n", "output.times: give either output.samples or output.times"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string got = error_of(text);
    BOOST_TEST_INFO("config: " << text);
    BOOST_TEST(starts_with(got, expected), "got \"" << got << "\"");
    BOOST_TEST(got.find('\n') == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(bad_toml_reports_line_and_column) {
  const std::string got = error_of("[model]\nn = 3\nbeta = = 2\n");
  BOOST_TEST(starts_with(got, "test.toml:3:"), got);
}

BOOST_AUTO_TEST_CASE(set_overrides_and_creates_keys) {
  const RunConfig c = parse_config("[model]\nn = 4\n", "t",
                                   {"model.n=8", "model.scheme=pre", "solver.t_end = 3.5", "output.times=[0.0, 1.0]"});
  BOOST_TEST(c.model.n == 8);
  BOOST_TEST(scheme_key(c.model.scheme) == "pre");
  BOOST_TEST(c.solver.t_end == 3.5);
  BOOST_TEST(c.output.sample_times(3.5).size() == 2u);
  BOOST_TEST(starts_with(error_of("", {"model.beta"}), "--set: expected section.key=value"));
  BOOST_TEST(starts_with(error_of("", {"model.nn=3"}), "model.nn: unknown key; did you mean model.n?"));
}

BOOST_AUTO_TEST_CASE(resolved_toml_round_trips_for_every_scheme) {
  for (auto key : scheme_keys()) {
    const std::string text = "[model]\nscheme = \"" + std::string(key) +
                             "\"\nbeta = 0.1\nqkv = \"gaussian_per_layer\"\n[init]\nkind = \"cap\"\ndelta = "
                             "0.123456789012345678\nseed = 42\n[solver]\nmethod = \"cash_karp54\"\nrtol = 3e-9\n"
                             "[output]\ntimes = [0.0, 0.1, 0.30000000000000004]\n";
    const RunConfig a = parse_config(text, "t");
    const std::string resolved = to_toml(a);
    const RunConfig b = parse_config(resolved, "resolved");
    BOOST_TEST(to_toml(b) == resolved);
    BOOST_TEST(b.init.delta == a.init.delta);
    BOOST_TEST(b.output.times == a.output.times);
    BOOST_TEST(b.model.qkv_seed == 42u);
    BOOST_TEST(scheme_parameters(b.model.scheme) == scheme_parameters(a.model.scheme));
  }
}

BOOST_AUTO_TEST_CASE(reference_documents_every_key) {
  const auto rows = config_reference();
  BOOST_TEST(rows.size() > 25u);
  for (const auto& r : rows) {
    BOOST_TEST(!r.doc.empty());
    BOOST_TEST(r.key.find('.') != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(did_you_mean_finds_close_words_only) {
  BOOST_TEST(did_you_mean("dopri", {"dopri5", "euler"}).value_or("") == "dopri5");
  BOOST_TEST(!did_you_mean("zzzzzz", {"dopri5", "euler"}).has_value());
}

// Keys of the mean-field model, the densities and weighted particles.
BOOST_AUTO_TEST_CASE(meanfield_keys_are_validated_with_their_names) {
  const std::string mf = "[model]\nkind = \"meanfield\"\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[model]\nkind = \"field\"\n", "model.kind: unknown value \"field\""},
      {"[meanfield]\ngrid = 64\n",
       "meanfield.grid: applies only to model.kind = \"meanfield\" (model.kind is \"particles\")"},
      {mf + "[meanfield]\ngrid = 4\n", "meanfield.grid: must be in [8, 2^24]"},
      {mf + "[meanfield]\nradial_grid = 16\n", "meanfield.radial_grid: applies only to schemes with a radius"},
      {mf + "[meanfield]\nlimiter = \"superbee\"\n", "meanfield.limiter: unknown value \"superbee\""},
      {mf + "n = 10\n", "model.n: does not apply to model.kind = \"meanfield\""},
      {mf + "d = 2\n", "model.d: does not apply to model.kind = \"meanfield\" on the circle"},
      {mf + "qkv = \"gaussian\"\n", "model.qkv: \"gaussian\" does not apply to model.kind = \"meanfield\""},
      {mf + "[init]\nkind = \"cap\"\n", "init.kind: \"cap\" does not apply to model.kind = \"meanfield\""},
      {mf + "[solver]\nmethod = \"discrete\"\n",
       "solver.method: \"discrete\" applies only to model.kind = \"particles\""},
      {mf + "[solver]\nsync_epsilon = 0.1\n", "solver.sync_epsilon: does not apply to model.kind = \"meanfield\""},
      {mf + "scheme = \"pre\"\n", "init.radius_width: must be > 0 for model.kind = \"meanfield\" with scheme \"pre\""},
      {mf + "[init]\nradius_width = 0.1\n", "init.radius_width: applies only to schemes with a radius"},
      {mf + "scheme = \"peri\"\n[init]\nradius_width = 2.5\n", "init.radius_width: must be < 2 init.r0"},
      {"[init]\nmode = 2\n", "init.mode: applies only to init.kind = \"perturbed_uniform\""},
      {"[init]\nkind = \"perturbed_uniform\"\nmode = 0\n", "init.mode: must be >= 1"},
      {"[init]\nkind = \"perturbed_uniform\"\namplitude = 1.5\n", "init.amplitude: must be in [-1, 1]"},
      {"[init]\nkind = \"von_mises\"\nkappa = [0.0]\n", "init.kappa: every entry must be in (0, 700]"},
      {"[init]\nkind = \"von_mises\"\ncenters = [0.0, 1.0, 2.0]\nkappa = [1.0, 2.0]\n",
       "init.kappa: needs one entry or one per centre (3)"},
      {"[init]\nkind = \"von_mises\"\ncenters = [0.0, 1.0]\nweights = [1.0]\n",
       "init.weights: needs one entry per centre (2)"},
      {"[init]\nkind = \"von_mises\"\nweights = [0.0]\n", "init.weights: must have a positive sum"},
      {"[init]\nkind = \"cap\"\nsampling = \"grid\"\n",
       "init.sampling: applies only to init.kind = \"uniform\" or \"perturbed_uniform\" or \"von_mises\""},
      {"[init]\nsampling = \"grid\"\n", "init.sampling: \"grid\" needs model.d = 2 (got 3)"},
      {mf + "[init]\nsampling = \"grid\"\n", "init.sampling: does not apply to model.kind = \"meanfield\""},
      {mf + "[init]\nkind = \"file\"\nradius_dataset = \"/r\"\nfile = \"x.h5\"\n",
       "init.radius_dataset: does not apply to model.kind = \"meanfield\""},
  };
  for (const auto& [text, expected] : cases) {
    const std::string got = error_of(text);
    BOOST_TEST_INFO("config: " << text);
    BOOST_TEST(starts_with(got, expected), "got \"" << got << "\"");
  }
}

BOOST_AUTO_TEST_CASE(sphere_meanfield_refusals_name_their_keys) {
  const std::string mf = "[model]\nkind = \"meanfield\"\n", sp = mf + "d = 3\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {mf + "d = 4\n", "model.d: must be 2 (the circle) or 3 (the sphere S^2)"},
      {sp + "scheme = \"pre\"\n", "model.scheme: \"pre\" does not apply on the sphere"},
      {sp + "scheme = \"ngpt\"\n", "model.scheme: \"ngpt\" does not apply on the sphere"},
      {sp + "[meanfield]\ngrid = 64\n", "meanfield.grid: applies only to model.d = 2"},
      {sp + "[meanfield]\nlimiter = \"minmod\"\n", "meanfield.limiter: applies only to model.d = 2"},
      {sp + "[meanfield]\ndegree = 0\n", "meanfield.degree: must be in [1, 4096]"},
      {mf + "[meanfield]\ndegree = 8\n", "meanfield.degree: applies only to model.d = 3"},
      {"[meanfield]\ndegree = 8\n", "meanfield.degree: applies only to model.kind = \"meanfield\""},
      {sp + "[attention]\nnormalizer = \"sinkhorn\"\n", "attention.normalizer: "},
      {sp + "[attention]\npositions = \"rope\"\n", "attention.positions: "},
      {sp + "[attention]\nmask = \"causal\"\n", "attention.mask: "},
      {sp + "[noise]\nkind = \"independent\"\nsigma = 0.5\n",
       "noise.kind: \"independent\" does not apply on the sphere"},
      {sp + "[solver]\nmethod = \"split\"\n", "solver.method: \"split\" does not apply on the sphere"},
      {sp + "[init]\nkind = \"file\"\nfile = \"x.h5\"\n", "init.kind: \"file\" does not apply on the sphere"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string got = error_of(text);
    BOOST_TEST_INFO("config: " << text);
    BOOST_TEST(starts_with(got, expected), "got \"" << got << "\"");
    BOOST_TEST(got.find('\n') == std::string::npos);  // one line
  }
  // Accepted: softmax or uniform, and the resolved configuration keeps d = 3 and the degree.
  const RunConfig c = parse_config(sp + "beta = 2\n[attention]\nnormalizer = \"uniform\"\n[meanfield]\ndegree = 24\n"
                                        "[init]\nkind = \"von_mises\"\n",
                                   "t");
  BOOST_TEST(c.model.d == 3);
  BOOST_TEST(c.meanfield.degree == 24);
  const std::string resolved = to_toml(c);
  BOOST_TEST(resolved.find("degree = 24") != std::string::npos);
  BOOST_TEST(to_toml(parse_config(resolved, "resolved")) == resolved);
  // The circle's resolved configuration holds neither model.d nor the degree.
  const std::string circle = to_toml(parse_config(mf, "t"));
  BOOST_TEST(circle.find("degree") == std::string::npos);
  BOOST_TEST(circle.find("\nd = ") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(meanfield_configuration_resolves_and_round_trips) {
  const RunConfig c = parse_config(
      "[model]\nkind = \"meanfield\"\nscheme = \"pre\"\nbeta = 9\n[meanfield]\ngrid = 1024\nradial_grid = 24\n"
      "limiter = \"minmod\"\n[init]\nkind = \"von_mises\"\ncenters = [0.5, 2.0]\nkappa = 3.0\nradius_width = 0.2\n",
      "t");
  BOOST_TEST((c.model.kind == ModelKind::meanfield));
  BOOST_TEST(c.model.d == 2);
  BOOST_TEST(c.meanfield.grid == 1024);
  BOOST_TEST(c.meanfield.radial_grid == 24);
  BOOST_TEST((c.meanfield.limiter == Limiter::minmod));
  BOOST_TEST(c.init.kappa == (std::vector<double>{3.0, 3.0}));
  BOOST_TEST(c.init.weights == (std::vector<double>{0.5, 0.5}));
  const std::string resolved = to_toml(c);
  BOOST_TEST(resolved.find("\nn = ") == std::string::npos);
  const RunConfig b = parse_config(resolved, "resolved");
  BOOST_TEST(to_toml(b) == resolved);
  const RunConfig file = parse_config("[model]\nkind = \"meanfield\"\n[init]\nkind = \"file\"\nfile = \"a.h5\"\n", "t");
  BOOST_TEST(file.init.dataset == "/fields/density/value");
  // Weighted particles: every density key applies to particles too.
  const RunConfig p = parse_config(
      "[model]\nd = 2\n[init]\nkind = \"perturbed_uniform\"\nmode = 3\namplitude = -0.5\nsampling = \"grid\"\n", "t");
  BOOST_TEST((p.init.sampling == Sampling::grid));
  BOOST_TEST(p.init.mode == 3);
  BOOST_TEST(to_toml(parse_config(to_toml(p), "r")) == to_toml(p));
}

// solver.method, the keys that apply only to adaptive methods and their documentation follow the
// method table (steppers.hpp).
BOOST_AUTO_TEST_CASE(method_keys_follow_the_method_table) {
  std::string method_doc;
  for (const auto& k : config_reference())
    if (k.key == "solver.method") method_doc = k.doc;
  for (const MethodInfo& m : kMethods) {
    const std::string name(m.name);
    BOOST_TEST_INFO("method " << name);
    BOOST_TEST(method_doc.find(name) != std::string::npos);
    // "split" is the mean-field solver's own step.
    const std::string model =
        m.method == Method::split ? "[model]\nkind = \"meanfield\"\n[init]\nkind = \"uniform\"\n" : "";
    const RunConfig c = parse_config(model + "[solver]\nmethod = \"" + name + "\"\n", "test");
    BOOST_TEST((c.solver.method == m.method));
    BOOST_TEST((parse_config(to_toml(c), "round trip").solver.method == m.method));
    const std::string with_rtol = model + "[solver]\nmethod = \"" + name + "\"\nrtol = 1e-6\n";
    if (is_adaptive(m.method))
      BOOST_TEST(parse_config(with_rtol, "test").solver.rtol == 1e-6);
    else
      BOOST_CHECK_THROW(parse_config(with_rtol, "test"), InputError);
  }
}

BOOST_AUTO_TEST_CASE(log_spaced_times_and_beta_from_the_dimension) {
  const RunConfig c = parse_config("[solver]\nt_end = 100\n[output]\nlog_times = [0.1, 100, 4]\n", "t");
  const std::vector<double> expected{0.0, 0.1, 1.0, 10.0, 100.0};
  BOOST_REQUIRE_EQUAL(c.output.times.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    BOOST_TEST(c.output.times[i] == expected[i], boost::test_tools::tolerance(1e-12));
  BOOST_TEST(!c.output.samples.has_value());
  // Written back as explicit times: the resolved configuration reproduces the run.
  const RunConfig back = parse_config(to_toml(c), "resolved");
  BOOST_TEST(back.output.times == c.output.times);

  const RunConfig b = parse_config("[model]\nd = 512\nbeta_rule = \"sqrt(d)\"\n", "t", {"model.d=64"});
  BOOST_TEST(b.model.beta == 8.0);
  BOOST_TEST(parse_config(to_toml(b), "resolved").model.beta == 8.0);

  BOOST_TEST(starts_with(error_of("[output]\nlog_times = [0, 1, 5]\n"), "output.log_times: t0 must be > 0"));
  BOOST_TEST(starts_with(error_of("[output]\nlog_times = [1, 2]\n"), "output.log_times: expected [t0, t1, K]"));
  BOOST_TEST(starts_with(error_of("[output]\nlog_times = [1, 2, 2.5]\n"), "output.log_times: K must be an integer"));
  BOOST_TEST(starts_with(error_of("[output]\nsamples = 5\nlog_times = [1, 2, 3]\n"),
                         "output.log_times: give either output.log_times or output.samples"));
  BOOST_TEST(starts_with(error_of("[solver]\nt_end = 1\n[output]\nlog_times = [0.1, 2, 3]\n"),
                         "output.times: the last sample time 2 exceeds"));
  BOOST_TEST(starts_with(error_of("[model]\nbeta = 2\nbeta_rule = \"sqrt(d)\"\n"),
                         "model.beta_rule: give either model.beta or model.beta_rule"));
  BOOST_TEST(starts_with(error_of("[model]\nbeta_rule = \"d\"\n"), "model.beta_rule: the only rule is"));
}

// solver.method = "auto" (the default) resolves to a method of the table from rtol and the sample
// times, and the resolved configuration names that method (so that a resumed run uses it).
BOOST_AUTO_TEST_CASE(auto_method_is_resolved_from_the_tolerance_and_the_frames) {
  const RunConfig defaults = parse_config("", "empty.toml");
  BOOST_TEST(defaults.solver.method_auto);
  BOOST_TEST(to_string(defaults.solver.method) == "dopri5");  // 201 frames over t = 20 at rtol 1e-8
  const RunConfig tight = parse_config("[solver]\nrtol = 1e-10\nt_end = 10\n[output]\nsamples = 11\n", "t.toml");
  BOOST_TEST(to_string(tight.solver.method) == "fehlberg78");
  // Dense frames keep dopri5 even at a tight tolerance: each frame would end a fehlberg78 step.
  const RunConfig dense = parse_config("[solver]\nrtol = 1e-9\n[output]\nsamples = 2001\n", "d.toml");
  BOOST_TEST(to_string(dense.solver.method) == "dopri5");
  const RunConfig asked =
      parse_config("[solver]\nmethod = \"auto\"\nrtol = 1e-10\nt_end = 10\n[output]\nsamples = 11\n", "a.toml");
  BOOST_TEST(to_string(asked.solver.method) == "fehlberg78");
  const RunConfig again = parse_config(to_toml(tight), "resolved.toml");
  BOOST_TEST(!again.solver.method_auto);
  BOOST_TEST(to_string(again.solver.method) == "fehlberg78");
  const RunConfig chosen = parse_config("[solver]\nmethod = \"cash_karp54\"\nrtol = 1e-10\n", "c.toml");
  BOOST_TEST(!chosen.solver.method_auto);
  BOOST_TEST(to_string(chosen.solver.method) == "cash_karp54");
  // The mean-field solver keeps dopri5.
  const RunConfig field =
      parse_config("[model]\nkind = \"meanfield\"\n[solver]\nrtol = 1e-11\n[output]\nsamples = 3\n", "m.toml");
  BOOST_TEST(to_string(field.solver.method) == "dopri5");
}

// [noise]: the kind from the noise list, sigma required, the seed from init.seed, the stochastic
// method chosen by "auto", and every combination the stochastic methods cannot honour refused with
// the key named.
BOOST_AUTO_TEST_CASE(noise_keys_resolve_and_refuse_what_they_cannot_honour) {
  const RunConfig c = parse_config("[noise]\nkind = \"independent\"\nsigma = 0.5\n[init]\nseed = 7\n", "test");
  BOOST_TEST(c.noise.active());
  BOOST_TEST(std::get<IndependentNoise>(c.noise.kind).sigma == 0.5);
  BOOST_TEST(c.noise.seed == 7u);
  BOOST_TEST((c.solver.method == Method::stratonovich_heun));
  const RunConfig back = parse_config(to_toml(c), "round trip");
  BOOST_TEST(std::get<IndependentNoise>(back.noise.kind).sigma == 0.5);
  BOOST_TEST(back.noise.seed == 7u);
  BOOST_TEST((back.solver.method == Method::stratonovich_heun));
  BOOST_TEST(parse_config("[noise]\nkind = \"value\"\nsigma = 0.1\nseed = 3\n", "test").noise.seed == 3u);
  // Without noise nothing changes, and the stochastic methods integrate the deterministic flow.
  BOOST_TEST(!parse_config("", "test").noise.active());
  BOOST_TEST(to_toml(parse_config("", "test")).find("[noise]") != std::string::npos);

  const std::string independent = "[noise]\nkind = \"independent\"\nsigma = 0.5\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[noise]\nkind = \"white\"\n", "noise.kind: unknown value \"white\""},
      {"[noise]\nkind = \"independent\"\n", "noise.sigma: is required when noise.kind = \"independent\""},
      {"[noise]\nsigma = 0.5\n", "noise.sigma: applies only with noise (noise.kind is \"none\")"},
      {"[noise]\nseed = 2\n", "noise.seed: applies only with noise"},
      {"[noise]\nkind = \"independent\"\nsigma = -1\n", "noise.sigma: must be >= 0"},
      {independent + "[solver]\nmethod = \"dopri5\"\n",
       "solver.method: \"dopri5\" is not a stochastic method; noise.kind = \"independent\" needs"},
      {independent + "[solver]\nmethod = \"discrete\"\n", "solver.method: \"discrete\" layer maps have no noise"},
      {"[noise]\nkind = \"value\"\nsigma = 0.5\n[solver]\nmethod = \"euler_maruyama\"\n",
       "solver.method: \"euler_maruyama\" does not converge to the Stratonovich flow of noise.kind = \"value\""},
      {"[model]\nscheme = \"peri\"\n" + independent + "[solver]\nmethod = \"euler_maruyama\"\n",
       "solver.method: \"euler_maruyama\" does not converge to the Stratonovich flow of model.scheme = \"peri\""},
      {"[model]\nheads = 2\n[noise]\nkind = \"value\"\nsigma = 0.5\n",
       "model.heads: noise.kind = \"value\" is defined for one attention head"},
      {"[noise]\ncalculus = \"ito\"\n", "noise.calculus: applies only with noise"},
      {independent + "calculus = \"levy\"\n", "noise.calculus: unknown value \"levy\""},
      {independent + "calculus = \"ito\"\n[solver]\nmethod = \"stratonovich_heun\"\n",
       "solver.method: \"stratonovich_heun\" converges to the Stratonovich flow; noise.calculus = \"ito\" needs"},
      {"[model]\nkind = \"meanfield\"\n[noise]\nkind = \"value\"\nsigma = 0.5\n",
       "noise.kind: \"value\" does not apply to model.kind = \"meanfield\""},
      {"[noise]\nincrements = \"tree\"\n", "noise.increments: applies only with noise"},
      {independent + "increments = \"brownian\"\n", "noise.increments: unknown value \"brownian\""},
      {"[model]\nkind = \"meanfield\"\n" + independent + "increments = \"tree\"\n",
       "noise.increments: applies only to particles"},
      {independent + "increments = \"tree\"\n[solver]\ndt = 1e-7\n", "solver.dt: "},
  };
  for (const auto& [text, expected] : cases) {
    BOOST_TEST_INFO(text);
    BOOST_TEST(starts_with(error_of(text), expected), error_of(text));
  }
  // Noise set on top of a base that chose an ODE method: `:=` drops the method and its tolerances.
  const std::string base = "[solver]\nmethod = \"dopri5\"\nrtol = 1e-8\n";
  BOOST_TEST((parse_config(base, "test", {"noise.kind:=independent", "noise.sigma=0.5"}).solver.method ==
              Method::stratonovich_heun));
  BOOST_TEST(error_of(base, {"noise.kind=independent", "noise.sigma=0.5"}).find("set by the base configuration") !=
             std::string::npos);
  // The Itô reading: euler_maruyama chosen by "auto" and accepted for every noise and scheme; it is
  // stored, and named with the noise. The refusal of Euler-Maruyama under Stratonovich points to it.
  const RunConfig ito =
      parse_config("[model]\nscheme = \"peri\"\n[noise]\nkind = \"value\"\nsigma = 0.5\ncalculus = \"ito\"\n", "test");
  BOOST_TEST((ito.solver.method == Method::euler_maruyama));
  BOOST_TEST((parse_config(to_toml(ito), "round trip").noise.calculus == NoiseCalculus::ito));
  BOOST_TEST(describe(ito.noise).find("noise.calculus = \"ito\"") != std::string::npos);
  BOOST_TEST(describe(parse_config(independent, "test").noise).find("calculus") == std::string::npos);
  // Tree increments: stored in the configuration, named with the noise; counter streams by default.
  const RunConfig tree = parse_config(independent + "increments = \"tree\"\n", "test");
  BOOST_TEST((tree.noise.increment_draws == NoiseIncrements::tree));
  BOOST_TEST(to_toml(tree).find("increments = \"tree\"") != std::string::npos);
  BOOST_TEST((parse_config(to_toml(tree), "round trip").noise.increment_draws == NoiseIncrements::tree));
  BOOST_TEST(describe(tree.noise).find("noise.increments = \"tree\"") != std::string::npos);
  BOOST_TEST((parse_config(independent, "test").noise.increment_draws == NoiseIncrements::counter));
  BOOST_TEST(error_of(independent + "increments = \"tree\"\n[solver]\ndt = 1e-7\n")
                 .find("is below 2^-20, the finest step that noise.increments = \"tree\" resolves") !=
             std::string::npos);
  BOOST_TEST(parse_config(independent + "increments = \"tree\"\n[solver]\ndt = 0.0009765625\n", "test").solver.dt ==
             0.0009765625);
  BOOST_TEST(error_of("[noise]\nkind = \"value\"\nsigma = 0.5\n[solver]\nmethod = \"euler_maruyama\"\n")
                 .find("or noise.calculus = \"ito\" for the Ito flow") != std::string::npos);
  // Euler-Maruyama where it converges to the Stratonovich flow: independent noise, a speed free of the attention.
  for (const char* scheme : {"post", "pre", "mix", "cod"})
    BOOST_TEST((parse_config("[model]\nscheme = \"" + std::string(scheme) + "\"\n" + independent +
                                 "[solver]\nmethod = \"euler_maruyama\"\n",
                             "test")
                    .solver.method == Method::euler_maruyama));
}

// [feedforward]: inline weights that fit model.d, a file, the activation and block from their lists,
// and the shapes and combinations refused with the key named.
BOOST_AUTO_TEST_CASE(feedforward_keys_resolve_and_check_their_shapes) {
  const std::string inline_term =
      "[model]\nd = 2\n[feedforward]\nweights = \"inline\"\na = [1.0, 0.0, 0.5, -0.5, 0.0, 2.0]\nomega = [1.0, -1.0, "
      "0.25]\n";
  const RunConfig c = parse_config(inline_term + "activation = \"gelu\"\nblock = \"serial\"\n", "test");
  BOOST_TEST(c.feedforward.active());
  BOOST_TEST(c.feedforward.a.size() == 6u);
  BOOST_TEST(std::holds_alternative<Gelu>(c.feedforward.activation));
  BOOST_TEST((c.feedforward.block == TermsBlock::serial));
  const RunConfig back = parse_config(to_toml(c), "round trip");
  BOOST_TEST(back.feedforward.a == c.feedforward.a);
  BOOST_TEST(back.feedforward.omega == c.feedforward.omega);
  BOOST_TEST(std::holds_alternative<Gelu>(back.feedforward.activation));
  BOOST_TEST(!parse_config("", "test").feedforward.active());
  BOOST_TEST(to_toml(parse_config("", "test")).find("activation") == std::string::npos);

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[feedforward]\nweights = \"inline\"\nomega = [1.0]\n",
       "feedforward.a: is required when feedforward.weights = \"inline\""},
      {"[model]\nd = 3\n[feedforward]\nweights = \"inline\"\na = [1.0, 2.0]\nomega = [1.0]\n",
       "feedforward.a: must hold M = 1 rows of model.d = 3 entries"},
      {"[feedforward]\na = [1.0]\n", "feedforward.a: applies only to feedforward.weights = \"inline\""},
      {"[feedforward]\nactivation = \"tanh\"\n", "feedforward.activation: applies only with a feed-forward term"},
      {"[feedforward]\nweights = \"inline\"\na = [1.0, 2.0, 3.0]\nomega = [1.0]\nactivation = \"swish\"\n",
       "feedforward.activation: unknown value \"swish\""},
      {"[feedforward]\nweights = \"file\"\n", "feedforward.file: is required when feedforward.weights = \"file\""},
      {"[feedforward]\nweights = \"inline\"\na = [1.0, 2.0, 3.0]\nomega = [1.0]\nblock = \"both\"\n",
       "feedforward.block: unknown value \"both\""},
      {"[model]\nkind = \"meanfield\"\n[feedforward]\nweights = \"file\"\nfile = \"w.h5\"\n",
       "feedforward.weights: does not apply to model.kind = \"meanfield\""},
  };
  for (const auto& [text, expected] : cases) {
    BOOST_TEST_INFO(text);
    BOOST_TEST(starts_with(error_of(text), expected), error_of(text));
  }
}

// model.qkv = "gaussian_per_map_layer": the discrete model of value noise, with its sigma, on the
// layer maps only.
BOOST_AUTO_TEST_CASE(fresh_values_per_map_layer_need_the_layer_maps) {
  const RunConfig c = parse_config(
      "[model]\nqkv = \"gaussian_per_map_layer\"\nqkv_sigma = 0.5\n[solver]\nmethod = \"discrete\"\ndt = 0.1\n",
      "test");
  BOOST_TEST(c.model.qkv_sigma == 0.5);
  BOOST_TEST(parse_config(to_toml(c), "round trip").model.qkv_sigma == 0.5);
  BOOST_TEST(starts_with(error_of("[model]\nqkv = \"gaussian_per_map_layer\"\n[solver]\nmethod = \"discrete\"\n"),
                         "model.qkv_sigma: is required"));
  BOOST_TEST(starts_with(error_of("[model]\nqkv = \"gaussian_per_map_layer\"\nqkv_sigma = 0.5\n"),
                         "model.qkv: \"gaussian_per_map_layer\" draws V per layer of the discrete maps"));
  BOOST_TEST(starts_with(error_of("[model]\nqkv_sigma = 0.5\n"), "model.qkv_sigma: applies only to model.qkv"));
}

// [[terms]]: the user's compiled terms, each a symbol of a shared library; errors name the key, and
// the resolved text round-trips with the library's digest.
BOOST_AUTO_TEST_CASE(terms_tables_are_read_checked_and_round_trip) {
  BOOST_TEST(starts_with(error_of("terms = 3\n"), "terms: expected [[terms]] tables"));
  BOOST_TEST(
      starts_with(error_of("[[terms]]\nlibrary = \"x.so\"\n"), "terms: every [[terms]] needs library and symbol"));
  BOOST_TEST(starts_with(error_of("[[terms]]\nlibrary = \"x.so\"\nsymbol = \"f\"\nfoo = 1\n"),
                         "terms.foo: unknown key of [[terms]]"));
  BOOST_TEST(starts_with(error_of("[[terms]]\nlibrary = \"x.so\"\nsymbol = \"f\"\nparams = { a = \"s\" }\n"),
                         "terms.params.a:"));
  BOOST_TEST(starts_with(
      error_of("[[terms]]\nlibrary = \"x.so\"\nsymbol = \"f\"\n[[terms]]\nlibrary = \"y.so\"\nsymbol = \"f\"\n"),
      "terms.name: two terms are named 'f'"));
  const RunConfig c = parse_config(
      "[model]\nn = 4\n[[terms]]\nlibrary = \"x.so\"\nsymbol = \"f\"\nname = \"pull\"\nrows = true\n"
      "digest = \"0123456789abcdef\"\nparams = { a = 0.5, b = 2 }\n",
      "test");
  BOOST_TEST(c.terms.size() == 1u);
  const UserTermSpec& t = c.terms[0];
  BOOST_TEST(t.name == "pull");
  BOOST_TEST(t.kind == "library");
  BOOST_TEST(t.rows);
  BOOST_TEST(t.digest == "0123456789abcdef");
  BOOST_TEST(t.params == "{\"a\": 0.5, \"b\": 2.0}");
  const RunConfig back = parse_config(to_toml(c), "round trip");
  BOOST_TEST(to_toml(back) == to_toml(c));
  BOOST_TEST(back.terms.size() == 1u);
  BOOST_TEST(back.terms[0].numbers == t.numbers);
  BOOST_TEST(back.terms[0].library == t.library);
  // Loading refuses a library that is not there, naming [[terms]].
  std::vector<UserTermSpec> specs = c.terms;
  BOOST_CHECK_EXCEPTION(make_user_terms(specs), InputError, [](const InputError& e) {
    return std::string(e.what()).find("terms: [[terms]] 'pull': library x.so does not exist") == 0;
  });
}
