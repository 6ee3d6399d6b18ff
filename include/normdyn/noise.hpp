#pragma once
// The noise of the flow as a list of alternatives (docs/ARCHITECTURE.md, "Lists of alternatives").
// With noise the flow is a Stratonovich SDE on the spheres (or its Itô reading, NoiseCalculus below),
//
//   dθ_i = (1/s_i) P_θi ∘ (U_i dt + σ dN_i),   dr_i = ρ_i dt,
//
// with s_i and ρ_i the scheme's (from the block output U_i, as without noise) and dN_i the noise's
// ambient increments. A noise is one header in include/normdyn/noises/ and one entry in the list
// below, with
//
//   static constexpr bool needs_means     whether its increments need m_i = Σ_j w_ij x_j
//   void increments(const NoiseDraw&, means, dn) const
//                                          σ ΔN_i of the rows [draw.begin, draw.begin + dn.rows())
//                                          over one step, a pure function of (seed, step, token or
//                                          matrix entry), or with tree increments of (seed, token or
//                                          matrix entry, the step's interval) (counter_random.hpp)
//
// and the traits it breaks (every noise: `deterministic`).
#include <cstdint>
#include <string>
#include <variant>

#include "normdyn/noises/independent.hpp"
#include "normdyn/noises/none.hpp"
#include "normdyn/noises/value.hpp"

namespace normdyn {

using NoiseKind = std::variant<NoNoise, IndependentNoise, ValueNoise>;

// How the stochastic integral is read (noise.calculus). Stratonovich, above, is the default and the
// flow that stratonovich_heun converges to. Itô takes the noise's coefficient at the start of each
// step, P_θ(σ ΔN) with ΔN from the tokens then, and keeps the tokens on the spheres by retraction:
// the flow euler_maruyama converges to, and the depth limit of a fresh Gaussian V per layer
// (docs/guide/noise.md). For independent noise under Post-LN, Pre-LN, Mix-LN and LN-Scaling the
// two readings are one flow.
enum class NoiseCalculus { stratonovich, ito };

struct NoiseSpec {
  NoiseKind kind = NoNoise{};
  std::uint64_t seed = 1;  // noise.seed (defaults to init.seed)
  NoiseCalculus calculus = NoiseCalculus::stratonovich;
  NoiseIncrements increment_draws = NoiseIncrements::counter;  // noise.increments

  bool active() const { return !std::holds_alternative<NoNoise>(kind); }
  Traits traits() const { return alternative_traits(kind); }
  bool needs_means() const {
    return std::visit([](const auto& k) { return std::decay_t<decltype(k)>::needs_means; }, kind);
  }
  void increments(const NoiseDraw& draw, Eigen::Ref<const RowMatrix> means, Eigen::Ref<RowMatrix> dn) const {
    std::visit([&](const auto& k) { k.increments(draw, means, dn); }, kind);
  }
};

// The settings of the noise, e.g. `noise.kind = "independent", noise.sigma = 0.5`; empty without noise.
std::string describe(const NoiseSpec& noise);

}  // namespace normdyn
