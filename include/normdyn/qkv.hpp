#pragma once
// Where the attention matrices Q, K, V come from at time t.
//   identity            Q = K = V = I (the setting of most theorems)
//   gaussian            entries N(0, 1/d), drawn once from the seed (every head its own)
//   gaussian_per_layer  fresh N(0, 1/d) matrices on every unit interval [k, k+1) of t, as in a
//                       randomly initialized deep transformer (layer k drawn from (seed, k))
//   gaussian_unit_norm  entries N(0, 1/d) drawn once from the seed, then Q, K scaled by one factor to
//                       the spectral norm |Q^T K| = 1 and V to |V| = 1 (the hypotheses |Q^T K|, |V| <= 1
//                       of Theorems 4.2 and 4.3); optionally V = I (Theorem 4.3)
//   gaussian_per_map_layer  Q = K = I and a fresh V = I + (σ/√h) G_k for layer k of the discrete maps
//                       of step h (on [t0 + k h, t0 + (k+1) h)), G_k standard normal from (seed, k): the
//                       discrete model whose depth limit is driven by one matrix Brownian motion
//                       (the value noise of noise.hpp)
//   layers              given matrices, layer k on [k, k+1), the last one held afterwards
//                       (a file holding one set of matrices is one layer)
// Matrices are piecewise constant in t; the integers where they change are breakpoints that the
// integrators stop at.
#include <cstdint>
#include <memory>
#include <vector>

#include "normdyn/attention_matrices.hpp"

namespace normdyn {

class QkvSource {
 public:
  // `heads`: the heads of the model (the random kinds draw each head's matrices from its own stream; the
  // first head's are those of a one-head model).
  static QkvSource identity(Index heads = 1);
  static QkvSource gaussian(Index d, std::uint64_t seed, Index heads = 1);
  static QkvSource gaussian_per_layer(Index d, std::uint64_t seed, Index heads = 1);
  static QkvSource gaussian_unit_norm(Index d, std::uint64_t seed, bool identity_value = false, Index heads = 1);
  static QkvSource layers(std::vector<AttentionMatrices> per_layer);
  static QkvSource gaussian_per_map_layer(Index d, std::uint64_t seed, double sigma, double h, double t0);

  // The matrices in force at t_regime (a time inside the current smooth piece).
  const AttentionMatrices& at(double t_regime);
  // Times in (t0, t1) at which the matrices change.
  std::vector<double> breakpoints(double t0, double t1) const;
  bool is_identity() const { return kind_ == Kind::identity; }
  bool time_dependent() const;

 private:
  enum class Kind { identity, fixed_layers, random_per_layer, random_per_map_layer };
  static AttentionMatrices draw(Index d, std::uint64_t seed, bool per_layer, std::uint64_t layer, Index heads);

  Kind kind_ = Kind::identity;
  Index d_ = 0;
  Index heads_ = 1;
  std::uint64_t seed_ = 0;
  std::vector<AttentionMatrices> layers_;  // fixed_layers: all; random_per_layer: cache of one; identity: one
  std::int64_t cached_layer_ = -1;
  double sigma_ = 0.0, step_ = 1.0, t0_ = 0.0;  // random_per_map_layer
};

}  // namespace normdyn
