#pragma once
// The one pattern behind every extensible part of the model: a list of alternatives.
//
// An alternative is one small struct in a header of its own (file name = its key) with
//
//   static constexpr std::string_view key       its configuration value and CLI name
//   static constexpr std::string_view title     its name in the literature
//   static constexpr std::array<ParamSpec<A>, N> params   its typed parameters (real, integer,
//                                               boolean or string, with bounds)
//   Traits traits() const                       what it preserves (optional; default: everything)
//
// plus the pure functions that its list's contract asks for (a scheme: speed, radial rate, layer
// map; an attention mask: the keys a row may attend to; a normalizer: the weights of a row; a term:
// its contribution to the block output; a noise: its increments). A list is a std::variant of its
// alternatives, written once in the list's header; the templates below give every list its
// registry (keys, lookup, parameters, traits), so that the configuration, `normdyn list`, the
// analysis and the conformance suites are written once for all lists. docs/ARCHITECTURE.md,
// "Lists of alternatives", has the lists and their contracts.
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace normdyn {

// The value of a parameter: real, integer, boolean or string.
using ParamValue = std::variant<double, std::int64_t, bool, std::string>;

// A typed parameter of an alternative, read from <table>.<key> of the configuration; its type is the
// member's (double: real, std::int64_t: integer, bool, std::string). A number is valid when it lies
// above `lower` (or at it, when `lower_inclusive`) and below `upper` (or at it); an integer given
// as a real (2.5) is refused, naming the key.
template <class A>
struct ParamSpec {
  using Member = std::variant<double A::*, std::int64_t A::*, bool A::*, std::string A::*>;
  std::string_view key;
  Member member;
  std::string_view doc;
  double lower = -std::numeric_limits<double>::infinity();
  bool lower_inclusive = true;
  double upper = std::numeric_limits<double>::infinity();
  bool upper_inclusive = true;

  // The type's name as the configuration reference spells it.
  std::string_view type() const {
    constexpr std::array<std::string_view, 4> names{"float", "integer", "bool", "string"};
    return names[member.index()];
  }
};

// Why `value` is not a valid value of parameter `p` (empty if it is): the wrong type, or out of
// bounds ("must be >= 1, got 0"). `number` formats a bound or a value for the message.
template <class A, class Format>
std::string parameter_problem(const ParamSpec<A>& p, const ParamValue& value, Format&& number) {
  static constexpr std::array<std::string_view, 4> expected{"a number", "an integer", "true or false", "a string"};
  const bool integer_as_real = p.member.index() == 0 && value.index() == 1;  // 2 is a valid real
  if (value.index() != p.member.index() && !integer_as_real)
    return "expected " + std::string(expected[p.member.index()]);
  if (p.member.index() > 1) return {};
  const double x = value.index() == 0 ? std::get<double>(value) : static_cast<double>(std::get<std::int64_t>(value));
  const bool has_lower = p.lower > -std::numeric_limits<double>::infinity();
  const bool has_upper = p.upper < std::numeric_limits<double>::infinity();
  const bool ok = (p.lower_inclusive ? x >= p.lower : x > p.lower) && (p.upper_inclusive ? x <= p.upper : x < p.upper);
  if (ok) return {};
  std::string valid;
  if (has_lower && has_upper)
    valid = "in " + std::string(p.lower_inclusive ? "[" : "(") + number(p.lower) + ", " + number(p.upper) +
            (p.upper_inclusive ? "]" : ")");
  else if (has_lower)
    valid = std::string(p.lower_inclusive ? ">= " : "> ") + number(p.lower);
  else
    valid = std::string(p.upper_inclusive ? "<= " : "< ") + number(p.upper);
  const std::string got = value.index() == 1 ? std::to_string(std::get<std::int64_t>(value)) : std::string(number(x));
  return "must be " + valid + ", got " + got;
}

// Calls f(std::integral_constant<std::size_t, I>) for every parameter I of A, whose type is then known
// when compiling: only the member of parameter I's own type is touched.
template <class A, class F>
void for_each_parameter_index(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) { (f(std::integral_constant<std::size_t, I>{}), ...); }
  (std::make_index_sequence<A::params.size()>{});
}

// The value of parameter i of `a`.
template <class A>
ParamValue parameter_value(const A& a, std::size_t i) {
  ParamValue out;
  for_each_parameter_index<A>([&](auto I) {
    if (I == i) out = a.*std::get<A::params[I].member.index()>(A::params[I].member);
  });
  return out;
}

// Sets parameter i of `a` to `value`, which parameter_problem accepted (an integer for a real
// parameter is converted).
template <class A>
void set_parameter(A& a, std::size_t i, const ParamValue& value) {
  for_each_parameter_index<A>([&](auto I) {
    if (I != i) return;
    auto& target = a.*std::get<A::params[I].member.index()>(A::params[I].member);
    using T = std::decay_t<decltype(target)>;
    if constexpr (std::is_same_v<T, double>)
      target = value.index() == 1 ? static_cast<double>(std::get<std::int64_t>(value)) : std::get<double>(value);
    else
      target = std::get<T>(value);
  });
}

// A parameter's value as a real (integers and booleans converted; a string is NaN).
inline double parameter_as_double(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> double {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>)
          return std::numeric_limits<double>::quiet_NaN();
        else
          return static_cast<double>(x);
      },
      v);
}

// What an alternative preserves. A composite model (a scheme, an attention specification, terms,
// noise) has every trait that all its chosen alternatives have; a trait it lacks turns off what
// depends on it, and the first alternative that breaks it is named in the reason (a skipped theorem
// check, a refused combination).
struct Traits {
  // Permuting the tokens permutes the velocities: no token positions enter (Theorems 3.1, 4.1, the
  // symmetric start, the mean-field limit and the permutation test need it).
  bool exchangeable = true;
  // Rotating every token by one orthogonal matrix rotates the velocities (with Q = K = V = I).
  bool rotation_equivariant = true;
  // The score kernel is symmetric in (i, j) (with Q^T K symmetric): the kernel's symmetric path.
  bool symmetric = true;
  // The interaction energy of spec 4.1 (with the alternative's own weights, e.g. a score bias) is
  // non-decreasing along the flow.
  bool has_energy = true;
  // The mean-field solver implements it.
  bool meanfield = true;
  // The velocities of a block of rows need only those rows' scores: a run can be sharded by rows.
  bool shardable = true;
  // The flow is deterministic (no noise).
  bool deterministic = true;

  friend Traits operator&(const Traits& a, const Traits& b) {
    return {a.exchangeable && b.exchangeable,  a.rotation_equivariant && b.rotation_equivariant,
            a.symmetric && b.symmetric,        a.has_energy && b.has_energy,
            a.meanfield && b.meanfield,        a.shardable && b.shardable,
            a.deterministic && b.deterministic};
  }
};

// The names of the traits, for messages and `normdyn list`.
inline constexpr std::array<std::pair<bool Traits::*, std::string_view>, 7> kTraitNames{{
    {&Traits::exchangeable, "exchangeable"},
    {&Traits::rotation_equivariant, "rotation_equivariant"},
    {&Traits::symmetric, "symmetric"},
    {&Traits::has_energy, "has_energy"},
    {&Traits::meanfield, "meanfield"},
    {&Traits::shardable, "shardable"},
    {&Traits::deterministic, "deterministic"},
}};

template <class A>
concept HasTraits = requires(const A& a) {
  { a.traits() } -> std::convertible_to<Traits>;
};

template <class A>
Traits traits_of_alternative(const A& a) {
  if constexpr (HasTraits<A>)
    return a.traits();
  else
    return Traits{};
}

// An instance of alternative A that can run on n tokens: A::example(n) where the default needs data
// of the user's (a score bias matrix), else A{}. The conformance suites run these.
template <class A>
A example_alternative(std::ptrdiff_t n) {
  if constexpr (requires { A::example(n); })
    return A::example(n);
  else
    return A{};
}

// Calls f(A{}) once for every alternative type A of the list, in the order of the list.
template <class List, class F>
void for_each_alternative(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) { (f(std::variant_alternative_t<I, List>{}), ...); }
  (std::make_index_sequence<std::variant_size_v<List>>{});
}

template <class List>
std::vector<std::string_view> alternative_keys() {
  std::vector<std::string_view> keys;
  for_each_alternative<List>([&](auto a) { keys.push_back(decltype(a)::key); });
  return keys;
}

// The alternative with this key and default parameters, or nothing.
template <class List>
std::optional<List> make_alternative(std::string_view key) {
  std::optional<List> found;
  for_each_alternative<List>([&](auto a) {
    if (decltype(a)::key == key) found = a;
  });
  return found;
}

template <class List>
std::string_view alternative_key(const List& v) {
  return std::visit([](const auto& a) { return std::decay_t<decltype(a)>::key; }, v);
}

template <class List>
std::string_view alternative_title(const List& v) {
  return std::visit([](const auto& a) { return std::decay_t<decltype(a)>::title; }, v);
}

// The parameters of the chosen alternative as (key, value) pairs, in declaration order.
template <class List>
std::vector<std::pair<std::string_view, ParamValue>> alternative_parameters(const List& v) {
  return std::visit(
      [](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        std::vector<std::pair<std::string_view, ParamValue>> out;
        for (std::size_t i = 0; i < A::params.size(); ++i) out.emplace_back(A::params[i].key, parameter_value(a, i));
        return out;
      },
      v);
}

// Whether the chosen alternative is its list's first one, the list's default (for the attention
// lists, the one that changes nothing: no mask, no bias, no positions, the softmax).
template <class List>
bool is_first_alternative(const List& v) {
  return v.index() == 0;
}

// A parameter's value as the configuration spells it: 2.5, 3, true, "text" (reals in their shortest
// exact form).
inline std::string parameter_text(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else {
          char buffer[32];
          const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
          return std::string(buffer, end);
        }
      },
      v);
}

// The setting that chooses `chosen` with all its parameters, e.g. `noise.kind = "independent",
// noise.sigma = 0.5`: the selector `selector` (a full key), the parameters as <table>.<parameter key>.
template <class List>
std::string describe_alternative(std::string_view selector, std::string_view table, const List& chosen) {
  std::string out = std::string(selector) + " = \"" + std::string(alternative_key(chosen)) + "\"";
  for (const auto& [key, value] : alternative_parameters(chosen))
    out += ", " + std::string(table) + "." + std::string(key) + " = " + parameter_text(value);
  return out;
}

template <class List>
Traits alternative_traits(const List& v) {
  return std::visit([](const auto& a) { return traits_of_alternative(a); }, v);
}

}  // namespace normdyn
