#include "normdyn/io/grid_file.hpp"

#include <stdexcept>

#include "io/h5.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/atomic_file.hpp"

namespace normdyn {
namespace {

void set_attribute(h5::Object& o, const std::string& name, const TableAttribute& value) {
  std::visit([&](const auto& v) { o.set_attribute(name, v); }, value);
}

std::size_t size_of(const GridValues& v) {
  return std::visit([](const auto& x) { return x.size(); }, v);
}

h5::Dataset create(h5::Group& g, const std::string& name, std::span<const std::uint64_t> dims, const GridValues& v,
                   int deflate_level) {
  return std::visit(
      [&](const auto& values) {
        using T = std::decay_t<decltype(values)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          if (dims.size() != 1) throw std::invalid_argument(name + ": string values only on one axis");
          return g.create_string_dataset(name, values);
        } else {
          return g.create_dataset(name, dims, std::span(values), deflate_level);
        }
      },
      v);
}

GridValues read_values(const h5::Dataset& ds) {
  switch (ds.element_type()) {
    case h5::ElementType::i64:
      return ds.read_ints();
    case h5::ElementType::string:
      return ds.read_strings();
    case h5::ElementType::f64:
      break;
  }
  return ds.read_doubles();
}

std::vector<std::pair<std::string, TableAttribute>> read_attributes(const h5::Object& o) {
  std::vector<std::pair<std::string, TableAttribute>> out;
  for (const std::string& name : o.attribute_names()) {
    // The dimension-scale bookkeeping of HDF5 is not one of the file's attributes.
    if (name == "CLASS" || name == "NAME" || name == "REFERENCE_LIST" || name == "DIMENSION_LIST") continue;
    switch (o.attribute_type(name)) {
      case h5::ElementType::i64:
        out.emplace_back(name, *o.attribute_int(name));
        break;
      case h5::ElementType::string:
        out.emplace_back(name, *o.attribute_string(name));
        break;
      case h5::ElementType::f64:
        out.emplace_back(name, *o.attribute_double(name));
        break;
    }
  }
  return out;
}

}  // namespace

GridFile read_grid_file(const std::filesystem::path& path) {
  const h5::File f = h5::File::open(path, h5::OpenMode::read_only);
  GridFile file;
  file.attributes = read_attributes(f);
  for (const std::string& name : f.member_names()) {
    const h5::Dataset ds = f.open_dataset(name);
    if (ds.is_scale()) {
      file.dimensions.push_back(GridDimension{name, read_values(ds), read_attributes(ds)});
      continue;
    }
    file.variables.push_back(GridVariable{name, ds.scale_names(), read_values(ds), read_attributes(ds)});
  }
  return file;
}

void write_grid_file(const std::filesystem::path& path, const GridFile& file) {
  std::vector<std::uint64_t> sizes;
  for (const auto& d : file.dimensions) sizes.push_back(size_of(d.coordinate));
  auto dimension_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < file.dimensions.size(); ++i)
      if (file.dimensions[i].name == name) return i;
    throw std::invalid_argument("no dimension " + name);
  };
  for (const auto& v : file.variables) {
    std::uint64_t count = 1;
    for (const auto& d : v.dimensions) count *= sizes[dimension_index(d)];
    if (count != size_of(v.values)) throw std::invalid_argument(v.name + ": size disagrees with its dimensions");
  }

  replace_file_atomically(path, [&](const std::filesystem::path& staging) {
    h5::File f = h5::File::create(staging, h5::CreateMode::truncate);
    for (const auto& [name, value] : file.attributes) set_attribute(f, name, value);
    std::vector<h5::Dataset> scales;
    for (std::size_t i = 0; i < file.dimensions.size(); ++i) {
      const GridDimension& d = file.dimensions[i];
      const std::uint64_t dims[1] = {sizes[i]};
      h5::Dataset ds = create(f, d.name, dims, d.coordinate, 0);
      ds.make_scale(d.name);
      for (const auto& [name, value] : d.attributes) set_attribute(ds, name, value);
      scales.push_back(std::move(ds));
    }
    for (const auto& v : file.variables) {
      std::vector<std::uint64_t> dims;
      for (const auto& d : v.dimensions) dims.push_back(sizes[dimension_index(d)]);
      h5::Dataset ds = create(f, v.name, dims, v.values, v.deflate_level);
      for (unsigned axis = 0; axis < v.dimensions.size(); ++axis)
        ds.attach_scale(scales[dimension_index(v.dimensions[axis])], axis);
      for (const auto& [name, value] : v.attributes) set_attribute(ds, name, value);
    }
    f.close();
  });
}

}  // namespace normdyn
