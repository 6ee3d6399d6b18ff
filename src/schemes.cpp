#include "normdyn/schemes.hpp"

namespace normdyn {

std::vector<std::string_view> scheme_keys() { return alternative_keys<Scheme>(); }

std::optional<Scheme> make_scheme(std::string_view key) { return make_alternative<Scheme>(key); }

std::string_view scheme_key(const Scheme& s) { return alternative_key(s); }

bool scheme_has_radius(const Scheme& s) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::has_radius; }, s);
}

std::vector<double> scheme_breakpoints(const Scheme& s, double t0, double t1) {
  std::vector<double> all = std::visit([](const auto& x) { return x.breakpoints(); }, s);
  std::vector<double> inside;
  for (double b : all)
    if (b > t0 && b < t1) inside.push_back(b);
  return inside;
}

double scheme_speed(const Scheme& s, const TokenContext& c) {
  return std::visit([&](const auto& x) { return x.speed(c); }, s);
}

double scheme_radial_rate(const Scheme& s, const TokenContext& c) {
  return std::visit([&](const auto& x) { return x.radial_rate(c); }, s);
}

LayerUpdate scheme_layer(const Scheme& s, const TokenContext& c) {
  return std::visit([&](const auto& x) { return x.layer(c); }, s);
}

std::optional<SchemeTheory> scheme_theory(const Scheme& s) {
  return std::visit([](const auto& x) { return theory_of(x); }, s);
}

std::vector<std::pair<std::string_view, double>> scheme_parameters(const Scheme& s) {
  // Every scheme parameter is a real (the theory's laws take them as numbers).
  std::vector<std::pair<std::string_view, double>> out;
  for (const auto& [key, value] : alternative_parameters(s)) out.emplace_back(key, parameter_as_double(value));
  return out;
}

}  // namespace normdyn
