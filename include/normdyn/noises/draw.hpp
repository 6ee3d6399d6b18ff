#pragma once
// What a noise alternative (noise.hpp) is given to draw the increments of one step.
#include <cstdint>

#include "normdyn/tokens.hpp"

namespace normdyn {

struct NoiseDraw {
  std::uint64_t seed = 1;  // noise.seed
  std::int64_t step = 0;   // the step's number since the start of the run
  double h = 0.0;          // the step's length
  Index begin = 0;         // the first token of the rows asked for (a shard of a sharded run)
};

}  // namespace normdyn
