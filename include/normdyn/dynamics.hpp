#pragma once
// The normalized attention dynamics of n tokens (spec section 2), for every scheme:
//
//   dθ_j/dt = P_θj A_j / s_j(t),   dr_j/dt = ρ_j(t),   P_θ y = y − <θ, y> θ
//
// with A_j from the one attention kernel and (s_j, ρ_j) from the scheme; and its discrete layer
// maps (spec section 3). Token masses (mean-field weighted particles) enter only the kernel.
#include <vector>

#include "normdyn/attention.hpp"
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

  const StateLayout& layout() const { return layout_; }
  const DynamicsSpec& spec() const { return spec_; }
  int threads() const { return kernel_.threads(); }

 private:
  // dθ_j/dt and dr_j/dt of tokens j = begin + i from their attention rows a.row(i).
  void apply_scheme(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, Eigen::Ref<const RowMatrix> a,
                    double t, double t_regime, Index begin, Eigen::Ref<RowMatrix> dtheta, Eigen::Ref<Vector> dr) const;

  DynamicsSpec spec_;
  QkvSource qkv_;
  StateLayout layout_;
  AttentionKernel kernel_;
  RowMatrix attention_;
  RowMatrix row_attention_;  // rhs_rows
  double piece_middle_ = 0.0;
  bool in_piece_ = false;
};

}  // namespace normdyn
