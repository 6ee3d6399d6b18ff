#pragma once
// Common value noise (Fedorov et al. 2026, stochastic transformers): a fresh Gaussian V per layer,
// scaled by 1/√L, tends to the flow driven by one d x d matrix Brownian motion B shared by all tokens,
// dN_i = Σ_j w_ij dB x_j = dB m_i, with w_ij the attention weights and m_i = Σ_j w_ij x_j the
// attention mean of token i (the attention with V = I). Over a step of length h, σ ΔB = σ √h Z with
// Z the d x d normals of (noise.seed, step), row-major; with tree increments, σ (B(t1) − B(t0)) with
// B the tree of (noise.seed), its entries row-major.
#include <array>
#include <cmath>
#include <span>
#include <string_view>

#include "normdyn/alternatives.hpp"
#include "normdyn/counter_random.hpp"
#include "normdyn/noises/draw.hpp"

namespace normdyn {

struct ValueNoise {
  static constexpr std::string_view key = "value";
  static constexpr std::string_view title = "one matrix Brownian motion in the values, shared by all tokens";
  static constexpr std::string_view formula = "dN_i = sum_j w_ij dB x_j";
  double sigma = 0.0;
  static constexpr std::array<ParamSpec<ValueNoise>, 1> params{
      ParamSpec<ValueNoise>{"sigma", &ValueNoise::sigma, "noise strength sigma >= 0", 0.0, true}};
  static constexpr bool needs_means = true;

  void increments(const NoiseDraw& draw, Eigen::Ref<const RowMatrix> means, Eigen::Ref<RowMatrix> dn) const {
    const Index d = means.cols();
    RowMatrix db(d, d);
    const std::span<double> entries(db.data(), static_cast<std::size_t>(d * d));
    if (draw.increments == NoiseIncrements::tree) {
      tree_increments(draw.seed, CounterStream::value_noise_tree, 0, draw.t0, draw.t1, entries);
      db *= sigma;
    } else {
      counter_normals(draw.seed, CounterStream::value_noise, static_cast<std::uint64_t>(draw.step), 0, entries);
      db *= sigma * std::sqrt(draw.h);
    }
    multiply_rows(means, db.transpose(), dn);
  }
  Traits traits() const { return noise_traits(); }
};

}  // namespace normdyn
