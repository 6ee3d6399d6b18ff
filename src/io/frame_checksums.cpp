#include "io/frame_checksums.hpp"

#include <zlib.h>

namespace normdyn::frame_checksums {

std::uint32_t initial() { return static_cast<std::uint32_t>(crc32_z(0L, Z_NULL, 0)); }

std::uint32_t extend(std::uint32_t crc, const void* bytes, std::size_t size) {
  return static_cast<std::uint32_t>(crc32_z(crc, static_cast<const Bytef*>(bytes), static_cast<z_size_t>(size)));
}

}  // namespace normdyn::frame_checksums
