#pragma once
// A small HDF5 file of named tables: groups of equally long 1-D columns (float64, int64 or
// UTF-8 strings) and 2-D float64 matrices, with scalar attributes on the root. The sweep index
// (`normdyn sweep`, README "Sweeps and ensembles") is one; h5py reads it without normdyn.
// No HDF5 type crosses this interface.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace normdyn {

using TableValues = std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::string>>;

struct TableColumn {
  std::string name;
  TableValues values;
};

struct TableMatrix {
  std::string name;
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;  // row-major
};

using TableAttribute = std::variant<double, std::int64_t, std::string>;

struct TableGroup {
  std::string name;  // "/runs", "/ensemble", ...
  std::vector<TableColumn> columns;
  std::vector<TableMatrix> matrices;
  std::vector<std::pair<std::string, TableAttribute>> attributes;
};

struct TableFile {
  std::vector<std::pair<std::string, TableAttribute>> attributes;  // on the root
  std::vector<TableGroup> groups;
};

// Writes the whole file atomically: a temporary file beside it, renamed over it once complete, so
// that a reader (or a crash) never sees a half-written one. Throws IoError.
void write_table_file(const std::filesystem::path& path, const TableFile& file);
// Reads back every group, column, matrix and scalar attribute. Throws IoError.
TableFile read_table_file(const std::filesystem::path& path);

}  // namespace normdyn
