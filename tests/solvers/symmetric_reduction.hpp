#pragma once
// The symmetric start of Theorem 4.1 (spec 4.4) reduced to scalars. With θ_j(0) orthonormal, equal
// radii and Q = K = V = I, every pairwise cosine equals one value γ(t) and every radius one r(t).
// Writing e1 = e^β, eg = e^{βγ}, Z = e1 + (n−1) eg:
//   <θ_j, A_j> = a = (e1 + (n−1) γ eg) / Z
//   <θ_k, A_j> = b = (e1 γ + eg (1 + (n−2) γ)) / Z          (k ≠ j)
//   |A_j|²        = (e1² + 2 (n−1) γ e1 eg + (n−1)(1 + (n−2) γ) eg²) / Z²
//   dγ/dt = <θ̇_j, θ_k> + <θ_j, θ̇_k> = 2 (b − a γ) / s,     dr/dt = ρ
// with (s, ρ) the scheme's speed factor and radial rate at (t, r, a, |A|).
#include <cmath>
#include <variant>

#include "normdyn/schemes.hpp"

namespace normdyn::test {

struct SymmetricState {
  double gamma;
  double r;
};

inline SymmetricState symmetric_rate(const Scheme& scheme, double n, double beta, double t, double t_regime,
                                     SymmetricState s) {
  const double e1 = std::exp(beta);
  const double eg = std::exp(beta * s.gamma);
  const double z = e1 + (n - 1.0) * eg;
  const double a = (e1 + (n - 1.0) * s.gamma * eg) / z;
  const double b = (e1 * s.gamma + eg * (1.0 + (n - 2.0) * s.gamma)) / z;
  const double a_sq = (e1 * e1 + 2.0 * (n - 1.0) * s.gamma * e1 * eg + (n - 1.0) * (1.0 + (n - 2.0) * s.gamma) * eg * eg) / (z * z);
  const TokenContext c{t, t_regime, s.r, a, std::sqrt(a_sq)};
  return std::visit(
      [&](const auto& sch) { return SymmetricState{2.0 * (b - a * s.gamma) / sch.speed(c), sch.radial_rate(c)}; },
      scheme);
}

// Classical RK4 with steps of at most h, landing on every breakpoint of the scheme (Mix-LN's τ),
// regime chosen at the middle of each step.
inline SymmetricState integrate_symmetric(const Scheme& scheme, double n, double beta, SymmetricState s, double t0,
                                          double t1, double h) {
  std::vector<double> ends = scheme_breakpoints(scheme, t0, t1);
  ends.push_back(t1);
  double t = t0;
  for (double end : ends) {
    const auto steps = static_cast<long>(std::ceil((end - t) / h - 1e-9));
    const double dt = (end - t) / static_cast<double>(steps);
    const double begin = t;
    for (long k = 0; k < steps; ++k) {
      const double tk = begin + static_cast<double>(k) * dt;
      const double mid = tk + 0.5 * dt;
      auto f = [&](double tt, SymmetricState x) { return symmetric_rate(scheme, n, beta, tt, mid, x); };
      const SymmetricState k1 = f(tk, s);
      const SymmetricState k2 = f(tk + 0.5 * dt, {s.gamma + 0.5 * dt * k1.gamma, s.r + 0.5 * dt * k1.r});
      const SymmetricState k3 = f(tk + 0.5 * dt, {s.gamma + 0.5 * dt * k2.gamma, s.r + 0.5 * dt * k2.r});
      const SymmetricState k4 = f(tk + dt, {s.gamma + dt * k3.gamma, s.r + dt * k3.r});
      s.gamma += dt / 6.0 * (k1.gamma + 2.0 * k2.gamma + 2.0 * k3.gamma + k4.gamma);
      s.r += dt / 6.0 * (k1.r + 2.0 * k2.r + 2.0 * k3.r + k4.r);
    }
    t = end;
  }
  return s;
}

}  // namespace normdyn::test
