#pragma once
// Initial token configurations. Every random draw comes from (seed, RandomStream::initial_tokens).
#include <cstdint>

#include "normdyn/tokens.hpp"

namespace normdyn {

class Random;

// A direction uniform on S^{d-1} (a normalized Gaussian vector).
Eigen::RowVectorXd random_direction(Index d, Random& rng);

// Directions uniform on S^{d-1} (normalized Gaussians); radii r0.
Tokens uniform_tokens(Index n, Index d, double r0, std::uint64_t seed);
// x_j ~ N(0, I_d), r_j = |x_j|, θ_j = x_j / |x_j|: the Gaussian start of Theorem 3.1(b).
Tokens gaussian_tokens(Index n, Index d, std::uint64_t seed);
// θ_1..θ_n a random orthonormal family (needs d >= n): the symmetric start of Theorem 4.1.
Tokens orthonormal_tokens(Index n, Index d, double r0, std::uint64_t seed);
// n unit vectors with every pairwise cosine rho, -1/(n-1) <= rho < 1 (needs d >= n): the equiangular
// configuration, theta_i = sqrt(1 - rho) e_i + g sum_k e_k over a random orthonormal family e (the one
// of orthonormal_tokens), g = (sqrt(1 - rho + n rho) - sqrt(1 - rho)) / n.
Tokens equiangular_tokens(Index n, Index d, double rho, double r0, std::uint64_t seed);
// Directions uniform in a spherical cap of angular radius arccos(1 − δ)/2 about a random centre,
// so that every pairwise cosine is at least 1 − δ (Theorem 4.3). Needs 0 < δ < 2.
Tokens cap_tokens(Index n, Index d, double r0, double delta, std::uint64_t seed);

}  // namespace normdyn
