#pragma once
// A small HDF5 file of labelled N-D arrays on named dimensions (netCDF-4 conventions: every
// dimension is an HDF5 dimension scale holding its coordinate values, attached to every axis that
// runs along it), so that xarray (engine h5netcdf) opens it as a grid without normdyn. The ensemble
// file (`normdyn ensemble`) is one. No HDF5 type crosses this interface.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "normdyn/io/table_file.hpp"

namespace normdyn {

// Values owned, or borrowed (the spans: a view of arrays that outlive the GridFile, so that a large
// file is written without a second copy of its arrays). read_grid_file returns owned values.
using GridValues = std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::string>,
                                std::span<const double>, std::span<const std::int64_t>>;

struct GridDimension {
  std::string name;
  GridValues coordinate;  // one value per index (strings only on 1-D coordinates)
  std::vector<std::pair<std::string, TableAttribute>> attributes;
};

struct GridVariable {
  std::string name;
  std::vector<std::string> dimensions;  // names of GridFile::dimensions, slowest first
  GridValues values;                    // row-major; strings not allowed
  std::vector<std::pair<std::string, TableAttribute>> attributes;
  int deflate_level = 0;  // 1..9: stored in chunks with shuffle + deflate (numbers only)
};

struct GridFile {
  std::vector<std::pair<std::string, TableAttribute>> attributes;  // on the root
  std::vector<GridDimension> dimensions;
  std::vector<GridVariable> variables;
};

// Writes the whole file atomically (a temporary file beside it, renamed over `path` once complete).
// Throws IoError; std::invalid_argument when a variable's size disagrees with its dimensions.
void write_grid_file(const std::filesystem::path& path, const GridFile& file);

// Reads a file written by write_grid_file: the root attributes, the dimensions (the dimension
// scales) and the variables (every other dataset at the root, with the names of their axes' scales),
// in name order. Throws IoError.
GridFile read_grid_file(const std::filesystem::path& path);

}  // namespace normdyn
