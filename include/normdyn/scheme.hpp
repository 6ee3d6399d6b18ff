#pragma once
// What a normalization scheme is. A scheme is one small class in include/normdyn/schemes/ with
//
//   static constexpr std::string_view key        CLI / config name (= file name)
//   static constexpr std::string_view title      name in the literature
//   static constexpr std::string_view speed_formula, radial_formula, layer_formula
//   static constexpr bool has_radius             whether r_j evolves
//   static constexpr std::array<ParamSpec<S>, N> params   its typed parameters (model.<key>)
//   Traits traits() const                             what it preserves (optional; alternatives.hpp)
//   double speed(const TokenContext&) const          s_j in  dθ_j/dt = P_θj A_j / s_j
//   double radial_rate(const TokenContext&) const    ρ_j in  dr_j/dt = ρ_j
//   LayerUpdate layer(const TokenContext&) const     its discrete layer map (spec section 3)
//   std::vector<double> breakpoints() const          times where it switches regime
//   std::optional<SchemeTheory> theory() const       what the paper proves of it (optional member)
//
// and is listed once in schemes.hpp: the scheme list is one of the lists of alternatives of
// alternatives.hpp. The recipe is in docs/ARCHITECTURE.md, "Adding a scheme". Everything else (the attention kernel, the right-hand side,
// the discrete maps, the registry, validation, the conformance tests) is written once for all.
#include <array>
#include <concepts>
#include <optional>
#include <string_view>
#include <vector>

#include "normdyn/alternatives.hpp"

namespace normdyn {

// The per-token quantities a scheme may depend on.
struct TokenContext {
  double t = 0.0;            // time (continuous depth)
  double t_regime = 0.0;     // a time inside the current smooth piece; selects piecewise regimes
  double r = 1.0;            // radius r_j
  double theta_dot_a = 0.0;  // <θ_j, A_j>
  double a_norm = 0.0;       // |A_j|
};

// One layer of step h: with u_j = a·A_j + c·θ_j,
//   renormalized:  θ_j ← LN(θ_j + h u_j),  r_j unchanged
//   residual:      x_j ← r_j θ_j + h u_j,  then r_j = |x_j|, θ_j = x_j / |x_j|
// Its h → 0 limit must be the scheme's ODE (checked by the conformance tests).
struct LayerUpdate {
  bool renormalized = true;
  double coef_attention = 1.0;  // a
  double coef_theta = 0.0;      // c
};

// What the paper proves of a scheme, as far as the analysis needs more than speed() and
// radial_rate(). Everything else is derived from those two functions (theorems.hpp):
//  * the initial slope of Theorem 4.1 is (1/s_j + 1/s_k)/(e^β + n − 1) with s from speed() at the
//    symmetric start;
//  * the scale function of Theorem 4.3 is the speed factor near consensus, speed() with
//    <θ_j, A_j> = |A_j| = 1 and the run's own radius (Mix-LN: 1 before τ, r(t) ≈ r0 + t − τ after);
//  * the decay of Theorem 4.1 is 1 − γ ~ C exp(−2 T(t)) with the clock T(t) = ∫ dt / s along the run.
// A scheme without theory() (or returning nothing) is skipped by the checks, which say so.
struct SchemeTheory {
  // The name of the law 1 − γ follows at the symmetric start (one of the laws the rate fit knows:
  // "exponential", "power", "stretched_exponential"; empty if it is none of them) and its
  // parameter (λ, p or κ). Used to state the theorem and to compare with the automatic rate fit.
  std::string_view symmetric_law;
  double symmetric_parameter = 0.0;
  // Theorem 4.3: near consensus the radii grow at least like (1 − δ) t (Pre-LN, Peri-LN).
  bool radial_growth = false;
  // Corollary of Theorem 3.1: <θ_j, A_j> ≥ (e^β − n + 1)/(n e^β) along the flow when n ≤ e^β.
  bool radial_alignment_bound = false;
};

// Whether S declares its theory.
template <class S>
concept HasTheory = requires(const S& s) {
  { s.theory() } -> std::convertible_to<std::optional<SchemeTheory>>;
};

template <class S>
std::optional<SchemeTheory> theory_of(const S& s) {
  if constexpr (HasTheory<S>)
    return s.theory();
  else
    return std::nullopt;
}

}  // namespace normdyn
