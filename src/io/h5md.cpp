#include "io/h5md.hpp"

#include <algorithm>
#include <span>
#include <string>

#include "normdyn/errors.hpp"
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
  // The units module, which defines the `unit` attributes of the elements.
  h5::Group units = h5md.create_group("modules/units");
  const std::int64_t units_version[2] = {1, 0};
  units.set_attribute("version", std::span<const std::int64_t>(units_version));
  units.set_ascii_attribute("system", "SI");
  return h5md;
}

std::uint64_t chunk_frames(std::uint64_t values_per_frame, bool compressed) {
  if (compressed) return 1;
  constexpr std::uint64_t kChunkValues = 32768;
  return std::clamp<std::uint64_t>(kChunkValues / std::max<std::uint64_t>(values_per_frame, 1), 1, 4096);
}

ElementDatasets create_element(h5::Group& parent, const std::string& group, h5::ElementType type,
                               const h5::ChunkedLayout& value_layout, const std::vector<Axis>& axes,
                               const std::string& value_unit) {
  if (axes.size() != value_layout.inner_dims.size())
    throw IoError(parent.path() + "/" + group + ": " + std::to_string(axes.size()) + " axis names for " +
                  std::to_string(value_layout.inner_dims.size()) + " inner dimensions");
  const h5::ChunkedLayout scalar{{}, 1024, 0};
  const std::string prefix = group.empty() ? std::string() : group + "/";
  ElementDatasets e;
  e.value = parent.create_extendable(prefix + "value", type, value_layout);
  e.time = parent.create_extendable(prefix + "time", h5::ElementType::f64, scalar);
  e.step = parent.create_extendable(prefix + "step", h5::ElementType::i64, scalar);
  e.time.make_scale("time");
  e.value.attach_scale(e.time, 0);
  e.step.attach_scale(e.time, 0);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const auto axis = static_cast<unsigned>(k + 1);
    if (axes[k].scale) {
      e.value.attach_scale(*axes[k].scale, axis);
    } else {
      const h5::Dataset dimension = parent.create_dimension(prefix + axes[k].name, value_layout.inner_dims[k]);
      e.value.attach_scale(dimension, axis);
    }
  }
  if (!value_unit.empty()) e.value.set_ascii_attribute("unit", value_unit);
  e.time.set_ascii_attribute("unit", kDimensionless);
  return e;
}

}  // namespace normdyn::h5md
