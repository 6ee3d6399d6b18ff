// The configuration's machinery shared by the files of src/config/ (not installed): names of the
// enumerations, typed readers, the key table's row type and the templates that generate rows from the
// lists. Only the files of src/config/ include it.
//
// TOML and --set flags → RunConfig: src/config/ is the only code that reads configuration strings.
//
// Every key is one row of a table (`keys()`, key_table.cpp): its path, the RunConfig member it sets (a
// member pointer, as the schemes' ParamSpec), its documentation, bounds and the condition under
// which it applies; its type name, reader, messages and resolved value follow from the member.
// The same table drives parsing, unknown-key detection with a did-you-mean suggestion, the
// "applies only to" checks, serialization of the resolved configuration (`to_toml`,
// `config_values`), and `normdyn config-reference`. Scheme parameters come from the schemes' own
// ParamSpec lists, so a new scheme parameter needs no change here.
#pragma once

#include "normdyn/config.hpp"
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

namespace normdyn::config_internal {

// ---------------------------------------------------------------------------------------------
// Names of enumerations
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
struct EnumNames<NoiseIncrements> {
  static constexpr std::array<std::pair<NoiseIncrements, std::string_view>, 2> values{{
      {NoiseIncrements::counter, "counter"},
      {NoiseIncrements::tree, "tree"},
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
inline std::string format_number(double v) { return toml_text::number_text(v); }

// ---------------------------------------------------------------------------------------------
// Typed readers (readers.cpp)
std::string type_name(const toml::node& n);
double read_float(const toml::node& n, const std::string& key);
std::int64_t read_int(const toml::node& n, const std::string& key);
std::string read_string(const toml::node& n, const std::string& key);
bool read_bool(const toml::node& n, const std::string& key);
std::vector<double> read_float_array(const toml::node& n, const std::string& key);
// The error of a word that is none of a key's choices: the choices, and the nearest one if any.
[[noreturn]] void unknown_choice(const std::string& key, std::string_view what, const std::string& word,
                                 const std::vector<std::string>& names);

template <class E>
E read_enum(const toml::node& n, const std::string& key) {
  const std::string word = read_string(n, key);
  for (const auto& [value, name] : EnumNames<E>::values)
    if (name == word) return value;
  unknown_choice(key, "value", word, enum_names<E>());
}

Scheme read_scheme(const toml::node& n, const std::string& key);
void require(bool ok, const std::string& key, const std::string& problem);

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

inline std::string section_of(const std::string& path) { return path.substr(0, path.find('.')); }
inline std::string name_of(const std::string& path) { return path.substr(path.find('.') + 1); }

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
Bounds at_least(double x);
Bounds above(double x);
Bounds in_range(double lo, bool lo_inclusive, double hi, bool hi_inclusive, std::string note = {},
                std::string upper_text = {});

// A key's rules beyond its type: bounds of a number, strings and arrays that must not be empty,
// bounds of every entry of an array, and whether one number stands for an array of it.
struct Rules {
  Rules(Bounds b = {}) : bounds(std::move(b)) {}  // NOLINT: a bare Bounds is the common rule
  Bounds bounds;
  bool non_empty = false;
  Bounds entries;
  bool scalar_as_array = false;
};
Rules not_empty();
Rules every_entry(Bounds b, bool non_empty = false, bool scalar_as_array = false);

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
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct WireOf<T> {
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
  if constexpr (std::is_enum_v<T>)
    return std::string(enum_name(v));
  else if constexpr (std::is_same_v<T, std::filesystem::path>)
    return v.string();
  else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, std::string> ||
                     std::is_same_v<T, std::vector<double>>)
    return v;
  else
    return static_cast<std::int64_t>(v);
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
      if constexpr (std::is_same_v<T, W> || std::is_same_v<T, std::optional<W>>)
        (c.*section).*member = v;
      else
        (c.*section).*member = static_cast<T>(v);
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
Key selector(Key k);

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

// Conditions shared by several keys (rows.cpp).
std::string particles_only(const RunConfig& c);
std::string meanfield_only(const RunConfig& c);
std::string circle_meanfield_only(const RunConfig& c);
Applies init_kind_is(std::vector<InitKind> kinds);
std::vector<Method> methods_with(StepControl control);
std::string adaptive_only(const RunConfig& c);
std::string method_doc();
std::string fixed_step_names();

// A parameter's value read as its type asks (ParamSpec::member's index: real, integer, bool, string).
ParamValue read_parameter(const toml::node& n, const std::string& key, std::size_t type);
ConfigScalar scalar_of_parameter(const ParamValue& v);

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
            if constexpr (std::is_same_v<T, double>)
              return toml_text::float_text(v);
            else if constexpr (std::is_same_v<T, std::string>)
              return toml_text::string_text(v);
            else
              return parameter_text(v);
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

// ---------------------------------------------------------------------------------------------
// Rows whose reading is more than a typed value and bounds (rows.cpp), and the table (key_table.cpp).
std::vector<Key> scheme_parameter_keys();
Key scheme_key_row();
std::vector<Key> attention_rows();
Key noise_kind_row();
std::string with_feedforward(const RunConfig& c);
std::vector<Key> feedforward_rows();
std::vector<Key> noise_parameter_rows();
Key then(Key k, std::function<void(RunConfig&, const std::string& key)> after);
Key kappa_row();
Key weights_row();
Key times_row();
Key log_times_row();
Key beta_rule_row();
Key method_row();
const std::vector<Key>& keys();
const std::vector<std::string>& section_names();

// ---------------------------------------------------------------------------------------------
// Cross-key rules (validation.cpp).
void validate_feedforward(const RunConfig& c, const std::map<std::string, const toml::node*>& present);
void validate_noise(const RunConfig& c, const std::map<std::string, const toml::node*>& present,
                    const std::set<std::string>& overridden);
void validate_densities(RunConfig& c, const std::map<std::string, const toml::node*>& present);
Method resolve_auto_method(const RunConfig& c);

// A key of the base that conflicts with the overrides: dropped under a replacing override, else
// reported with the way out.
struct BaseConflict {
  std::string path;
  std::string why;
};

// A resolved value as TOML text (serialize.cpp).
std::string toml_value(const ConfigScalar& value);

}  // namespace normdyn::config_internal

namespace normdyn {
using namespace config_internal;
}  // namespace normdyn
