#pragma once
// Helpers of the mean-field tests: integrate a MeanFieldCircle and keep every sample.
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"

namespace normdyn::test {

// A mean-field specification with the test defaults (16 radial cells, van Leer limiter).
inline MeanFieldSpec spec_for(const Scheme& scheme, double beta, std::int64_t grid, std::int64_t radial = 16,
                              Limiter limiter = Limiter::van_leer) {
  MeanFieldSpec spec;
  spec.scheme = scheme;
  spec.beta = beta;
  spec.grid = grid;
  spec.radial_grid = radial;
  spec.limiter = limiter;
  return spec;
}

using normdyn::restricted_l1_distance;
inline double l1_restricted(const std::vector<double>& fine, const std::vector<double>& coarse) {
  return restricted_l1_distance(fine, coarse);
}

using KeepStates = StateRecorder;

inline IntegratorOptions tight_options(double rtol = 1e-10) {
  IntegratorOptions o;
  o.rtol = rtol;
  o.atol = rtol * 1e-2;
  o.dt = 1e-3;
  return o;
}

// Integrates and returns the states at `times` (the run must end ok).
inline std::vector<std::vector<double>> solve(MeanFieldCircle& system, const std::vector<double>& x0,
                                              const std::vector<double>& times, const IntegratorOptions& options,
                                              IntegrationResult* result = nullptr) {
  KeepStates keep;
  const IntegrationResult r = integrate(system, x0, 0.0, times, options, keep);
  if (result) *result = r;
  return keep.states;
}

// Σ_i ρ_i e^{−ikφ_i}: the mode k of cell averages (up to the factor sinc(kh/2), which cancels in ratios).
inline std::complex<double> fourier_mode(const std::vector<double>& rho, const std::vector<double>& phi, int k) {
  std::complex<double> sum = 0.0;
  for (std::size_t i = 0; i < rho.size(); ++i) sum += rho[i] * std::polar(1.0, -k * phi[i]);
  return sum;
}

}  // namespace normdyn::test
