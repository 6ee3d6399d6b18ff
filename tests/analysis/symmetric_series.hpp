#pragma once
// Long, cheap and exact series of 1 − γ(t) at the symmetric start of Theorem 4.1 (orthonormal
// tokens, equal radii, Q = K = V = I), for the rate-fit tests: the library's reduced ODE
// (analysis/symmetric_ode.hpp), which keeps 1 − γ to full relative accuracy down to 1e-300.
#include <vector>

#include "normdyn/analysis/symmetric_ode.hpp"

namespace normdyn::test {

// u(t) = 1 − γ(t) at `times` (increasing, from 0) with RK4 steps of at most h; r(0) = r0.
inline std::vector<double> symmetric_u_series(const Scheme& scheme, double n, double beta, double r0,
                                              const std::vector<double>& times, double h) {
  return analysis::symmetric_trajectory(scheme, {n, beta, r0, h}, times).one_minus_gamma;
}

inline std::vector<double> linspace(double a, double b, std::size_t count) {
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = a + (b - a) * static_cast<double>(i) / static_cast<double>(count - 1);
  return v;
}

}  // namespace normdyn::test
