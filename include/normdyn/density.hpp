#pragma once
// Initial densities of directions, for the mean-field solver on the circle and for the (weighted)
// particles that discretize them in any dimension.
//
// A density f is given relative to the uniform probability measure σ on S^{d-1} (∫ f dσ = 1). On the
// circle (d = 2) the density in the angle φ = atan2(θ_2, θ_1) per radian is f / (2π):
//
//   uniform             f = 1
//   perturbed_uniform   f = 1 + a cos(m φ)                          (|a| <= 1, m >= 1)
//   von_mises           f = Σ_i w_i exp(κ_i <c_i, θ>) / Z_d(κ_i),   c_i = (cos μ_i, sin μ_i, 0, ..., 0)
//   cells               piecewise constant on M' equal cells [k 2π/M', (k+1) 2π/M') of the circle (d = 2)
//
// with Z_d(κ) = ∫ exp(κ <c, θ>) dσ(θ) = Γ(d/2) (2/κ)^{d/2-1} I_{d/2-1}(κ).
#include <cstdint>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

struct Density {
  enum class Kind { uniform, perturbed_uniform, von_mises, cells };
  Kind kind = Kind::uniform;
  std::int64_t mode = 1;
  double amplitude = 0.0;
  std::vector<double> centers, kappa, weights;  // von_mises; weights sum to 1
  std::vector<double> cells;                    // cells: density per radian, Σ cells · 2π/M' = 1

  static Density uniform() { return {}; }
  static Density perturbed_uniform(std::int64_t mode, double amplitude);
  static Density von_mises(std::vector<double> centers, std::vector<double> kappa, std::vector<double> weights);
  // Values >= 0 on equal cells starting at φ = 0, normalized here to total mass 1.
  static Density from_cells(std::vector<double> values);
  // init.kind = uniform | perturbed_uniform | von_mises (file densities are read by io/inputs.hpp).
  static Density from_config(const InitConfig& init);
};

// Cell averages per radian on M equal cells [i h, (i+1) h), h = 2π/M, with Σ_i ρ_i h = 1 to round-off:
// exact for uniform, perturbed_uniform and cells (a conservative remap); Gauss–Legendre quadrature on
// sub-cells finer than the bumps, normalized bump by bump, for von_mises.
std::vector<double> cell_averages(const Density& density, std::int64_t M);

// f(θ) relative to the uniform measure on S^{d-1} (θ a unit vector of length d).
double relative_density(const Density& density, const double* theta, Index d);

// n tokens discretizing the density, with masses summing to 1:
//   sampled   i.i.d. directions from the density (exact samplers), equal masses
//   weighted  i.i.d. uniform directions, masses proportional to f(θ_j) (importance weights)
//   grid      d = 2 only: angles (j + 1/2) 2π/n, masses the exact cell masses of the density
// Radii: r0, or uniform on [r0 − w/2, r0 + w/2] when w = radius_width > 0 (i.i.d.; a Kronecker
// sequence for grid). Every draw comes from (seed, RandomStream::initial_density); uniform + sampled
// draws the same directions as uniform_tokens.
struct WeightedTokens {
  Tokens tokens;
  Vector masses;
};
WeightedTokens density_tokens(const Density& density, Index n, Index d, Sampling sampling, double r0,
                              double radius_width, std::uint64_t seed);

// log Z_d(κ) of the von Mises–Fisher density on S^{d-1} (see above).
double log_von_mises_normalizer(double kappa, Index d);

}  // namespace normdyn
