#pragma once
// Pieces of the H5MD layout shared by the writers of src/io/ (run files, observables files).
#include <cstdint>
#include <string>
#include <vector>

#include "io/h5.hpp"

namespace normdyn::h5md {

// /h5md with @version = [1, 1], author/@name and creator/@name, @version, and the units module
// (modules/units: @version [1, 0], @system "SI"); returns the group.
h5::Group write_header(h5::File& file);

// The H5MD unit string of the model's quantities without dimension: directions, radii, the
// continuous depth t (the time of every element), cosines, energies.
inline constexpr const char* kDimensionless = "1";

// Frames per chunk of a per-frame dataset. Compressed: one frame per chunk, so that every chunk is
// written once, complete, and never rewritten: rewriting a compressed chunk that already holds
// flushed frames moves it in the file (its compressed size changes), and a resume after a SIGKILL
// once found such a chunk unreadable (CI, 2026-11-30). Uncompressed: about 256 KiB of values, at
// least one frame and at most 4096; such chunks are rewritten in place with the same bytes for the
// frames they already hold, which a kill cannot damage.
std::uint64_t chunk_frames(std::uint64_t values_per_frame, bool compressed);

// An axis of `value` after the time axis: an existing dimension scale (token, component, phi), or,
// without one, a dimension `name` (a netCDF dimension without a variable) made in the element's
// group.
struct Axis {
  std::string name;
  const h5::Dataset* scale = nullptr;
};

// The datasets of a time-dependent element.
struct ElementDatasets {
  h5::Dataset value, time, step;
};

// An empty time-dependent element `group` of `parent` ("": parent itself) (H5MD): value [0, inner...], time [0] float64, step [0]
// int64, extendable along the first axis. Every axis carries a dimension scale, so that h5netcdf
// and xarray open the group as it is: `time` is the scale of the first axis of value and step
// (a coordinate), `axes` those of the others (one per inner dimension). `value_unit` (empty: none)
// and the time's unit (dimensionless depth) are H5MD `unit` attributes. Everything is created and
// attached here, before SWMR mode, which admits no new objects or attributes.
ElementDatasets create_element(h5::Group& parent, const std::string& group, h5::ElementType type,
                               const h5::ChunkedLayout& value_layout, const std::vector<Axis>& axes,
                               const std::string& value_unit);

}  // namespace normdyn::h5md
