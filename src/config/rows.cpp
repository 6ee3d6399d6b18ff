// The rows of the key table whose reading is more than a typed value and bounds: the rows generated
// from the lists (schemes, attention, noise, activation), the conditions shared by several keys.
#include "config/config_internal.hpp"

namespace normdyn::config_internal {

// A key read before the others, because it decides which other keys apply.
Key selector(Key k) {
  k.selector = true;
  return k;
}

// Conditions shared by several keys.
std::string particles_only(const RunConfig& c) {
  return c.model.kind == ModelKind::particles
             ? std::string()
             : std::string(
                   "does not apply to model.kind = \"meanfield\" (a density on the circle, d = 2; "
                   "its resolution is meanfield.grid)");
}
std::string meanfield_only(const RunConfig& c) { return only_for("model.kind", c.model.kind, {ModelKind::meanfield}); }
// The keys of the mean field on the circle (model.d resolved: 2 unless given).
std::string circle_meanfield_only(const RunConfig& c) {
  if (std::string why = meanfield_only(c); !why.empty()) return why;
  return c.model.d == 2
             ? std::string()
             : std::string("applies only to model.d = 2 (the circle); the sphere's resolution is meanfield.degree");
}
Applies init_kind_is(std::vector<InitKind> kinds) {
  return [kinds](const RunConfig& c) { return only_for("init.kind", c.init.kind, kinds); };
}
// Which methods are adaptive comes from their table (steppers.hpp).
std::vector<Method> methods_with(StepControl control) {
  std::vector<Method> out;
  for (const MethodInfo& m : kMethods)
    if (m.control == control) out.push_back(m.method);
  return out;
}
std::string adaptive_only(const RunConfig& c) {
  return only_for("solver.method", c.solver.method, methods_with(StepControl::adaptive));
}

// "integrator: dopri5 | cash_karp54 (adaptive), rk4 | euler (fixed step), discrete (layer maps)".
std::string method_doc() {
  std::string doc = "integrator:";
  for (const StepControl control :
       {StepControl::adaptive, StepControl::fixed, StepControl::stochastic, StepControl::layers}) {
    std::vector<std::string> names;
    for (const Method m : methods_with(control)) names.emplace_back(to_string(m));
    if (names.empty()) continue;
    doc +=
        std::string(doc.back() == ':' ? " " : ", ") + join(names, " | ") + " (" + std::string(to_string(control)) + ")";
  }
  return doc + "; see the table of methods below";
}

std::string fixed_step_names() {
  std::vector<std::string> names;
  for (const Method m : methods_with(StepControl::fixed)) names.emplace_back(to_string(m));
  return join(names);
}

// The keys of the scheme parameters.
std::vector<Key> scheme_parameter_keys() {
  return list_parameter_rows(
      "model", &RunConfig::model, &ModelConfig::scheme,
      [](std::string_view key) { return " (scheme " + owners_of<Scheme>(key) + ")"; },
      [](const RunConfig& c, const std::string& key) {
        return "applies only to model.scheme = " + owners_of<Scheme>(key) + " (model.scheme is " +
               in_quotes(scheme_key(c.model.scheme)) + ")";
      });
}

// Keys whose reading is more than a typed value and bounds.
Key scheme_key_row() {
  std::vector<std::string> names;
  for (auto s : scheme_keys()) names.emplace_back(s);
  Key k;
  k.path = "model.scheme";
  k.type = "string";
  k.doc = "normalization scheme: " + join(names, " | ");
  k.read = [](const toml::node& n, RunConfig& c, const std::string& key) { c.model.scheme = read_scheme(n, key); };
  k.value = [](const RunConfig& c) -> std::optional<ConfigScalar> { return std::string(scheme_key(c.model.scheme)); };
  k.selector = true;
  return k;
}

// The rows of the [attention] table, generated from the lists (attention_spec.hpp): for each list its
// choice attention.<list> (a selector) and the parameters of its alternatives, attention.<param key>.
// The keys of the first release, attention.alibi = lambda and attention.rope = true, stay as aliases.
const std::string kNoPositionsInMeanField =
    "(the mean-field solver implements softmax or uniform attention over all tokens, or causal with ALiBi, without "
    "positions)";

// An old key that chooses alternative `alternative` of the list `member` (and sets its parameter
// `param` to the key's value), or the list's first alternative when the value is 0 or false. Never
// written back: the resolved configuration names the choice by its list's key.
template <class List>
Key alias_row(std::string path, std::string type, std::string doc, List AttentionSpec::*member, std::string choice_key,
              std::string_view alternative, std::string_view param) {
  Key k;
  k.path = std::move(path);
  k.type = std::move(type);
  k.doc = std::move(doc);
  k.selector = true;
  k.read = [member, choice_key, alternative, param](const toml::node& n, RunConfig& c, const std::string& key) {
    List& chosen = c.attention.*member;
    if (!is_first_alternative(chosen))
      throw InputError(key, "give either " + choice_key + " or its old spelling " + key + ", not both");
    ParamValue value = param.empty() ? ParamValue(read_bool(n, key)) : ParamValue(read_float(n, key));
    const bool on = param.empty() ? std::get<bool>(value) : std::get<double>(value) != 0.0;
    chosen = *make_alternative<List>(on ? alternative : alternative_key(List{}));
    if (!on || param.empty()) return;
    std::visit(
        [&](auto& a) {
          using A = std::decay_t<decltype(a)>;
          for (std::size_t i = 0; i < A::params.size(); ++i) {
            if (A::params[i].key != param) continue;
            if (std::string problem = parameter_problem(A::params[i], value, format_number); !problem.empty())
              throw InputError(key, problem);
            set_parameter(a, i, value);
          }
        },
        chosen);
  };
  k.value = [](const RunConfig&) -> std::optional<ConfigScalar> { return std::nullopt; };
  k.applies = [member](const RunConfig& c) { return choice_problem(c, c.attention.*member, kNoPositionsInMeanField); };
  return k;
}

std::vector<Key> attention_rows() {
  std::vector<Key> out;
  for_each_attention_list([&](const AttentionListInfo& list, auto member) {
    using List = std::decay_t<decltype(AttentionSpec{}.*member)>;
    const std::string choice_key = "attention." + std::string(list.name);
    std::string doc(list.doc);
    const char* separator = " (";
    for_each_alternative<List>([&](auto a) {
      doc += separator + std::string(decltype(a)::key) + ": " + std::string(decltype(a)::formula);
      separator = "; ";
    });
    doc += ")";
    out.push_back(selector(list_choice_row(choice_key, doc, &RunConfig::attention, member, kNoPositionsInMeanField)));
    for (Key& p : list_parameter_rows(
             "attention", &RunConfig::attention, member, [](std::string_view) { return std::string(); },
             [member, choice_key](const RunConfig&c, const std::string&key) {
               return "applies only to " + choice_key + " = " + owners_of<List>(key) + " (" + choice_key + " is " +
                      in_quotes(alternative_key(c.attention.*member)) + ")";
             }))
      out.push_back(std::move(p));
  });
  out.push_back(alias_row("attention.alibi", "float",
                          "old spelling of attention.bias = \"alibi\" with attention.alibi_slope = lambda > 0 (0: "
                          "attention.bias = \"none\"); accepted for one release",
                          &AttentionSpec::bias, "attention.bias", "alibi", "alibi_slope"));
  out.push_back(alias_row("attention.rope", "bool",
                          "old spelling of attention.positions = \"rope\" (true) or \"none\" (false); accepted for "
                          "one release",
                          &AttentionSpec::positions, "attention.positions", "rope", ""));
  return out;
}

// The rows of the [noise] table: its kind from the noise list (noise.hpp), the parameters of the
// chosen noise (as the schemes' parameters), its seed.
Key noise_kind_row() {
  Key k = list_choice_row("noise.kind",
                          "noise of the flow, a Stratonovich SDE on the spheres dtheta_i = P_theta_i o (U_i dt + sigma "
                          "dN_i) / s_i (independent: dN_i = dW_i, one Brownian motion per token; value: dN_i = sum_j "
                          "w_ij dB x_j, one d x d matrix Brownian motion B for all tokens)",
                          &RunConfig::noise, &NoiseSpec::kind,
                          "(the mean field has the Fokker-Planck equation of independent noise only)");
  k.selector = true;
  return k;
}

// The rows of the [feedforward] table.
std::string with_feedforward(const RunConfig& c) {
  if (!c.feedforward.active()) return "applies only with a feed-forward term (feedforward.weights is \"none\")";
  return {};
}

std::vector<Key> feedforward_rows() {
  using C = RunConfig;
  Key activation =
      list_choice_row("feedforward.activation", "activation sigma of the feed-forward term (gelu: the exact u Phi(u))",
                      &C::feedforward, &FeedForwardConfig::activation, "");
  activation.applies = with_feedforward;
  std::vector<Key> k{
      selector(field(
          "feedforward.weights", &C::feedforward, &FeedForwardConfig::weights,
          "the feed-forward term F(x) = sum_m omega_m sigma(<a_m, x>) a_m added to the attention (U_i = A_i "
          "+ F(theta_i)): none | inline (feedforward.a, feedforward.omega; Python's feedforward=(a, omega)) | "
          "file (feedforward.file)",
          {},
          [](const C& c) {
            if (c.feedforward.active() && c.model.kind == ModelKind::meanfield && !FeedForward{}.traits().meanfield)
              return std::string(
                  "does not apply to model.kind = \"meanfield\" (the mean-field solver has no "
                  "feed-forward term)");
            return std::string();
          })),
      field("feedforward.a", &C::feedforward, &FeedForwardConfig::a,
            "inline: the weights a_m, M rows of model.d entries one after the other ([M, d] row-major)", not_empty(),
            [](const C& c) {
              return only_for("feedforward.weights", c.feedforward.weights, {FeedForwardWeights::inline_values});
            }),
      field("feedforward.omega", &C::feedforward, &FeedForwardConfig::omega, "inline: the M output weights omega_m",
            not_empty(),
            [](const C& c) {
              return only_for("feedforward.weights", c.feedforward.weights, {FeedForwardWeights::inline_values});
            }),
      field("feedforward.file", &C::feedforward, &FeedForwardConfig::file,
            "file: HDF5 file with datasets a [M, d] and omega [M] (read when the run starts and when it resumes; "
            "the run file keeps a copy in /parameters/feedforward)",
            not_empty(),
            [](const C& c) {
              return only_for("feedforward.weights", c.feedforward.weights, {FeedForwardWeights::file});
            }),
      activation,
      field("feedforward.block", &C::feedforward, &FeedForwardConfig::block,
            "discrete layer maps (solver.method = \"discrete\"): parallel, one map with U = A + F (x + a(x) + g(x)) | "
            "serial, the attention map then the feed-forward map at the state it left (x + a(x) + g(x + a(x))); "
            "the ODE is the same for both",
            {}, with_feedforward),
  };
  return k;
}

std::vector<Key> noise_parameter_rows() {
  return list_parameter_rows(
      "noise", &RunConfig::noise, &NoiseSpec::kind,
      [](std::string_view) { return std::string(" (required with noise)"); },
      [](const RunConfig& c, const std::string&) {
        return "applies only with noise (noise.kind is " + in_quotes(alternative_key(c.noise.kind)) + ")";
      });
}

// A key with a check of the whole configuration section after it is read.
Key then(Key k, std::function<void(RunConfig&, const std::string& key)> after) {
  k.read = [read = k.read, after](const toml::node& n, RunConfig& c, const std::string& key) {
    read(n, c, key);
    after(c, key);
  };
  return k;
}

Key kappa_row() {
  return field("init.kappa", &RunConfig::init, &InitConfig::kappa,
               "von_mises: concentrations 0 < kappa <= 700, one per centre (or one for all); density of a bump "
               "proportional to exp(kappa cos(phi - centre))",
               every_entry(in_range(0, false, 700, true), true, true), init_kind_is({InitKind::von_mises}));
}

Key weights_row() {
  return then(field("init.weights", &RunConfig::init, &InitConfig::weights,
                    "von_mises: mixture weights >= 0, one per centre (default: equal)", every_entry(at_least(0)),
                    init_kind_is({InitKind::von_mises})),
              [](RunConfig& c, const std::string& key) {
                double sum = 0.0;
                for (double v : c.init.weights) sum += v;
                require(sum > 0.0, key, "must have a positive sum");
              });
}

// Explicit sample times replace the equally spaced ones (and are written only then).
Key times_row() {
  Key k = then(field("output.times", &RunConfig::output, &OutputConfig::times,
                     "explicit sample times, increasing, in [t_start, t_end] (instead of samples)", not_empty()),
               [](RunConfig& c, const std::string& key) {
                 const auto& t = c.output.times;
                 for (std::size_t i = 1; i < t.size(); ++i)
                   require(t[i] > t[i - 1], key, "must be strictly increasing (entry " + std::to_string(i) + ")");
                 require(t.front() >= 0.0, key, "must be >= 0");
                 c.output.samples.reset();
               });
  k.value = [value = k.value](const RunConfig& c) -> std::optional<ConfigScalar> {
    if (c.output.samples) return std::nullopt;
    return value(c);
  };
  return k;
}

// Log-spaced sample times: [t0, t1, K] → K times t0 (t1/t0)^{i/(K−1)}, i = 0..K−1, preceded by
// solver.t_start when it lies before t0 (the first frame is the initial state; added in parse_config,
// after solver.t_start is read). The resolved
// configuration lists them as output.times, so a run is reproduced from its file alone.
Key log_times_row() {
  Key k;
  k.path = "output.log_times";
  k.type = "array of float";
  k.doc =
      "[t0, t1, K]: K >= 2 log-spaced sample times from t0 > 0 to t1 > t0, after solver.t_start "
      "(instead of samples or times; written back as output.times)";
  k.read = [](const toml::node& n, RunConfig& c, const std::string& key) {
    const std::vector<double> v = read_float_array(n, key);
    require(v.size() == 3, key, "expected [t0, t1, K], got " + std::to_string(v.size()) + " entries");
    const double t0 = v[0], t1 = v[1], count = v[2];
    require(t0 > 0.0, key, "t0 must be > 0, got " + format_number(t0));
    require(t1 > t0, key, "t1 must be > t0, got " + format_number(t1));
    require(count >= 2.0 && count == std::floor(count) && count <= 1e7, key,
            "K must be an integer in [2, 1e7], got " + format_number(count));
    const auto k_count = static_cast<std::size_t>(count);
    std::vector<double> t;
    for (std::size_t i = 0; i < k_count; ++i)
      t.push_back(i + 1 == k_count ? t1 : t0 * std::pow(t1 / t0, double(i) / double(k_count - 1)));
    c.output.times = std::move(t);
    c.output.samples.reset();
  };
  k.value = [](const RunConfig&) -> std::optional<ConfigScalar> { return std::nullopt; };
  return k;
}

// β tied to the dimension: "sqrt(d)" sets model.beta = √d (unit tokens with β = √d are LayerNorm to
// norm √d with the usual 1/√d attention scaling). Read after model.d; written back as model.beta.
Key beta_rule_row() {
  Key k;
  k.path = "model.beta_rule";
  k.type = "string";
  k.doc = "\"sqrt(d)\": beta = sqrt(model.d), instead of a number in model.beta (written back as model.beta)";
  k.read = [](const toml::node& n, RunConfig& c, const std::string& key) {
    const std::string rule = read_string(n, key);
    require(rule == "sqrt(d)", key, "the only rule is \"sqrt(d)\", got \"" + rule + "\"");
    c.model.beta = std::sqrt(static_cast<double>(c.model.d));
  };
  k.value = [](const RunConfig&) -> std::optional<ConfigScalar> { return std::nullopt; };
  k.applies = particles_only;
  return k;
}

// solver.method: a method of the table, or "auto" (the default), resolved by parse_config once the
// tolerance and the sample times are known; the resolved configuration names the method used.
Key method_row() {
  Key k = selector(field("solver.method", &RunConfig::solver, &SolverConfig::method,
                         "auto (the default: dopri5 or fehlberg78, whichever needs fewer right-hand sides for "
                         "solver.rtol and the sample times; stratonovich_heun with noise (euler_maruyama with "
                         "noise.calculus = \"ito\"); the run file names the method used) | " +
                             method_doc().substr(std::string("integrator: ").size())));
  k.read = [read = k.read](const toml::node& n, RunConfig& c, const std::string& key) {
    if (const auto* word = n.as_string(); word && word->get() == "auto") {
      c.solver.method_auto = true;
      return;
    }
    read(n, c, key);
    c.solver.method_auto = false;
  };
  k.default_text = "\"auto\"";
  return k;
}

}  // namespace normdyn::config_internal
