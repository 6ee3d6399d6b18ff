#include "normdyn/noise.hpp"

#include <sstream>

namespace normdyn {

std::string describe(const NoiseSpec& noise) {
  if (!noise.active()) return {};
  std::ostringstream out;
  out << "noise.kind = \"" << alternative_key(noise.kind) << "\"";
  for (const auto& [key, value] : alternative_parameters(noise.kind)) out << ", noise." << key << " = " << value;
  if (noise.calculus == NoiseCalculus::ito) out << ", noise.calculus = \"ito\"";
  return out.str();
}

}  // namespace normdyn
