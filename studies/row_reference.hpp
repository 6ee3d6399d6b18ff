#pragma once
// Independent references for the rows of the attention models and terms: the weights, attention
// outputs, activations and layer maps written out from their formulas in the rows' own code (never
// the library's kernel, normalizers, activations or layer maps), so that a row compares the engine
// with something that cannot share its mistake. Each is the textbook formula, evaluated directly.
#include <cmath>
#include <numbers>
#include <vector>

#include "reproduce_support.hpp"

namespace normdyn::studies::reference {

enum class Weights { softmax, uniform, sinkhorn };

// One head: s_ij = beta <Q x_i, K x_j> - lambda |i - j| / n (ALiBi when lambda > 0), keys j <= i when
// causal, and the weights
//   softmax:  w_ij = e^{s_ij} / sum_k e^{s_ik},
//   uniform:  w_ij = e^{s_ij} / sum_k e^{-lambda |i - k| / n}    (USA: the normalizer ignores the tokens),
//   sinkhorn: w = diag(u) e^{s} diag(v) with every row and column summing to 1,
// the sums over the allowed keys.
struct Head {
  RowMatrix Q, K, V;
  double beta = 1.0;
  bool causal = false;
  double alibi = 0.0;
  Weights weights = Weights::softmax;
};

inline Head identity_head(Index d, double beta, Weights w) {
  const RowMatrix eye = RowMatrix::Identity(d, d);
  return {eye, eye, eye, beta, false, 0.0, w};
}

// The n x n weights of `head` on the directions x (rows).
inline RowMatrix weights(const Head& head, const RowMatrix& x) {
  const Index n = x.rows();
  const RowMatrix q = x * head.Q.transpose(), k = x * head.K.transpose();
  RowMatrix w = RowMatrix::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    double z = 0.0;
    for (Index j = 0; j < n; ++j) {
      if (head.causal && j > i) continue;
      const double bias = -head.alibi * std::abs(double(i - j)) / double(n);
      w(i, j) = std::exp(head.beta * q.row(i).dot(k.row(j)) + bias);
      z += head.weights == Weights::uniform ? std::exp(bias) : w(i, j);
    }
    if (head.weights != Weights::sinkhorn) w.row(i) /= z;
  }
  if (head.weights == Weights::sinkhorn)
    // Alternate column and row normalization until every column sum is within 1e-14 of 1 (rows are then
    // exact to round-off); a symmetric positive kernel converges in a few dozen sweeps.
    for (int sweep = 0; sweep < 100000; ++sweep) {
      const Eigen::RowVectorXd columns = w.colwise().sum();
      if ((columns.array() - 1.0).abs().maxCoeff() <= 1e-14 && sweep > 0) break;
      for (Index j = 0; j < n; ++j) w.col(j) /= columns(j);
      for (Index i = 0; i < n; ++i) w.row(i) /= w.row(i).sum();
    }
  return w;
}

// A_i = sum_j w_ij V x_j.
inline RowMatrix output(const Head& head, const RowMatrix& x) { return weights(head, x) * x * head.V.transpose(); }

// The tangential part P_x a of each row.
inline RowMatrix tangential(const RowMatrix& x, const RowMatrix& a) {
  RowMatrix out = a;
  for (Index i = 0; i < x.rows(); ++i) out.row(i) -= x.row(i).dot(a.row(i)) * x.row(i);
  return out;
}

// The activations of the feed-forward rows, from their definitions.
inline double tanh_activation(double u) { return std::tanh(u); }
inline double relu_activation(double u) { return u > 0.0 ? u : 0.0; }
// gelu(u) = u Phi(u), Phi the standard normal distribution function.
inline double gelu_activation(double u) { return 0.5 * u * std::erfc(-u / std::numbers::sqrt2); }

// The circle (d = 2) in angles: the angle of a direction, the angles of a frame's rows, and the tangent
// velocity phi_i' (-sin phi_i, cos phi_i) of angle rates.
template <class Row>
double circle_angle(const Row& x) {
  return std::atan2(x(1), x(0));
}
inline std::vector<double> circle_angles(const RowMatrix& theta) {
  std::vector<double> phi;
  for (Index i = 0; i < theta.rows(); ++i) phi.push_back(circle_angle(theta.row(i)));
  return phi;
}
inline RowMatrix circle_velocity(const std::vector<double>& phi, const std::vector<double>& rate) {
  RowMatrix v(Index(phi.size()), 2);
  for (std::size_t i = 0; i < phi.size(); ++i)
    v.row(Index(i)) << -rate[i] * std::sin(phi[i]), rate[i] * std::cos(phi[i]);
  return v;
}

// Classical RK4 of y' = f(y) (rate(y, out) writes f(y) into out) with step h (1/h an integer) from y,
// the state at the times 0, 1, ..., t_end.
template <class Rate>
std::vector<std::vector<double>> rk4_unit_frames(std::vector<double> y, double t_end, double h, Rate&& rate) {
  const std::size_t n = y.size();
  std::vector<std::vector<double>> frames{y};
  const int per_unit = int(std::lround(1.0 / h));
  std::vector<double> k1(n), k2(n), k3(n), k4(n), z(n);
  for (int unit = 0; unit < int(std::lround(t_end)); ++unit) {
    for (int s = 0; s < per_unit; ++s) {
      rate(y, k1);
      for (std::size_t i = 0; i < n; ++i) z[i] = y[i] + 0.5 * h * k1[i];
      rate(z, k2);
      for (std::size_t i = 0; i < n; ++i) z[i] = y[i] + 0.5 * h * k2[i];
      rate(z, k3);
      for (std::size_t i = 0; i < n; ++i) z[i] = y[i] + h * k3[i];
      rate(z, k4);
      for (std::size_t i = 0; i < n; ++i) y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
    frames.push_back(y);
  }
  return frames;
}

// The largest |engine velocity - reference| of the directions over `frames` (every `stride`-th and the
// last), relative to the largest reference speed; `reference(frame)` gives dθ/dt of the frame.
template <class Reference>
double velocity_deviation(const Engine& engine, const DynamicsSpec& spec, const QkvSource& qkv,
                          const std::vector<Tokens>& frames, const std::vector<double>& times, std::size_t stride,
                          Reference&& reference) {
  double worst = 0.0, scale = 0.0;
  std::vector<std::size_t> checked;
  for (std::size_t k = 0; k < frames.size(); k += stride) checked.push_back(k);
  if (!frames.empty() && checked.back() + 1 != frames.size()) checked.push_back(frames.size() - 1);
  for (const std::size_t k : checked) {
    const Tokens v = engine_velocity(engine, spec, qkv, frames[k], times[k]);
    const RowMatrix ref = reference(frames[k]);
    worst = std::max(worst, (v.theta - ref).rowwise().norm().maxCoeff());
    scale = std::max(scale, ref.rowwise().norm().maxCoeff());
  }
  return scale > 0.0 ? worst / scale : worst;
}

}  // namespace normdyn::studies::reference
