// TOML and --set flags → RunConfig. The only translation unit that reads configuration strings.
//
// Every key is one row of a table (`keys()` below): its path, the RunConfig member it sets (a
// member pointer, as the schemes' ParamSpec), its documentation, bounds and the condition under
// which it applies; its type name, reader, messages and resolved value follow from the member.
// The same table drives parsing, unknown-key detection with a did-you-mean suggestion, the
// "applies only to" checks, serialization of the resolved configuration (`to_toml`,
// `config_values`), and `normdyn config-reference`. Scheme parameters come from the schemes' own
// ParamSpec lists, so a new scheme parameter needs no change here.
#include "normdyn/config.hpp"
#include "normdyn/utf8.hpp"
#include "normdyn/random.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <toml++/toml.h>

#include "normdyn/errors.hpp"
#include "normdyn/io/text_file.hpp"
#include "toml_text.hpp"

namespace normdyn {

// ---------------------------------------------------------------------------------------------
// Names of enumerations
namespace {

template <class E>
struct EnumNames;
template <>
struct EnumNames<QkvKind> {
  static constexpr std::array<std::pair<QkvKind, std::string_view>, 7> values{{
      {QkvKind::identity, "identity"},
      {QkvKind::gaussian, "gaussian"},
      {QkvKind::gaussian_per_layer, "gaussian_per_layer"},
      {QkvKind::gaussian_unit_norm, "gaussian_unit_norm"},
      {QkvKind::file, "file"},
      {QkvKind::given, "given"},
      {QkvKind::gaussian_per_map_layer, "gaussian_per_map_layer"},
  }};
};
template <>
struct EnumNames<InitKind> {
  static constexpr std::array<std::pair<InitKind, std::string_view>, 9> values{{
      {InitKind::uniform, "uniform"},
      {InitKind::gaussian, "gaussian"},
      {InitKind::orthonormal, "orthonormal"},
      {InitKind::cap, "cap"},
      {InitKind::file, "file"},
      {InitKind::perturbed_uniform, "perturbed_uniform"},
      {InitKind::von_mises, "von_mises"},
      {InitKind::given, "given"},
      {InitKind::equiangular, "equiangular"},
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
struct EnumNames<MeanFieldMethod> {
  static constexpr std::array<std::pair<MeanFieldMethod, std::string_view>, 2> values{{
      {MeanFieldMethod::finite_volume, "finite_volume"},
      {MeanFieldMethod::semi_lagrangian, "semi_lagrangian"},
  }};
};
template <>
struct EnumNames<FeedForwardWeights> {
  static constexpr std::array<std::pair<FeedForwardWeights, std::string_view>, 3> values{{
      {FeedForwardWeights::none, "none"},
      {FeedForwardWeights::inline_values, "inline"},
      {FeedForwardWeights::file, "file"},
  }};
};
template <>
struct EnumNames<NoiseCalculus> {
  static constexpr std::array<std::pair<NoiseCalculus, std::string_view>, 2> values{{
      {NoiseCalculus::stratonovich, "stratonovich"},
      {NoiseCalculus::ito, "ito"},
  }};
};
template <>
struct EnumNames<TermsBlock> {
  static constexpr std::array<std::pair<TermsBlock, std::string_view>, 2> values{{
      {TermsBlock::parallel, "parallel"},
      {TermsBlock::serial, "serial"},
  }};
};
// The methods' names come from their table (steppers.hpp).
template <>
struct EnumNames<Method> {
  static constexpr auto values = [] {
    std::array<std::pair<Method, std::string_view>, kMethods.size()> v{};
    for (std::size_t i = 0; i < kMethods.size(); ++i) v[i] = {kMethods[i].method, kMethods[i].name};
    return v;
  }();
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

using toml_text::in_quotes;
using toml_text::join;
// Numbers in messages: 0.3, not 0.29999999999999999.
std::string format_number(double v) { return toml_text::number_text(v); }

}  // namespace

std::string_view to_string(QkvKind k) { return enum_name(k); }
std::string_view to_string(FeedForwardWeights w) { return enum_name(w); }
std::string_view to_string(InitKind k) { return enum_name(k); }
std::string_view to_string(ModelKind k) { return enum_name(k); }
std::string_view to_string(Sampling k) { return enum_name(k); }
std::string_view to_string(Limiter k) { return enum_name(k); }
std::string_view to_string(MeanFieldMethod k) { return enum_name(k); }

bool is_density_kind(InitKind k) {
  return k == InitKind::uniform || k == InitKind::perturbed_uniform || k == InitKind::von_mises;
}

std::vector<double> OutputConfig::sample_times(double t_end, double t_start) const {
  if (!samples) return times;
  const auto count = *samples;
  std::vector<double> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    out[static_cast<std::size_t>(i)] =
        t_start + (t_end - t_start) * static_cast<double>(i) / static_cast<double>(count - 1);
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

// The error of a word that is none of a key's choices: the choices, and the nearest one if any.
[[noreturn]] void unknown_choice(const std::string& key, std::string_view what, const std::string& word,
                                 const std::vector<std::string>& names) {
  std::string msg = "unknown " + std::string(what) + " " + in_quotes(word) + "; valid: " + join(names);
  if (auto guess = did_you_mean(word, names)) msg += " (did you mean " + in_quotes(*guess) + "?)";
  throw InputError(key, msg);
}

template <class E>
E read_enum(const toml::node& n, const std::string& key) {
  const std::string word = read_string(n, key);
  for (const auto& [value, name] : EnumNames<E>::values)
    if (name == word) return value;
  unknown_choice(key, "value", word, enum_names<E>());
}

Scheme read_scheme(const toml::node& n, const std::string& key) {
  const std::string word = read_string(n, key);
  if (auto s = make_scheme(word)) return *s;
  std::vector<std::string> names;
  for (auto k : scheme_keys()) names.emplace_back(k);
  unknown_choice(key, "scheme", word, names);
}

void require(bool ok, const std::string& key, const std::string& problem) {
  if (!ok) throw InputError(key, problem);
}

// ---------------------------------------------------------------------------------------------
// The key table. A key is one row: its path, the member of RunConfig it sets, its documentation,
// its bounds and the condition under which it applies. The type name, the reader, the bound
// messages and the resolved value follow from the member's type.
using Applies = std::function<std::string(const RunConfig&)>;  // empty string: the key applies

struct Key {
  std::string path;  // "section.name"
  std::string type;
  std::string doc;
  std::function<void(const toml::node&, RunConfig&, const std::string& path)> read;
  // The resolved value (only asked when the key applies); none: the key is not written.
  std::function<std::optional<ConfigScalar>(const RunConfig&)> value;
  Applies applies = nullptr;  // empty: always applies
  bool selector = false;      // read before the other keys (scheme, kinds, method)
  std::string default_text;   // the default as the reference shows it, when not the default config's value

  std::string why_not(const RunConfig& c) const { return applies ? applies(c) : std::string(); }
};

std::string section_of(const std::string& path) { return path.substr(0, path.find('.')); }
std::string name_of(const std::string& path) { return path.substr(path.find('.') + 1); }

// The valid values of a number: "must be >= 1, got 0", "must be in (0, 2), got 2.5".
struct Bounds {
  std::optional<double> lower, upper;
  bool lower_inclusive = true, upper_inclusive = true;
  std::string upper_text;  // the upper bound as written in the message, if not as its number
  std::string note;        // why, after the interval

  template <class V>
  void check(V v, const std::string& key, std::string_view what = "must be ") const {
    const auto x = static_cast<double>(v);
    const bool ok = (!lower || (lower_inclusive ? x >= *lower : x > *lower)) &&
                    (!upper || (upper_inclusive ? x <= *upper : x < *upper));
    if (ok) return;
    std::string valid;
    if (lower && upper)
      valid = "in " + std::string(lower_inclusive ? "[" : "(") + format_number(*lower) + ", " +
              (upper_text.empty() ? format_number(*upper) : upper_text) + (upper_inclusive ? "]" : ")");
    else if (lower)
      valid = std::string(lower_inclusive ? ">= " : "> ") + format_number(*lower);
    else
      valid = std::string(upper_inclusive ? "<= " : "< ") + format_number(*upper);
    const std::string got = std::is_integral_v<V> ? std::to_string(v) : format_number(x);
    throw InputError(key, std::string(what) + valid + (note.empty() ? "" : " " + note) + ", got " + got);
  }
};
Bounds at_least(double x) {
  Bounds b;
  b.lower = x;
  return b;
}
Bounds above(double x) {
  Bounds b = at_least(x);
  b.lower_inclusive = false;
  return b;
}
Bounds in_range(double lo, bool lo_inclusive, double hi, bool hi_inclusive, std::string note = {},
                std::string upper_text = {}) {
  Bounds b;
  b.lower = lo;
  b.upper = hi;
  b.lower_inclusive = lo_inclusive;
  b.upper_inclusive = hi_inclusive;
  b.note = std::move(note);
  b.upper_text = std::move(upper_text);
  return b;
}

// A key's rules beyond its type: bounds of a number, strings and arrays that must not be empty,
// bounds of every entry of an array, and whether one number stands for an array of it.
struct Rules {
  Rules(Bounds b = {}) : bounds(std::move(b)) {}  // NOLINT: a bare Bounds is the common rule
  Bounds bounds;
  bool non_empty = false;
  Bounds entries;
  bool scalar_as_array = false;
};
Rules not_empty() {
  Rules r;
  r.non_empty = true;
  return r;
}
Rules every_entry(Bounds b, bool non_empty = false, bool scalar_as_array = false) {
  Rules r;
  r.non_empty = non_empty;
  r.entries = std::move(b);
  r.scalar_as_array = scalar_as_array;
  return r;
}

// How a member type is spelled in TOML.
template <class T>
struct Wire;
template <>
struct Wire<double> {
  static constexpr std::string_view type = "float";
  static double read(const toml::node& n, const std::string& key) { return read_float(n, key); }
};
template <>
struct Wire<std::int64_t> {
  static constexpr std::string_view type = "integer";
  static std::int64_t read(const toml::node& n, const std::string& key) { return read_int(n, key); }
};
template <>
struct Wire<bool> {
  static constexpr std::string_view type = "bool";
  static bool read(const toml::node& n, const std::string& key) { return read_bool(n, key); }
};
template <>
struct Wire<std::string> {
  static constexpr std::string_view type = "string";
  static std::string read(const toml::node& n, const std::string& key) { return read_string(n, key); }
};
template <>
struct Wire<std::vector<double>> {
  static constexpr std::string_view type = "array of float";
  static std::vector<double> read(const toml::node& n, const std::string& key) { return read_float_array(n, key); }
};

// The TOML type a member is read as: integers of every width as int64, paths as strings.
template <class T>
struct WireOf {
  using type = T;
};
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
struct WireOf<T> {
  using type = std::int64_t;
};
template <>
struct WireOf<std::filesystem::path> {
  using type = std::string;
};
template <class T>
struct WireOf<std::optional<T>> : WireOf<T> {};

template <class T>
ConfigScalar scalar_of(const T& v) {
  if constexpr (std::is_enum_v<T>) return std::string(enum_name(v));
  else if constexpr (std::is_same_v<T, std::filesystem::path>) return v.string();
  else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, std::string> ||
                     std::is_same_v<T, std::vector<double>>)
    return v;
  else return static_cast<std::int64_t>(v);
}

// A key that sets `(config.*section).*member`.
template <class Section, class T>
Key field(std::string path, Section RunConfig::*section, T Section::*member, std::string doc, Rules rules = {},
          Applies applies = nullptr) {
  Key k;
  k.path = std::move(path);
  k.doc = std::move(doc);
  k.applies = std::move(applies);
  if constexpr (std::is_enum_v<T>) {
    (void)rules;
    k.type = "string";
    k.read = [section, member](const toml::node& n, RunConfig& c, const std::string& key) {
      (c.*section).*member = read_enum<T>(n, key);
    };
  } else {
    using W = typename WireOf<T>::type;
    k.type = std::string(Wire<W>::type);
    k.read = [section, member, rules](const toml::node& n, RunConfig& c, const std::string& key) {
      W v;
      if constexpr (std::is_same_v<W, std::vector<double>>) {
        v = rules.scalar_as_array && !n.is_array() ? W{read_float(n, key)} : Wire<W>::read(n, key);
        for (double e : v) rules.entries.check(e, key, "every entry must be ");
      } else {
        v = Wire<W>::read(n, key);
      }
      if constexpr (std::is_arithmetic_v<W> && !std::is_same_v<W, bool>) rules.bounds.check(v, key);
      if constexpr (std::is_same_v<W, std::string> || std::is_same_v<W, std::vector<double>>)
        require(!rules.non_empty || !v.empty(), key, "must not be empty");
      if constexpr (std::is_same_v<T, W> || std::is_same_v<T, std::optional<W>>) (c.*section).*member = v;
      else (c.*section).*member = static_cast<T>(v);
    };
  }
  k.value = [section, member](const RunConfig& c) -> std::optional<ConfigScalar> {
    const T& v = c.*section.*member;
    if constexpr (requires { v.has_value(); }) {
      if (!v) return std::nullopt;
      return scalar_of(*v);
    } else {
      return scalar_of(v);
    }
  };
  return k;
}

// A key read before the others, because it decides which other keys apply.
Key selector(Key k) {
  k.selector = true;
  return k;
}

// The valid values of an enumeration, as listed in its key's documentation.
template <class E>
std::string choices() {
  return join(enum_names<E>(), " | ");
}

template <class E>
std::string only_for(std::string_view selector_key, E actual, const std::vector<E>& allowed) {
  for (E a : allowed)
    if (a == actual) return {};
  std::vector<std::string> names;
  for (E a : allowed) names.push_back(in_quotes(enum_name(a)));
  return "applies only to " + std::string(selector_key) + " = " + join(names, " or ") + " (" +
         std::string(selector_key) + " is " + in_quotes(enum_name(actual)) + ")";
}

// Conditions shared by several keys.
std::string particles_only(const RunConfig& c) {
  return c.model.kind == ModelKind::particles
             ? std::string()
             : std::string("does not apply to model.kind = \"meanfield\" (a density on the circle, d = 2; "
                           "its resolution is meanfield.grid)");
}
std::string meanfield_only(const RunConfig& c) { return only_for("model.kind", c.model.kind, {ModelKind::meanfield}); }
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
    doc += std::string(doc.back() == ':' ? " " : ", ") + join(names, " | ") + " (" + std::string(to_string(control)) + ")";
  }
  return doc + "; see the table of methods below";
}

std::string fixed_step_names() {
  std::vector<std::string> names;
  for (const Method m : methods_with(StepControl::fixed)) names.emplace_back(to_string(m));
  return join(names);
}

// A parameter's value read as its type asks (ParamSpec::member's index: real, integer, bool, string).
ParamValue read_parameter(const toml::node& n, const std::string& key, std::size_t type) {
  switch (type) {
    case 0: return read_float(n, key);
    case 1: return read_int(n, key);
    case 2: return read_bool(n, key);
    default: return read_string(n, key);
  }
}

ConfigScalar scalar_of_parameter(const ParamValue& v) {
  return std::visit([](const auto& x) { return ConfigScalar(x); }, v);
}

// The rows of the typed parameters of a list's alternatives (their ParamSpec lists), one per
// parameter key even if several alternatives share it, read into the alternative chosen in
// (config.*section).*member: the schemes' model.<key>, the attention's attention.<key>, the noises'
// noise.<key>. `doc_suffix(key)` ends a row's documentation; `why_not(config, key)` says why it does
// not apply to the chosen one. A real given where an integer is asked (2.5), or out of its bounds, is
// refused naming the key.
template <class List, class Section>
std::vector<Key> list_parameter_rows(const std::string& table, Section RunConfig::*section, List Section::*member,
                                     const std::function<std::string(std::string_view)>& doc_suffix,
                                     const std::function<std::string(const RunConfig&, const std::string&)>& why_not) {
  std::vector<Key> out;
  std::map<std::string, std::size_t> types;
  for_each_alternative<List>([&](auto alternative) {
    using A = decltype(alternative);
    for (std::size_t index = 0; index < A::params.size(); ++index) {
      const auto& p = A::params[index];
      const std::string param(p.key);
      if (const auto seen = types.find(param); seen != types.end()) {
        // Alternatives that share a key share its row, so they must agree on its type.
        if (seen->second != p.member.index())
          throw std::logic_error(table + "." + param + ": alternatives give this parameter different types");
        continue;
      }
      types[param] = p.member.index();
      Key k;
      k.path = table + "." + param;
      k.type = std::string(p.type());
      k.doc = std::string(p.doc) + doc_suffix(p.key);
      k.default_text = std::visit(
          [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, double>) return toml_text::float_text(v);
            else if constexpr (std::is_same_v<T, std::string>) return toml_text::string_text(v);
            else return parameter_text(v);
          },
          parameter_value(alternative, index));
      k.read = [section, member, param, type = p.member.index()](const toml::node& n, RunConfig& c,
                                                                 const std::string& key) {
        const ParamValue v = read_parameter(n, key, type);
        std::visit(
            [&](auto& chosen) {
              using C = std::decay_t<decltype(chosen)>;
              for (std::size_t i = 0; i < C::params.size(); ++i) {
                if (C::params[i].key != param) continue;
                if (std::string problem = parameter_problem(C::params[i], v, format_number); !problem.empty())
                  throw InputError(key, problem);
                set_parameter(chosen, i, v);
              }
            },
            (c.*section).*member);
      };
      k.value = [section, member, param](const RunConfig& c) -> std::optional<ConfigScalar> {
        for (const auto& [name, value] : alternative_parameters((c.*section).*member))
          if (name == param) return scalar_of_parameter(value);
        return std::nullopt;
      };
      k.applies = [section, member, param, why_not](const RunConfig& c) {
        for (const auto& [name, value] : alternative_parameters((c.*section).*member))
          if (name == param) return std::string();
        return why_not(c, param);
      };
      out.push_back(std::move(k));
    }
  });
  return out;
}

// The alternatives of a list that have the parameter `param`, in quotes: "\"mix\" or \"ngpt\"".
template <class List>
std::string owners_of(std::string_view param) {
  std::vector<std::string> owners;
  for_each_alternative<List>([&](auto a) {
    for (const auto& p : decltype(a)::params)
      if (p.key == param) owners.push_back(in_quotes(decltype(a)::key));
  });
  return join(owners, " or ");
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

// Why the chosen alternative of a list does not apply to the configuration (empty if it does): the
// mean-field solver does not implement it (its traits; `meanfield_why` says more), or the tokens'
// dimension does not suit it (its optional `not_for_dimension(d)`).
template <class List>
std::string choice_problem(const RunConfig& c, const List& chosen, const std::string& meanfield_why) {
  if (c.model.kind == ModelKind::meanfield && !alternative_traits(chosen).meanfield)
    return in_quotes(alternative_key(chosen)) + " does not apply to model.kind = \"meanfield\" " + meanfield_why;
  return std::visit(
      [&](const auto& a) -> std::string {
        if constexpr (requires { a.not_for_dimension(Index{}); })
          if (c.model.kind == ModelKind::particles) return a.not_for_dimension(c.model.d);
        return {};
      },
      chosen);
}

// A key choosing one alternative of a list by its key, into (config.*section).*member: the lists of
// the attention (attention_spec.hpp), the noise, the activation of the feed-forward term. A choice
// whose traits say the mean-field solver does not implement it is refused there, naming the choice
// and then `meanfield_why`.
template <class List, class Section>
Key list_choice_row(std::string path, std::string doc, Section RunConfig::*section, List Section::*member,
                    std::string meanfield_why) {
  std::vector<std::string> names;
  for (auto k : alternative_keys<List>()) names.emplace_back(k);
  Key k;
  k.path = std::move(path);
  k.type = "string";
  k.doc = doc + ": " + join(names, " | ");
  k.read = [section, member, names](const toml::node& n, RunConfig& c, const std::string& key) {
    const std::string word = read_string(n, key);
    if (auto a = make_alternative<List>(word)) {
      (c.*section).*member = *a;
      return;
    }
    unknown_choice(key, "value", word, names);
  };
  k.value = [section, member](const RunConfig& c) -> std::optional<ConfigScalar> {
    return std::string(alternative_key((c.*section).*member));
  };
  k.applies = [section, member, meanfield_why](const RunConfig& c) {
    return choice_problem(c, (c.*section).*member, meanfield_why);
  };
  return k;
}

// The rows of the [attention] table, generated from the lists (attention_spec.hpp): for each list its
// choice attention.<list> (a selector) and the parameters of its alternatives, attention.<param key>.
// The keys of the first release, attention.alibi = lambda and attention.rope = true, stay as aliases.
const std::string kNoPositionsInMeanField =
    "(the mean-field solver implements softmax attention over all tokens, without positions)";

// An old key that chooses alternative `alternative` of the list `member` (and sets its parameter
// `param` to the key's value), or the list's first alternative when the value is 0 or false. Never
// written back: the resolved configuration names the choice by its list's key.
template <class List>
Key alias_row(std::string path, std::string type, std::string doc, List AttentionSpec::*member,
              std::string choice_key, std::string_view alternative, std::string_view param) {
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
             [member, choice_key](const RunConfig& c, const std::string& key) {
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
  Key activation = list_choice_row("feedforward.activation",
                                   "activation sigma of the feed-forward term (gelu: the exact u Phi(u))", &C::feedforward,
                                   &FeedForwardConfig::activation, "");
  activation.applies = with_feedforward;
  std::vector<Key> k{
      selector(field("feedforward.weights", &C::feedforward, &FeedForwardConfig::weights,
                     "the feed-forward term F(x) = sum_m omega_m sigma(<a_m, x>) a_m added to the attention (U_i = A_i "
                     "+ F(theta_i)): none | inline (feedforward.a, feedforward.omega; Python's feedforward=(a, omega)) | "
                     "file (feedforward.file)",
                     {},
                     [](const C& c) {
                       if (c.feedforward.active() && c.model.kind == ModelKind::meanfield &&
                           !FeedForward{}.traits().meanfield)
                         return std::string("does not apply to model.kind = \"meanfield\" (the mean-field solver has no "
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
            [](const C& c) { return only_for("feedforward.weights", c.feedforward.weights, {FeedForwardWeights::file}); }),
      activation,
      field("feedforward.block", &C::feedforward, &FeedForwardConfig::block,
            "discrete layer maps (solver.method = \"discrete\"): parallel, one map with U = A + F (x + a(x) + g(x)) | "
            "serial, the attention map then the feed-forward map at the state it left (x + a(x) + g(x + a(x))); "
            "the ODE is the same for both",
            {}, with_feedforward),
  };
  return k;
}

// Inline weights fit model.d: a holds M rows of d entries for the M entries of omega.
void validate_feedforward(const RunConfig& c, const std::map<std::string, const toml::node*>& present) {
  const FeedForwardConfig& f = c.feedforward;
  if (f.weights == FeedForwardWeights::inline_values) {
    for (const char* key : {"feedforward.a", "feedforward.omega"})
      if (!present.count(key)) throw InputError(key, "is required when feedforward.weights = \"inline\"");
    const auto d = static_cast<std::size_t>(c.model.d);
    if (f.a.size() != f.omega.size() * d)
      throw InputError("feedforward.a", "must hold M = " + std::to_string(f.omega.size()) + " rows of model.d = " +
                                            std::to_string(d) + " entries (the length of feedforward.omega times d = " +
                                            std::to_string(f.omega.size() * d) + "), got " + std::to_string(f.a.size()));
  }
  if (f.weights == FeedForwardWeights::file && !present.count("feedforward.file"))
    throw InputError("feedforward.file", "is required when feedforward.weights = \"file\"");
}

std::vector<Key> noise_parameter_rows() {
  return list_parameter_rows(
      "noise", &RunConfig::noise, &NoiseSpec::kind, [](std::string_view) { return std::string(" (required with noise)"); },
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
  k.doc = "[t0, t1, K]: K >= 2 log-spaced sample times from t0 > 0 to t1 > t0, after solver.t_start "
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

const std::vector<Key>& keys() {
  using C = RunConfig;
  static const std::vector<Key> table = [] {
    std::vector<Key> k{
        // ---- [model]
        scheme_key_row(),
        selector(field("model.kind", &C::model, &ModelConfig::kind,
                       "what is simulated: particles (n tokens, possibly weighted) | meanfield (density on the "
                       "circle, d = 2)")),
        field("model.n", &C::model, &ModelConfig::n, "number of tokens n >= 1", {at_least(1)}, particles_only),
        field("model.d", &C::model, &ModelConfig::d, "dimension d >= 2 of the token space (tokens live on S^{d-1})",
              {at_least(2)}, particles_only),
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
              "gaussian_per_map_layer: sigma >= 0 of the fresh values V = I + (sigma/sqrt(h)) G_k of every layer k of the "
              "discrete maps (h = solver.dt, G_k standard normal; Q = K = I): the discrete model of noise.kind = "
              "\"value\" (required)",
              {at_least(0)},
              [](const C& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::gaussian_per_map_layer}); }),
        field("model.qkv_file", &C::model, &ModelConfig::qkv_file,
              "HDF5 file with datasets Q, K, V, each [d, d] or [layers, d, d]; with model.heads = H > 1, "
              "[H, d, d] or [layers, H, d, d]", {},
              [](const C& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::file}); }),
        field("model.qkv_digest", &C::model, &ModelConfig::qkv_digest,
              "given: digest of the matrices given with the run (FNV-1a of their values, set by normdyn; the run "
              "file holds the matrices and is checked against it)", {},
              [](const C& c) { return only_for("model.qkv", c.model.qkv, {QkvKind::given}); }),
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

    const std::vector<Key> rest{
        // ---- [meanfield]
        field("meanfield.grid", &C::meanfield, &MeanFieldConfig::grid, "cells M >= 8 of the uniform grid in the angle phi",
              {in_range(8, true, double(std::int64_t{1} << 24), true, {}, "2^24")}, meanfield_only),
        field("meanfield.radial_grid", &C::meanfield, &MeanFieldConfig::radial_grid,
              "cells >= 4 of the radial grid, which moves with the support of the radii (schemes with a radius)",
              {in_range(4, true, 65536, true)},
              [](const C& c) {
                if (std::string why = meanfield_only(c); !why.empty()) return why;
                if (scheme_has_radius(c.model.scheme)) return std::string();
                return "applies only to schemes with a radius (pre, mix, peri); model.scheme is " +
                       in_quotes(scheme_key(c.model.scheme));
              }),
        field("meanfield.limiter", &C::meanfield, &MeanFieldConfig::limiter,
              "slope limiter of the fluxes: van_leer (2nd order) | minmod (2nd order) | upwind (1st order)", {},
              meanfield_only),
        field("meanfield.method", &C::meanfield, &MeanFieldConfig::method,
              "transport of the split step (solver.method = \"split\"): finite_volume (the finite volumes by SSP-RK3; "
              "steps need h |v| < 2 pi / M) | semi_lagrangian (flux-form semi-Lagrangian; steps need h |d v / d phi| "
              "< 1 whatever M; schemes without a radius; solver.method = \"auto\" takes split)",
              {},
              [](const C& c) {
                if (std::string why = meanfield_only(c); !why.empty()) return why;
                if (c.meanfield.method == MeanFieldMethod::semi_lagrangian && scheme_has_radius(c.model.scheme))
                  return "\"semi_lagrangian\" applies only to schemes without a radius (post, cod); model.scheme is " +
                         in_quotes(scheme_key(c.model.scheme));
                if (c.meanfield.method == MeanFieldMethod::semi_lagrangian && c.solver.method != Method::split)
                  return "\"semi_lagrangian\" is the transport of solver.method = \"split\" (or \"auto\"); "
                         "solver.method is " + in_quotes(to_string(c.solver.method));
                return std::string();
              }),

        // ---- [init]
        selector(field("init.kind", &C::init, &InitConfig::kind, "initial tokens or density: " + choices<InitKind>())),
        field("init.seed", &C::init, &InitConfig::seed, "seed of every random choice of the run (>= 0)", {at_least(0)}),
        field("init.r0", &C::init, &InitConfig::r0, "initial radius r0 > 0 of every token (kinds that do not set radii)",
              {above(0)},
              [](const C& c) {
                if (c.init.kind == InitKind::gaussian)
                  return std::string("does not apply to init.kind = \"gaussian\", which sets r_j = |x_j|");
                return std::string();
              }),
        field("init.delta", &C::init, &InitConfig::delta, "cap: every pairwise cosine >= 1 - delta, 0 < delta < 2",
              {in_range(0, false, 2, false)}, init_kind_is({InitKind::cap})),
        field("init.tokens_digest", &C::init, &InitConfig::tokens_digest,
              "given: digest of the tokens given with the run (FNV-1a of their values, set by normdyn; the run file "
              "holds the tokens and is checked against it)", {}, init_kind_is({InitKind::given})),
        field("init.rho", &C::init, &InitConfig::rho,
              "equiangular: every pairwise cosine rho, -1/(n-1) <= rho < 1 (needs model.d >= model.n)",
              {in_range(-1, true, 1, false)}, init_kind_is({InitKind::equiangular})),
        field("init.file", &C::init, &InitConfig::file, "file: HDF5 file holding the initial tokens", {},
              init_kind_is({InitKind::file})),
        field("init.dataset", &C::init, &InitConfig::dataset, "file: dataset of directions, [n, d] or [frames, n, d]", {},
              init_kind_is({InitKind::file})),
        field("init.frame", &C::init, &InitConfig::frame,
              "file: frame of a 3-D dataset; negative counts from the end (-1: last)", {}, init_kind_is({InitKind::file})),
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
              {in_range(-1, true, 1, true, "(the density must stay >= 0)")}, init_kind_is({InitKind::perturbed_uniform})),
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
        field("output.path", &C::output, &OutputConfig::path, "HDF5 file of the run (the -o flag overrides it)", not_empty()),
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
              "deflate level 0-9 (with shuffle) of the frame datasets; 0: none (the default: directions and radii are near-random doubles, level 1 saved 11% of the file and made a Pre-LN run at n = d = 256 five times slower)", {in_range(0, true, 9, true)}),
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

// ---------------------------------------------------------------------------------------------
// --set overrides: "section.key=value" sets the key; "section.key:=value" also replaces the keys of
// the base that conflict with it (they are dropped as if the base never set them).
struct AppliedOverride {
  std::string path;
  bool replace = false;
};

AppliedOverride apply_override(toml::table& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos)
    throw InputError("--set", "expected section.key=value, got " + in_quotes(assignment));
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
  if (section_node && !section_node->is_table())
    throw InputError("--set", path + ": " + section + " is not a section");
  if (!section_node) section_node = root.insert(section, toml::table{}).first->second.as_table();
  section_node->as_table()->insert_or_assign(name, *wrapper.get("v"));
  return {path, replace};
}

// A key of the base that conflicts with the overrides: dropped under a replacing override, else
// reported with the way out.
struct BaseConflict {
  std::string path;
  std::string why;
};

}  // namespace

namespace {
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
      refuse_method(in_quotes(to_string(m)) + " converges to the Stratonovich flow; noise.calculus = \"ito\" needs "
                    "\"euler_maruyama\" (or solver.method = \"auto\")");
  } else if (m == Method::euler_maruyama) {
    const std::string use = "; use \"stratonovich_heun\", or noise.calculus = \"ito\" for the Ito flow";
    if (c.noise.needs_means())
      throw InputError("solver.method", "\"euler_maruyama\" does not converge to the Stratonovich flow of " + noise +
                                            " (its coefficient depends on every token)" + use);
    if (speed_depends_on_attention(c.model.scheme))
      throw InputError("solver.method", "\"euler_maruyama\" does not converge to the Stratonovich flow of model.scheme = " +
                                            in_quotes(scheme_key(c.model.scheme)) +
                                            " with noise (its speed factor depends on the attention)" + use);
  }
  if (c.noise.needs_means() && c.model.heads > 1)
    throw InputError("model.heads", noise + " is defined for one attention head; model.heads = " +
                                        std::to_string(c.model.heads));
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
      throw InputError("solver.method", "\"split\" applies only to model.kind = \"meanfield\" (the mean-field "
                                        "solver's own step)");
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
}  // namespace

// ---------------------------------------------------------------------------------------------
// Parse and validate
namespace {
RunConfig resolve_config(const toml::table& root, const std::set<std::string>& overridden);
}

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
        throw InputError(conflict.path, conflict.why + " (set by the base configuration: `--set KEY:=VALUE` sets KEY "
                                            "and drops the keys of the base that conflict with it)");
      const auto dot = conflict.path.find('.');
      if (auto* section = root.get_as<toml::table>(conflict.path.substr(0, dot)))
        section->erase(conflict.path.substr(dot + 1));
    }
  }
}

namespace {
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
      if (k == "library") spec.library = read_string(value, path);
      else if (k == "symbol") spec.symbol = read_string(value, path);
      else if (k == "name") spec.name = read_string(value, path);
      else if (k == "rows") spec.rows = read_bool(value, path);
      else if (k == "digest") spec.digest = read_string(value, path);
      else if (k == "params" && value.is_table())
        for (const auto& [pk, pv] : *value.as_table()) spec.numbers.emplace_back(std::string(pk.str()), read_float(pv, path + "." + std::string(pk.str())));
      else throw InputError(path, "unknown key of [[terms]]; valid: library, symbol, name, rows, params (a table of numbers)");
    }
    if (spec.library.empty() || spec.symbol.empty()) throw InputError("terms", "every [[terms]] needs library and symbol");
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
      throw InputError("model.qkv", "\"gaussian_per_map_layer\" draws V per layer of the discrete maps; it needs "
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
      throw InputError("init.rho", "must be >= -1/(n - 1) = " + format_number(-1.0 / static_cast<double>(c.model.n - 1)) +
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
                                                 "attention.mask = " + in_quotes(alternative_key(c.attention.mask)));
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
                                      format_number(c.solver.t_end) + " (t_end * 2^-52 = " +
                                      format_number(c.solver.t_end * kTimeResolution) +
                                      "): steps this small cannot advance t (and would number more than 2^52); "
                                      "raise solver.dt or lower solver.t_end");
  if (c.solver.method == Method::discrete) {
    auto is_multiple = [&](double t) {
      const double layers = t / c.solver.dt;
      return std::abs(layers - std::round(layers)) <= 1e-9 * std::max(1.0, layers);
    };
    if (!is_multiple(c.solver.t_end))
      throw InputError("solver.dt", "with solver.method = \"discrete\", solver.t_end = " + format_number(c.solver.t_end) +
                                        " must be a whole number of layers of step " + format_number(c.solver.dt));
    if (!is_multiple(c.solver.t_start))
      throw InputError("solver.t_start", "with solver.method = \"discrete\", must be a whole number of layers of step " +
                                             format_number(c.solver.dt));
    for (double t : c.output.sample_times(c.solver.t_end, c.solver.t_start))
      if (!is_multiple(t))
        throw InputError(c.output.samples ? "output.samples" : "output.times",
                         "with solver.method = \"discrete\", sample time " + format_number(t) +
                             " is not a whole number of layers of step " + format_number(c.solver.dt));
  }
  return c;
}
}  // namespace

RunConfig load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  const std::string source = file == "-" ? "standard input" : file.string();
  return parse_config(read_text_file(file, source, "configuration file"), source, overrides);
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

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = toml_text::utf8_sequence_length(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

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
  for (const UserTermSpec& t : c.terms) {
    if (t.kind != "library") continue;  // given with the run: recorded beside the text
    out += "\n[[terms]]\nname = " + string_text(t.name) + "\nlibrary = " + string_text(t.library.string()) +
           "\nsymbol = " + string_text(t.symbol) + "\nrows = " + (t.rows ? "true" : "false") + "\n";
    if (!t.digest.empty()) out += "digest = " + string_text(t.digest) + "\n";
    if (!t.numbers.empty()) {
      out += "params = {";
      for (std::size_t i = 0; i < t.numbers.size(); ++i)
        out += (i ? ", " : " ") + string_text(t.numbers[i].first) + " = " + float_text(t.numbers[i].second);
      out += " }\n";
    }
  }
  return out;
}

std::vector<std::pair<std::string, ConfigScalar>> config_values(const RunConfig& c) {
  std::vector<std::pair<std::string, ConfigScalar>> out;
  for (const auto& k : keys()) {
    if (!k.why_not(c).empty()) continue;
    if (auto v = k.value(c)) out.emplace_back(k.path, std::move(*v));
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
  for (const auto& k : keys())
    out.push_back({k.path, k.type, !k.default_text.empty() ? k.default_text : defaults.count(k.path) ? defaults[k.path] : "", k.doc});
  return out;
}

}  // namespace normdyn
