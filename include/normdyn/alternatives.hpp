#pragma once
// The one pattern behind every extensible part of the model: a list of alternatives.
//
// An alternative is one small struct in a header of its own (file name = its key) with
//
//   static constexpr std::string_view key       its configuration value and CLI name
//   static constexpr std::string_view title     its name in the literature
//   static constexpr std::array<ParamSpec<A>, N> params   its typed real parameters
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
#include <cstddef>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace normdyn {

// A real-valued parameter of an alternative, read from <table>.<key> of the configuration; valid
// when value > lower (or >= lower when `lower_inclusive`).
template <class A>
struct ParamSpec {
  std::string_view key;
  double A::*member;
  std::string_view doc;
  double lower = -std::numeric_limits<double>::infinity();
  bool lower_inclusive = true;
};

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
    return {a.exchangeable && b.exchangeable,   a.rotation_equivariant && b.rotation_equivariant,
            a.symmetric && b.symmetric,         a.has_energy && b.has_energy,
            a.meanfield && b.meanfield,         a.shardable && b.shardable,
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
  if constexpr (HasTraits<A>) return a.traits();
  else return Traits{};
}

// Calls f(A{}) once for every alternative type A of the list, in the order of the list.
template <class List, class F>
void for_each_alternative(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::variant_alternative_t<I, List>{}), ...);
  }(std::make_index_sequence<std::variant_size_v<List>>{});
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
std::vector<std::pair<std::string_view, double>> alternative_parameters(const List& v) {
  return std::visit(
      [](const auto& a) {
        std::vector<std::pair<std::string_view, double>> out;
        for (const auto& p : std::decay_t<decltype(a)>::params) out.emplace_back(p.key, a.*(p.member));
        return out;
      },
      v);
}

template <class List>
Traits alternative_traits(const List& v) {
  return std::visit([](const auto& a) { return traits_of_alternative(a); }, v);
}

}  // namespace normdyn
