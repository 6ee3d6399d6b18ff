#pragma once
// The normalized attention dynamics of n tokens (spec section 2), for every scheme:
//
//   dθ_j/dt = P_θj A_j / s_j(t),   dr_j/dt = ρ_j(t),   P_θ y = y − <θ, y> θ
//
// with A_j from the one attention kernel and (s_j, ρ_j) from the scheme; and its discrete layer
// maps (spec section 3). Token masses (mean-field weighted particles) enter only the kernel.
#include <vector>

#include "normdyn/attention.hpp"
#include "normdyn/noise.hpp"
#include "normdyn/terms.hpp"
#include "normdyn/ode_system.hpp"
#include "normdyn/qkv.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

struct DynamicsSpec {
  Scheme scheme = PostLN{};
  double beta = 1.0;
  Vector masses;  // empty: equal masses
  KernelOptions kernel;
  AttentionSpec attention;  // mask, score bias, normalizer (default: the paper's softmax attention)
  NoiseSpec noise;          // none: the deterministic flow
  BlockTerms terms;         // added to the attention: the block output U_i = A_i + Σ terms (terms.hpp)
};

class AttentionDynamics final : public OdeSystem {
 public:
  AttentionDynamics(DynamicsSpec spec, QkvSource qkv, Index n, Index d);

  // The velocity field. t_regime selects piecewise regimes (Mix-LN, per-layer matrices).
  void velocity(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, double t, double t_regime,
                Eigen::Ref<RowMatrix> dtheta, Eigen::Ref<Vector> dr);
  // One discrete layer of step h from time t (the layer covers [t, t + h]).
  void layer(Eigen::Ref<RowMatrix> theta, Eigen::Ref<Vector> r, double t, double h);
  // The attention vectors A_j at (θ, t_regime).
  const RowMatrix& attention(Eigen::Ref<const RowMatrix> theta, double t_regime);
  // The block outputs U_j = A_j + the terms' contributions at (θ, r, t, t_regime); A_j without terms.
  const RowMatrix& block_output(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, double t,
                                double t_regime);

  // OdeSystem
  std::size_t size() const override { return layout_.size(); }
  void rhs(const double* x, double* dxdt, double t) override;
  // The right-hand side of tokens [begin, end) only (their θ rows and radii, at their
  // places in dxdt; the other entries are left alone): one process's share of a sharded run
  // (sharded_dynamics.hpp). Regimes as in rhs().
  void rhs_rows(const double* x, double* dxdt, double t, Index begin, Index end);
  std::vector<double> breakpoints(double t0, double t1) const override;
  void enter_piece(double t_begin, double t_end) override;
  double retract(double* x) const override;
  // With noise: dθ_j = (P_θj (A_j h + σ ΔN_j)) / s_j, dr_j = ρ_j h (noise.hpp), s_j and ρ_j from A_j.
  bool noisy() const override { return spec_.noise.active(); }
  void increment(const double* x, double t, double h, const NoiseStep& step, double* dx) override;
  // The increment of tokens [begin, end) only, at their places in dx (as rhs_rows).
  void increment_rows(const double* x, double t, double h, const NoiseStep& step, double* dx, Index begin, Index end);

  const StateLayout& layout() const { return layout_; }
  const DynamicsSpec& spec() const { return spec_; }
  int threads() const { return kernel_.threads(); }
  // The rows of the attention kernel's blocks for these matrices (at t_regime = 0): a sharded run whose
  // shares start at multiples of it computes no row twice (attention.hpp).
  Index row_block();

 private:
  // One layer map of step h with the block outputs u (one row per token).
  void apply_layer(Eigen::Ref<RowMatrix> theta, Eigen::Ref<Vector> r, double t, double t_regime, double h,
                   Eigen::Ref<const RowMatrix> u) const;
  // dθ_j/dt and dr_j/dt of tokens j = begin + i from their block outputs a.row(i); times h, and with
  // the noise σ ΔN_j of noise->row(i) added to h a.row(i) before the projection, for a stochastic
  // step's increment.
  void apply_scheme(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, Eigen::Ref<const RowMatrix> a,
                    double t, double t_regime, Index begin, Eigen::Ref<RowMatrix> dtheta, Eigen::Ref<Vector> dr,
                    double h = 1.0, const RowMatrix* noise = nullptr) const;
  // The attention of rows [begin, end) into row_attention_ (rhs_rows, increment_rows).
  const RowMatrix& row_attention(Eigen::Ref<const RowMatrix> theta, double t_regime, Index begin, Index end);
  // The attention of rows [begin, end) (into row_attention_) for a stochastic step, and what the
  // noise draws from: the means m_j = Σ_k w_jk x_k of value noise (the attention itself when V = I),
  // else the attention.
  const RowMatrix& attention_and_means(Eigen::Ref<const RowMatrix> theta, double t_regime, Index begin, Index end);

  // out.row(i) += the terms' contributions at (t, θ, r) to token begin + i, for rows [begin, end).
  void add_terms(double t, Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, Index begin, Index end,
                 Eigen::Ref<RowMatrix> out);
  // σ ΔN_j of rows [begin, end) at step `step`, into noise_, from the means of value noise.
  void draw_noise(Eigen::Ref<const RowMatrix> means, double h, const NoiseStep& step, Index begin);

  DynamicsSpec spec_;
  QkvSource qkv_;
  StateLayout layout_;
  AttentionKernel kernel_;
  RowMatrix attention_;
  RowMatrix row_attention_;  // row_attention()
  RowMatrix means_, noise_;  // increment: the attention means m_j (value noise) and σ ΔN_j
  RowMatrix term_output_;    // layer(), serial block: the terms' contributions
  RowMatrix term_block_;     // add_terms(): one block's contributions
  RowMatrix whole_terms_;    // add_terms(): the contributions of the terms that see every token
  double piece_middle_ = 0.0;
  bool in_piece_ = false;
};

}  // namespace normdyn
