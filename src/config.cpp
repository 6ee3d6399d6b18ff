// TOML and --set flags → RunConfig. The only translation unit that reads configuration strings.
//
// Every key is one row of a table (`keys()` below) with its type, documentation, reader, writer and
// the condition under which it applies. The same table drives parsing, unknown-key detection with a
// did-you-mean suggestion, the "applies only to" checks, serialization of the resolved
// configuration, and `normdyn config-reference`. Scheme parameters come from the schemes' own
// ParamSpec lists, so a new scheme parameter needs no change here.
#include "normdyn/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "normdyn/errors.hpp"
#include "toml_text.hpp"

namespace normdyn {

// ---------------------------------------------------------------------------------------------
// Names of enumerations
namespace {

template <class E>
struct EnumNames;
template <>
struct EnumNames<QkvKind> {
  static constexpr std::array<std::pair<QkvKind, std::string_view>, 4> values{{
      {QkvKind::identity, "identity"},
      {QkvKind::gaussian, "gaussian"},
      {QkvKind::gaussian_per_layer, "gaussian_per_layer"},
      {QkvKind::file, "file"},
  }};
};
template <>
struct EnumNames<InitKind> {
  static constexpr std::array<std::pair<InitKind, std::string_view>, 7> values{{
      {InitKind::uniform, "uniform"},
      {InitKind::gaussian, "gaussian"},
      {InitKind::orthonormal, "orthonormal"},
      {InitKind::cap, "cap"},
      {InitKind::file, "file"},
      {InitKind::perturbed_uniform, "perturbed_uniform"},
      {InitKind::von_mises, "von_mises"},
  }};
};
template <>
struct EnumNames<ModelKind> {
  static constexpr std::array<std::pair<ModelKind, std::string_view>, 2> values{{
      {ModelKind::particles, "particles"},
      {ModelKind::meanfield, "meanfield"},
  }};
};
template <>
struct EnumNames<Sampling> {
  static constexpr std::array<std::pair<Sampling, std::string_view>, 3> values{{
      {Sampling::sampled, "sampled"},
      {Sampling::weighted, "weighted"},
      {Sampling::grid, "grid"},
  }};
};
template <>
struct EnumNames<Limiter> {
  static constexpr std::array<std::pair<Limiter, std::string_view>, 3> values{{
      {Limiter::van_leer, "van_leer"},
      {Limiter::minmod, "minmod"},
      {Limiter::upwind, "upwind"},
  }};
};
template <>
struct EnumNames<Method> {
  static constexpr std::array<std::pair<Method, std::string_view>, 7> values{{
      {Method::dopri5, "dopri5"},
      {Method::cash_karp54, "cash_karp54"},
      {Method::fehlberg78, "fehlberg78"},
      {Method::bulirsch_stoer, "bulirsch_stoer"},
      {Method::rk4, "rk4"},
      {Method::euler, "euler"},
      {Method::discrete, "discrete"},
  }};
};

template <class E>
std::string_view enum_name(E e) {
  for (const auto& [value, name] : EnumNames<E>::values)
    if (value == e) return name;
  return "?";
}

template <class E>
std::vector<std::string> enum_names() {
  std::vector<std::string> out;
  for (const auto& [value, name] : EnumNames<E>::values) out.emplace_back(name);
  return out;
}

std::string join(const std::vector<std::string>& words, std::string_view sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) out += sep;
    out += words[i];
  }
  return out;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Shortest text that reads back as the same double: 0.3, not 0.29999999999999999.
std::string format_number(double v) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, end);
}

}  // namespace

std::string_view to_string(QkvKind k) { return enum_name(k); }
std::string_view to_string(InitKind k) { return enum_name(k); }
std::string_view to_string(Method m) { return enum_name(m); }
std::string_view to_string(ModelKind k) { return enum_name(k); }
std::string_view to_string(Sampling k) { return enum_name(k); }
std::string_view to_string(Limiter k) { return enum_name(k); }

bool is_density_kind(InitKind k) {
  return k == InitKind::uniform || k == InitKind::perturbed_uniform || k == InitKind::von_mises;
}

bool is_adaptive(Method m) {
  return m == Method::dopri5 || m == Method::cash_karp54 || m == Method::fehlberg78 ||
         m == Method::bulirsch_stoer;
}

std::vector<double> OutputConfig::sample_times(double t_end) const {
  if (!samples) return times;
  const auto count = *samples;
  std::vector<double> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    out[static_cast<std::size_t>(i)] = t_end * static_cast<double>(i) / static_cast<double>(count - 1);
  out.back() = t_end;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Did you mean
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t dist = distance(word, c);
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Typed readers
namespace {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

double read_float(const toml::node& n, const std::string& key) {
  double v = 0.0;
  if (const auto* f = n.as_floating_point()) v = f->get();
  else if (const auto* i = n.as_integer()) v = static_cast<double>(i->get());
  else throw InputError(key, "expected a number, got " + type_name(n));
  if (!std::isfinite(v)) throw InputError(key, "must be finite, got " + format_number(v));
  return v;
}

std::int64_t read_int(const toml::node& n, const std::string& key) {
  if (const auto* i = n.as_integer()) return i->get();
  throw InputError(key, "expected an integer, got " + type_name(n));
}

std::string read_string(const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) return s->get();
  throw InputError(key, "expected a string, got " + type_name(n));
}

bool read_bool(const toml::node& n, const std::string& key) {
  if (const auto* b = n.as_boolean()) return b->get();
  throw InputError(key, "expected true or false, got " + type_name(n));
}

std::vector<double> read_float_array(const toml::node& n, const std::string& key) {
  const auto* a = n.as_array();
  if (!a) throw InputError(key, "expected an array of numbers, got " + type_name(n));
  std::vector<double> out;
  for (std::size_t i = 0; i < a->size(); ++i)
    out.push_back(read_float(*a->get(i), key + "[" + std::to_string(i) + "]"));
  return out;
}

template <class E>
E read_enum(const toml::node& n, const std::string& key) {
  const std::string word = read_string(n, key);
  for (const auto& [value, name] : EnumNames<E>::values)
    if (name == word) return value;
  std::string msg = "unknown value " + in_quotes(word) + "; valid: " + join(enum_names<E>());
  if (auto guess = did_you_mean(word, enum_names<E>())) msg += " (did you mean " + in_quotes(*guess) + "?)";
  throw InputError(key, msg);
}

Scheme read_scheme(const toml::node& n, const std::string& key) {
  const std::string word = read_string(n, key);
  if (auto s = make_scheme(word)) return *s;
  std::vector<std::string> names;
  for (auto k : scheme_keys()) names.emplace_back(k);
  std::string msg = "unknown scheme " + in_quotes(word) + "; valid: " + join(names);
  if (auto guess = did_you_mean(word, names)) msg += " (did you mean " + in_quotes(*guess) + "?)";
  throw InputError(key, msg);
}

std::string scheme_list_needing(std::string_view param) {
  std::vector<std::string> owners;
  for_each_scheme([&](auto s) {
    for (const auto& p : decltype(s)::params)
      if (p.key == param) owners.push_back(in_quotes(decltype(s)::key));
  });
  return join(owners, " or ");
}

void require(bool ok, const std::string& key, const std::string& problem) {
  if (!ok) throw InputError(key, problem);
}

// ---------------------------------------------------------------------------------------------
// The key table
struct Key {
  std::string path;  // "section.name"
  std::string type;
  std::string doc;
  std::function<void(const toml::node&, RunConfig&)> read;
  // Writes the resolved value into its section table (only called when the key applies).
  std::function<void(const RunConfig&, toml::table&)> write;
  // Empty when the key applies to this configuration; otherwise why it does not.
  std::function<std::string(const RunConfig&)> applies = nullptr;  // empty: always applies
  bool selector = false;  // read before the other keys (scheme, kinds, method)

  std::string why_not(const RunConfig& c) const { return applies ? applies(c) : std::string(); }
};

std::string section_of(const std::string& path) { return path.substr(0, path.find('.')); }
std::string name_of(const std::string& path) { return path.substr(path.find('.') + 1); }

template <class E>
std::string only_for(std::string_view selector_key, E actual, const std::vector<E>& allowed) {
  for (E a : allowed)
    if (a == actual) return {};
  std::vector<std::string> names;
  for (E a : allowed) names.push_back(in_quotes(enum_name(a)));
  return "applies only to " + std::string(selector_key) + " = " + join(names, " or ") + " (" +
         std::string(selector_key) + " is " + in_quotes(enum_name(actual)) + ")";
}

const std::vector<Key>& keys() {
  static const std::vector<Key> table = [] {
    std::vector<Key> k;
    auto add = [&](Key key) { k.push_back(std::move(key)); };

    // ---- [model]
    {
      std::vector<std::string> names;
      for (auto s : scheme_keys()) names.emplace_back(s);
      add({"model.scheme", "string", "normalization scheme: " + join(names, " | "),
           [](const toml::node& n, RunConfig& c) { c.model.scheme = read_scheme(n, "model.scheme"); },
           [](const RunConfig& c, toml::table& t) { t.insert("scheme", std::string(scheme_key(c.model.scheme))); },
           {}, true});
    }
    // model.kind selects the mean-field solver; n and d belong to particles only.
    add({"model.kind", "string",
         "what is simulated: particles (n tokens, possibly weighted) | meanfield (density on the circle, d = 2)",
         [](const toml::node& n, RunConfig& c) { c.model.kind = read_enum<ModelKind>(n, "model.kind"); },
         [](const RunConfig& c, toml::table& t) { t.insert("kind", std::string(enum_name(c.model.kind))); },
         {}, true});
    const auto particles_only = [](const RunConfig& c) {
      return c.model.kind == ModelKind::particles
                 ? std::string()
                 : std::string("does not apply to model.kind = \"meanfield\" (a density on the circle, d = 2; "
                               "its resolution is meanfield.grid)");
    };
    add({"model.n", "integer", "number of tokens n >= 1",
         [](const toml::node& n, RunConfig& c) {
           c.model.n = read_int(n, "model.n");
           require(c.model.n >= 1, "model.n", "must be >= 1, got " + std::to_string(c.model.n));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("n", static_cast<std::int64_t>(c.model.n)); },
         particles_only});
    add({"model.d", "integer", "dimension d >= 2 of the token space (tokens live on S^{d-1})",
         [](const toml::node& n, RunConfig& c) {
           c.model.d = read_int(n, "model.d");
           require(c.model.d >= 2, "model.d", "must be >= 2, got " + std::to_string(c.model.d));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("d", static_cast<std::int64_t>(c.model.d)); },
         particles_only});
    add({"model.beta", "float", "inverse temperature beta > 0 of the softmax",
         [](const toml::node& n, RunConfig& c) {
           c.model.beta = read_float(n, "model.beta");
           require(c.model.beta > 0.0, "model.beta", "must be > 0, got " + format_number(c.model.beta));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("beta", c.model.beta); }});
    add({"model.qkv", "string", "attention matrices: identity | gaussian | gaussian_per_layer | file",
         [](const toml::node& n, RunConfig& c) { c.model.qkv = read_enum<QkvKind>(n, "model.qkv"); },
         [](const RunConfig& c, toml::table& t) { t.insert("qkv", std::string(enum_name(c.model.qkv))); },
         {}, true});
    add({"model.qkv_seed", "integer", "seed of random Q, K, V (default: init.seed)",
         [](const toml::node& n, RunConfig& c) {
           const auto v = read_int(n, "model.qkv_seed");
           require(v >= 0, "model.qkv_seed", "must be >= 0");
           c.model.qkv_seed = static_cast<std::uint64_t>(v);
         },
         [](const RunConfig& c, toml::table& t) { t.insert("qkv_seed", static_cast<std::int64_t>(c.model.qkv_seed)); },
         [](const RunConfig& c) {
           return only_for("model.qkv", c.model.qkv, {QkvKind::gaussian, QkvKind::gaussian_per_layer});
         }});
    add({"model.qkv_file", "string", "HDF5 file with datasets Q, K, V, each [d, d] or [layers, d, d]",
         [](const toml::node& n, RunConfig& c) { c.model.qkv_file = read_string(n, "model.qkv_file"); },
         [](const RunConfig& c, toml::table& t) { t.insert("qkv_file", c.model.qkv_file.string()); },
         [](const RunConfig& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::file}); }});
    // Scheme parameters, from the schemes' ParamSpec lists (one key even if several schemes share it).
    {
      std::set<std::string> seen;
      for_each_scheme([&](auto scheme) {
        using S = decltype(scheme);
        for (const auto& p : S::params) {
          const std::string path = "model." + std::string(p.key);
          if (!seen.insert(path).second) continue;
          const std::string param(p.key);
          add({path, "float", std::string(p.doc) + " (scheme " + scheme_list_needing(p.key) + ")",
               [path, param](const toml::node& n, RunConfig& c) {
                 const double v = read_float(n, path);
                 std::visit(
                     [&](auto& s) {
                       for (const auto& q : std::decay_t<decltype(s)>::params) {
                         if (q.key != param) continue;
                         const bool ok = q.lower_inclusive ? v >= q.lower : v > q.lower;
                         require(ok, path,
                                 "must be " + std::string(q.lower_inclusive ? ">= " : "> ") +
                                     format_number(q.lower) + ", got " + format_number(v));
                         s.*(q.member) = v;
                       }
                     },
                     c.model.scheme);
               },
               [param](const RunConfig& c, toml::table& t) {
                 for (const auto& [name, value] : scheme_parameters(c.model.scheme))
                   if (name == param) t.insert(param, value);
               },
               [param](const RunConfig& c) {
                 for (const auto& [name, value] : scheme_parameters(c.model.scheme))
                   if (name == param) return std::string();
                 return "applies only to model.scheme = " + scheme_list_needing(param) + " (model.scheme is " +
                        in_quotes(scheme_key(c.model.scheme)) + ")";
               }});
        }
      });
    }

    // ---- [meanfield]
    const auto meanfield_only = [](const RunConfig& c) {
      return only_for("model.kind", c.model.kind, {ModelKind::meanfield});
    };
    add({"meanfield.grid", "integer", "cells M >= 8 of the uniform grid in the angle phi",
         [](const toml::node& n, RunConfig& c) {
           c.meanfield.grid = read_int(n, "meanfield.grid");
           require(c.meanfield.grid >= 8 && c.meanfield.grid <= (std::int64_t{1} << 24), "meanfield.grid",
                   "must be in [8, 2^24], got " + std::to_string(c.meanfield.grid));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("grid", c.meanfield.grid); }, meanfield_only});
    add({"meanfield.radial_grid", "integer",
         "cells >= 4 of the radial grid, which moves with the support of the radii (schemes with a radius)",
         [](const toml::node& n, RunConfig& c) {
           c.meanfield.radial_grid = read_int(n, "meanfield.radial_grid");
           require(c.meanfield.radial_grid >= 4 && c.meanfield.radial_grid <= 65536, "meanfield.radial_grid",
                   "must be in [4, 65536], got " + std::to_string(c.meanfield.radial_grid));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("radial_grid", c.meanfield.radial_grid); },
         [meanfield_only](const RunConfig& c) {
           if (std::string why = meanfield_only(c); !why.empty()) return why;
           if (scheme_has_radius(c.model.scheme)) return std::string();
           return "applies only to schemes with a radius (pre, mix, peri); model.scheme is " +
                  in_quotes(scheme_key(c.model.scheme));
         }});
    add({"meanfield.limiter", "string",
         "slope limiter of the fluxes: van_leer (2nd order) | minmod (2nd order) | upwind (1st order)",
         [](const toml::node& n, RunConfig& c) { c.meanfield.limiter = read_enum<Limiter>(n, "meanfield.limiter"); },
         [](const RunConfig& c, toml::table& t) { t.insert("limiter", std::string(enum_name(c.meanfield.limiter))); },
         meanfield_only});

    // ---- [init]
    add({"init.kind", "string",
         "initial tokens or density: uniform | gaussian | orthonormal | cap | file | perturbed_uniform | von_mises",
         [](const toml::node& n, RunConfig& c) { c.init.kind = read_enum<InitKind>(n, "init.kind"); },
         [](const RunConfig& c, toml::table& t) { t.insert("kind", std::string(enum_name(c.init.kind))); },
         {}, true});
    add({"init.seed", "integer", "seed of every random choice of the run (>= 0)",
         [](const toml::node& n, RunConfig& c) {
           const auto v = read_int(n, "init.seed");
           require(v >= 0, "init.seed", "must be >= 0, got " + std::to_string(v));
           c.init.seed = static_cast<std::uint64_t>(v);
         },
         [](const RunConfig& c, toml::table& t) { t.insert("seed", static_cast<std::int64_t>(c.init.seed)); }});
    add({"init.r0", "float", "initial radius r0 > 0 of every token (kinds that do not set radii)",
         [](const toml::node& n, RunConfig& c) {
           c.init.r0 = read_float(n, "init.r0");
           require(c.init.r0 > 0.0, "init.r0", "must be > 0, got " + format_number(c.init.r0));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("r0", c.init.r0); },
         [](const RunConfig& c) {
           if (c.init.kind == InitKind::gaussian)
             return std::string("does not apply to init.kind = \"gaussian\", which sets r_j = |x_j|");
           return std::string();
         }});
    add({"init.delta", "float", "cap: every pairwise cosine >= 1 - delta, 0 < delta < 2",
         [](const toml::node& n, RunConfig& c) {
           c.init.delta = read_float(n, "init.delta");
           require(c.init.delta > 0.0 && c.init.delta < 2.0, "init.delta",
                   "must be in (0, 2), got " + format_number(c.init.delta));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("delta", c.init.delta); },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::cap}); }});
    add({"init.file", "string", "file: HDF5 file holding the initial tokens",
         [](const toml::node& n, RunConfig& c) { c.init.file = read_string(n, "init.file"); },
         [](const RunConfig& c, toml::table& t) { t.insert("file", c.init.file.string()); },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::file}); }});
    add({"init.dataset", "string", "file: dataset of directions, [n, d] or [frames, n, d]",
         [](const toml::node& n, RunConfig& c) { c.init.dataset = read_string(n, "init.dataset"); },
         [](const RunConfig& c, toml::table& t) { t.insert("dataset", c.init.dataset); },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::file}); }});
    add({"init.frame", "integer", "file: frame of a 3-D dataset; negative counts from the end (-1: last)",
         [](const toml::node& n, RunConfig& c) { c.init.frame = read_int(n, "init.frame"); },
         [](const RunConfig& c, toml::table& t) { t.insert("frame", c.init.frame); },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::file}); }});
    add({"init.radius_dataset", "string",
         "file: dataset of radii, [n] or [frames, n]; empty: the run file's radii if present, else r0",
         [](const toml::node& n, RunConfig& c) { c.init.radius_dataset = read_string(n, "init.radius_dataset"); },
         [](const RunConfig& c, toml::table& t) { t.insert("radius_dataset", c.init.radius_dataset); },
         [particles_only](const RunConfig& c) {
           if (std::string why = particles_only(c); !why.empty()) return why;
           return only_for("init.kind", c.init.kind, {InitKind::file});
         }});
    // Densities (mean field, and particles that sample them).
    add({"init.mode", "integer", "perturbed_uniform: mode m >= 1 of the density (1 + amplitude cos(m phi)) / (2 pi)",
         [](const toml::node& n, RunConfig& c) {
           c.init.mode = read_int(n, "init.mode");
           require(c.init.mode >= 1, "init.mode", "must be >= 1, got " + std::to_string(c.init.mode));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("mode", c.init.mode); },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::perturbed_uniform}); }});
    add({"init.amplitude", "float", "perturbed_uniform: amplitude in [-1, 1] of the cosine perturbation",
         [](const toml::node& n, RunConfig& c) {
           c.init.amplitude = read_float(n, "init.amplitude");
           require(std::abs(c.init.amplitude) <= 1.0, "init.amplitude",
                   "must be in [-1, 1] (the density must stay >= 0), got " + format_number(c.init.amplitude));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("amplitude", c.init.amplitude); },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::perturbed_uniform}); }});
    add({"init.centers", "array of float",
         "von_mises: angles (rad) of the bump centres, in the plane of the first two coordinates",
         [](const toml::node& n, RunConfig& c) {
           c.init.centers = read_float_array(n, "init.centers");
           require(!c.init.centers.empty(), "init.centers", "must not be empty");
         },
         [](const RunConfig& c, toml::table& t) {
           toml::array a;
           for (double v : c.init.centers) a.push_back(v);
           t.insert("centers", std::move(a));
         },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::von_mises}); }});
    add({"init.kappa", "array of float",
         "von_mises: concentrations 0 < kappa <= 700, one per centre (or one for all); density of a bump "
         "proportional to exp(kappa cos(phi - centre))",
         [](const toml::node& n, RunConfig& c) {
           c.init.kappa = n.is_array() ? read_float_array(n, "init.kappa")
                                       : std::vector<double>{read_float(n, "init.kappa")};
           require(!c.init.kappa.empty(), "init.kappa", "must not be empty");
           for (double v : c.init.kappa)
             require(v > 0.0 && v <= 700.0, "init.kappa", "every entry must be in (0, 700], got " + format_number(v));
         },
         [](const RunConfig& c, toml::table& t) {
           toml::array a;
           for (double v : c.init.kappa) a.push_back(v);
           t.insert("kappa", std::move(a));
         },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::von_mises}); }});
    add({"init.weights", "array of float", "von_mises: mixture weights >= 0, one per centre (default: equal)",
         [](const toml::node& n, RunConfig& c) {
           c.init.weights = read_float_array(n, "init.weights");
           double sum = 0.0;
           for (double v : c.init.weights) {
             require(v >= 0.0, "init.weights", "every entry must be >= 0, got " + format_number(v));
             sum += v;
           }
           require(sum > 0.0, "init.weights", "must have a positive sum");
         },
         [](const RunConfig& c, toml::table& t) {
           toml::array a;
           for (double v : c.init.weights) a.push_back(v);
           t.insert("weights", std::move(a));
         },
         [](const RunConfig& c) { return only_for("init.kind", c.init.kind, {InitKind::von_mises}); }});
    add({"init.sampling", "string",
         "particles from a density: sampled (i.i.d. from the density, equal masses) | weighted (i.i.d. uniform "
         "directions, masses proportional to the density) | grid (d = 2: equally spaced angles, masses = exact "
         "cell masses)",
         [](const toml::node& n, RunConfig& c) { c.init.sampling = read_enum<Sampling>(n, "init.sampling"); },
         [](const RunConfig& c, toml::table& t) { t.insert("sampling", std::string(enum_name(c.init.sampling))); },
         [particles_only](const RunConfig& c) {
           if (std::string why = particles_only(c); !why.empty()) return why;
           return only_for("init.kind", c.init.kind,
                           {InitKind::uniform, InitKind::perturbed_uniform, InitKind::von_mises});
         }});
    add({"init.radius_width", "float",
         "radii uniform on [r0 - w/2, r0 + w/2], 0 <= w < 2 r0 (0: every radius r0); mean field with a radius "
         "needs w > 0",
         [](const toml::node& n, RunConfig& c) {
           c.init.radius_width = read_float(n, "init.radius_width");
           require(c.init.radius_width >= 0.0, "init.radius_width",
                   "must be >= 0, got " + format_number(c.init.radius_width));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("radius_width", c.init.radius_width); },
         [](const RunConfig& c) {
           if (c.model.kind == ModelKind::meanfield) {
             if (scheme_has_radius(c.model.scheme)) return std::string();
             return "applies only to schemes with a radius (pre, mix, peri) when model.kind = \"meanfield\"; "
                    "model.scheme is " + in_quotes(scheme_key(c.model.scheme));
           }
           return only_for("init.kind", c.init.kind,
                           {InitKind::uniform, InitKind::perturbed_uniform, InitKind::von_mises});
         }});

    // ---- [solver]
    const std::vector<Method> adaptive{Method::dopri5, Method::cash_karp54, Method::fehlberg78,
                                                 Method::bulirsch_stoer};
    add({"solver.method", "string",
         "integrator: dopri5 | cash_karp54 | fehlberg78 | bulirsch_stoer (adaptive), rk4 | euler (fixed step), "
         "discrete (the layer maps)",
         [](const toml::node& n, RunConfig& c) { c.solver.method = read_enum<Method>(n, "solver.method"); },
         [](const RunConfig& c, toml::table& t) { t.insert("method", std::string(enum_name(c.solver.method))); },
         {}, true});
    add({"solver.rtol", "float", "relative tolerance > 0 (adaptive methods)",
         [](const toml::node& n, RunConfig& c) {
           c.solver.rtol = read_float(n, "solver.rtol");
           require(c.solver.rtol > 0.0, "solver.rtol", "must be > 0, got " + format_number(c.solver.rtol));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("rtol", c.solver.rtol); },
         [adaptive](const RunConfig& c) { return only_for("solver.method", c.solver.method, adaptive); }});
    add({"solver.atol", "float", "absolute tolerance > 0 (adaptive methods)",
         [](const toml::node& n, RunConfig& c) {
           c.solver.atol = read_float(n, "solver.atol");
           require(c.solver.atol > 0.0, "solver.atol", "must be > 0, got " + format_number(c.solver.atol));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("atol", c.solver.atol); },
         [adaptive](const RunConfig& c) { return only_for("solver.method", c.solver.method, adaptive); }});
    add({"solver.dt", "float", "step > 0: fixed step (rk4, euler), layer step h (discrete), first trial step (adaptive)",
         [](const toml::node& n, RunConfig& c) {
           c.solver.dt = read_float(n, "solver.dt");
           require(c.solver.dt > 0.0, "solver.dt", "must be > 0, got " + format_number(c.solver.dt));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("dt", c.solver.dt); }});
    add({"solver.t_end", "float", "final time (depth) t_end > 0",
         [](const toml::node& n, RunConfig& c) {
           c.solver.t_end = read_float(n, "solver.t_end");
           require(c.solver.t_end > 0.0, "solver.t_end", "must be > 0, got " + format_number(c.solver.t_end));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("t_end", c.solver.t_end); }});
    add({"solver.dt_min", "float", "adaptive: a step below dt_min > 0 ends the run with status step_underflow",
         [](const toml::node& n, RunConfig& c) {
           c.solver.dt_min = read_float(n, "solver.dt_min");
           require(c.solver.dt_min > 0.0, "solver.dt_min", "must be > 0, got " + format_number(c.solver.dt_min));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("dt_min", c.solver.dt_min); },
         [adaptive](const RunConfig& c) { return only_for("solver.method", c.solver.method, adaptive); }});
    add({"solver.max_steps", "integer", "stop with status max_steps after this many steps (0: unlimited)",
         [](const toml::node& n, RunConfig& c) {
           c.solver.max_steps = read_int(n, "solver.max_steps");
           require(c.solver.max_steps >= 0, "solver.max_steps", "must be >= 0");
         },
         [](const RunConfig& c, toml::table& t) { t.insert("max_steps", c.solver.max_steps); }});
    add({"solver.project", "bool",
         "renormalize the directions after every step (retraction onto the spheres); mean field: clip negative "
         "densities after every step, keeping the mass",
         [](const toml::node& n, RunConfig& c) { c.solver.project = read_bool(n, "solver.project"); },
         [](const RunConfig& c, toml::table& t) { t.insert("project", c.solver.project); },
         [](const RunConfig& c) {
           return c.solver.method == Method::discrete
                      ? std::string("does not apply to solver.method = \"discrete\" (layer maps renormalize by construction)")
                      : std::string();
         }});
    add({"solver.sync_epsilon", "float",
         "> 0: stop at the first sample time where every pairwise cosine exceeds 1 - sync_epsilon (0: off)",
         [](const toml::node& n, RunConfig& c) {
           c.solver.sync_epsilon = read_float(n, "solver.sync_epsilon");
           require(c.solver.sync_epsilon >= 0.0 && c.solver.sync_epsilon < 2.0, "solver.sync_epsilon",
                   "must be in [0, 2), got " + format_number(c.solver.sync_epsilon));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("sync_epsilon", c.solver.sync_epsilon); },
         particles_only});
    add({"solver.threads", "integer", "threads of the attention kernel (0: OMP_NUM_THREADS, else all cores)",
         [](const toml::node& n, RunConfig& c) {
           const auto v = read_int(n, "solver.threads");
           require(v >= 0 && v <= 4096, "solver.threads", "must be in [0, 4096], got " + std::to_string(v));
           c.solver.threads = static_cast<int>(v);
         },
         [](const RunConfig& c, toml::table& t) { t.insert("threads", static_cast<std::int64_t>(c.solver.threads)); },
         particles_only});

    // ---- [output]
    add({"output.path", "string", "HDF5 file of the run (the -o flag overrides it)",
         [](const toml::node& n, RunConfig& c) {
           c.output.path = read_string(n, "output.path");
           require(!c.output.path.empty(), "output.path", "must not be empty");
         },
         [](const RunConfig& c, toml::table& t) { t.insert("path", c.output.path.string()); }});
    add({"output.samples", "integer", "number >= 2 of frames, equally spaced on [0, t_end] (default 201)",
         [](const toml::node& n, RunConfig& c) {
           const auto v = read_int(n, "output.samples");
           require(v >= 2, "output.samples", "must be >= 2, got " + std::to_string(v));
           c.output.samples = v;
         },
         [](const RunConfig& c, toml::table& t) {
           if (c.output.samples) t.insert("samples", *c.output.samples);
         }});
    add({"output.times", "array of float", "explicit sample times, increasing, in [0, t_end] (instead of samples)",
         [](const toml::node& n, RunConfig& c) {
           c.output.times = read_float_array(n, "output.times");
           require(!c.output.times.empty(), "output.times", "must not be empty");
           for (std::size_t i = 1; i < c.output.times.size(); ++i)
             require(c.output.times[i] > c.output.times[i - 1], "output.times",
                     "must be strictly increasing (entry " + std::to_string(i) + ")");
           require(c.output.times.front() >= 0.0, "output.times", "must be >= 0");
           c.output.samples.reset();
         },
         [](const RunConfig& c, toml::table& t) {
           if (c.output.samples) return;
           toml::array a;
           for (double v : c.output.times) a.push_back(v);
           t.insert("times", std::move(a));
         }});
    add({"output.flush_frames", "integer",
         "flush the file after this many frames (>= 1); frames before the last flush survive a crash",
         [](const toml::node& n, RunConfig& c) {
           c.output.flush_frames = read_int(n, "output.flush_frames");
           require(c.output.flush_frames >= 1, "output.flush_frames", "must be >= 1, got " + std::to_string(c.output.flush_frames));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("flush_frames", c.output.flush_frames); }});
    add({"output.flush_seconds", "float", "... or after this many seconds of wall time (> 0), whichever comes first",
         [](const toml::node& n, RunConfig& c) {
           c.output.flush_seconds = read_float(n, "output.flush_seconds");
           require(c.output.flush_seconds > 0.0, "output.flush_seconds",
                   "must be > 0, got " + format_number(c.output.flush_seconds));
         },
         [](const RunConfig& c, toml::table& t) { t.insert("flush_seconds", c.output.flush_seconds); }});
    add({"output.observables", "bool", "write energy, variance and minimum cosine of every frame to /observables",
         [](const toml::node& n, RunConfig& c) { c.output.observables = read_bool(n, "output.observables"); },
         [](const RunConfig& c, toml::table& t) { t.insert("observables", c.output.observables); }});
    add({"output.compression", "integer", "deflate level 0-9 (with shuffle) of the frame datasets; 0: none",
         [](const toml::node& n, RunConfig& c) {
           const auto v = read_int(n, "output.compression");
           require(v >= 0 && v <= 9, "output.compression", "must be in [0, 9], got " + std::to_string(v));
           c.output.compression = static_cast<int>(v);
         },
         [](const RunConfig& c, toml::table& t) { t.insert("compression", static_cast<std::int64_t>(c.output.compression)); }});
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

// ---------------------------------------------------------------------------------------------
// --set overrides
void apply_override(toml::table& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos)
    throw InputError("--set", "expected section.key=value, got " + in_quotes(assignment));
  std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
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
  if (section_node && !section_node->is_table())
    throw InputError("--set", path + ": " + section + " is not a section");
  if (!section_node) section_node = root.insert(section, toml::table{}).first->second.as_table();
  section_node->as_table()->insert_or_assign(name, *wrapper.get("v"));
}

}  // namespace

namespace {
// Cross-key rules of the densities, the mean-field model and weighted particles.
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
    if (c.init.sampling == Sampling::grid && c.model.d != 2 && present.count("init.sampling"))
      throw InputError("init.sampling", "\"grid\" needs model.d = 2 (got " + std::to_string(c.model.d) + ")");
    return;
  }
  // model.kind = "meanfield": a density on the circle.
  c.model.d = 2;
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
    throw InputError("solver.method", "\"discrete\" applies only to model.kind = \"particles\" (the mean-field "
                                      "solver integrates the continuous-depth equation)");
  if (scheme_has_radius(c.model.scheme) && !(c.init.radius_width > 0.0))
    throw InputError("init.radius_width",
                     "must be > 0 for model.kind = \"meanfield\" with scheme " +
                         in_quotes(scheme_key(c.model.scheme)) +
                         ": the radial grid needs an initial band of radii of positive width (e.g. 0.05)");
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Parse and validate
RunConfig parse_config(std::string_view toml_text, std::string_view source_name,
                       const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InputError(std::string(source_name) + ":" + std::to_string(where.line) + ":" +
                         std::to_string(where.column),
                     "invalid TOML: " + std::string(e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o);

  // Collect present keys; reject unknown sections and keys.
  std::map<std::string, const toml::node*> present;
  std::vector<std::string> known;
  for (const auto& k : keys()) known.push_back(k.path);
  for (const auto& [section_key, section_node] : root) {
    const std::string section(section_key.str());
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
  // Selectors first, so that the other keys know which scheme, kind and method they belong to.
  for (const auto& k : keys())
    if (k.selector && present.count(k.path)) k.read(*present[k.path], c);
  for (const auto& k : keys())
    if (!k.selector && present.count(k.path)) k.read(*present[k.path], c);
  for (const auto& k : keys()) {
    if (!present.count(k.path)) continue;
    if (std::string why = k.why_not(c); !why.empty()) throw InputError(k.path, why);
  }
  if (!present.count("model.qkv_seed")) c.model.qkv_seed = c.init.seed;
  if (present.count("output.samples") && present.count("output.times"))
    throw InputError("output.times", "give either output.samples or output.times, not both");

  // Combinations.
  validate_densities(c, present);
  if (c.init.kind == InitKind::orthonormal && c.model.d < c.model.n)
    throw InputError("init.kind", "\"orthonormal\" needs model.d >= model.n (d = " + std::to_string(c.model.d) +
                                      ", n = " + std::to_string(c.model.n) + ")");
  if (c.init.kind == InitKind::file && c.init.file.empty())
    throw InputError("init.file", "is required when init.kind = \"file\"");
  if (c.model.qkv == QkvKind::file && c.model.qkv_file.empty())
    throw InputError("model.qkv_file", "is required when model.qkv = \"file\"");
  if (!c.output.samples && c.output.times.back() > c.solver.t_end)
    throw InputError("output.times", "the last sample time " + format_number(c.output.times.back()) +
                                         " exceeds solver.t_end = " + format_number(c.solver.t_end));
  if (!is_adaptive(c.solver.method) && c.solver.dt > c.solver.t_end)
    throw InputError("solver.dt", "must not exceed solver.t_end = " + format_number(c.solver.t_end));
  if (c.solver.method == Method::discrete) {
    auto is_multiple = [&](double t) {
      const double layers = t / c.solver.dt;
      return std::abs(layers - std::round(layers)) <= 1e-9 * std::max(1.0, layers);
    };
    if (!is_multiple(c.solver.t_end))
      throw InputError("solver.dt", "with solver.method = \"discrete\", solver.t_end = " + format_number(c.solver.t_end) +
                                        " must be a whole number of layers of step " + format_number(c.solver.dt));
    for (double t : c.output.sample_times(c.solver.t_end))
      if (!is_multiple(t))
        throw InputError(c.output.samples ? "output.samples" : "output.times",
                         "with solver.method = \"discrete\", sample time " + format_number(t) +
                             " is not a whole number of layers of step " + format_number(c.solver.dt));
  }
  return c;
}

namespace {

// A configuration is a few kilobytes; anything near this is not one (e.g. /dev/zero).
constexpr std::size_t kMaxConfigBytes = std::size_t{4} << 20;

// Reads at most kMaxConfigBytes from `fd` (a regular file or standard input).
std::string read_capped(int fd, const std::string& name) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(name + ": cannot read the configuration: " + std::strerror(errno));
    }
    if (got == 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > kMaxConfigBytes)
      throw InputError(name, "larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB: not a configuration file");
  }
}

}  // namespace

RunConfig load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  // "-": standard input, under the same cap.
  if (file == "-") return parse_config(read_capped(STDIN_FILENO, "standard input"), "standard input", overrides);
  // Non-blocking, so that a FIFO cannot hold the open; only regular files are read.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw InputError(file.string(), "no such configuration file");
    throw IoError(file.string() + ": cannot read the configuration file: " + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(file.string() + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputError(file.string(), S_ISDIR(st.st_mode) ? "is a directory, not a configuration file"
                                                       : "not a regular file (give a TOML file, or - for standard input)");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes)
    throw InputError(file.string(), "larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB: not a configuration file");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return parse_config(read_capped(fd, file.string()), file.string(), overrides);
}

namespace {

// Shortest text that parses back to the same double (std::to_chars), always with a decimal point
// or exponent so that TOML reads it as a float.
using toml_text::float_text;
using toml_text::string_text;

std::string toml_value(const ConfigScalar& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) return float_text(v);
        else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return string_text(v);
        else {
          std::string out = "[";
          for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + float_text(v[i]);
          return out + "]";
        }
      },
      value);
}

}  // namespace

std::string to_toml(const RunConfig& c) {
  std::string out;
  std::string section;
  for (const auto& [key, value] : config_values(c)) {
    const std::string s = section_of(key);
    if (s != section) {
      out += (section.empty() ? "[" : "\n[") + s + "]\n";
      section = s;
    }
    out += name_of(key) + " = " + toml_value(value) + "\n";
  }
  return out;
}

std::vector<std::pair<std::string, ConfigScalar>> config_values(const RunConfig& c) {
  std::vector<std::pair<std::string, ConfigScalar>> out;
  for (const auto& k : keys()) {
    if (!k.why_not(c).empty()) continue;
    toml::table section;
    k.write(c, section);
    const toml::node* node = section.get(name_of(k.path));
    if (!node) continue;
    if (const auto* f = node->as_floating_point()) out.emplace_back(k.path, f->get());
    else if (const auto* i = node->as_integer()) out.emplace_back(k.path, i->get());
    else if (const auto* b = node->as_boolean()) out.emplace_back(k.path, b->get());
    else if (const auto* s = node->as_string()) out.emplace_back(k.path, s->get());
    else if (const auto* a = node->as_array()) {
      std::vector<double> values;
      for (const auto& e : *a) values.push_back(e.value_or(0.0));
      out.emplace_back(k.path, std::move(values));
    }
  }
  return out;
}

std::vector<ConfigKeyDoc> config_reference() {
  // Defaults of scheme parameters come from the first scheme that has them.
  std::map<std::string, std::string> defaults;
  for (const auto& [key, value] : config_values(RunConfig{})) defaults[key] = toml_value(value);
  for_each_scheme([&](auto scheme) {
    RunConfig c;
    c.model.scheme = scheme;
    for (const auto& [key, value] : config_values(c)) defaults.emplace(key, toml_value(value));
  });
  std::vector<ConfigKeyDoc> out;
  for (const auto& k : keys()) out.push_back({k.path, k.type, defaults.count(k.path) ? defaults[k.path] : "", k.doc});
  return out;
}

}  // namespace normdyn
