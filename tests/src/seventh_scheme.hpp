#pragma once
// Two schemes defined only here, to keep the recipe of docs/ARCHITECTURE.md ("Adding a scheme")
// true: the library is built again with them appended to the list (NORMDYN_EXTRA_SCHEMES, see
// tests/CMakeLists.txt), and the whole conformance suite and the analysis checks run on them.
#include <optional>

#include "normdyn/scheme.hpp"

namespace normdyn {

// Post-LN at half speed: x ← LN(x + (h/2) A(X)). Its theory follows from the header alone:
// 1 − γ ~ e^{−t} at the symmetric start.
struct PostLNHalfSpeed {
  static constexpr std::string_view key = "post_half";
  static constexpr std::string_view title = "Post-LN at half speed";
  static constexpr std::string_view speed_formula = "2";
  static constexpr std::string_view radial_formula = "0";
  static constexpr std::string_view layer_formula = "x <- LN(x + h A(X) / 2)";
  static constexpr bool has_radius = false;
  static constexpr std::array<ParamSpec<PostLNHalfSpeed>, 0> params{};

  double speed(const TokenContext&) const { return 2.0; }
  double radial_rate(const TokenContext&) const { return 0.0; }
  LayerUpdate layer(const TokenContext&) const { return {true, 0.5, 0.0}; }
  std::vector<double> breakpoints() const { return {}; }
  std::optional<SchemeTheory> theory() const { return SchemeTheory{"exponential", 1.0}; }
};

// The same dynamics without a theory() member: the checks that need one are skipped, saying why.
struct PostLNNoTheory {
  static constexpr std::string_view key = "post_no_theory";
  static constexpr std::string_view title = "Post-LN at half speed, no declared theory";
  static constexpr std::string_view speed_formula = "2";
  static constexpr std::string_view radial_formula = "0";
  static constexpr std::string_view layer_formula = "x <- LN(x + h A(X) / 2)";
  static constexpr bool has_radius = false;
  static constexpr std::array<ParamSpec<PostLNNoTheory>, 0> params{};

  double speed(const TokenContext&) const { return 2.0; }
  double radial_rate(const TokenContext&) const { return 0.0; }
  LayerUpdate layer(const TokenContext&) const { return {true, 0.5, 0.0}; }
  std::vector<double> breakpoints() const { return {}; }
};

}  // namespace normdyn
