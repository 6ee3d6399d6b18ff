#pragma once
// Named tolerances of the test suite, in one place. Each says what it bounds and why it is that size.
namespace normdyn::test {

// Round-off of O(n d) floating-point sums of unit-scale terms.
inline constexpr double kRoundoff = 1e-13;
// | |θ_j| − 1 | in every stored frame with retraction on (1e-12).
inline constexpr double kSphereNorm = 1e-12;
// Agreement of the n-particle code with the scalar ODE of the symmetric start (1e-7 relative).
inline constexpr double kSymmetricRelative = 1e-7;
// Agreement of the two sides of an exact identity integrated at rtol 1e-12 (time change).
inline constexpr double kTimeChange = 1e-8;
// Observed convergence orders must lie within this of the nominal order.
inline constexpr double kOrderSlack = 0.3;
// The SIMD Box-Muller transform of the counter-based normals against r123's scalar one, in units of
// the pair's radius r = sqrt(−2 ln v): sin, cos and log differ by an ulp or two (4 ulps of r).
inline constexpr double kBoxMullerUlps = 4.0;
// Results with different thread counts (1e-13).
inline constexpr double kThreadAgreement = 1e-13;

// ---- Analysis.
// Decay rates recovered from the symmetric start of Theorem 4.1 (within 5%).
inline constexpr double kRateRelative = 0.05;
// Parameters of an exact exponential / power law / stretched exponential recovered by the fits
// (least squares in ln y of exact data: round-off of ~100 logarithms and a 3×3 solve).
inline constexpr double kExactFit = 1e-9;
// Relative accuracy of 1 − cosine values of tight configurations (computed from differences).
inline constexpr double kOneMinusCosine = 1e-10;
// Observables of a rotated or permuted configuration (round-off of n² d sums and an eigensolver).
inline constexpr double kInvariance = 1e-12;

// ---- Mean field.
// Growth rates of Fourier modes of the uniform density against the closed form (1%).
inline constexpr double kLinearRate = 1e-2;
// The same rates with noise or the uniform normalizer under the split step (exact diffusion, exact
// face fluxes of the linearized transport, SSP-RK3 in time at h = 1e-3: ~1e-9 of the rate; the O(ε²)
// nonlinear corrections at ε = 1e-5: ~1e-10), relative.
inline constexpr double kFokkerPlanckRate = 1e-6;
// Total mass of the finite-volume solver: round-off of sums over up to ~10^5 cells.
inline constexpr double kMassRoundoff = 1e-13;
// The mean field on S^2: growth rates of degree-l harmonics against Funk–Hecke (the linearized
// right-hand side is exact up to O(ε²) and round-off; in time, rtol 1e-12), relative.
inline constexpr double kSphereRate = 1e-6;
// Spherical-harmonic transforms of band-limited fields (synthesis, analysis, gradients): round-off.
inline constexpr double kSphereTransform = 1e-12;

// ---- Sweeps and sharded runs. A run sharded over MPI processes is compared with the same run on
// one process bit for bit: no tolerance.

// A cosine <θ_j, θ_k> from a tile's matrix product against the same dot product taken alone: the
// products may sum the d terms in another order (a few ulps of a unit-scale value; 1e-14).
inline constexpr double kFramePassCosine = 1e-14;

}  // namespace normdyn::test
