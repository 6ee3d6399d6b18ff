#pragma once
// The one list of all schemes. It drives the registry (`normdyn list-schemes`), the configuration
// (model.scheme and each scheme's parameters), the dynamics, the analysis (theorems.hpp) and the
// conformance test suite. To add a scheme: write include/normdyn/schemes/<key>.hpp after
// scheme.hpp, include it here and add it to `Scheme` (docs/ARCHITECTURE.md, "Adding a scheme").
//
// A build can append schemes without editing this file: NORMDYN_EXTRA_SCHEME_HEADER names a header
// defining them and NORMDYN_EXTRA_SCHEMES lists them with a leading comma. The test of the recipe
// builds the library that way with a scheme defined only in the test.
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "normdyn/schemes/cod.hpp"
#include "normdyn/schemes/mix.hpp"
#include "normdyn/schemes/ngpt.hpp"
#include "normdyn/schemes/peri.hpp"
#include "normdyn/schemes/post.hpp"
#include "normdyn/schemes/pre.hpp"

#ifdef NORMDYN_EXTRA_SCHEME_HEADER
#include NORMDYN_EXTRA_SCHEME_HEADER
#endif
#ifndef NORMDYN_EXTRA_SCHEMES
#define NORMDYN_EXTRA_SCHEMES
#endif

namespace normdyn {

using Scheme = std::variant<PostLN, PreLN, MixLN, PeriLN, NGPT, LNScaling NORMDYN_EXTRA_SCHEMES>;

// Calls f(S{}) once for every scheme type S, in the order of the list.
template <class F>
void for_each_scheme(F&& f) {
  for_each_alternative<Scheme>(std::forward<F>(f));
}

std::vector<std::string_view> scheme_keys();
// The scheme with this key and default parameters, or nothing.
std::optional<Scheme> make_scheme(std::string_view key);
std::string_view scheme_key(const Scheme& s);
bool scheme_has_radius(const Scheme& s);
// Times in (t0, t1) at which the scheme switches regime.
std::vector<double> scheme_breakpoints(const Scheme& s, double t0, double t1);
// The scheme's own functions, through the variant.
double scheme_speed(const Scheme& s, const TokenContext& c);
double scheme_radial_rate(const Scheme& s, const TokenContext& c);
LayerUpdate scheme_layer(const Scheme& s, const TokenContext& c);
// What the scheme's header declares of its theory (nothing if it declares none).
std::optional<SchemeTheory> scheme_theory(const Scheme& s);
// Parameters of the scheme as (key, value) pairs, in declaration order.
std::vector<std::pair<std::string_view, double>> scheme_parameters(const Scheme& s);

}  // namespace normdyn
