#pragma once
// Token state (θ_j, r_j), j = 1..n: directions on the unit sphere S^{d-1} and radii r_j > 0.
// Directions are the rows of an n×d row-major matrix, so that a token is contiguous in memory.
#include <Eigen/Core>
#include <cstddef>
#include <limits>
#include <span>

namespace normdyn {

using Index = Eigen::Index;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

// The quiet NaN that stands for a figure not measured (observables, fits, tables, ensembles).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// out.row(i) = a.row(i) * m for every row, each as a product of a vector and m: a row's bits then do
// not depend on the rows beside it, which a matrix product's blocking can change (sharded runs).
template <class A, class M, class Out>
void multiply_rows(const A& a, const M& m, Out&& out) {
  for (Index i = 0; i < a.rows(); ++i) out.row(i).noalias() = a.row(i) * m;
}

struct Tokens {
  RowMatrix theta;  // n×d, unit rows
  Vector r;         // n radii

  Index n() const { return theta.rows(); }
  Index d() const { return theta.cols(); }
};

// The flat state the integrators see: [θ row-major (n·d values) | r (n values)].
// Every scheme carries the radii; schemes without a radial equation leave them constant.
struct StateLayout {
  Index n = 0;
  Index d = 0;
  std::size_t size() const { return static_cast<std::size_t>(n * d + n); }

  Eigen::Map<const RowMatrix> theta(const double* x) const { return {x, n, d}; }
  Eigen::Map<RowMatrix> theta(double* x) const { return {x, n, d}; }
  Eigen::Map<const Vector> r(const double* x) const { return {x + n * d, n}; }
  Eigen::Map<Vector> r(double* x) const { return {x + n * d, n}; }

  void pack(const Tokens& t, double* x) const {
    theta(x) = t.theta;
    r(x) = t.r;
  }
  Tokens unpack(const double* x) const { return Tokens{RowMatrix(theta(x)), Vector(r(x))}; }
};

// Projects every row onto the unit sphere; returns the largest | |θ_j| - 1 | seen before.
double normalize_rows(Eigen::Ref<RowMatrix> theta);

}  // namespace normdyn
