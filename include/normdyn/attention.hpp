#pragma once
// The one attention kernel of normdyn: the O(n² d) part of every scheme, written once.
//
//   A_j = Σ_k w_jk V θ_k,   w_jk = m_k exp(β <Qθ_j, Kθ_k>) / Σ_l m_l exp(β <Qθ_j, Kθ_l>)
//
// with token masses m_k (all equal for the particle system; the weights of an empirical measure in
// the mean-field discretization). The softmax subtracts each row's maximum before exponentiating.
// Rows are processed in fixed blocks, so memory is O(n·d + block·n) rather than O(n²), and the
// result does not depend on the number of threads (each row is computed the same way whichever
// thread owns its block).
#include <vector>

#include "normdyn/tokens.hpp"

namespace normdyn {

// Q, K, V of one head. `identity` means Q = K = V = I and the matrices are not stored.
struct AttentionMatrices {
  bool identity = true;
  RowMatrix Q, K, V;

  static AttentionMatrices identity_matrices() { return {}; }
};

struct KernelOptions {
  int threads = 0;       // 0: OpenMP's default (OMP_NUM_THREADS, else all cores)
  Index block_rows = 0;  // rows per block; 0: automatic (bounded memory per thread)
};

class AttentionKernel {
 public:
  explicit AttentionKernel(KernelOptions options = {});

  // Writes A (n×d). `masses` is empty (equal masses) or holds n positive values.
  void compute(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
               const Vector& masses, Eigen::Ref<RowMatrix> attention);

  // [sweep] Rows [begin, end) of A only, each against all n keys; `attention` is (end − begin)×d.
  // The share of one process in a sharded run (sharded_dynamics.hpp): O((end − begin) n d) work.
  // Same formula and the same row-max softmax as compute(); it agrees with the corresponding rows of
  // compute() to round-off (the products are formed over different row blocks, so the last bits of
  // a row may differ). Threads as in compute(), over blocks of these rows.
  void compute_rows(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                    const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention);

  int threads() const { return threads_; }

 private:
  Index block_rows(Index n) const;

  KernelOptions options_;
  int threads_;
  RowMatrix queries_, keys_, values_;   // ΘQᵀ, ΘKᵀ, ΘVᵀ when the matrices are not the identity
  std::vector<Vector> scores_;          // one block×n workspace per thread
};

}  // namespace normdyn
