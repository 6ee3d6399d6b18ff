// The HDF5 wrapper (h5.hpp): its checked calls and helpers, handles, attributes. Groups, datasets
// and files are in h5_group.cpp, h5_dataset.cpp and h5_file.cpp.
#include "io/h5_internal.hpp"

namespace normdyn::h5::internal {

// The cause of a failure from HDF5's error stack: for a failed system call the sec2 driver's entry
// carries the file name and errno's text ("..., filename = 'x.h5', ..., errno = 28, error message =
// 'No space left on device', ..."), which name the cause (disk full, file too large, I/O error)
// where the outer entries only name the call.
herr_t collect_error(unsigned, const H5E_error2_t* e, void* data) {
  if (e && e->desc) static_cast<std::vector<std::string>*>(data)->push_back(e->desc);
  return 0;
}

std::string quoted_after(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  if (at == std::string::npos) return "";
  const auto start = at + marker.size();
  const auto end = text.find('\'', start);
  return end == std::string::npos ? "" : text.substr(start, end - start);
}

std::string error_cause() {
  std::vector<std::string> descs;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &descs);
  for (const std::string& d : descs) {
    const std::string message = quoted_after(d, "error message = '");
    if (message.empty()) continue;
    const std::string file = quoted_after(d, "filename = '");
    return (file.empty() ? "" : file + ": ") + message;
  }
  for (const std::string& d : descs)
    if (d.find("checksum") != std::string::npos || d.find("signature") != std::string::npos ||
        d.find("truncated") != std::string::npos || d.find("addr overflow") != std::string::npos)
      return "the file is damaged (" + d + ")";
  return descs.empty() ? "" : descs.front();
}

[[noreturn]] void fail(const std::string& what, const std::string& object) {
  const std::string cause = error_cause();
  throw IoError("HDF5 " + what + " failed for " + object + (cause.empty() ? "" : ": " + cause));
}

// Only regular files are opened: a FIFO would block the open, a device would be read without end.
void require_regular(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw IoError(path.string() + ": no such file");
  if (!std::filesystem::is_regular_file(status)) throw IoError(path.string() + ": not a regular file");
}

hid_t check(hid_t id, const char* what, const std::string& object) {
  if (id < 0) fail(what, object);
  return id;
}

void check_status(herr_t status, const char* what, const std::string& object) {
  if (status < 0) fail(what, object);
}

std::string child_path(const std::string& parent, const std::string& name) {
  if (!name.empty() && name.front() == '/') return name;
  return parent == "/" ? "/" + name : parent + "/" + name;
}

hid_t native_type(ElementType t) {
  switch (t) {
    case ElementType::f64:
      return H5T_NATIVE_DOUBLE;
    case ElementType::i64:
      return H5T_NATIVE_INT64;
    case ElementType::string:
      break;
  }
  return H5T_NATIVE_DOUBLE;
}

ElementType element_type_of(const Handle& type) {
  switch (H5Tget_class(type.get())) {
    case H5T_INTEGER:
      return ElementType::i64;
    case H5T_STRING:
      return ElementType::string;
    default:
      return ElementType::f64;
  }
}

// Variable-length UTF-8 string type, which h5py reads as str.
Handle string_type(const std::string& object) {
  Handle t(check(H5Tcopy(H5T_C_S1), "H5Tcopy", object), Handle::Kind::datatype);
  check_status(H5Tset_size(t.get(), kVariableLength), "H5Tset_size", object);
  check_status(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset", object);
  return t;
}

Handle scalar_space(const std::string& object) {
  return Handle(check(H5Screate(H5S_SCALAR), "H5Screate", object), Handle::Kind::dataspace);
}

Handle simple_space(std::span<const hsize_t> dims, const std::string& object, std::span<const hsize_t> max_dims) {
  return Handle(
      check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.empty() ? nullptr : max_dims.data()),
            "H5Screate_simple", object),
      Handle::Kind::dataspace);
}

Handle open_attribute(hid_t owner, const std::string& name, const std::string& object) {
  return Handle(check(H5Aopen(owner, name.c_str(), H5P_DEFAULT), "H5Aopen", object + " @" + name),
                Handle::Kind::attribute);
}

// Replaces an attribute of the same name, so that writers can update values.
Handle create_attribute(hid_t owner, const std::string& name, hid_t type, hid_t space, const std::string& object) {
  if (H5Aexists(owner, name.c_str()) > 0)
    check_status(H5Adelete(owner, name.c_str()), "H5Adelete", object + " @" + name);
  return Handle(
      check(H5Acreate2(owner, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate", object + " @" + name),
      Handle::Kind::attribute);
}

std::vector<hsize_t> to_hsize(std::span<const std::uint64_t> dims) {
  return std::vector<hsize_t>(dims.begin(), dims.end());
}

std::uint64_t element_count(const Handle& space, const std::string& object) {
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) fail("H5Sget_simple_extent_npoints", object);
  return static_cast<std::uint64_t>(n);
}

// A bounded metadata cache: HDF5's adaptive cache otherwise grows with the chunk indexes of
// long runs (to 32 MiB by default), which made the writer's memory creep with the frame count.
void bound_metadata_cache(hid_t fapl, const std::string& object) {
  H5AC_cache_config_t config;
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check_status(H5Pget_mdc_config(fapl, &config), "H5Pget_mdc_config", object);
  config.set_initial_size = true;
  config.initial_size = 1 << 20;
  config.min_size = 1 << 20;
  config.max_size = 4 << 20;
  check_status(H5Pset_mdc_config(fapl, &config), "H5Pset_mdc_config", object);
}

}  // namespace normdyn::h5::internal

namespace normdyn::h5 {

// ---- Handle
Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    kind_ = o.kind_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() noexcept {
  if (id_ < 0) return;
  switch (kind_) {
    case Kind::file:
      H5Fclose(id_);
      break;
    case Kind::group:
      H5Gclose(id_);
      break;
    case Kind::dataset:
      H5Dclose(id_);
      break;
    case Kind::dataspace:
      H5Sclose(id_);
      break;
    case Kind::datatype:
      H5Tclose(id_);
      break;
    case Kind::attribute:
      H5Aclose(id_);
      break;
    case Kind::plist:
      H5Pclose(id_);
      break;
    case Kind::none:
      break;
  }
  id_ = -1;
}

void set_metadata_read_attempts(std::int64_t file_access_list, unsigned attempts) {
  static_assert(sizeof(hid_t) == sizeof(std::int64_t));
  check_status(H5Pset_metadata_read_attempts(static_cast<hid_t>(file_access_list), attempts),
               "H5Pset_metadata_read_attempts", "a file-access property list");
}

void silence_error_stack() {
  static std::once_flag once;
  std::call_once(once, [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    // HDF5 keeps freed blocks on internal free lists, unbounded by default; over 10^5 appended
    // frames they grew the writer's memory by ~100 bytes per frame. Bound them (bytes per kind).
    H5set_free_list_limits(1 << 20, 1 << 16, 1 << 20, 1 << 16, 1 << 20, 1 << 16);
  });
}

// ---- Object: attributes
void Object::set_attribute(const std::string& name, double value) {
  Handle space = scalar_space(path_);
  Handle a = create_attribute(id(), name, H5T_NATIVE_DOUBLE, space.get(), where(path_));
  check_status(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value), "H5Awrite", where(path_) + " @" + name);
}

void Object::set_attribute(const std::string& name, std::int64_t value) {
  Handle space = scalar_space(path_);
  Handle a = create_attribute(id(), name, H5T_NATIVE_INT64, space.get(), where(path_));
  check_status(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), "H5Awrite", where(path_) + " @" + name);
}

void Object::set_attribute(const std::string& name, const std::string& value) {
  Handle type = string_type(path_);
  Handle space = scalar_space(path_);
  Handle a = create_attribute(id(), name, type.get(), space.get(), where(path_));
  const char* data = value.c_str();
  check_status(H5Awrite(a.get(), type.get(), &data), "H5Awrite", where(path_) + " @" + name);
}

void Object::set_attribute(const std::string& name, std::span<const double> values) {
  const hsize_t dims[1] = {values.size()};
  Handle space = simple_space(dims, where(path_));
  Handle a = create_attribute(id(), name, H5T_NATIVE_DOUBLE, space.get(), where(path_));
  check_status(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, values.data()), "H5Awrite", where(path_) + " @" + name);
}

void Object::set_attribute(const std::string& name, std::span<const std::int64_t> values) {
  const hsize_t dims[1] = {values.size()};
  Handle space = simple_space(dims, where(path_));
  Handle a = create_attribute(id(), name, H5T_NATIVE_INT64, space.get(), where(path_));
  check_status(H5Awrite(a.get(), H5T_NATIVE_INT64, values.data()), "H5Awrite", where(path_) + " @" + name);
}

void Object::set_attribute(const std::string& name, const std::vector<std::string>& values) {
  Handle type = string_type(path_);
  const hsize_t dims[1] = {values.size()};
  Handle space = simple_space(dims, where(path_));
  Handle a = create_attribute(id(), name, type.get(), space.get(), where(path_));
  std::vector<const char*> data;
  for (const auto& v : values) data.push_back(v.c_str());
  check_status(H5Awrite(a.get(), type.get(), data.data()), "H5Awrite", where(path_) + " @" + name);
}

void Object::set_ascii_attribute(const std::string& name, const std::string& value) {
  Handle type(check(H5Tcopy(H5T_C_S1), "H5Tcopy", where(path_)), Handle::Kind::datatype);
  check_status(H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1)), "H5Tset_size", where(path_));
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad", where(path_));
  check_status(H5Tset_cset(type.get(), H5T_CSET_ASCII), "H5Tset_cset", where(path_));
  Handle space = scalar_space(path_);
  Handle a = create_attribute(id(), name, type.get(), space.get(), where(path_));
  std::string padded = value;
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  check_status(H5Awrite(a.get(), type.get(), padded.data()), "H5Awrite", where(path_) + " @" + name);
}

bool Object::has_attribute(const std::string& name) const {
  const htri_t e = H5Aexists(id(), name.c_str());
  if (e < 0) fail("H5Aexists", where(path_) + " @" + name);
  return e > 0;
}

std::vector<std::string> Object::attribute_names() const {
  H5O_info_t info;
  check_status(H5Oget_info2(id(), &info, H5O_INFO_NUM_ATTRS), "H5Oget_info", where(path_));
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    const ssize_t len = H5Aget_name_by_idx(id(), ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) {
      // Creation order is not tracked in every file; fall back to name order.
      const ssize_t len2 = H5Aget_name_by_idx(id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
      if (len2 < 0) fail("H5Aget_name_by_idx", where(path_));
      std::string name(static_cast<std::size_t>(len2), '\0');
      H5Aget_name_by_idx(id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
      names.push_back(name);
      continue;
    }
    std::string name(static_cast<std::size_t>(len), '\0');
    H5Aget_name_by_idx(id(), ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

ElementType Object::attribute_type(const std::string& name) const {
  Handle a = open_attribute(id(), name, where(path_));
  return element_type_of(
      Handle(check(H5Aget_type(a.get()), "H5Aget_type", where(path_) + " @" + name), Handle::Kind::datatype));
}

std::optional<double> Object::attribute_double(const std::string& name) const {
  if (!has_attribute(name)) return std::nullopt;
  Handle a = open_attribute(id(), name, where(path_));
  double v = 0.0;
  check_status(H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v), "H5Aread", where(path_) + " @" + name);
  return v;
}

std::optional<std::int64_t> Object::attribute_int(const std::string& name) const {
  if (!has_attribute(name)) return std::nullopt;
  Handle a = open_attribute(id(), name, where(path_));
  std::int64_t v = 0;
  check_status(H5Aread(a.get(), H5T_NATIVE_INT64, &v), "H5Aread", where(path_) + " @" + name);
  return v;
}

std::optional<std::string> Object::attribute_string(const std::string& name) const {
  if (!has_attribute(name)) return std::nullopt;
  Handle a = open_attribute(id(), name, where(path_));
  Handle file_type(check(H5Aget_type(a.get()), "H5Aget_type", where(path_) + " @" + name), Handle::Kind::datatype);
  if (H5Tget_class(file_type.get()) != H5T_STRING) return std::nullopt;
  if (H5Tis_variable_str(file_type.get()) > 0) {
    Handle mem = string_type(path_);
    char* data = nullptr;
    check_status(H5Aread(a.get(), mem.get(), &data), "H5Aread", where(path_) + " @" + name);
    std::string out = data ? data : "";
    H5free_memory(data);
    return out;
  }
  // One byte more than stored, for the terminator: a null-padded string fills its whole size.
  const std::size_t size = H5Tget_size(file_type.get()) + 1;
  std::string out(size, '\0');
  Handle mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy", where(path_)), Handle::Kind::datatype);
  H5Tset_size(mem.get(), size);
  check_status(H5Aread(a.get(), mem.get(), out.data()), "H5Aread", where(path_) + " @" + name);
  out.resize(std::strlen(out.c_str()));
  return out;
}

std::vector<double> Object::attribute_doubles(const std::string& name) const {
  if (!has_attribute(name)) return {};
  Handle a = open_attribute(id(), name, where(path_));
  Handle space(check(H5Aget_space(a.get()), "H5Aget_space", where(path_) + " @" + name), Handle::Kind::dataspace);
  std::vector<double> out = read_buffer<double>(element_count(space, where(path_)), where(path_) + " @" + name);
  check_status(H5Aread(a.get(), H5T_NATIVE_DOUBLE, out.data()), "H5Aread", where(path_) + " @" + name);
  return out;
}

std::vector<std::int64_t> Object::attribute_ints(const std::string& name) const {
  if (!has_attribute(name)) return {};
  Handle a = open_attribute(id(), name, where(path_));
  Handle space(check(H5Aget_space(a.get()), "H5Aget_space", where(path_) + " @" + name), Handle::Kind::dataspace);
  std::vector<std::int64_t> out =
      read_buffer<std::int64_t>(element_count(space, where(path_)), where(path_) + " @" + name);
  check_status(H5Aread(a.get(), H5T_NATIVE_INT64, out.data()), "H5Aread", where(path_) + " @" + name);
  return out;
}

}  // namespace normdyn::h5
