#pragma once
// A small HDF5 file of named tables: groups of equally long 1-D columns (float64, int64 or
// UTF-8 strings) and 2-D float64 matrices, with scalar attributes on the root, and named
// dimensions on every axis (netCDF-4 conventions, so that xarray and h5netcdf read it). The sweep index
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
  // The names of the axes, stored as HDF5 dimension scales so that xarray opens the group as it is:
  // the rows of columns and matrices, and the columns of the matrices (a dataset whose length on an
  // axis differs from the first one's gets a dimension of its own, e.g. `column_dimension`_`name`).
  std::string row_dimension = "row";
  std::string column_dimension = "column";
  // Space-separated names of matrices that are coordinates of the other matrices (CF
  // `coordinates`, which xarray reads), e.g. "time".
  std::string matrix_coordinates;
};

struct TableFile {
  std::vector<std::pair<std::string, TableAttribute>> attributes;  // on the root
  std::vector<TableGroup> groups;
};

// Writes the whole file atomically: a temporary file beside it, renamed over it once complete, so
// that a reader (or a crash) never sees a half-written one. Throws IoError.
void write_table_file(const std::filesystem::path& path, const TableFile& file);
// Reads back every group, column, matrix and scalar attribute (not the dimensions). Throws IoError.
TableFile read_table_file(const std::filesystem::path& path);

}  // namespace normdyn
