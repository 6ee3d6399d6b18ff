#pragma once
// The feed-forward term of the block output (a perceptron layer acting on each token alone; the
// perceptron potentials of Alvarez-Lopez, Geshkovski and Ruiz-Balet 2026):
//
//   F(x) = Σ_m ω_m σ(<a_m, x>) a_m = ∇Φ(x),   Φ(x) = Σ_m ω_m S(<a_m, x>),  S' = σ,
//
// with weights a [M, d] (rows a_m) and ω [M], evaluated at the direction θ_i of each token.
#include <array>
#include <string_view>

#include "normdyn/alternatives.hpp"
#include "normdyn/terms/activation.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

struct FeedForward {
  static constexpr std::string_view key = "feedforward";
  static constexpr std::string_view title = "feed-forward perceptron layer";
  static constexpr std::string_view formula = "F(x) = sum_m omega_m sigma(<a_m, x>) a_m";
  static constexpr std::array<ParamSpec<FeedForward>, 0> params{};

  RowMatrix a;   // [M, d]
  Vector omega;  // [M]
  Activation activation = Relu{};

  // out.row(i) += F(theta.row(i)) for every row.
  void add(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<RowMatrix> out) const {
    RowMatrix s = theta * a.transpose();  // [rows, M]: <a_m, θ_i>
    std::visit(
        [&](const auto& act) {
          for (Index i = 0; i < s.rows(); ++i)
            for (Index m = 0; m < s.cols(); ++m) s(i, m) = omega(m) * act.value(s(i, m));
        },
        activation);
    out.noalias() += s * a;
  }
  // Σ_i Φ(θ_i).
  double potential(Eigen::Ref<const RowMatrix> theta) const {
    const RowMatrix s = theta * a.transpose();
    return std::visit(
        [&](const auto& act) {
          double sum = 0.0;
          for (Index i = 0; i < s.rows(); ++i)
            for (Index m = 0; m < s.cols(); ++m) sum += omega(m) * act.antiderivative(s(i, m));
          return sum;
        },
        activation);
  }
  // Token by token: exchangeable, shardable, a gradient (Φ); fixed directions a_m break rotation
  // equivariance, and the mean-field solver does not implement it.
  Traits traits() const {
    Traits t;
    t.rotation_equivariant = false;
    t.meanfield = false;
    return t;
  }
};

}  // namespace normdyn
