#pragma once
// Sinkhorn attention (Sander, Ablin, Blondel and Peyré, "Sinkformers", AISTATS 2022): the kernel
// K_ij = e^{s_ij} scaled on both sides, w = diag(u) K diag(v), to a doubly stochastic matrix (every row
// and every column sums to 1) by alternating row and column normalization. Token masses, if any, are
// absorbed by the column scaling v and do not change w.
//
// Unlike the row-local normalizers it needs every row of K at once (O(n^2) memory for the whole
// matrix, no sharding), and it changes the model: the weights are no longer a softmax of the scores.
#include <cmath>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct Sinkhorn {
  static constexpr std::string_view key = "sinkhorn";
  static constexpr std::string_view title = "Sinkhorn (doubly stochastic) attention";
  static constexpr std::string_view formula = "w = diag(u) e^{s} diag(v), rows and columns summing to 1";
  double tol = 1e-12;
  static constexpr std::array<ParamSpec<Sinkhorn>, 1> params{
      {{"sinkhorn_tol", &Sinkhorn::tol,
        "the alternating normalization stops when every column sums to 1 within this (rows sum to 1 to round-off)", 0.0,
        false}}};
  // Sweeps before giving up: Sinkhorn converges linearly at a rate set by the spread of K, so a kernel
  // that needs more than this is too ill-conditioned for the tolerance.
  static constexpr int max_sweeps = 100000;

  // Scales `kernel` (n x n, entries >= 0, each row's largest entry 1, so every row sum is >= 1) in
  // place to a doubly stochastic matrix. Returns the sweeps taken, or -1 when the columns were not within
  // `tol` of 1 after max_sweeps (the matrix is then left with its rows summing to 1).
  template <class M>
  int scale(M& kernel) const {
    const Index n = kernel.rows();
    Vector u = Vector::Ones(n), v(n), column(n);
    column.noalias() = kernel.transpose() * u;
    for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
      v = column.cwiseInverse();
      u = (kernel * v).cwiseInverse();
      column.noalias() = kernel.transpose() * u;
      if ((column.cwiseProduct(v).array() - 1.0).abs().maxCoeff() <= tol) {
        kernel = u.asDiagonal() * kernel * v.asDiagonal();
        return sweep;
      }
    }
    kernel = u.asDiagonal() * kernel * v.asDiagonal();
    return -1;
  }

  // Needs all rows at once (not shardable); the mean-field solver implements the softmax only; the
  // interaction energy of the softmax model is not the Lyapunov function of this flow.
  Traits traits() const {
    Traits t;
    t.has_energy = t.meanfield = t.shardable = t.symmetric = false;
    return t;
  }
};

}  // namespace normdyn
