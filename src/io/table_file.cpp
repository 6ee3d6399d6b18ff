#include "normdyn/io/table_file.hpp"

#include "io/h5.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/atomic_file.hpp"

namespace normdyn {
namespace {

void set_attribute(h5::Object& o, const std::string& name, const TableAttribute& value) {
  std::visit([&](const auto& v) { o.set_attribute(name, v); }, value);
}

std::vector<std::pair<std::string, TableAttribute>> read_attributes(const h5::Object& o) {
  std::vector<std::pair<std::string, TableAttribute>> out;
  for (const auto& name : o.attribute_names()) {
    if (auto s = o.attribute_string(name))
      out.emplace_back(name, *s);
    else if (auto i = o.attribute_int(name))
      out.emplace_back(name, *i);
    else if (auto d = o.attribute_double(name))
      out.emplace_back(name, *d);
  }
  return out;
}

}  // namespace

void write_table_file(const std::filesystem::path& path, const TableFile& file) {
  replace_file_atomically(path, [&](const std::filesystem::path& staging) {
    h5::File f = h5::File::create(staging, h5::CreateMode::truncate);
    for (const auto& [name, value] : file.attributes) set_attribute(f, name, value);
    for (const auto& g : file.groups) {
      h5::Group group = f.require_group(g.name);
      for (const auto& [name, value] : g.attributes) set_attribute(group, name, value);
      // One dimension per axis length: the first length of each role takes the group's name for
      // it, another (a table of other rows or widths) a name of its own.
      std::vector<std::pair<std::uint64_t, h5::Dataset>> row_scales, column_scales;
      auto scale = [&](std::vector<std::pair<std::uint64_t, h5::Dataset>>& scales, const std::string& base,
                       std::uint64_t size, const std::string& owner) -> const h5::Dataset& {
        for (const auto& [n, ds] : scales)
          if (n == size) return ds;
        scales.emplace_back(size, group.create_dimension(scales.empty() ? base : base + "_" + owner, size));
        return scales.back().second;
      };
      for (const auto& c : g.columns) {
        h5::Dataset ds = std::visit(
            [&](const auto& values) {
              using T = std::decay_t<decltype(values)>;
              if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                return group.create_string_dataset(c.name, values);
              } else {
                const std::uint64_t dims[1] = {values.size()};
                return group.create_dataset(c.name, dims, std::span(values));
              }
            },
            c.values);
        ds.attach_scale(scale(row_scales, g.row_dimension, ds.shape().at(0), c.name), 0);
      }
      for (const auto& m : g.matrices) {
        if (m.values.size() != m.rows * m.cols)
          throw IoError(path.string() + ": matrix " + m.name + " has the wrong size");
        const std::uint64_t dims[2] = {m.rows, m.cols};
        h5::Dataset ds = group.create_dataset(m.name, dims, std::span(m.values));
        ds.attach_scale(scale(row_scales, g.row_dimension, m.rows, m.name), 0);
        ds.attach_scale(scale(column_scales, g.column_dimension, m.cols, m.name), 1);
        const bool is_coordinate = (" " + g.matrix_coordinates + " ").find(" " + m.name + " ") != std::string::npos;
        if (!g.matrix_coordinates.empty() && !is_coordinate) ds.set_attribute("coordinates", g.matrix_coordinates);
      }
    }
    f.close();
  });
}

TableFile read_table_file(const std::filesystem::path& path) {
  if (!h5::File::is_hdf5(path)) throw IoError(path.string() + ": not an HDF5 file");
  const h5::File f = h5::File::open(path, h5::OpenMode::read_only);
  TableFile out;
  out.attributes = read_attributes(f);
  for (const auto& gname : f.member_names()) {
    const h5::Group g = f.open_group(gname);
    TableGroup group;
    group.name = "/" + gname;
    group.attributes = read_attributes(g);
    for (const auto& name : g.member_names()) {
      const h5::Dataset d = g.open_dataset(name);
      if (d.is_dimension_only()) continue;
      const auto shape = d.shape();
      if (shape.size() == 2) {
        group.matrices.push_back(TableMatrix{name, shape[0], shape[1], d.read_doubles()});
        continue;
      }
      switch (d.element_type()) {
        case h5::ElementType::string:
          group.columns.push_back({name, d.read_strings()});
          break;
        case h5::ElementType::i64:
          group.columns.push_back({name, d.read_ints()});
          break;
        case h5::ElementType::f64:
          group.columns.push_back({name, d.read_doubles()});
          break;
      }
    }
    out.groups.push_back(std::move(group));
  }
  return out;
}

}  // namespace normdyn
