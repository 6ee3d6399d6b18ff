#pragma once
// Reproducible random numbers. Every random choice of a run derives from the one user seed through
// named streams, so that adding a new random ingredient never changes the draws of another one.
// std::normal_distribution is implementation-defined (libstdc++ and libc++ differ), hence the
// explicit transforms below over std::mt19937_64, whose output the standard fixes.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace normdyn {

// Stream identifiers: one per independent use of the seed.
enum class RandomStream : std::uint64_t {
  initial_tokens = 1,
  attention_matrices = 2,
  attention_matrices_per_layer = 3,
  initial_density = 4,
  // The heads after the first of a multi-head model (the first keeps the streams above), indexed by
  // layer * kMaxHeads + head.
  attention_heads = 5,
  attention_heads_per_layer = 6,
};

// Heads a model may have: the per-head streams index layer * kMaxHeads + head.
inline constexpr std::uint64_t kMaxHeads = 65536;

class Random {
 public:
  // `index` separates draws of the same stream, e.g. the layer of per-layer matrices.
  Random(std::uint64_t seed, RandomStream stream, std::uint64_t index = 0)
      : engine_(derive(seed, static_cast<std::uint64_t>(stream), index)) {}

  // Uniform on [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Standard normal by the Box-Muller transform (both outputs used).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = 0.0;
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  static std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  static std::uint64_t derive(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    return splitmix(splitmix(splitmix(seed) ^ stream) ^ index);
  }

  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace normdyn
