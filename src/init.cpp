#include "normdyn/init.hpp"
#include "normdyn/errors.hpp"

#include <Eigen/QR>
#include <cassert>
#include <cmath>

#include "normdyn/random.hpp"

namespace normdyn {
Eigen::RowVectorXd random_direction(Index d, Random& rng) {
  Eigen::RowVectorXd v(d);
  double norm = 0.0;
  while (norm == 0.0) {
    for (Index i = 0; i < d; ++i) v(i) = rng.normal();
    norm = v.norm();
  }
  return v / norm;
}

Tokens uniform_tokens(Index n, Index d, double r0, std::uint64_t seed) {
  Random rng(seed, RandomStream::initial_tokens);
  Tokens t{RowMatrix(n, d), Vector::Constant(n, r0)};
  for (Index j = 0; j < n; ++j) t.theta.row(j) = random_direction(d, rng);
  return t;
}

Tokens gaussian_tokens(Index n, Index d, std::uint64_t seed) {
  Random rng(seed, RandomStream::initial_tokens);
  Tokens t{RowMatrix(n, d), Vector(n)};
  for (Index j = 0; j < n; ++j) {
    double norm = 0.0;
    while (norm == 0.0) {
      for (Index i = 0; i < d; ++i) t.theta(j, i) = rng.normal();
      norm = t.theta.row(j).norm();
    }
    t.r(j) = norm;
    t.theta.row(j) /= norm;
  }
  return t;
}

Tokens orthonormal_tokens(Index n, Index d, double r0, std::uint64_t seed) {
  assert(n <= d);
  Random rng(seed, RandomStream::initial_tokens);
  Eigen::MatrixXd g(d, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < d; ++i) g(i, j) = rng.normal();
  // Q of a Gaussian matrix is a uniformly random orthonormal family (after fixing the signs of R).
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
  const Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(d, n);
  const Eigen::MatrixXd r = qr.matrixQR();
  Tokens t{RowMatrix(n, d), Vector::Constant(n, r0)};
  for (Index j = 0; j < n; ++j) {
    const double sign = r(j, j) < 0.0 ? -1.0 : 1.0;
    t.theta.row(j) = sign * q.col(j).transpose();
  }
  normalize_rows(t.theta);
  return t;
}

Tokens equiangular_tokens(Index n, Index d, double rho, double r0, std::uint64_t seed) {
  assert(n <= d && rho < 1.0 && (n == 1 || rho >= -1.0 / static_cast<double>(n - 1)));
  Tokens t = orthonormal_tokens(n, d, r0, seed);
  const double a = std::sqrt(1.0 - rho);
  const double g = (std::sqrt(std::max(0.0, 1.0 - rho + static_cast<double>(n) * rho)) - a) / static_cast<double>(n);
  const Eigen::RowVectorXd sum = t.theta.colwise().sum();
  t.theta = (a * t.theta).rowwise() + g * sum;
  normalize_rows(t.theta);
  return t;
}

Tokens cap_tokens(Index n, Index d, double r0, double delta, std::uint64_t seed) {
  assert(delta > 0.0 && delta < 2.0);
  Random rng(seed, RandomStream::initial_tokens);
  const Eigen::RowVectorXd centre = random_direction(d, rng);
  // Two points within angle ρ of the centre are within 2ρ of each other: cos(2ρ) = 1 − δ, i.e.
  // sin²ρ = δ/2 (the form that stays exact for δ near round-off, where 1 − δ rounds to 1).
  const double rho = std::asin(std::sqrt(0.5 * delta));
  if (!(rho > 0.0) || !std::isfinite(rho))
    throw InputError("init.delta", "too small for a cap of positive angle (got " + std::to_string(delta) + ")");
  const double log_sin_rho = std::log(std::sin(rho));
  // The acceptance rate of the rejection below is about 1/(d − 1): this bound is never reached by
  // a sampler that works, and ends one that cannot (e.g. a cap too small for double precision).
  const double max_tries = 1000.0 * static_cast<double>(d + 16);
  Tokens t{RowMatrix(n, d), Vector::Constant(n, r0)};
  for (Index j = 0; j < n; ++j) {
    // The polar angle ψ of a uniform point in the cap has density ∝ sin^{d−2} ψ on [0, ρ]
    // (increasing, as ρ <= π/2): rejection from the uniform law with envelope sin^{d−2} ρ.
    double psi = 0.0;
    for (double tries = 0.0;; ++tries) {
      if (tries >= max_tries)
        throw InputError("init.delta", "the cap sampler found no point in " + std::to_string(max_tries) +
                                           " tries (init.delta = " + std::to_string(delta) +
                                           " is too small for model.d = " + std::to_string(d) + ")");
      psi = rho * rng.uniform();
      const double log_ratio = static_cast<double>(d - 2) * (std::log(std::sin(psi)) - log_sin_rho);
      if (d == 2 || std::log(rng.uniform()) < log_ratio) break;
    }
    Eigen::RowVectorXd u = random_direction(d, rng);
    u -= u.dot(centre) * centre;  // a uniform direction orthogonal to the centre
    const double norm = u.norm();
    if (norm == 0.0) {
      t.theta.row(j) = centre;
      continue;
    }
    t.theta.row(j) = std::cos(psi) * centre + std::sin(psi) * (u / norm);
  }
  normalize_rows(t.theta);
  return t;
}

}  // namespace normdyn
