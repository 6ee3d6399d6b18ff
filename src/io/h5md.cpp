#include "io/h5md.hpp"

#include <algorithm>
#include <span>
#include <string>

#include "normdyn/version.hpp"

namespace normdyn::h5md {

h5::Group write_header(h5::File& file) {
  h5::Group h5md = file.create_group("h5md");
  const std::int64_t version_numbers[2] = {1, 1};
  h5md.set_attribute("version", std::span<const std::int64_t>(version_numbers));
  h5md.create_group("author").set_attribute("name", std::string("normdyn user"));
  h5::Group creator = h5md.create_group("creator");
  creator.set_attribute("name", std::string("normdyn"));
  creator.set_attribute("version", std::string(version()) + " (" + std::string(revision()) + ")");
  return h5md;
}

std::uint64_t chunk_frames(std::uint64_t values_per_frame, bool compressed) {
  if (compressed) return 1;
  constexpr std::uint64_t kChunkValues = 32768;
  return std::clamp<std::uint64_t>(kChunkValues / std::max<std::uint64_t>(values_per_frame, 1), 1, 4096);
}

}  // namespace normdyn::h5md
