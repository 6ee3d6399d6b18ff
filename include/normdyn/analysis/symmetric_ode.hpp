#pragma once
// The symmetric start of Theorem 4.1 reduced to one scalar ODE. With θ_j(0) orthonormal (d ≥ n),
// equal radii r0 and Q = K = V = I, every pairwise cosine equals one value γ(t) and every radius one
// r(t). With the attention weights w_self = 1/Z, w_other = e^{−β(1−γ)}/Z, Z = 1 + (n − 1) e^{−β(1−γ)}:
//
//   <θ_k, A_j> − <θ_j, A_j> γ = w_other (1 − γ)(1 + (n − 1) γ)          (k ≠ j)
//   dγ/dt = (2/s) w_other (1 − γ)(1 + (n − 1) γ),     dr/dt = ρ
//
// with s and ρ the scheme's own speed() and radial_rate() (its header) at the symmetric token context
// (theorems.hpp). The ODE is integrated for u = ln(1 − γ), which stays well conditioned when
// 1 − γ falls below the double precision of γ (Post-LN: 1 − γ ~ e^{−2t}), by classical RK4 with
// steps of at most `step`, landing on every sample time and on the scheme's breakpoints (Mix-LN's
// τ), the regime taken at the middle of each step.
#include <string>
#include <vector>

#include "normdyn/schemes.hpp"

namespace normdyn::analysis {

struct SymmetricOdeParameters {
  double n = 256.0;
  double beta = 5.0;
  double r0 = 1.0;
  double step = 1e-3;  // largest RK4 step
};

struct SymmetricTrajectory {
  std::vector<double> t;
  std::vector<double> gamma;
  std::vector<double> one_minus_gamma;      // kept apart: 1 − γ below the resolution of γ
  std::vector<double> log_one_minus_gamma;  // ln(1 − γ), finite where 1 − γ underflows
  std::vector<double> dgamma_dt;
  std::vector<double> r;
};

// dγ/dt and dr/dt of the reduced ODE at (t, γ, r); t_regime selects the piece of a piecewise scheme.
struct SymmetricRate {
  double dgamma_dt = 0.0;
  double dr_dt = 0.0;
};
SymmetricRate symmetric_rate(const Scheme& scheme, double n, double beta, double t, double t_regime,
                             double one_minus_gamma, double r);

// The trajectory at the given times (increasing, first ≥ 0; the ODE starts at t = 0, γ = 0, r = r0).
SymmetricTrajectory symmetric_trajectory(const Scheme& scheme, const SymmetricOdeParameters& p,
                                         const std::vector<double>& times);

// K + 1 equally spaced times 0, T/K, ..., T.
std::vector<double> linear_times(double t_end, int samples);

}  // namespace normdyn::analysis
