#pragma once
// Pieces of the H5MD layout shared by the writers of src/io/ (run files, observables files).
#include <cstdint>

#include "io/h5.hpp"

namespace normdyn::h5md {

// /h5md with @version = [1, 1], author/@name and creator/@name, @version; returns the group.
h5::Group write_header(h5::File& file);

// Frames per chunk of a per-frame dataset: about 256 KiB of values, at least one frame.
std::uint64_t chunk_frames(std::uint64_t values_per_frame);

}  // namespace normdyn::h5md
