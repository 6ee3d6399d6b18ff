// The HDF5 wrapper: datasets, their frames, reads, writes and dimension scales.
#include "io/h5_internal.hpp"

namespace normdyn::h5 {

// ---- Dataset
std::vector<std::uint64_t> Dataset::shape() const {
  Handle space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail("H5Sget_simple_extent_ndims", where(path_));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return std::vector<std::uint64_t>(dims.begin(), dims.end());
}

ElementType Dataset::element_type() const {
  return element_type_of(Handle(check(H5Dget_type(id()), "H5Dget_type", where(path_)), Handle::Kind::datatype));
}

template <class T>
void Dataset::append_impl(std::span<const T> values, std::uint64_t frames) {
  constexpr bool is_double = std::is_same_v<T, double>;
  std::vector<hsize_t> dims;
  for (auto d : shape()) dims.push_back(d);
  if (dims.empty()) throw IoError(where(path_) + ": cannot append to a scalar dataset");
  std::uint64_t per_frame = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) per_frame *= dims[i];
  if (values.size() != per_frame * frames)
    throw IoError(where(path_) + ": appended data has " + std::to_string(values.size()) + " values, expected " +
                  std::to_string(per_frame * frames));
  const hsize_t first = dims[0];
  dims[0] += frames;
  check_status(H5Dset_extent(id(), dims.data()), "H5Dset_extent", where(path_));
  Handle file_space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = first;
  count[0] = frames;
  check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
               "H5Sselect_hyperslab", where(path_));
  Handle mem_space = simple_space(count, where(path_));
  check_status(H5Dwrite(id(), is_double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64, mem_space.get(), file_space.get(),
                        H5P_DEFAULT, values.data()),
               "H5Dwrite", where(path_));
}

void Dataset::append(std::span<const double> values, std::uint64_t frames) { append_impl(values, frames); }
void Dataset::append(std::span<const std::int64_t> values, std::uint64_t frames) { append_impl(values, frames); }

void Dataset::resize_frames(std::uint64_t frames) {
  std::vector<hsize_t> dims;
  for (auto d : shape()) dims.push_back(d);
  if (dims.empty()) throw IoError(where(path_) + ": cannot resize a scalar dataset");
  dims[0] = frames;
  check_status(H5Dset_extent(id(), dims.data()), "H5Dset_extent", where(path_));
}

std::vector<double> Dataset::read_doubles() const {
  Handle space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  std::vector<double> out = read_buffer<double>(element_count(space, where(path_)), where(path_));
  if (!out.empty())
    check_status(H5Dread(id(), H5T_NATIVE_DOUBLE, kWholeSpace, kWholeSpace, H5P_DEFAULT, out.data()), "H5Dread",
                 where(path_));
  return out;
}

std::vector<std::int64_t> Dataset::read_ints() const {
  Handle space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  std::vector<std::int64_t> out = read_buffer<std::int64_t>(element_count(space, where(path_)), where(path_));
  if (!out.empty())
    check_status(H5Dread(id(), H5T_NATIVE_INT64, kWholeSpace, kWholeSpace, H5P_DEFAULT, out.data()), "H5Dread",
                 where(path_));
  return out;
}

std::string Dataset::read_string() const {
  Handle file_type(check(H5Dget_type(id()), "H5Dget_type", where(path_)), Handle::Kind::datatype);
  if (H5Tget_class(file_type.get()) != H5T_STRING) throw IoError(where(path_) + ": not a string dataset");
  if (H5Tis_variable_str(file_type.get()) > 0) {
    Handle mem = string_type(path_);
    char* data = nullptr;
    check_status(H5Dread(id(), mem.get(), kWholeSpace, kWholeSpace, H5P_DEFAULT, &data), "H5Dread", where(path_));
    std::string out = data ? data : "";
    H5free_memory(data);
    return out;
  }
  const std::size_t size = H5Tget_size(file_type.get()) + 1;  // as attribute_string
  std::string out(size, '\0');
  Handle mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy", where(path_)), Handle::Kind::datatype);
  H5Tset_size(mem.get(), size);
  check_status(H5Dread(id(), mem.get(), kWholeSpace, kWholeSpace, H5P_DEFAULT, out.data()), "H5Dread", where(path_));
  out.resize(std::strlen(out.c_str()));
  return out;
}

std::vector<std::string> Dataset::read_strings() const {
  Handle file_type(check(H5Dget_type(id()), "H5Dget_type", where(path_)), Handle::Kind::datatype);
  if (H5Tget_class(file_type.get()) != H5T_STRING || H5Tis_variable_str(file_type.get()) <= 0)
    throw IoError(where(path_) + ": not a dataset of variable-length strings");
  Handle space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  std::vector<char*> data(element_count(space, where(path_)), nullptr);
  std::vector<std::string> out;
  if (data.empty()) return out;
  Handle mem = string_type(path_);
  check_status(H5Dread(id(), mem.get(), kWholeSpace, kWholeSpace, H5P_DEFAULT, data.data()), "H5Dread", where(path_));
  for (char* d : data) {
    out.emplace_back(d ? d : "");
    H5free_memory(d);
  }
  return out;
}

template <class T>
std::vector<T> Dataset::read_frames_as(std::uint64_t first, std::uint64_t count_frames) const {
  std::vector<hsize_t> dims;
  for (auto d : shape()) dims.push_back(d);
  if (dims.empty() || first + count_frames > dims[0] || first + count_frames < first)
    throw IoError(where(path_) + ": frames [" + std::to_string(first) + ", " + std::to_string(first + count_frames) +
                  ") out of range");
  Handle file_space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = first;
  count[0] = count_frames;
  check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
               "H5Sselect_hyperslab", where(path_));
  Handle mem_space = simple_space(count, where(path_));
  std::uint64_t total = 1;
  for (auto c : count)
    total = c != 0 && total > std::numeric_limits<std::uint64_t>::max() / c ? std::numeric_limits<std::uint64_t>::max()
                                                                            : total * c;
  std::vector<T> out = read_buffer<T>(total, where(path_));
  const hid_t type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  if (total > 0)
    check_status(H5Dread(id(), type, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()), "H5Dread",
                 where(path_));
  return out;
}

std::vector<double> Dataset::read_frames(std::uint64_t first, std::uint64_t count) const {
  return read_frames_as<double>(first, count);
}

std::vector<std::int64_t> Dataset::read_int_frames(std::uint64_t first, std::uint64_t count) const {
  return read_frames_as<std::int64_t>(first, count);
}

void Dataset::write(std::span<const double> values) {
  check_status(H5Dwrite(id(), H5T_NATIVE_DOUBLE, kWholeSpace, kWholeSpace, H5P_DEFAULT, values.data()), "H5Dwrite",
               where(path_));
}

void Dataset::write(std::span<const std::int64_t> values) {
  check_status(H5Dwrite(id(), H5T_NATIVE_INT64, kWholeSpace, kWholeSpace, H5P_DEFAULT, values.data()), "H5Dwrite",
               where(path_));
}

void Dataset::refresh() { check_status(H5Drefresh(id()), "H5Drefresh", where(path_)); }
void Dataset::flush() { check_status(H5Dflush(id()), "H5Dflush", where(path_)); }

void Dataset::make_scale(const std::string& dimension_name) {
  check_status(H5DSset_scale(id(), dimension_name.c_str()), "H5DSset_scale", where(path_));
}

void Dataset::attach_scale(const Dataset& scale, unsigned axis) {
  check_status(H5DSattach_scale(id(), scale.id(), axis), "H5DSattach_scale", where(path_));
}

bool Dataset::is_scale() const { return H5DSis_scale(id()) > 0; }

std::vector<std::string> Dataset::scale_names() const {
  std::vector<std::string> names(shape().size());
  for (unsigned axis = 0; axis < names.size(); ++axis) {
    int index = 0;
    auto visit = [](hid_t, unsigned, hid_t scale, void* out) -> herr_t {
      const ssize_t len = H5DSget_scale_name(scale, nullptr, 0);
      if (len <= 0) return 0;
      std::string name(static_cast<std::size_t>(len), '\0');
      H5DSget_scale_name(scale, name.data(), name.size() + 1);
      *static_cast<std::string*>(out) = name;
      return 1;  // the first scale of the axis
    };
    if (H5DSget_num_scales(id(), axis) > 0)
      check_status(H5DSiterate_scales(id(), axis, &index, visit, &names[axis]), "H5DSiterate_scales", where(path_));
  }
  return names;
}

bool Dataset::is_dimension_only() const {
  if (H5DSis_scale(id()) <= 0) return false;
  const ssize_t len = H5DSget_scale_name(id(), nullptr, 0);
  if (len <= 0) return false;
  std::string name(static_cast<std::size_t>(len), '\0');
  H5DSget_scale_name(id(), name.data(), name.size() + 1);
  return name.rfind(kNotAVariable, 0) == 0;
}

void Dataset::set_dimension_label(unsigned axis, const std::string& label) {
  check_status(H5DSset_label(id(), axis, label.c_str()), "H5DSset_label", where(path_));
}

}  // namespace normdyn::h5
