#pragma once
// Pieces of the H5MD layout shared by the writers of src/io/ (run files, observables files).
#include <cstdint>

#include "io/h5.hpp"

namespace normdyn::h5md {

// /h5md with @version = [1, 1], author/@name and creator/@name, @version; returns the group.
h5::Group write_header(h5::File& file);

// Frames per chunk of a per-frame dataset. Compressed: one frame per chunk, so that every chunk is
// written once, complete, and never rewritten: rewriting a compressed chunk that already holds
// flushed frames moves it in the file (its compressed size changes), and a resume after a SIGKILL
// once found such a chunk unreadable (CI, 2026-11-30). Uncompressed: about 256 KiB of values, at
// least one frame and at most 4096; such chunks are rewritten in place with the same bytes for the
// frames they already hold, which a kill cannot damage.
std::uint64_t chunk_frames(std::uint64_t values_per_frame, bool compressed);

}  // namespace normdyn::h5md
