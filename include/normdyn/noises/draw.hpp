#pragma once
// What a noise alternative (noise.hpp) is given to draw the increments of one step.
#include <cstdint>

#include "normdyn/alternatives.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

// How a step's increments are drawn (noise.increments): `counter`, normals keyed by the step's number
// (runs at h and h/2 follow unrelated paths); `tree`, the increment of one Brownian path over the
// step's interval [t0, t1] (tree_increments in counter_random.hpp), so that refining the steps
// keeps the path.
enum class NoiseIncrements { counter, tree };

struct NoiseDraw {
  std::uint64_t seed = 1;  // noise.seed
  std::int64_t step = 0;   // the step's number since the start of the run
  double h = 0.0;          // the step's length
  Index begin = 0;         // the first token of the rows asked for (a shard of a sharded run)
  NoiseIncrements increments = NoiseIncrements::counter;
  double t0 = 0.0, t1 = 0.0;  // the step's interval (tree increments)
};

// What every noise breaks: the flow is random (in law it stays exchangeable and rotation
// equivariant), the mean-field solver has no Fokker-Planck equation for it (independent noise has one),
// and the energy is not monotone under noise.
inline Traits noise_traits() {
  Traits t;
  t.has_energy = false;
  t.meanfield = false;
  t.deterministic = false;
  return t;
}

}  // namespace normdyn
