#pragma once
// Per-frame observables of a token configuration. Pure functions: no I/O, no solver.
//
// Accuracy. For unit vectors 1 − <θ_j, θ_k> = |θ_j − θ_k|² / 2. Every "1 − cosine" below is computed
// from differences, never as 1 minus a cosine, so that it keeps its relative accuracy when tokens are
// close (1 − γ ~ 1e-14 late in a collapse would otherwise be pure round-off):
//  * the mean over pairs, 1 − mean cosine = n/(n−1) · Var with Var = (1/n) Σ_j |θ_j − θ̄|², is exact
//    to a few ulps relative, whatever its size;
//  * pairwise values come from the Gram matrix of the centred tokens c_j = θ_j − θ̄:
//    |θ_j − θ_k|²/2 = (|c_j|² + |c_k|² − 2 <c_j, c_k>)/2, accurate to ~1e-16 · max_j |c_j|² absolute,
//    i.e. to a few ulps relative for a single tight cluster.
#include <cstdint>
#include <string>
#include <vector>

#include "normdyn/schemes.hpp"
#include "normdyn/terms.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn::analysis {

// Var = (1/n) Σ_j |θ_j − θ̄|² = 1 − |θ̄|² for unit θ_j.
double variance(Eigen::Ref<const RowMatrix> theta);
// E = Σ_{j,k} exp(β <θ_j, θ_k>) (Q = K = V = I); with masses m: Σ m_j m_k exp(β <θ_j, θ_k>).
double interaction_energy(Eigen::Ref<const RowMatrix> theta, double beta);
// min_{j<k} <θ_j, θ_k> (1 when n = 1).
double min_pairwise_cosine(Eigen::Ref<const RowMatrix> theta);
// The pairwise quantities of one configuration in one blocked pass over the Gram matrix (memory
// O(block·n), not O(n²)): E as above, the minimum and the mean of <θ_j, θ_k> over j ≠ k.
struct PairwiseSummary {
  double energy = 0.0;
  double min_cosine = 1.0;
  double mean_cosine = 1.0;
};
PairwiseSummary pairwise_summary(Eigen::Ref<const RowMatrix> theta, double beta);

// Whether every pairwise cosine exceeds `threshold`; O(n d) in the clear cases, O(n² d) otherwise.
bool all_cosines_above(Eigen::Ref<const RowMatrix> theta, double threshold);

// 1 − (mean of <θ_j, θ_k> over the n(n−1) ordered pairs j ≠ k) = n/(n−1) · Var (0 when n = 1).
double one_minus_mean_cosine(Eigen::Ref<const RowMatrix> theta);

// The n×n matrix H_jk = |θ_j − θ_k|² / 2 (= 1 − <θ_j, θ_k> for unit rows), from the centred Gram
// matrix; zero diagonal, symmetric, clamped at 0. O(n² d) time (one matrix product), O(n²) memory.
RowMatrix half_squared_chords(Eigen::Ref<const RowMatrix> theta);

// From H = half_squared_chords(θ):
// max_{j<k} H_jk = 1 − min pairwise cosine (0 when n = 1).
double max_one_minus_cosine(Eigen::Ref<const RowMatrix> h);
// The geodesic diameter max_{j,k} ∠(θ_j, θ_k) = 2 asin(sqrt(max H / 2)), in radians, in [0, π].
double geodesic_diameter(Eigen::Ref<const RowMatrix> h);
// E / (n² e^β) = (1/n²) Σ_{j,k} exp(−β H_jk): the interaction energy of Q = K = V = I without the
// factor n² e^β, in (0, 1]; 1 at consensus, ≈ Σ_c (m_c/n)² for well separated clusters of sizes m_c.
// Finite for every β (E itself overflows for β ≳ 700).
double normalized_energy(Eigen::Ref<const RowMatrix> h, double beta);

// Eigenvalues of the second-moment matrix M = (1/n) Σ_j θ_j θ_jᵀ (the nonzero eigenvalues of the
// Gram matrix ΘΘᵀ/n), in decreasing order; they sum to the mean squared norm (1 for unit tokens).
std::vector<double> moment_eigenvalues(Eigen::Ref<const RowMatrix> theta);
// Number of eigenvalues of M above `threshold` · trace(M).
int effective_rank(Eigen::Ref<const RowMatrix> theta, double threshold);

// Mean angular speed (1/n) Σ_j |P_θj θ̇_j| from the velocity θ̇ (radians per unit time).
double mean_angular_speed(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const RowMatrix> velocity);
// Mean angular speed between two frames: (1/n) Σ_j ∠(θ_j(t0), θ_j(t1)) / (t1 − t0), the angle computed
// as 2 asin(|θ_j(t1) − θ_j(t0)| / 2). A first-order estimate of the speed at the midpoint.
double mean_angular_speed_between(Eigen::Ref<const RowMatrix> theta0, Eigen::Ref<const RowMatrix> theta1, double dt);

// min_j <θ_j, A_j> (the radial rate of Pre-LN; Corollary of Theorem 3.1).
double min_radial_alignment(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const RowMatrix> attention);
// max_j |A_j| (Theorem 4.2).
double max_row_norm(Eigen::Ref<const RowMatrix> m);

// Everything the analysis records per frame that depends on the configuration alone.
struct FrameObservables {
  double one_minus_mean_cosine = 0.0;
  double mean_cosine = 1.0;
  double one_minus_min_cosine = 0.0;
  double min_cosine = 1.0;
  double variance = 0.0;
  double diameter = 0.0;           // geodesic, radians
  double energy = 0.0;             // Σ_{j,k} exp(β <θ_j, θ_k>); +inf if it overflows
  double normalized_energy = 1.0;  // E / (n² e^β)
  double mean_radius = 1.0;
  int effective_rank = 1;
};

struct ObservableOptions {
  double beta = 1.0;
  double rank_threshold = 1e-3;  // effective rank: eigenvalues above this fraction of the trace
};

// `h` is half_squared_chords(tokens.theta), shared with the cluster analysis.
FrameObservables frame_observables(const Tokens& tokens, Eigen::Ref<const RowMatrix> h,
                                   const ObservableOptions& options);

// ---- The registry's functions (observable_registry.hpp) -------------------------------------------

// What one frame offers to the registry's functions. Pointers are null when not available.
struct FrameInput {
  const Tokens* tokens = nullptr;
  double t = 0.0;
  std::int64_t step = 0;
  // half_squared_chords(θ), if the caller has it (the analysis shares it with the clusters); without
  // it the pairwise observables come from one blocked, threaded pass over the Gram matrix.
  const RowMatrix* h = nullptr;
  const RowMatrix* velocity = nullptr;      // dθ/dt (dynamics)
  const Vector* radial_velocity = nullptr;  // dr/dt (dynamics)
  const RowMatrix* attention = nullptr;     // A_j (dynamics)
  const Vector* inverse_speed = nullptr;    // 1/s_j of every token (dynamics)
};

struct FrameComputeOptions {
  double beta = 1.0;
  double rank_threshold = 1e-3;
  int threads = 0;        // threads of the blocked pairwise pass (0: OpenMP's default)
  bool discrete = false;  // frames are layers of a `discrete` run (step = layers so far)
  // The block's terms (feedforward), if any: the energy adds their potential, E + 2βn Σ_j Φ(θ_j). With
  // the uniform normalizer that sum over 2βn is the flow's Lyapunov function, as E is without terms.
  const BlockTerms* terms = nullptr;
};

// Computes the named observables frame after frame, in the order of `names`; keeps what the
// trajectory observables need from earlier frames (the previous frame, the per-token clocks).
// Throws std::invalid_argument for a name that is not in the registry.
class FrameObservableComputer {
 public:
  FrameObservableComputer(std::vector<std::string> names, FrameComputeOptions options);
  // The values of one frame, in the order of names(); NaN where the frame lacks what an
  // observable needs (e.g. the first frame of a difference).
  std::vector<double> compute(const FrameInput& frame);
  const std::vector<std::string>& names() const { return names_; }

  // The state carried from frame to frame (public so that the table of functions can use it).
  struct History {
    bool has_previous = false;
    double t = 0.0;
    std::int64_t step = 0;
    RowMatrix theta;
    Vector r, r0;
    double mean_cosine = 0.0;
    Vector clock;          // ∫ 1/s_j dt so far
    Vector inverse_speed;  // 1/s_j at the previous frame
  };

 private:
  std::vector<std::string> names_;
  std::vector<int> index_;  // into the table of functions
  FrameComputeOptions options_;
  History history_;
};

// The observables of one frame that need the directions or radii only (the run recorder's:
// compute_frame_observables(frame_observable_names(), tokens, beta, threads)).
std::vector<double> compute_frame_observables(const std::vector<std::string>& names, const Tokens& tokens, double beta,
                                              int threads = 0, const BlockTerms* terms = nullptr);

// Whether the table of functions has an entry of this name (every registry entry must).
bool has_function(std::string_view name);

// E, min and mean cosine in one pass over the tiles j-block ≤ k-block of the Gram matrix (each
// off-diagonal tile once), the tiles shared among `threads` (0: OpenMP's default); the sum is taken
// in a fixed order, so the result does not depend on the number of threads.
PairwiseSummary pairwise_summary_threaded(Eigen::Ref<const RowMatrix> theta, double beta, int threads = 0);

// 1/s_j of every token: the scheme's speed factor (scheme.hpp) at (t, t_regime) given θ, r and A.
Vector inverse_speed_factors(const Scheme& scheme, double t, double t_regime, Eigen::Ref<const RowMatrix> theta,
                             Eigen::Ref<const Vector> r, Eigen::Ref<const RowMatrix> attention);
}  // namespace normdyn::analysis
