#pragma once
// Independent Brownian motions, one per token (the noisy transformer of Geshkovski, Letrouit,
// Polyanskiy, Rigollet, "A mathematical perspective on transformers"; at beta = 0 the noisy Kuramoto
// model): dN_i = dW_i, W_i a standard d-dimensional Brownian motion. Over a step of length h,
// σ ΔN_i = σ √h Z_i with Z_i the normals of (noise.seed, step, token i).
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
    const double scale = sigma * std::sqrt(draw.h);
    for (Index r = 0; r < dn.rows(); ++r) {
      counter_normals(draw.seed, CounterStream::independent_noise, static_cast<std::uint64_t>(draw.step),
                      static_cast<std::uint64_t>(draw.begin + r),
                      std::span<double>(dn.row(r).data(), static_cast<std::size_t>(dn.cols())));
      dn.row(r) *= scale;
    }
  }
  // The mean field solves its Fokker-Planck equation (solvers/meanfield_circle.hpp).
  Traits traits() const {
    Traits t = noise_traits();
    t.meanfield = true;
    return t;
  }
};

}  // namespace normdyn
