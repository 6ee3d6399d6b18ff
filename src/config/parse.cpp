// TOML text and --set flags to a RunConfig: the overrides, unknown sections and keys, the keys read in
// order (selectors first), the rules across keys.
#include "config/config_internal.hpp"

namespace normdyn::config_internal {

// ---------------------------------------------------------------------------------------------
// --set overrides: "section.key=value" sets the key; "section.key:=value" also replaces the keys of
// the base that conflict with it (they are dropped as if the base never set them).
struct AppliedOverride {
  std::string path;
  bool replace = false;
};

AppliedOverride apply_override(toml::table& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) throw InputError("--set", "expected section.key=value, got " + in_quotes(assignment));
  std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  const bool replace = !path.empty() && path.back() == ':';
  if (replace) path.pop_back();
  path.erase(0, path.find_first_not_of(" \t"));
  path.erase(path.find_last_not_of(" \t") + 1);
  const auto dot = path.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size())
    throw InputError("--set", "expected section.key=value, got " + in_quotes(assignment));
  const std::string section = path.substr(0, dot);
  const std::string name = path.substr(dot + 1);

  // A TOML value if the text is one, else the bare text as a string (--set model.scheme=pre).
  toml::table wrapper;
  try {
    wrapper = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    wrapper = toml::table{};
    wrapper.insert("v", value);
  }
  toml::node* section_node = root.get(section);
  if (section_node && !section_node->is_table()) throw InputError("--set", path + ": " + section + " is not a section");
  if (!section_node) section_node = root.insert(section, toml::table{}).first->second.as_table();
  section_node->as_table()->insert_or_assign(name, *wrapper.get("v"));
  return {path, replace};
}

// [[terms]]: the user's compiled terms, each a symbol of a shared library (user_terms.hpp).
std::vector<UserTermSpec> read_terms_tables(const toml::node& node) {
  const auto* array = node.as_array();
  if (!array || !array->is_array_of_tables())
    throw InputError("terms", "expected [[terms]] tables (library = \"x.so\", symbol = \"f\"), got " + type_name(node));
  std::vector<UserTermSpec> out;
  for (const toml::node& entry : *array) {
    const toml::table& t = *entry.as_table();
    UserTermSpec spec;
    spec.kind = "library";
    for (const auto& [key, value] : t) {
      const std::string k(key.str()), path = "terms." + k;
      if (k == "library")
        spec.library = read_string(value, path);
      else if (k == "symbol")
        spec.symbol = read_string(value, path);
      else if (k == "name")
        spec.name = read_string(value, path);
      else if (k == "rows")
        spec.rows = read_bool(value, path);
      else if (k == "digest")
        spec.digest = read_string(value, path);
      else if (k == "params" && value.is_table())
        for (const auto& [pk, pv] : *value.as_table())
          spec.numbers.emplace_back(std::string(pk.str()), read_float(pv, path + "." + std::string(pk.str())));
      else
        throw InputError(path,
                         "unknown key of [[terms]]; valid: library, symbol, name, rows, params (a table of numbers)");
    }
    if (spec.library.empty() || spec.symbol.empty())
      throw InputError("terms", "every [[terms]] needs library and symbol");
    if (spec.name.empty()) spec.name = spec.symbol;
    // A run written from this text records the library it loads; a stored text keeps the digest it ran with.
    if (spec.digest.empty()) spec.digest = file_digest(spec.library);
    for (const UserTermSpec& other : out)
      if (other.name == spec.name) throw InputError("terms.name", "two terms are named '" + spec.name + "'");
    spec.params = params_json(spec.numbers);
    out.push_back(std::move(spec));
  }
  return out;
}

RunConfig resolve_config(const toml::table& root, const std::set<std::string>& overridden) {
  // Collect present keys; reject unknown sections and keys.
  std::map<std::string, const toml::node*> present;
  std::vector<std::string> known;
  for (const auto& k : keys()) known.push_back(k.path);
  for (const auto& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    if (section == "terms") continue;
    const auto* table = section_node.as_table();
    if (!table) {
      std::string msg = "unknown key; keys live in the sections [" + join(section_names(), "], [") + "]";
      if (auto guess = did_you_mean(section, known)) msg += " (did you mean " + *guess + "?)";
      throw InputError(section, msg);
    }
    if (std::find(section_names().begin(), section_names().end(), section) == section_names().end()) {
      std::string msg = "unknown section; valid: [" + join(section_names(), "], [") + "]";
      if (auto guess = did_you_mean(section, section_names())) msg += " (did you mean [" + *guess + "]?)";
      throw InputError("[" + section + "]", msg);
    }
    for (const auto& [name_key, node] : *table) {
      const std::string path = section + "." + std::string(name_key.str());
      if (std::find(known.begin(), known.end(), path) == known.end()) {
        std::string msg = "unknown key";
        if (auto guess = did_you_mean(path, known)) msg += "; did you mean " + *guess + "?";
        throw InputError(path, msg);
      }
      present[path] = &node;
    }
  }

  RunConfig c;
  if (const toml::node* terms = root.get("terms")) c.terms = read_terms_tables(*terms);
  // Selectors first, so that the other keys know which scheme, kind and method they belong to.
  for (const auto& k : keys())
    if (k.selector && present.count(k.path)) k.read(*present[k.path], c, k.path);
  for (const auto& k : keys())
    if (!k.selector && present.count(k.path)) k.read(*present[k.path], c, k.path);
  if (c.solver.method_auto) c.solver.method = resolve_auto_method(c);
  // The mean field is on the circle unless model.d says otherwise (before the keys that depend on it).
  if (c.model.kind == ModelKind::meanfield && !present.count("model.d")) c.model.d = 2;
  for (const auto& k : keys()) {
    if (!present.count(k.path)) continue;
    if (std::string why = k.why_not(c); !why.empty()) {
      if (!overridden.empty() && !overridden.count(k.path)) throw BaseConflict{k.path, why};
      throw InputError(k.path, why);
    }
  }
  if (!present.count("model.qkv_seed")) c.model.qkv_seed = c.init.seed;
  if (!present.count("noise.seed")) c.noise.seed = c.init.seed;
  validate_noise(c, present, overridden);
  validate_feedforward(c, present);
  if (c.model.qkv == QkvKind::gaussian_per_map_layer) {
    if (!present.count("model.qkv_sigma"))
      throw InputError("model.qkv_sigma", "is required when model.qkv = \"gaussian_per_map_layer\"");
    if (c.solver.method != Method::discrete)
      throw InputError("model.qkv",
                       "\"gaussian_per_map_layer\" draws V per layer of the discrete maps; it needs "
                       "solver.method = \"discrete\" (its depth limit is noise.kind = \"value\")");
    if (c.model.heads > 1)
      throw InputError("model.heads", "model.qkv = \"gaussian_per_map_layer\" is defined for one attention head");
  }
  if (present.count("output.samples") && present.count("output.times")) {
    const bool times_set = overridden.count("output.times") > 0, samples_set = overridden.count("output.samples") > 0;
    if (times_set != samples_set)
      throw BaseConflict{times_set ? "output.samples" : "output.times",
                         std::string("give either output.samples or output.times, not both; ") +
                             (times_set ? "output.times" : "output.samples") + " is set on top of it"};
    throw InputError("output.times", "give either output.samples or output.times, not both");
  }
  for (const char* other : {"output.samples", "output.times"})
    if (present.count("output.log_times") && present.count(other))
      throw InputError("output.log_times", std::string("give either output.log_times or ") + other + ", not both");
  if (present.count("output.log_times") && c.solver.t_start < c.output.times.front())
    c.output.times.insert(c.output.times.begin(), c.solver.t_start);
  if (present.count("model.beta_rule") && present.count("model.beta"))
    throw InputError("model.beta_rule", "give either model.beta or model.beta_rule, not both");

  // Combinations.
  validate_densities(c, present);
  if (c.init.kind == InitKind::orthonormal && c.model.d < c.model.n)
    throw InputError("init.kind", "\"orthonormal\" needs model.d >= model.n (d = " + std::to_string(c.model.d) +
                                      ", n = " + std::to_string(c.model.n) + ")");
  if (c.init.kind == InitKind::equiangular) {
    if (c.model.d < c.model.n)
      throw InputError("init.kind", "\"equiangular\" needs model.d >= model.n (d = " + std::to_string(c.model.d) +
                                        ", n = " + std::to_string(c.model.n) + ")");
    if (c.model.n > 1 && c.init.rho < -1.0 / static_cast<double>(c.model.n - 1))
      throw InputError("init.rho",
                       "must be >= -1/(n - 1) = " + format_number(-1.0 / static_cast<double>(c.model.n - 1)) +
                           " for n = " + std::to_string(c.model.n) + " tokens, got " + format_number(c.init.rho));
  }
  if (c.init.kind == InitKind::file && c.init.file.empty())
    throw InputError("init.file", "is required when init.kind = \"file\"");
  if (c.model.qkv == QkvKind::file && c.model.qkv_file.empty())
    throw InputError("model.qkv_file", "is required when model.qkv = \"file\"");
  if (c.attention.matrix_normalizer() && !is_first_alternative(c.attention.mask))
    throw InputError("attention.normalizer", in_quotes(alternative_key(c.attention.normalizer)) +
                                                 " scales the whole matrix and needs attention.mask = " +
                                                 in_quotes(alternative_key(AttentionMask{})) +
                                                 " (a doubly stochastic matrix with a causal mask is the identity); "
                                                 "attention.mask = " +
                                                 in_quotes(alternative_key(c.attention.mask)));
  if (!(c.solver.t_start < c.solver.t_end))
    throw InputError("solver.t_start", "must be less than solver.t_end = " + format_number(c.solver.t_end));
  if (!c.output.samples && c.output.times.front() < c.solver.t_start)
    throw InputError("output.times", "the first sample time " + format_number(c.output.times.front()) +
                                         " is before solver.t_start = " + format_number(c.solver.t_start));
  if (!c.output.samples && c.output.times.back() > c.solver.t_end)
    throw InputError("output.times", "the last sample time " + format_number(c.output.times.back()) +
                                         " exceeds solver.t_end = " + format_number(c.solver.t_end));
  if (!is_adaptive(c.solver.method) && c.solver.dt > c.solver.t_end)
    throw InputError("solver.dt", "must not exceed solver.t_end = " + format_number(c.solver.t_end));
  // Fixed steps (and layers) that time cannot resolve at t_end would leave t where it is, and the
  // run would report "ok" at its start (steppers.hpp).
  if (!is_adaptive(c.solver.method) && !step_advances_time(c.solver.dt, c.solver.t_end))
    throw InputError("solver.dt", format_number(c.solver.dt) + " is below the resolution of time at solver.t_end = " +
                                      format_number(c.solver.t_end) +
                                      " (t_end * 2^-52 = " + format_number(c.solver.t_end * kTimeResolution) +
                                      "): steps this small cannot advance t (and would number more than 2^52); "
                                      "raise solver.dt or lower solver.t_end");
  if (c.solver.method == Method::discrete) {
    auto is_multiple = [&](double t) {
      const double layers = t / c.solver.dt;
      return std::abs(layers - std::round(layers)) <= 1e-9 * std::max(1.0, layers);
    };
    if (!is_multiple(c.solver.t_end))
      throw InputError("solver.dt",
                       "with solver.method = \"discrete\", solver.t_end = " + format_number(c.solver.t_end) +
                           " must be a whole number of layers of step " + format_number(c.solver.dt));
    if (!is_multiple(c.solver.t_start))
      throw InputError(
          "solver.t_start",
          "with solver.method = \"discrete\", must be a whole number of layers of step " + format_number(c.solver.dt));
    for (double t : c.output.sample_times(c.solver.t_end, c.solver.t_start))
      if (!is_multiple(t))
        throw InputError(c.output.samples ? "output.samples" : "output.times",
                         "with solver.method = \"discrete\", sample time " + format_number(t) +
                             " is not a whole number of layers of step " + format_number(c.solver.dt));
  }
  return c;
}

}  // namespace normdyn::config_internal

namespace normdyn {

RunConfig parse_config(std::string_view toml_text, std::string_view source_name,
                       const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InputError(std::string(source_name) + ":" + std::to_string(where.line) + ":" + std::to_string(where.column),
                     "invalid TOML: " + std::string(e.description()));
  }
  std::set<std::string> overridden;
  std::vector<std::string> replacing;
  for (const auto& o : overrides) {
    const AppliedOverride applied = apply_override(root, o);
    overridden.insert(applied.path);
    if (applied.replace) replacing.push_back(applied.path);
  }
  // Each pass drops one conflicting key of the base; there are finitely many.
  for (;;) {
    try {
      return resolve_config(root, overridden);
    } catch (const BaseConflict& conflict) {
      if (replacing.empty())
        throw InputError(conflict.path, conflict.why +
                                            " (set by the base configuration: `--set KEY:=VALUE` sets KEY "
                                            "and drops the keys of the base that conflict with it)");
      const auto dot = conflict.path.find('.');
      if (auto* section = root.get_as<toml::table>(conflict.path.substr(0, dot)))
        section->erase(conflict.path.substr(dot + 1));
    }
  }
}

RunConfig load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  const std::string source = file == "-" ? "standard input" : file.string();
  return parse_config(read_text_file(file, source, "configuration file"), source, overrides);
}

}  // namespace normdyn
