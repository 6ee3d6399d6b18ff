#pragma once
// Per-frame observables of a token configuration. Pure functions: no I/O, no solver.
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

}  // namespace normdyn::analysis
