#pragma once
// Helpers of the mean-field tests: integrate a MeanFieldCircle and keep every sample.
#include <complex>
#include <vector>

#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"

namespace normdyn::test {

struct KeepStates final : SampleObserver {
  std::vector<std::vector<double>> states;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> x,
                                     const CheckpointView&) override {
    states.emplace_back(x.begin(), x.end());
    return std::nullopt;
  }
};

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
