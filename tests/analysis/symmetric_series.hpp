#pragma once
// Long, cheap and exact series of 1 − γ(t) at the symmetric start of Theorem 4.1 (orthonormal
// tokens, equal radii, Q = K = V = I), for the rate-fit tests. Same reduction as
// tests/solvers/symmetric_reduction.hpp, written in u = 1 − γ so that u keeps its relative accuracy
// down to 1e-300 (γ itself cannot resolve u below 1e-16). With q = e^{−βu}:
//   <θ_j, A_j> = a = 1 − (n−1) u q / (1 + (n−1) q)
//   |A_j|²        = (1 + 2(n−1)(1−u) q + (n−1)(1 + (n−2)(1−u)) q²) / (1 + (n−1) q)²
//   du/dt = −2 q u (1 + (n−1)(1−u)) / ((1 + (n−1) q) s),   dr/dt = ρ
// (from b − aγ = q (1−γ)(1 + (n−1)γ) / (1 + (n−1) q)), with (s, ρ) the scheme's speed and radial rate.
#include <cmath>
#include <variant>
#include <vector>

#include "normdyn/schemes.hpp"

namespace normdyn::test {

struct SymmetricU {
  double u;
  double r;
};

inline SymmetricU symmetric_u_rate(const Scheme& scheme, double n, double beta, double t, SymmetricU s) {
  const double q = std::exp(-beta * s.u);
  const double g = 1.0 - s.u;
  const double den = 1.0 + (n - 1.0) * q;
  const double a = 1.0 - (n - 1.0) * s.u * q / den;
  const double a_sq = (1.0 + 2.0 * (n - 1.0) * g * q + (n - 1.0) * (1.0 + (n - 2.0) * g) * q * q) / (den * den);
  const TokenContext c{t, t, s.r, a, std::sqrt(a_sq)};
  return std::visit(
      [&](const auto& sch) {
        return SymmetricU{-2.0 * q * s.u * (1.0 + (n - 1.0) * g) / (den * sch.speed(c)), sch.radial_rate(c)};
      },
      scheme);
}

// u(t) at `times` (increasing, from 0) by classical RK4 with steps of at most h; u(0) = 1, r(0) = r0.
// Regime switches (Mix-LN's τ) are resolved to O(h) only: keep τ off the step grid or small h.
inline std::vector<double> symmetric_u_series(const Scheme& scheme, double n, double beta, double r0,
                                              const std::vector<double>& times, double h) {
  std::vector<double> out;
  SymmetricU s{1.0, r0};
  double t = 0.0;
  for (double target : times) {
    const auto steps = static_cast<long>(std::ceil((target - t) / h - 1e-9));
    const double dt = steps > 0 ? (target - t) / static_cast<double>(steps) : 0.0;
    for (long k = 0; k < steps; ++k) {
      auto f = [&](double tt, SymmetricU x) { return symmetric_u_rate(scheme, n, beta, tt, x); };
      const SymmetricU k1 = f(t, s);
      const SymmetricU k2 = f(t + 0.5 * dt, {s.u + 0.5 * dt * k1.u, s.r + 0.5 * dt * k1.r});
      const SymmetricU k3 = f(t + 0.5 * dt, {s.u + 0.5 * dt * k2.u, s.r + 0.5 * dt * k2.r});
      const SymmetricU k4 = f(t + dt, {s.u + dt * k3.u, s.r + dt * k3.r});
      s.u += dt / 6.0 * (k1.u + 2.0 * k2.u + 2.0 * k3.u + k4.u);
      s.r += dt / 6.0 * (k1.r + 2.0 * k2.r + 2.0 * k3.r + k4.r);
      t += dt;
    }
    t = target;
    out.push_back(s.u);
  }
  return out;
}

inline std::vector<double> linspace(double a, double b, std::size_t count) {
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = a + (b - a) * static_cast<double>(i) / static_cast<double>(count - 1);
  return v;
}

}  // namespace normdyn::test
