// The one translation unit that includes Random123.
#include "normdyn/counter_random.hpp"

#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>

namespace normdyn {

void counter_normals(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t index,
                     std::span<double> out) {
  using Philox = r123::Philox4x64;
  const Philox philox;
  const Philox::key_type key{{seed, static_cast<std::uint64_t>(stream)}};
  // Each block of the counter gives four 64-bit words, two pairs for the Box-Muller transform.
  Philox::ctr_type counter{{step, index, 0, 0}};
  for (std::size_t k = 0; k < out.size(); k += 4) {
    counter[2] = k / 4;
    const Philox::ctr_type words = philox(counter, key);
    const r123::double2 a = r123::boxmuller(words[0], words[1]);
    const r123::double2 b = r123::boxmuller(words[2], words[3]);
    const double values[4] = {a.x, a.y, b.x, b.y};
    for (std::size_t j = 0; j < 4 && k + j < out.size(); ++j) out[k + j] = values[j];
  }
}

}  // namespace normdyn
