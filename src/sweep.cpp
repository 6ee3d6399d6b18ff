// Sweep files → typed sweep specifications → validated points. With config.cpp, the only
// translation units that read TOML.
#include "normdyn/sweep.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <toml++/toml.h>

#include "normdyn/errors.hpp"
#include "toml_text.hpp"

namespace normdyn {
namespace {

using toml_text::in_quotes;
using toml_text::join;
using toml_text::number_text;

// A TOML value as TOML text, exactly (floats in their shortest round-trip form).
std::string value_as_toml(const toml::node& n, const std::string& where) {
  if (const auto* s = n.as_string()) return toml_text::string_text(s->get());
  if (const auto* i = n.as_integer()) return std::to_string(i->get());
  if (const auto* f = n.as_floating_point()) return toml_text::float_text(f->get());
  if (const auto* b = n.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = n.as_array()) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < a->size(); ++i) parts.push_back(value_as_toml(*a->get(i), where));
    return "[" + join(parts, ", ") + "]";
  }
  throw InputError(where, "values must be numbers, strings, booleans or arrays of them");
}

struct Position {
  std::uint32_t line = 0, column = 0;
  bool operator<(const Position& o) const { return line != o.line ? line < o.line : column < o.column; }
};
Position position_of(const toml::node& n) { return {n.source().begin.line, n.source().begin.column}; }

// The leaves of a table as (dotted path, node), in the order of the file: [axes] model.beta = [...]
// and "model.beta" = [...] are the same key.
void collect_leaves(const toml::table& t, const std::string& prefix,
                    std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [key, node] : t) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) collect_leaves(*sub, path, out);
    else out.emplace_back(path, &node);
  }
}

std::vector<std::pair<std::string, const toml::node*>> leaves_in_file_order(const toml::table& t) {
  std::vector<std::pair<std::string, const toml::node*>> out;
  collect_leaves(t, "", out);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return position_of(*a.second) < position_of(*b.second); });
  return out;
}

const std::vector<std::string>& config_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& doc : config_reference()) out.push_back(doc.key);
    return out;
  }();
  return keys;
}

void require_config_key(const std::string& key, const std::string& where) {
  const auto& keys = config_keys();
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  std::string msg = "unknown configuration key " + in_quotes(key);
  if (auto guess = did_you_mean(key, keys)) msg += " (did you mean " + in_quotes(*guess) + "?)";
  throw InputError(where, msg);
}

void reject_sweep_managed(const std::string& key, const std::string& where) {
  if (key == "output.path")
    throw InputError(where, "output.path is set by the sweep: every run is written to DIR/runs/<name>.h5");
  if (key == "solver.threads")
    throw InputError(where, "solver.threads is set by `normdyn sweep --threads` (threads never change results)");
}

std::string read_text(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) throw InputError(what, file.string() + ": no such file");
    throw IoError(file.string() + ": cannot read the file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double read_number(const toml::node& n, const std::string& key) {
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  throw InputError(key, "expected a number");
}

std::string read_string(const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) return s->get();
  throw InputError(key, "expected a string");
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

}  // namespace

SweepSpec parse_sweep(std::string_view text, const std::filesystem::path& file) {
  SweepSpec spec;
  spec.file = file;
  spec.text = std::string(text);
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InputError(file.string() + ":" + std::to_string(where.line) + ":" + std::to_string(where.column),
                     "invalid TOML: " + std::string(e.description()));
  }
  const std::vector<std::string> sections{"base", "set", "axes", "ensemble"};
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (std::find(sections.begin(), sections.end(), k) != sections.end()) continue;
    std::string msg = "unknown key in a sweep file; it holds base = \"FILE\", [set], [axes] and [ensemble]";
    const bool config_section = std::any_of(config_keys().begin(), config_keys().end(),
                                            [&](const std::string& c) { return c.rfind(k + ".", 0) == 0; });
    if (config_section)
      msg += " (configuration sections go into the base file, or into [set] as \"" + k + ".KEY\" = VALUE)";
    else if (auto guess = did_you_mean(k, sections))
      msg += " (did you mean " + *guess + "?)";
    throw InputError(k, msg);
  }

  // base
  if (const toml::node* base = root.get("base")) {
    const std::string name = read_string(*base, "base");
    if (name.empty()) throw InputError("base", "must name a configuration file");
    spec.base = std::filesystem::path(name).is_absolute() ? std::filesystem::path(name) : file.parent_path() / name;
    spec.base_text = read_text(spec.base, "base");
  }

  // [set]
  if (const toml::node* set = root.get("set")) {
    const auto* table = set->as_table();
    if (!table) throw InputError("set", "must be a table: [set] \"section.key\" = value");
    for (const auto& [key, node] : leaves_in_file_order(*table)) {
      const std::string where = "set." + in_quotes(key);
      require_config_key(key, where);
      reject_sweep_managed(key, where);
      spec.set.push_back(key + "=" + value_as_toml(*node, where));
    }
  }

  // [axes]
  if (const toml::node* axes = root.get("axes")) {
    const auto* table = axes->as_table();
    if (!table) throw InputError("axes", "must be a table: [axes] \"section.key\" = [values]");
    for (const auto& [key, node] : leaves_in_file_order(*table)) {
      const std::string where = "axes." + in_quotes(key);
      require_config_key(key, where);
      reject_sweep_managed(key, where);
      const auto* values = node->as_array();
      if (!values) throw InputError(where, "must be an array of values, e.g. [1.0, 4.0]");
      if (values->empty()) throw InputError(where, "has no values");
      SweepAxis axis{key, {}};
      for (std::size_t i = 0; i < values->size(); ++i)
        axis.values.push_back(value_as_toml(*values->get(i), where + "[" + std::to_string(i) + "]"));
      spec.axes.push_back(std::move(axis));
    }
  }
  auto is_axis = [&](const std::string& key) {
    return std::any_of(spec.axes.begin(), spec.axes.end(), [&](const SweepAxis& a) { return a.key == key; });
  };

  // [ensemble]
  EnsembleSpec& e = spec.ensemble;
  e.over = is_axis("init.seed") ? "init.seed" : "";
  e.phase_axis = is_axis("model.beta") ? "model.beta" : "";
  if (const toml::node* ensemble = root.get("ensemble")) {
    const auto* table = ensemble->as_table();
    if (!table) throw InputError("ensemble", "must be a table");
    const std::vector<std::string> known{"over", "phase_axis", "cluster_epsilon", "pair_cosine"};
    for (const auto& [key, node] : *table) {
      const std::string k(key.str());
      const std::string where = "ensemble." + k;
      if (k == "over" || k == "phase_axis") {
        const std::string axis = read_string(node, where);
        if (!axis.empty() && !is_axis(axis))
          throw InputError(where, in_quotes(axis) + " is not an axis of this sweep");
        (k == "over" ? e.over : e.phase_axis) = axis;
      } else if (k == "cluster_epsilon") {
        e.cluster_epsilon = read_number(node, where);
        if (!(e.cluster_epsilon > 0.0 && e.cluster_epsilon < 2.0))
          throw InputError(where, "must be in (0, 2), got " + number_text(e.cluster_epsilon));
      } else if (k == "pair_cosine") {
        e.pair_cosine = read_number(node, where);
        if (!(e.pair_cosine > -1.0 && e.pair_cosine < 1.0))
          throw InputError(where, "must be in (-1, 1), got " + number_text(e.pair_cosine));
      } else {
        std::string msg = "unknown key; valid: " + join(known, ", ");
        if (auto guess = did_you_mean(k, known)) msg += " (did you mean " + *guess + "?)";
        throw InputError(where, msg);
      }
    }
    if (!e.over.empty() && e.over == e.phase_axis)
      throw InputError("ensemble.phase_axis", "must differ from ensemble.over (" + in_quotes(e.over) + ")");
  }
  return spec;
}

SweepSpec load_sweep(const std::filesystem::path& file) {
  return parse_sweep(read_text(file, "SWEEP"), file);
}

ConfigScalar config_value(const RunConfig& config, const std::string& key) {
  for (auto& [k, v] : config_values(config))
    if (k == key) return v;
  throw std::out_of_range("configuration key " + key + " does not apply");
}

std::string value_label(const ConfigScalar& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) return number_text(v);
        else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else {
          std::vector<std::string> parts;
          for (double x : v) parts.push_back(number_text(x));
          return "[" + join(parts, ", ") + "]";
        }
      },
      value);
}

namespace {

// The part of a point's name for one value.
std::string name_label(const ConfigScalar& value) {
  if (const auto* a = std::get_if<std::vector<double>>(&value)) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "h%08llx", static_cast<unsigned long long>(fnv1a(value_label(*a)) & 0xffffffffull));
    return hex;
  }
  std::string label = value_label(value);
  for (char& c : label)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-')) c = '-';
  if (label.size() > 48) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "h%08llx", static_cast<unsigned long long>(fnv1a(label) & 0xffffffffull));
    label = label.substr(0, 32) + "-" + hex;
  }
  return label;
}

std::string describe(const SweepSpec& spec, const std::vector<std::size_t>& coordinates) {
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    parts.push_back(spec.axes[a].key + " = " + spec.axes[a].values[coordinates[a]]);
  return join(parts, ", ");
}

// The problem of an InputError without its "key: " prefix.
std::string problem_of(const InputError& e) {
  const std::string what = e.what();
  const std::string prefix = e.key() + ": ";
  return !e.key().empty() && what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec) {
  std::size_t count = 1;
  for (const auto& axis : spec.axes) {
    if (count > (std::size_t{1} << 24) / axis.values.size())
      throw InputError("axes", "the product of the axes has more than 2^24 points");
    count *= axis.values.size();
  }
  // Short names of the axes: the last component of the key, unless two axes share it.
  std::vector<std::string> short_names;
  for (const auto& axis : spec.axes) short_names.push_back(axis.key.substr(axis.key.rfind('.') + 1));
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (std::count(short_names.begin(), short_names.end(), short_names[a]) > 1) short_names[a] = spec.axes[a].key;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (std::count(short_names.begin(), short_names.end(), short_names[a]) > 1) short_names[a] = spec.axes[a].key;

  const std::string base_name = spec.base.empty() ? spec.file.string() + " (defaults)" : spec.base.string();
  std::vector<SweepPoint> points;
  points.reserve(count);
  std::map<std::string, std::size_t> seen;  // resolved configuration → point
  std::set<std::string> names;
  for (std::size_t index = 0; index < count; ++index) {
    SweepPoint p;
    p.index = index;
    p.coordinates.resize(spec.axes.size());
    std::size_t rest = index;
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      p.coordinates[a] = rest % spec.axes[a].values.size();
      rest /= spec.axes[a].values.size();
    }
    std::vector<std::string> overrides = spec.set;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      overrides.push_back(spec.axes[a].key + "=" + spec.axes[a].values[p.coordinates[a]]);
    try {
      p.config = parse_config(spec.base_text, base_name, overrides);
    } catch (const InputError& e) {
      const bool on_axis = std::any_of(spec.axes.begin(), spec.axes.end(),
                                       [&](const SweepAxis& a) { return a.key == e.key(); });
      const std::string where = on_axis ? "axes." + in_quotes(e.key()) : e.key();
      throw InputError(where, "point " + std::to_string(index + 1) + " of " + std::to_string(count) + " (" +
                                  describe(spec, p.coordinates) + "): " + problem_of(e));
    }
    // The index's figures (variance, clusters, pair fractions) are token-trajectory figures; a
    // density has other ones, so mean-field studies are run point by point for now.
    if (p.config.model.kind == ModelKind::meanfield)
      throw InputError("model.kind", "point " + std::to_string(index + 1) + " of " + std::to_string(count) + " (" + describe(spec, p.coordinates) +
                                         "): sweeps run particle models only; run mean-field configurations with "
                                         "`normdyn run`");
    const auto [it, fresh] = seen.emplace(to_toml(p.config), index);
    if (!fresh)
      throw InputError("axes", "points " + std::to_string(it->second) + " and " + std::to_string(index) + " (" +
                                   describe(spec, p.coordinates) + ") are the same configuration");
    std::vector<std::string> parts;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      parts.push_back(short_names[a] + "=" + name_label(config_value(p.config, spec.axes[a].key)));
    p.name = parts.empty() ? "run" : join(parts, "_");
    if (p.name.size() > 200) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(p.name)));
      p.name = p.name.substr(0, 180) + "_" + hex;
    }
    if (!names.insert(p.name).second) p.name += "_p" + std::to_string(index);
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace normdyn
