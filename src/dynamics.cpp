#include "normdyn/dynamics.hpp"

#include <algorithm>
#include <cmath>

namespace normdyn {

AttentionDynamics::AttentionDynamics(DynamicsSpec spec, QkvSource qkv, Index n, Index d)
    : spec_(std::move(spec)),
      qkv_(std::move(qkv)),
      layout_{n, d},
      kernel_(spec_.kernel, spec_.attention),
      attention_(n, d) {}

const RowMatrix& AttentionDynamics::attention(Eigen::Ref<const RowMatrix> theta, double t_regime) {
  kernel_.compute(theta, qkv_.at(t_regime), spec_.beta, spec_.masses, attention_);
  return attention_;
}

const RowMatrix& AttentionDynamics::block_output(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r,
                                                 double t, double t_regime) {
  attention(theta, t_regime);
  add_terms(t, theta, r, 0, layout_.n, attention_);
  return attention_;
}

// The terms are evaluated on fixed blocks of rows of the whole system, each whole even where it
// crosses `begin` or `end`: their products then have the same shape in every process of a sharded
// run, and a row gets the same bits whichever range it was asked with. A term that sees every token
// (a user's term without `rows`) is called once on all of them, whatever the range.
void AttentionDynamics::add_terms(double t, Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, Index begin,
                                  Index end, Eigen::Ref<RowMatrix> out) {
  if (spec_.terms.empty()) return;
  constexpr Index kTermRows = 64;
  for (Index first = begin / kTermRows * kTermRows; first < end; first += kTermRows) {
    const Index rows = std::min(kTermRows, layout_.n - first);
    term_block_.setZero(rows, layout_.d);
    spec_.terms.add(t, theta.middleRows(first, rows), r.segment(first, rows), term_block_, first);
    const Index lo = std::max(first, begin), hi = std::min(first + rows, end);
    out.middleRows(lo - begin, hi - lo) += term_block_.middleRows(lo - first, hi - lo);
  }
  if (!spec_.terms.has_whole_terms()) return;
  whole_terms_.setZero(layout_.n, layout_.d);
  spec_.terms.add(t, theta, r, whole_terms_, 0, false);
  out += whole_terms_.middleRows(begin, end - begin);
}

void AttentionDynamics::velocity(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, double t,
                                 double t_regime, Eigen::Ref<RowMatrix> dtheta, Eigen::Ref<Vector> dr) {
  const RowMatrix& a = block_output(theta, r, t, t_regime);
  apply_scheme(theta, r, a, t, t_regime, 0, dtheta, dr);
}

void AttentionDynamics::apply_scheme(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r,
                                     Eigen::Ref<const RowMatrix> a, double t, double t_regime, Index begin,
                                     Eigen::Ref<RowMatrix> dtheta, Eigen::Ref<Vector> dr, double h,
                                     const RowMatrix* noise) const {
  std::visit(
      [&](const auto& scheme) {
        for (Index i = 0; i < a.rows(); ++i) {
          const Index j = begin + i;
          const double theta_dot_a = theta.row(j).dot(a.row(i));
          const TokenContext c{t, t_regime, r(j), theta_dot_a, a.row(i).norm()};
          if (!noise) {
            dtheta.row(i) = h * (a.row(i) - theta_dot_a * theta.row(j)) / scheme.speed(c);
          } else {
            dtheta.row(i) = h * a.row(i) + noise->row(i);
            const double radial = theta.row(j).dot(dtheta.row(i));
            dtheta.row(i) = (dtheta.row(i) - radial * theta.row(j)) / scheme.speed(c);
          }
          dr(i) = h * scheme.radial_rate(c);
        }
      },
      spec_.scheme);
}

void AttentionDynamics::layer(Eigen::Ref<RowMatrix> theta, Eigen::Ref<Vector> r, double t, double h) {
  // Layer regimes are chosen at the middle of the layer, exactly as the ODE chooses them on the
  // piece [t, t + h], so that the maps and the ODE switch between the same layers.
  const double t_regime = t + 0.5 * h;
  if (spec_.terms.empty() || spec_.terms.block == TermsBlock::parallel) {
    apply_layer(theta, r, t, t_regime, h, block_output(theta, r, t, t_regime));
    return;
  }
  // Serial: the attention sublayer, then the terms' sublayer at the state it left.
  apply_layer(theta, r, t, t_regime, h, attention(theta, t_regime));
  term_output_.setZero(theta.rows(), theta.cols());
  add_terms(t, theta, r, 0, layout_.n, term_output_);
  apply_layer(theta, r, t, t_regime, h, term_output_);
}

void AttentionDynamics::apply_layer(Eigen::Ref<RowMatrix> theta, Eigen::Ref<Vector> r, double t, double t_regime,
                                    double h, Eigen::Ref<const RowMatrix> a) const {
  std::visit(
      [&](const auto& scheme) {
        for (Index j = 0; j < theta.rows(); ++j) {
          const double theta_dot_a = theta.row(j).dot(a.row(j));
          const TokenContext c{t, t_regime, r(j), theta_dot_a, a.row(j).norm()};
          const LayerUpdate u = scheme.layer(c);
          Eigen::RowVectorXd x = (u.renormalized ? 1.0 : r(j)) * theta.row(j);
          x += h * (u.coef_attention * a.row(j) + u.coef_theta * theta.row(j));
          const double norm = x.norm();
          theta.row(j) = x / norm;
          if (!u.renormalized) r(j) = norm;
        }
      },
      spec_.scheme);
}

void AttentionDynamics::rhs(const double* x, double* dxdt, double t) {
  // Outside an integrator's piece (direct calls in tests), regimes follow t itself.
  const double t_regime = in_piece_ ? piece_middle_ : t;
  velocity(layout_.theta(x), layout_.r(x), t, t_regime, layout_.theta(dxdt), layout_.r(dxdt));
}

const RowMatrix& AttentionDynamics::row_attention(Eigen::Ref<const RowMatrix> theta, double t_regime, Index begin,
                                                  Index end) {
  row_attention_.resize(end - begin, layout_.d);
  kernel_.compute_rows(theta, qkv_.at(t_regime), spec_.beta, spec_.masses, begin, end, row_attention_);
  return row_attention_;
}

void AttentionDynamics::rhs_rows(const double* x, double* dxdt, double t, Index begin, Index end) {
  const double t_regime = in_piece_ ? piece_middle_ : t;
  const Index count = end - begin;
  const auto theta = layout_.theta(x);
  row_attention(theta, t_regime, begin, end);
  add_terms(t, theta, layout_.r(x), begin, end, row_attention_);
  apply_scheme(theta, layout_.r(x), row_attention_, t, t_regime, begin, layout_.theta(dxdt).middleRows(begin, count),
               layout_.r(dxdt).segment(begin, count));
}

const RowMatrix& AttentionDynamics::attention_and_means(Eigen::Ref<const RowMatrix> theta, double t_regime, Index begin,
                                                        Index end) {
  const AttentionMatrices& qkv = qkv_.at(t_regime);
  if (!spec_.noise.needs_means() || qkv.identity || qkv.V.isIdentity(0.0))
    return row_attention(theta, t_regime, begin, end);
  // One head: A_j = Σ_k w_jk V x_k = V m_j, so one kernel pass with V = I gives both.
  AttentionMatrices unit_values = qkv;
  unit_values.V = RowMatrix::Identity(layout_.d, layout_.d);
  means_.resize(end - begin, layout_.d);
  kernel_.compute_rows(theta, unit_values, spec_.beta, spec_.masses, begin, end, means_);
  row_attention_.resize(end - begin, layout_.d);
  multiply_rows(means_, qkv.V.transpose(), row_attention_);
  return means_;
}

void AttentionDynamics::draw_noise(Eigen::Ref<const RowMatrix> means, double h, const NoiseStep& step, Index begin) {
  const Index count = means.rows();
  const auto draw = [&](Index first) {
    return NoiseDraw{spec_.noise.seed, step.number, h, first, spec_.noise.increment_draws, step.t0, step.t1};
  };
  noise_.resize(count, layout_.d);
  if (!spec_.noise.needs_means()) {
    // Row by row the draws are pure functions of (seed, step or interval, token): blocks of rows on the kernel's
    // threads give the same numbers as one block.
    constexpr Index kBlock = 64;
    const Index blocks = (count + kBlock - 1) / kBlock;
    const auto block = [&](Index b) {
      const Index first = b * kBlock, rows = std::min(kBlock, count - first);
      spec_.noise.increments(draw(begin + first), means.middleRows(first, rows), noise_.middleRows(first, rows));
    };
    // One block is drawn without entering a parallel region: even with its `if` false, libgomp's
    // region costs futex system calls that outweighed the draws of a small system (n = 32).
    if (blocks == 1) return block(0);
#pragma omp parallel for num_threads(kernel_.threads()) schedule(static)
    for (Index b = 0; b < blocks; ++b) block(b);
    return;
  }
  spec_.noise.increments(draw(begin), means, noise_);
}

// Every row is computed as a process of a sharded run computes its own (same bits).
void AttentionDynamics::increment(const double* x, double t, double h, const NoiseStep& step, double* dx) {
  increment_rows(x, t, h, step, dx, 0, layout_.n);
}

void AttentionDynamics::increment_rows(const double* x, double t, double h, const NoiseStep& step, double* dx,
                                       Index begin, Index end) {
  const double t_regime = in_piece_ ? piece_middle_ : t;
  const Index count = end - begin;
  const auto theta = layout_.theta(x);
  draw_noise(attention_and_means(theta, t_regime, begin, end), h, step, begin);
  add_terms(t, theta, layout_.r(x), begin, end, row_attention_);
  apply_scheme(theta, layout_.r(x), row_attention_, t, t_regime, begin, layout_.theta(dx).middleRows(begin, count),
               layout_.r(dx).segment(begin, count), h, &noise_);
}

std::vector<double> AttentionDynamics::breakpoints(double t0, double t1) const {
  std::vector<double> b = scheme_breakpoints(spec_.scheme, t0, t1);
  const std::vector<double> q = qkv_.breakpoints(t0, t1);
  b.insert(b.end(), q.begin(), q.end());
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

void AttentionDynamics::enter_piece(double t_begin, double t_end) {
  piece_middle_ = 0.5 * (t_begin + t_end);
  in_piece_ = true;
}

Index AttentionDynamics::row_block() { return kernel_.block_rows(layout_.n, kernel_.path_for(qkv_.at(0.0))); }

double AttentionDynamics::retract(double* x) const { return normalize_rows(layout_.theta(x)); }

}  // namespace normdyn
