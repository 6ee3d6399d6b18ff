// The helpers shared by the HDF5 wrapper's files (h5.cpp, h5_group.cpp, h5_dataset.cpp,
// h5_file.cpp; not installed): checked HDF5 calls, the error's cause, spaces, attributes, types.
#pragma once

#include "io/h5.hpp"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <type_traits>

#include "normdyn/errors.hpp"

namespace normdyn::h5::internal {

// HDF5 spells these as C casts in macros, which -Wold-style-cast reports at every use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
constexpr hid_t kWholeSpace = H5S_ALL;
constexpr std::size_t kVariableLength = H5T_VARIABLE;
#pragma GCC diagnostic pop

// What netCDF-4 (and h5netcdf) write as the NAME of a dimension scale that is not a variable.
constexpr const char* kNotAVariable = "This is a netCDF dimension but not a netCDF variable.";

// The cause of a failure from HDF5's error stack: for a failed system call the sec2 driver's entry
// carries the file name and errno's text ("..., filename = 'x.h5', ..., errno = 28, error message =
// 'No space left on device', ..."), which name the cause (disk full, file too large, I/O error)
// where the outer entries only name the call.
herr_t collect_error(unsigned, const H5E_error2_t* e, void* data);
std::string quoted_after(const std::string& text, const std::string& marker);
std::string error_cause();
[[noreturn]] void fail(const std::string& what, const std::string& object);
// Only regular files are opened: a FIFO would block the open, a device would be read without end.
void require_regular(const std::filesystem::path& path);
hid_t check(hid_t id, const char* what, const std::string& object);
void check_status(herr_t status, const char* what, const std::string& object);
std::string child_path(const std::string& parent, const std::string& name);

// The buffer of a read: a dataset too large for memory (a damaged or forged extent that got past the
// readers' checks, or a real one beyond the machine) is an IoError naming the dataset and its file,
// not a bad_alloc that main() would blame on the configuration's sizes.
template <class T>
std::vector<T> read_buffer(std::uint64_t values, const std::string& object) {
  try {
    if (values > std::vector<T>().max_size()) throw std::bad_alloc();
    return std::vector<T>(static_cast<std::size_t>(values));
  } catch (const std::bad_alloc&) {
    throw IoError(object + ": not enough memory to read " + std::to_string(values) + " values (" +
                  std::to_string(values * sizeof(T) >> 20) + " MiB) of it");
  }
}

hid_t native_type(ElementType t);
// The element type a stored datatype reads as (integers as i64, strings, anything else as f64).
ElementType element_type_of(const Handle& type);
// Variable-length UTF-8 string type, which h5py reads as str.
Handle string_type(const std::string& object);
Handle scalar_space(const std::string& object);
Handle simple_space(std::span<const hsize_t> dims, const std::string& object, std::span<const hsize_t> max_dims = {});
Handle open_attribute(hid_t owner, const std::string& name, const std::string& object);
// Replaces an attribute of the same name, so that writers can update values.
Handle create_attribute(hid_t owner, const std::string& name, hid_t type, hid_t space, const std::string& object);
std::vector<hsize_t> to_hsize(std::span<const std::uint64_t> dims);
std::uint64_t element_count(const Handle& space, const std::string& object);
// A bounded metadata cache: HDF5's adaptive cache otherwise grows with the chunk indexes of
// long runs (to 32 MiB by default), which made the writer's memory creep with the frame count.
void bound_metadata_cache(hid_t fapl, const std::string& object);

}  // namespace normdyn::h5::internal

namespace normdyn::h5 {
using namespace internal;
}  // namespace normdyn::h5
