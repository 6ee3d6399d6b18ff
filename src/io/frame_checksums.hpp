#pragma once
// Per-frame checksums of a run file: one CRC-32 (zlib's, the one Python's zlib.crc32 computes) per
// frame, over the bytes of that frame's rows in the datasets the file lists, in their order. A frame
// whose bytes changed after it was written (bit rot, an edited or badly copied file) no longer
// matches. One CRC per frame, not one per chunk (HDF5's Fletcher32 filter): a writer killed while it
// rewrote a chunk leaves the chunk's earlier frames intact, and only the frames after the checkpoint,
// which a resume recomputes, torn.
#include <cstddef>
#include <cstdint>
#include <span>

namespace normdyn::frame_checksums {

// The dataset of the checksums ([frames], int64) and its attribute listing the datasets each covers,
// one absolute path a line.
inline constexpr const char* kDataset = "/checksums/frames";
inline constexpr const char* kCoversAttribute = "covers";
inline constexpr const char* kAlgorithm = "crc32";

// The checksum of a checkpoint slot (/checkpoint/<slot>/checksum, [1], int64): the CRC-32 of the
// slot's state then its record, as stored (little-endian float64). A checkpoint changed after it was
// written (a flipped bit, an edited t or dt) would resume another run; its checksum no longer matches.
inline constexpr const char* kCheckpointDescription =
    "CRC-32 (zlib's; Python's zlib.crc32) of this slot's state followed by its record, as stored (little-endian "
    "float64): a checkpoint whose bytes changed since it was written no longer matches, and normdyn run --resume "
    "refuses it";

std::uint32_t initial();
std::uint32_t extend(std::uint32_t crc, const void* bytes, std::size_t size);
template <class T>
std::uint32_t extend(std::uint32_t crc, std::span<const T> values) {
  return extend(crc, values.data(), values.size_bytes());
}

inline std::uint32_t checkpoint(std::span<const double> state, std::span<const double> record) {
  return extend(extend(initial(), state), record);
}

}  // namespace normdyn::frame_checksums
