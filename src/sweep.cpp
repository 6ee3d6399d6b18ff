// Sweep files → typed sweep specifications → validated points. With src/config/, the only
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
#include "normdyn/io/text_file.hpp"
#include "normdyn/text_hash.hpp"
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
    if (const auto* sub = node.as_table())
      collect_leaves(*sub, path, out);
    else
      out.emplace_back(path, &node);
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

double read_number(const toml::node& n, const std::string& key) {
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  throw InputError(key, "expected a number");
}

std::string read_string(const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) return s->get();
  throw InputError(key, "expected a string");
}

// The set = {...} and replace = {...} tables of an axis value or a [[point]], as overrides.
void value_overrides(const toml::table& t, const std::string& where, std::vector<std::string>& out) {
  for (const char* section : {"set", "replace"}) {
    const toml::node* node = t.get(section);
    if (!node) continue;
    const auto* table = node->as_table();
    if (!table) throw InputError(where + "." + section, "must be a table of \"section.key\" = value");
    const std::string op = std::string(section) == "set" ? "=" : ":=";
    for (const auto& [key, n] : leaves_in_file_order(*table)) {
      const std::string at = where + "." + section + "." + in_quotes(key);
      require_config_key(key, at);
      reject_sweep_managed(key, at);
      out.push_back(key + op + value_as_toml(*n, at));
    }
  }
}

using SweepAxesInFile = std::vector<std::pair<Position, SweepAxis>>;  // with where each starts in the file

// The top-level keys: the sweep file's sections only.
void check_sweep_sections(const toml::table& root) {
  const std::vector<std::string> sections{"base", "set", "replace", "axes", "zip", "point", "ensemble"};
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (std::find(sections.begin(), sections.end(), k) != sections.end()) continue;
    std::string msg =
        "unknown key in a sweep file; it holds base = \"FILE\", [set], [replace], [axes], [[zip]], [[point]] and "
        "[ensemble]";
    const bool config_section = std::any_of(config_keys().begin(), config_keys().end(),
                                            [&](const std::string& c) { return c.rfind(k + ".", 0) == 0; });
    if (config_section)
      msg += " (configuration sections go into the base file, or into [set] as \"" + k + ".KEY\" = VALUE)";
    else if (auto guess = did_you_mean(k, sections))
      msg += " (did you mean " + *guess + "?)";
    throw InputError(k, msg);
  }
}

// base
void read_sweep_base(const toml::table& root, const std::filesystem::path& file, SweepSpec& spec) {
  if (const toml::node* base = root.get("base")) {
    const std::string name = read_string(*base, "base");
    if (name.empty()) throw InputError("base", "must name a configuration file");
    spec.base = std::filesystem::path(name).is_absolute() ? std::filesystem::path(name) : file.parent_path() / name;
    spec.base_text = read_text_file(spec.base, "base", "configuration file");
  }
}

// [set], [replace]
void read_sweep_overrides(const toml::table& root, SweepSpec& spec) {
  for (const char* section : {"set", "replace"}) {
    const toml::node* set = root.get(section);
    if (!set) continue;
    const auto* table = set->as_table();
    if (!table) throw InputError(section, std::string("must be a table: [") + section + "] \"section.key\" = value");
    const std::string op = std::string(section) == "set" ? "=" : ":=";
    for (const auto& [key, node] : leaves_in_file_order(*table)) {
      const std::string where = std::string(section) + "." + in_quotes(key);
      require_config_key(key, where);
      reject_sweep_managed(key, where);
      spec.set.push_back(key + op + value_as_toml(*node, where));
    }
  }
}

// [axes]
void read_product_axes(const toml::table& root, SweepAxesInFile& axes) {
  if (const toml::node* axes_node = root.get("axes")) {
    const auto* table = axes_node->as_table();
    if (!table) throw InputError("axes", "must be a table: [axes] \"section.key\" = [values]");
    for (const auto& [key, node] : leaves_in_file_order(*table)) {
      const std::string where = "axes." + in_quotes(key);
      require_config_key(key, where);
      reject_sweep_managed(key, where);
      const auto* values = node->as_array();
      if (!values) throw InputError(where, "must be an array of values, e.g. [1.0, 4.0]");
      if (values->empty()) throw InputError(where, "has no values");
      SweepAxis axis;
      axis.key = key;
      axis.kind = SweepAxisKind::product;
      axis.keys = {key};
      for (std::size_t i = 0; i < values->size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        const toml::node& v = *values->get(i);
        std::vector<std::string> overrides;
        const toml::node* value = &v;
        if (const auto* t = v.as_table()) {
          value = t->get("value");
          if (!value)
            throw InputError(at, "an inline table needs value = V (and optionally set = {...}, replace = {...})");
          for (const auto& [k, n] : *t) {
            const std::string name(k.str());
            if (name != "value" && name != "set" && name != "replace")
              throw InputError(at + "." + name, "unknown key; an axis value's table holds value, set and replace");
          }
          value_overrides(*t, at, overrides);
        }
        const std::string value_text = value_as_toml(*value, at);
        axis.values.push_back(value_text);
        overrides.insert(overrides.begin(), key + "=" + value_text);
        axis.overrides.push_back(std::move(overrides));
      }
      axes.emplace_back(position_of(*node), std::move(axis));
    }
  }
}

// [[zip]]
void read_zip_axes(const toml::table& root, SweepAxesInFile& axes) {
  if (const toml::node* zip_node = root.get("zip")) {
    const auto* tables = zip_node->as_array();
    if (!tables || !tables->is_array_of_tables())
      throw InputError("zip", "must be tables: [[zip]] with \"section.key\" = [values] of equal lengths");
    for (std::size_t z = 0; z < tables->size(); ++z) {
      const auto& table = *tables->get(z)->as_table();
      const std::string where = "zip[" + std::to_string(z) + "]";
      SweepAxis axis;
      axis.kind = SweepAxisKind::zip;
      std::vector<const toml::array*> columns;
      for (const auto& [key, n] : leaves_in_file_order(table)) {
        if (key == "name") {
          axis.dimension = read_string(*n, where + ".name");
          continue;
        }
        const std::string at = where + "." + in_quotes(key);
        require_config_key(key, at);
        reject_sweep_managed(key, at);
        const auto* values = n->as_array();
        if (!values) throw InputError(at, "must be an array of values, e.g. [1.0, 4.0]");
        if (values->empty()) throw InputError(at, "has no values");
        if (!columns.empty() && values->size() != columns.front()->size())
          throw InputError(at, "has " + std::to_string(values->size()) + " values, " + in_quotes(axis.keys.front()) +
                                   " has " + std::to_string(columns.front()->size()) + ": zipped keys vary together");
        axis.keys.push_back(key);
        columns.push_back(values);
      }
      if (axis.keys.empty()) throw InputError(where, "zips no key");
      axis.key = axis.keys.front();
      for (std::size_t i = 0; i < columns.front()->size(); ++i) {
        std::vector<std::string> overrides;
        for (std::size_t k = 0; k < columns.size(); ++k) {
          const std::string value_text =
              value_as_toml(*columns[k]->get(i), where + "." + in_quotes(axis.keys[k]) + "[" + std::to_string(i) + "]");
          if (k == 0) axis.values.push_back(value_text);
          overrides.push_back(axis.keys[k] + "=" + value_text);
        }
        axis.overrides.push_back(std::move(overrides));
      }
      if (axis.dimension.empty()) {
        std::vector<std::string> parts;
        for (const auto& k : axis.keys) parts.push_back(k.substr(k.rfind('.') + 1));
        axis.dimension = join(parts, "+");
      }
      axes.emplace_back(position_of(table), std::move(axis));
    }
  }
}

// [[point]]
void read_point_axis(const toml::table& root, SweepAxesInFile& axes) {
  if (const toml::node* point_node = root.get("point")) {
    const auto* tables = point_node->as_array();
    if (!tables || !tables->is_array_of_tables())
      throw InputError("point", "must be tables: [[point]] with \"section.key\" = value");
    SweepAxis axis;
    axis.kind = SweepAxisKind::points;
    axis.key = axis.dimension = "point";
    for (std::size_t p = 0; p < tables->size(); ++p) {
      const auto& table = *tables->get(p)->as_table();
      const std::string where = "point[" + std::to_string(p) + "]";
      std::vector<std::string> overrides, shown;
      toml::table own;  // the point's keys without its set/replace tables
      for (const auto& [k, n] : table)
        if (k.str() != "set" && k.str() != "replace") own.insert(k, n);
      for (const auto& [key, n] : leaves_in_file_order(own)) {
        const std::string at = where + "." + in_quotes(key);
        require_config_key(key, at);
        reject_sweep_managed(key, at);
        const std::string value_text = value_as_toml(*n, at);
        overrides.push_back(key + "=" + value_text);
        shown.push_back(key + " = " + value_text);
        if (std::find(axis.keys.begin(), axis.keys.end(), key) == axis.keys.end()) axis.keys.push_back(key);
      }
      value_overrides(table, where, overrides);
      if (overrides.empty()) throw InputError(where, "sets no key");
      axis.values.push_back("{" + join(shown, ", ") + "}");
      axis.overrides.push_back(std::move(overrides));
    }
    axes.emplace_back(position_of(*tables->get(0)), std::move(axis));
  }
}

// The axes in the order of the file, and their dimensions.
void order_sweep_axes(SweepAxesInFile& axes, SweepSpec& spec) {
  std::stable_sort(axes.begin(), axes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [where, axis] : axes) {
    if (axis.dimension.empty()) axis.dimension = axis.key;  // shortened below
    spec.axes.push_back(std::move(axis));
  }
  // A key on two axes: the later would silently win at every point.
  std::set<std::string> seen_keys;
  for (const auto& axis : spec.axes)
    for (const auto& k : axis.keys)
      if (axis.kind != SweepAxisKind::points && !seen_keys.insert(k).second)
        throw InputError("axes." + in_quotes(k), "is on two axes; zip them or list the points");
  // Dimensions of plain axes: the last component of the key, unless two axes share it.
  std::vector<std::string> dims;
  for (const auto& axis : spec.axes)
    dims.push_back(axis.kind == SweepAxisKind::product ? axis.key.substr(axis.key.rfind('.') + 1) : axis.dimension);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (spec.axes[a].kind == SweepAxisKind::product && std::count(dims.begin(), dims.end(), dims[a]) > 1)
      spec.axes[a].dimension = spec.axes[a].key;
    else
      spec.axes[a].dimension = dims[a];
  }
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (spec.axes[a].dimension == spec.axes[b].dimension)
        throw InputError("zip",
                         "two axes are named " + in_quotes(spec.axes[a].dimension) + "; give the [[zip]] a name");
}

// [ensemble]
void read_sweep_ensemble(const toml::table& root, SweepSpec& spec) {
  auto is_axis = [&](const std::string& key) {
    return std::any_of(spec.axes.begin(), spec.axes.end(),
                       [&](const SweepAxis& a) { return a.key == key && a.kind != SweepAxisKind::points; });
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
        if (!axis.empty() && !is_axis(axis)) throw InputError(where, in_quotes(axis) + " is not an axis of this sweep");
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
  check_sweep_sections(root);
  read_sweep_base(root, file, spec);
  read_sweep_overrides(root, spec);
  SweepAxesInFile axes;
  read_product_axes(root, axes);
  read_zip_axes(root, axes);
  read_point_axis(root, axes);
  order_sweep_axes(axes, spec);
  read_sweep_ensemble(root, spec);
  return spec;
}

SweepSpec load_sweep(const std::filesystem::path& file) {
  return parse_sweep(read_text_file(file, file.string(), "sweep file"), file);
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
        if constexpr (std::is_same_v<T, double>)
          return number_text(v);
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>)
          return v;
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
    std::snprintf(hex, sizeof hex, "h%08llx",
                  static_cast<unsigned long long>(text_hash(value_label(*a)) & 0xffffffffull));
    return hex;
  }
  std::string label = value_label(value);
  for (char& c : label)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-')) c = '-';
  if (label.size() > 48) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "h%08llx", static_cast<unsigned long long>(text_hash(label) & 0xffffffffull));
    label = label.substr(0, 32) + "-" + hex;
  }
  return label;
}

// A value written as TOML text, as the configuration reader would type it for a name: numbers as
// doubles print the same as the integers they hold, so "4" and "4.0" give the same name.
ConfigScalar scalar_of_text(const std::string& text) {
  toml::table t;
  try {
    t = toml::parse("v = " + text);
  } catch (const toml::parse_error&) {
    return text;  // a bare word (as --set takes it)
  }
  const toml::node& n = *t.get("v");
  if (const auto* s = n.as_string()) return s->get();
  if (const auto* i = n.as_integer()) return i->get();
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* b = n.as_boolean()) return b->get();
  if (const auto* a = n.as_array()) {
    std::vector<double> v;
    for (std::size_t k = 0; k < a->size(); ++k) {
      const toml::node& e = *a->get(k);
      if (const auto* f = e.as_floating_point())
        v.push_back(f->get());
      else if (const auto* i = e.as_integer())
        v.push_back(static_cast<double>(i->get()));
      else
        return text;
    }
    return v;
  }
  return text;
}

// The key and the value text of an override "key=value" / "key:=value".
std::pair<std::string, std::string> split_override(const std::string& o) {
  const auto eq = o.find('=');
  std::string key = o.substr(0, eq);
  if (!key.empty() && key.back() == ':') key.pop_back();
  return {key, o.substr(eq + 1)};
}

// The problem of an InputError without its "key: " prefix.
std::string problem_of(const InputError& e) {
  const std::string what = e.what();
  const std::string prefix = e.key() + ": ";
  return !e.key().empty() && what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

void add_overrides(SweepSpec& spec, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    if (o.find('=') == std::string::npos) throw InputError("--set", "expected section.key=value, got " + in_quotes(o));
    auto [key, value] = split_override(o);
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string where = "--set " + key;
    require_config_key(key, where);
    reject_sweep_managed(key, where);
    for (const auto& axis : spec.axes)
      if (std::find(axis.keys.begin(), axis.keys.end(), key) != axis.keys.end())
        throw InputError(where, "is an axis of the sweep (" + in_quotes(axis.dimension) + "); --set cannot fix it");
    spec.set.push_back(o);
  }
}

SweepPoints::SweepPoints(const SweepSpec& spec) : spec_(&spec) {
  for (const auto& axis : spec.axes) {
    if (axis.values.empty() || axis.overrides.size() != axis.values.size())
      throw InputError("axes." + in_quotes(axis.key), "has no values");
    if (count_ > (std::size_t{1} << 40) / axis.values.size())
      throw InputError("axes", "the product of the axes has more than 2^40 points");
    count_ *= axis.values.size();
    radix_.push_back(axis.values.size());
  }
  // Short names of the keys: the last component, unless two keys of the axes share it.
  std::vector<std::string> keys, shorts;
  for (const auto& axis : spec.axes)
    if (axis.kind != SweepAxisKind::points)
      for (const auto& k : axis.keys) keys.push_back(k);
  for (const auto& k : keys) shorts.push_back(k.substr(k.rfind('.') + 1));
  auto short_name = [&](const std::string& key) {
    const std::string last = key.substr(key.rfind('.') + 1);
    return std::count(shorts.begin(), shorts.end(), last) > 1 ? key : last;
  };
  for (const auto& axis : spec.axes) {
    std::vector<std::string> labels;
    for (std::size_t v = 0; v < axis.values.size(); ++v) {
      std::vector<std::string> parts;
      if (axis.kind == SweepAxisKind::points) {
        for (const auto& o : axis.overrides[v]) {
          const auto [key, text] = split_override(o);
          parts.push_back(key.substr(key.rfind('.') + 1) + "=" + name_label(scalar_of_text(text)));
        }
        parts.resize(std::min<std::size_t>(parts.size(), 4));
      } else {
        // The axis' own keys (the first overrides of the value), not its value's set/replace.
        for (std::size_t k = 0; k < axis.keys.size(); ++k)
          parts.push_back(short_name(axis.keys[k]) + "=" +
                          name_label(scalar_of_text(split_override(axis.overrides[v][k]).second)));
      }
      labels.push_back(join(parts, "_"));
    }
    labels_.push_back(std::move(labels));
  }
  base_name_ = spec.base.empty() ? spec.file.string() + " (defaults)" : spec.base.string();
}

std::vector<std::size_t> SweepPoints::coordinates(std::size_t index) const {
  std::vector<std::size_t> c(radix_.size());
  for (std::size_t a = radix_.size(); a-- > 0;) {
    c[a] = index % radix_[a];
    index /= radix_[a];
  }
  return c;
}

std::vector<std::string> SweepPoints::overrides(std::size_t index) const {
  std::vector<std::string> out = spec_->set;
  const auto c = coordinates(index);
  for (std::size_t a = 0; a < c.size(); ++a) {
    const auto& o = spec_->axes[a].overrides[c[a]];
    out.insert(out.end(), o.begin(), o.end());
  }
  return out;
}

std::string SweepPoints::name(std::size_t index) const {
  const auto c = coordinates(index);
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < c.size(); ++a) parts.push_back(labels_[a][c[a]]);
  std::string name = parts.empty() ? "run" : join(parts, "_");
  if (name.size() > 200) {
    name = name.substr(0, 180) + "_" + text_hash_hex(name);
  }
  return name;
}

std::string SweepPoints::describe(std::size_t index, bool labels) const {
  auto shown = [&](const std::string& text) { return labels ? value_label(scalar_of_text(text)) : text; };
  const auto c = coordinates(index);
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < c.size(); ++a) {
    const SweepAxis& axis = spec_->axes[a];
    if (axis.kind == SweepAxisKind::points) {
      parts.push_back("point " + std::to_string(c[a]) + " " + axis.values[c[a]]);
      continue;
    }
    for (std::size_t k = 0; k < axis.keys.size(); ++k)
      parts.push_back(axis.keys[k] + " = " + shown(split_override(axis.overrides[c[a]][k]).second));
  }
  return join(parts, ", ");
}

SweepPoint SweepPoints::point(std::size_t index) const {
  const SweepSpec& spec = *spec_;
  SweepPoint p;
  p.index = index;
  p.coordinates = coordinates(index);
  const std::string which = "point " + std::to_string(index + 1) + " of " + std::to_string(count_);
  try {
    p.config = parse_config(spec.base_text, base_name_, overrides(index));
  } catch (const InputError& e) {
    std::string where = e.key();
    for (const auto& axis : spec.axes)
      if (axis.kind == SweepAxisKind::product && axis.key == e.key()) where = "axes." + in_quotes(e.key());
    throw InputError(where, which + " (" + describe(index) + "): " + problem_of(e));
  }
  // The index's figures (variance, clusters, pair fractions) are token-trajectory figures; a
  // density has other ones, so mean-field studies are run point by point for now.
  if (p.config.model.kind == ModelKind::meanfield)
    throw InputError("model.kind", which + " (" + describe(index) +
                                       "): sweeps run particle models only; run mean-field configurations with "
                                       "`normdyn run`");
  p.name = name(index);
  return p;
}

std::string SweepDuplicates::check(const SweepPoints& points, const SweepPoint& point) {
  const std::string text = to_toml(point.config);
  const auto [it, fresh] = configs_.emplace(text_hash(text), point.index);
  // A hash seen before: compare the configurations themselves (the earlier one resolved again).
  if (!fresh && to_toml(points.point(it->second).config) == text)
    throw InputError("axes", "points " + std::to_string(it->second) + " and " + std::to_string(point.index) + " (" +
                                 points.describe(point.index) + ") are the same configuration");
  if (!names_.insert(text_hash(point.name)).second) return point.name + "_p" + std::to_string(point.index);
  return point.name;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec) {
  const SweepPoints lazy(spec);
  if (lazy.size() > (std::size_t{1} << 24))
    throw InputError("axes", "the product of the axes has more than 2^24 points: use SweepPoints, which holds none");
  SweepDuplicates duplicates;
  std::vector<SweepPoint> points;
  points.reserve(lazy.size());
  for (std::size_t index = 0; index < lazy.size(); ++index) {
    SweepPoint p = lazy.point(index);
    p.name = duplicates.check(lazy, p);
    points.push_back(std::move(p));
  }
  return points;
}

std::vector<std::pair<std::string, std::size_t>> sweep_columns(const SweepSpec& spec) {
  std::vector<std::pair<std::string, std::size_t>> out;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    for (const auto& k : spec.axes[a].keys)
      if (std::none_of(out.begin(), out.end(), [&](const auto& c) { return c.first == k; })) out.emplace_back(k, a);
  return out;
}

std::vector<ConfigScalar> column_values(const SweepSpec& spec, const RunConfig& config) {
  const auto all = config_values(config);
  std::vector<ConfigScalar> out;
  for (const auto& [key, axis] : sweep_columns(spec)) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& kv) { return kv.first == key; });
    out.push_back(it == all.end() ? ConfigScalar(std::string()) : it->second);
  }
  return out;
}

}  // namespace normdyn
