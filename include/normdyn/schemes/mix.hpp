#pragma once
// Mix-LN: Post-LN layers up to the switch time tau, Pre-LN layers after it.
// The regime is chosen by t_regime, a time strictly inside the current smooth piece, so that the
// right-hand side evaluated at exactly t = tau belongs to the piece being integrated.
#include "normdyn/scheme.hpp"

namespace normdyn {

struct MixLN {
  static constexpr std::string_view key = "mix";
  static constexpr std::string_view title = "Mix-LN";
  static constexpr std::string_view speed_formula = "1 for t <= tau, r_j for t > tau";
  static constexpr std::string_view radial_formula = "0 for t <= tau, <theta_j, A_j> for t > tau";
  static constexpr std::string_view layer_formula = "post while t <= tau, pre afterwards";
  static constexpr bool has_radius = true;

  double tau = 4.0;
  static constexpr std::array<ParamSpec<MixLN>, 1> params{
      ParamSpec<MixLN>{"tau", &MixLN::tau, "switch time from Post-LN to Pre-LN", 0.0, true}};

  bool pre_regime(const TokenContext& c) const { return c.t_regime > tau; }
  double speed(const TokenContext& c) const { return pre_regime(c) ? c.r : 1.0; }
  double radial_rate(const TokenContext& c) const { return pre_regime(c) ? c.theta_dot_a : 0.0; }
  LayerUpdate layer(const TokenContext& c) const {
    return pre_regime(c) ? LayerUpdate{false, 1.0, 0.0} : LayerUpdate{true, 1.0, 0.0};
  }
  std::vector<double> breakpoints() const { return {tau}; }
  // Theorem 4.1: 1 − γ ~ C/(t − τ + r0)² after the switch (the Pre-LN law with a shifted origin).
  std::optional<SchemeTheory> theory() const { return SchemeTheory{"power", 2.0}; }
};

}  // namespace normdyn
