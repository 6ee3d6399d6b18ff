#include "normdyn/noise.hpp"

namespace normdyn {

std::string describe(const NoiseSpec& noise) {
  if (!noise.active()) return {};
  std::string out = describe_alternative("noise.kind", "noise", noise.kind);
  if (noise.calculus == NoiseCalculus::ito) out += ", noise.calculus = \"ito\"";
  if (noise.increment_draws == NoiseIncrements::tree) out += ", noise.increments = \"tree\"";
  return out;
}

}  // namespace normdyn
