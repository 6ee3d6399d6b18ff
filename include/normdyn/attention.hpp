#pragma once
// The one attention kernel of normdyn: the O(n² d) part of every scheme, written once.
//
//   A_j = Σ_k w_jk V θ_k,   w_jk = m_k exp(β <Qθ_j, Kθ_k>) / Σ_l m_l exp(β <Qθ_j, Kθ_l>)
//
// with token masses m_k (all equal for the particle system; the weights of an empirical measure in
// the mean-field discretization). Two paths compute it:
//
// * general (any Q, K, V), over any range of rows (a whole run, or one process's share of a sharded
//   run): rows in fixed blocks; per block one GEMM for the scores, a softmax that
//   subtracts each row's maximum, and one GEMM for the weighted sum and the normalizer together.
// * symmetric (Q = K = V = I, the default): with h_j = |θ_j|²/2,
//       exp(β<θ_j, θ_k>) = exp(β h_j) · G_jk · exp(β h_k),   G_jk = exp(-β |θ_j - θ_k|² / 2),
//   the factor of j cancels in the softmax and G is symmetric with G_jj = 1, so each off-diagonal
//   tile of G is computed once and used for both of its row blocks: half the exponentials and
//   3 n² d instead of 4 n² d flops. The weight m_k exp(β(h_k - max h)) of token k is bounded, and
//   the normalizer of row j is at least its own term; the path is taken only when the norms are
//   close enough for that term to stay far from underflow (always true for the dynamics, whose
//   tokens are unit vectors up to round-off).
//
// Memory is O(n·d + threads·block·max(block, n)) rather than O(n²). The result depends neither on
// the number of threads nor on the rows asked for, bit for bit: every block (general) or tile
// (symmetric) is one of the whole matrix's, computed the same way whichever thread owns it, and the
// symmetric path adds the tiles of a row block in a fixed order (a round-robin schedule in which each
// round touches every row block at most once). So the processes of a sharded run, each computing its
// own rows, together hold exactly the matrix that one process computes.
//
// A specification other than the default (attention_spec.hpp: a mask, a score bias, a positional
// encoding, another normalizer) takes the general path, which then rotates queries and keys by
// position, computes each row block's scores only against the keys its rows may attend to (the union
// of their ranges: a causal block skips the later keys, about half the work), adds the bias, and
// applies the normalizer's factor. Under a mask the blocks are sized for its shape (the largest whose
// union ranges score at most 1/16 more than the mask allows: a sliding window of w keys costs
// O(n w d)) and taken by decreasing work, which balances the threads. The Sinkhorn normalizer forms
// the whole n×n matrix instead.
#include <vector>

#include "normdyn/attention_matrices.hpp"
#include "normdyn/attention_spec.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

struct KernelOptions {
  int threads = 0;        // 0: OpenMP's default (OMP_NUM_THREADS, else all cores)
  Index block_rows = 0;   // rows per block (tile side on the symmetric path); 0: automatic
  bool symmetric = true;  // use the symmetric path when Q = K = V = I (false: always general)
  // Symmetric path: up to this d, tiles are formed row by row (fused) instead of by GEMM; -1: the
  // measured default (README, Performance).
  Index fused_max_dim = -1;
};

enum class KernelPath { general, symmetric };

// The GEMM behind the kernel's products: Eigen's own, or a BLAS library through Eigen's BLAS
// backend (CMake option NORMDYN_USE_BLAS, which defines EIGEN_USE_BLAS for the whole tree).
const char* gemm_backend();

class AttentionKernel {
 public:
  explicit AttentionKernel(KernelOptions options = {}, AttentionSpec spec = {});

  // Writes A (n×d), summed over the heads of `qkv`. `masses` is empty (equal masses) or holds n
  // positive values.
  void compute(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta, const Vector& masses,
               Eigen::Ref<RowMatrix> attention);

  // Rows [begin, end) of A only, each against all n keys; `attention` is (end − begin)×d, the same
  // bits as those rows of compute() (which is the case [0, n)). The share of one process in a sharded
  // run (sharded_dynamics.hpp): the blocks of the whole matrix that meet the range, so the work is
  // O((end − begin) n d) when the range's ends are multiples of row_block() (on the symmetric path,
  // the tiles of every pair of blocks one of which meets the range).
  void compute_rows(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta, const Vector& masses,
                    Index begin, Index end, Eigen::Ref<RowMatrix> attention);

  int threads() const { return threads_; }
  // The path the last call of compute() took.
  KernelPath last_path() const { return last_path_; }
  // The block size compute() uses for n tokens on the given path.
  Index block_rows(Index n, KernelPath path) const;
  // The path compute() takes for these matrices (the symmetric one only if the tokens' norms allow).
  KernelPath path_for(const AttentionMatrices& qkv) const;
  // Score entries the last call of the general path formed (per head: its blocks' rows times the keys
  // each block scores); 0 after the symmetric path. A measure of the work that a mask leaves.
  Index last_scored() const { return last_scored_; }

 private:
  // Adds the heads after the first to `attention`, each computed by head(matrices, out).
  template <class Head>
  void add_other_heads(const AttentionMatrices& qkv, Eigen::Ref<RowMatrix> attention, Head&& head);
  // One head (the first of `qkv`) over rows [begin, end).
  void compute_head(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta, const Vector& masses,
                    Index begin, Index end, Eigen::Ref<RowMatrix> attention);
  void compute_general(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                       const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention);
  void compute_symmetric(Eigen::Ref<const RowMatrix> theta, double beta, const Vector& masses, Index begin, Index end,
                         Eigen::Ref<RowMatrix> attention);
  // The general path's blocks under a specification other than the default; `scores_from_theta`:
  // queries and keys are θ itself (Q = K = I, no positional encoding).
  void composed_blocks(Eigen::Ref<const RowMatrix> theta, bool scores_from_theta, double beta, const Vector& masses,
                       Index begin, Index end, Eigen::Ref<RowMatrix> attention);
  // Row g of a composed block: scores to numerators in place; returns the row's largest score.
  double composed_row(Eigen::Ref<Eigen::RowVectorXd> row, Index g, Index key_first, Index n, double beta) const;
  // Under a mask: the entries blocks of `block` rows score, and the block size chosen for the mask.
  Index masked_scored(Index n, Index block) const;
  Index masked_block_rows(Index n, Index unmasked) const;
  void matrix_attention(Eigen::Ref<const RowMatrix> theta, bool scores_from_theta, double beta,
                        Eigen::Ref<RowMatrix> attention);
  // Speed-ups for alternatives with the optional capabilities of attention_spec.hpp.
  void tabulate_distance_bias(Index n);
  void rotate_by_position(RowMatrix& rows);
  void fused_tile(Index b0, Index rb, Index c0, Index rc, bool both, double beta, Vector& buffer);
  // Threads for `rows` rows against n keys: one below the work that pays for a team.
  int threads_for(Index rows, Index n, Index d, Index parallel_tasks) const;
  // One task of the symmetric schedule: tile (b, c), b ≤ c (none if b == c and !diagonals), after
  // the diagonal tiles of b and c if `diagonals`, then the normalization of both if `finalize`.
  struct Task {
    Index b, c;
    bool diagonals, finalize;
  };
  const std::vector<Task>& tile_schedule(Index blocks);

  KernelOptions options_;
  AttentionSpec spec_;
  int threads_;
  KernelPath last_path_ = KernelPath::general;
  Index last_scored_ = 0;
  mutable Index masked_block_n_ = -1, masked_block_ = 0;  // masked_block_rows for this n
  std::vector<KeyRange> block_keys_;                      // composed path: each block's keys (the union of its rows')
  std::vector<Index> block_order_;                        // composed path: the blocks by decreasing work
  RowMatrix weights_;                                     // Sinkhorn: the whole n×n matrix of weights
  RowMatrix head_;                                        // several heads: one head's attention before it is added
  RowMatrix queries_, keys_;           // ΘQᵀ, ΘKᵀ (all rows) when the matrices are not the identity
  RowMatrix values_;                   // [m ∘ ΘVᵀ | m]: weighted values with the masses as last column
  RowMatrix sums_;                     // symmetric path: [Σ_k w̃_jk v_k | Σ_k w̃_jk] before normalization
  std::vector<RowMatrix> block_sums_;  // general path: the same for one block, per thread
  RowMatrix theta_t_;                  // Θᵀ; for small d, values_ and sums_ are stored transposed too
  Vector half_norms_;                  // β |θ_j|² / 2
  std::vector<Vector> scratch_;        // one score block or tile per thread
  std::vector<Vector> row_scratch_;    // composed path: one block's row maxima per thread
  Vector reference_;                   // composed path: Z_i of every row, for reference_masses_
  Vector reference_masses_;
  Vector distance_bias_;  // a distance bias b(k, n), k < n, for distance_bias_n_
  Index distance_bias_n_ = -1;
  RowMatrix rotation_cos_, rotation_sin_;  // plane rotations: cos and sin of each (position, plane)
  Index rotation_d_ = -1;
  // Symmetric path: tasks in rounds of disjoint row blocks; round r holds
  // schedule_[round_begin_[r] .. round_begin_[r + 1]).
  Index schedule_blocks_ = -1;
  std::vector<Task> schedule_;
  std::vector<std::size_t> round_begin_;
};

}  // namespace normdyn
