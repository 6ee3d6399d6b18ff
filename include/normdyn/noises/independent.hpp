#pragma once
// Independent Brownian motions, one per token (the noisy transformer of Geshkovski, Letrouit,
// Polyanskiy, Rigollet, "A mathematical perspective on transformers"; at beta = 0 the noisy Kuramoto
// model): dN_i = dW_i, W_i a standard d-dimensional Brownian motion. Over a step of length h,
// σ ΔN_i = σ √h Z_i with Z_i the normals of (noise.seed, step, token i); with tree increments,
// σ (W_i(t1) − W_i(t0)) with W_i the tree of (noise.seed, token i).
#include <array>
#include <cmath>
#include <span>
#include <string_view>

#include "normdyn/alternatives.hpp"
#include "normdyn/counter_random.hpp"
#include "normdyn/noises/draw.hpp"

namespace normdyn {

struct IndependentNoise {
  static constexpr std::string_view key = "independent";
  static constexpr std::string_view title = "independent Brownian motions, one per token";
  static constexpr std::string_view formula = "dN_i = dW_i";
  double sigma = 0.0;
  static constexpr std::array<ParamSpec<IndependentNoise>, 1> params{
      ParamSpec<IndependentNoise>{"sigma", &IndependentNoise::sigma, "noise strength sigma >= 0", 0.0, true}};
  static constexpr bool needs_means = false;

  void increments(const NoiseDraw& draw, Eigen::Ref<const RowMatrix>, Eigen::Ref<RowMatrix> dn) const {
    if (draw.increments == NoiseIncrements::tree) {
      for (Index r = 0; r < dn.rows(); ++r)
        tree_increments(draw.seed, CounterStream::independent_noise_tree, static_cast<std::uint64_t>(draw.begin + r),
                        draw.t0, draw.t1, std::span<double>(dn.row(r).data(), static_cast<std::size_t>(dn.cols())));
      dn *= sigma;
      return;
    }
    const double scale = sigma * std::sqrt(draw.h);
    const auto first = static_cast<std::uint64_t>(draw.begin);
    const auto rows = static_cast<std::size_t>(dn.rows()), cols = static_cast<std::size_t>(dn.cols());
    if (dn.outerStride() == dn.cols()) {
      // All rows in one request: the SIMD transform runs on the whole block.
      counter_normals_rows(draw.seed, CounterStream::independent_noise, static_cast<std::uint64_t>(draw.step), first,
                           rows, cols, std::span<double>(dn.data(), rows * cols));
    } else {
      for (std::size_t r = 0; r < rows; ++r)
        counter_normals_rows(draw.seed, CounterStream::independent_noise, static_cast<std::uint64_t>(draw.step),
                             first + r, 1, cols, std::span<double>(dn.row(static_cast<Index>(r)).data(), cols));
    }
    dn *= scale;
  }
  // The mean field solves its Fokker-Planck equation (solvers/meanfield_circle.hpp).
  Traits traits() const {
    Traits t = noise_traits();
    t.meanfield = true;
    return t;
  }
};

}  // namespace normdyn
