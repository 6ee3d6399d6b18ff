#pragma once
// Counter-based random numbers: every number is a pure function of (seed, stream, counter), with no
// state carried from one draw to the next (Philox4x64 of Random123, Salmon et al., SC'11, turned
// into normals by its Box-Muller transform). A stochastic run draws the increments of a step from
// (noise.seed, step, token or matrix entry), so that it is the same bit for bit whatever the
// thread count, the MPI sharding or an interruption and resume, and whichever order the tokens are
// visited in. Only src/counter_random.cpp includes Random123.
#include <cstdint>
#include <span>

namespace normdyn {

// Independent uses of a seed: a new use takes a new number, so that it never shares draws with
// another one.
enum class CounterStream : std::uint64_t {
  independent_noise = 1,  // ΔW_i of token i at a step: index = i
  value_noise = 2,        // the d x d matrix ΔB of a step: index = 0
  map_layer_values = 3,   // model.qkv = "gaussian_per_map_layer": G_k of layer k (as the step), index = 0
};

// Fills `out` with standard normals number 0, 1, ..., out.size() − 1 of the sequence keyed by
// (seed, stream, step, index). Pure: equal arguments give equal numbers, and a prefix of a longer
// request equals the shorter request.
void counter_normals(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t index,
                     std::span<double> out);

}  // namespace normdyn
