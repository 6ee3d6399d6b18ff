#pragma once
// Counter-based random numbers: every number is a pure function of (seed, stream, counter), with no
// state carried from one draw to the next (Philox4x64 of Random123, Salmon et al., SC'11, turned
// into normals by its Box-Muller transform). A stochastic run draws the increments of a step from
// (noise.seed, step, token or matrix entry), so that it is the same bit for bit whatever the
// thread count, the MPI sharding or an interruption and resume, and whichever order the tokens are
// visited in. (Builds for different SIMD targets may differ at round-off: the transform uses the
// target's batch functions.) Only src/counter_random.cpp includes Random123 and xsimd.
#include <cstddef>
#include <cstdint>
#include <span>

namespace normdyn {

// Independent uses of a seed: a new use takes a new number, so that it never shares draws with
// another one.
enum class CounterStream : std::uint64_t {
  independent_noise = 1,       // ΔW_i of token i at a step: index = i
  value_noise = 2,             // the d x d matrix ΔB of a step: index = 0
  map_layer_values = 3,        // model.qkv = "gaussian_per_map_layer": G_k of layer k (as the step), index = 0
  independent_noise_tree = 4,  // noise.increments = "tree": the Brownian tree of token i, index = i
  value_noise_tree = 5,        // noise.increments = "tree": the tree of the matrix B, index = 0
};

// Fills `out` with standard normals number 0, 1, ..., out.size() − 1 of the sequence keyed by
// (seed, stream, step, index). Pure: equal arguments give equal numbers, and a prefix of a longer
// request equals the shorter request.
void counter_normals(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t index,
                     std::span<double> out);

// The normals of many indices at once, the cheap way to draw them: `out` holds rows x cols numbers,
// row-major, and row r is counter_normals(seed, stream, step, first_index + r) of length cols, bit
// for bit, whichever rows are asked for together (a shard, a thread's block or the whole request).
// The uniforms of the whole block are drawn first and turned into normals by a SIMD Box-Muller
// transform (xsimd). Throws std::invalid_argument unless out.size() == rows * cols.
void counter_normals_rows(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t first_index,
                          std::size_t rows, std::size_t cols, std::span<double> out);

// Brownian increments as a pure function of the interval (noise.increments = "tree"): out[c] =
// W_c(t1) − W_c(t0) for the standard Brownian motions W_0, ..., W_{m−1} (m = out.size()) keyed by
// (seed, stream, index), t0 <= t1 anywhere on the real line. Time is cut into cells [k, k + 1) of
// unit length, each an independent Brownian path built by bisection, as a Brownian tree: the cell's
// total W(k + 1) − W(k) ~ N(0, 1) and, at each of kTreeLevels levels, the midpoint of a dyadic
// interval [a, b] from the Brownian bridge, (W(a) + W(b))/2 + sqrt((b − a)/4) Z, each Z a counter-based
// normal keyed by (cell, index, node of the interval, component). A time on the dyadic grid of the
// last level is an exact point of the path (the descent stops at the first level that has it);
// between two points of that grid the path is linear. So W is one continuous path, the increments
// over adjacent intervals add up to the increment over their union to round-off whatever the steps,
// and an increment over [t0, t1] has variance t1 − t0 exactly on the grid and short of it by at most
// 2^−kTreeLevels/2 elsewhere.
inline constexpr int kTreeLevels = 40;
void tree_increments(std::uint64_t seed, CounterStream stream, std::uint64_t index, double t0, double t1,
                     std::span<double> out);

}  // namespace normdyn
