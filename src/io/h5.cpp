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

namespace normdyn::h5 {
namespace {

// HDF5 spells these as C casts in macros, which -Wold-style-cast reports at every use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
constexpr hid_t kWholeSpace = H5S_ALL;
constexpr std::size_t kVariableLength = H5T_VARIABLE;
#pragma GCC diagnostic pop

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

hid_t native_type(ElementType t) {
  switch (t) {
    case ElementType::f64: return H5T_NATIVE_DOUBLE;
    case ElementType::i64: return H5T_NATIVE_INT64;
    case ElementType::string: break;
  }
  return H5T_NATIVE_DOUBLE;
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

Handle simple_space(std::span<const hsize_t> dims, const std::string& object,
                    std::span<const hsize_t> max_dims = {}) {
  return Handle(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                                       max_dims.empty() ? nullptr : max_dims.data()),
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
  return Handle(check(H5Acreate2(owner, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate",
                      object + " @" + name),
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

}  // namespace

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
    case Kind::file: H5Fclose(id_); break;
    case Kind::group: H5Gclose(id_); break;
    case Kind::dataset: H5Dclose(id_); break;
    case Kind::dataspace: H5Sclose(id_); break;
    case Kind::datatype: H5Tclose(id_); break;
    case Kind::attribute: H5Aclose(id_); break;
    case Kind::plist: H5Pclose(id_); break;
    case Kind::none: break;
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
  Handle t(check(H5Aget_type(a.get()), "H5Aget_type", where(path_) + " @" + name), Handle::Kind::datatype);
  switch (H5Tget_class(t.get())) {
    case H5T_INTEGER: return ElementType::i64;
    case H5T_STRING: return ElementType::string;
    default: return ElementType::f64;
  }
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
  std::vector<std::int64_t> out = read_buffer<std::int64_t>(element_count(space, where(path_)), where(path_) + " @" + name);
  check_status(H5Aread(a.get(), H5T_NATIVE_INT64, out.data()), "H5Aread", where(path_) + " @" + name);
  return out;
}

// ---- Group
Group Group::create_group(const std::string& name) {
  const std::string p = child_path(path_, name);
  Handle lcpl(check(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate", where(p)), Handle::Kind::plist);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle gcpl(check(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate", where(p)), Handle::Kind::plist);
  H5Pset_attr_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED);
  return Group(Handle(check(H5Gcreate2(id(), name.c_str(), lcpl.get(), gcpl.get(), H5P_DEFAULT), "H5Gcreate", where(p)),
                      Handle::Kind::group),
               p, file_);
}

Group Group::open_group(const std::string& name) const {
  const std::string p = child_path(path_, name);
  if (!contains(name)) throw IoError(where(p) + ": no such group");
  return Group(Handle(check(H5Gopen2(id(), name.c_str(), H5P_DEFAULT), "H5Gopen", where(p)), Handle::Kind::group), p, file_);
}

Group Group::require_group(const std::string& name) { return contains(name) ? open_group(name) : create_group(name); }

// Whether the parent of `partial` (a path below this group) is an object other than a group, such as a
// dataset: HDF5 then fails to look up a link below it, which is an absence, not damage.
bool Group::through_dataset(const std::string& partial) const {
  const auto slash = partial.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return false;
  const std::string parent = partial.substr(0, slash);
  H5O_info_t object;
  if (H5Oget_info_by_name2(id(), parent.c_str(), &object, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
  return object.type != H5O_TYPE_GROUP;
}

bool Group::contains(const std::string& name) const {
  // Check every component, since H5Lexists fails on a missing intermediate group.
  std::string partial;
  std::size_t start = 0;
  if (!name.empty() && name.front() == '/') {
    partial = "/";
    start = 1;
  }
  while (start <= name.size()) {
    const std::size_t slash = name.find('/', start);
    const std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) {
      partial += (partial.empty() || partial.back() == '/') ? part : "/" + part;
      const htri_t e = H5Lexists(id(), partial.c_str(), H5P_DEFAULT);
      // An error is not an absence: metadata that fails its checksum (a damaged file) or a soft-link
      // loop must not read as a missing object. Only a path through a dataset fails for no damage.
      if (e < 0) {
        const std::string cause = error_cause();  // before any other call clears HDF5's error stack
        if (through_dataset(partial)) return false;
        throw IoError("HDF5 H5Lexists failed for " + where(child_path(path_, partial)) + (cause.empty() ? "" : ": " + cause));
      }
      if (e == 0) return false;
      // A dangling soft link exists as a link but not as an object (a loop is an error).
      const htri_t o = H5Oexists_by_name(id(), partial.c_str(), H5P_DEFAULT);
      if (o < 0) fail("H5Oexists_by_name", where(child_path(path_, partial)));
      if (o == 0) return false;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

Group::Link Group::link(const std::string& name) const {
  const std::string p = child_path(path_, name);
  const htri_t exists = H5Lexists(id(), name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail("H5Lexists", where(p));
  if (exists == 0) return Link::none;
  H5L_info_t info;
  check_status(H5Lget_info(id(), name.c_str(), &info, H5P_DEFAULT), "H5Lget_info", where(p));
  if (info.type == H5L_TYPE_SOFT) return Link::soft;
  if (info.type != H5L_TYPE_HARD) return Link::external;  // external or user-defined: another file
  H5O_info_t object;
  check_status(H5Oget_info_by_name2(id(), name.c_str(), &object, H5O_INFO_BASIC, H5P_DEFAULT), "H5Oget_info_by_name",
               where(p));
  if (object.type == H5O_TYPE_GROUP) return Link::group;
  if (object.type == H5O_TYPE_DATASET) return Link::dataset;
  return Link::other;
}

std::vector<std::string> Group::member_names() const {
  H5G_info_t info;
  check_status(H5Gget_info(id(), &info), "H5Gget_info", where(path_));
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) fail("H5Lget_name_by_idx", where(path_));
    std::string name(static_cast<std::size_t>(len), '\0');
    H5Lget_name_by_idx(id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

Dataset Group::create_extendable(const std::string& name, ElementType type, const ChunkedLayout& layout) {
  const std::string p = child_path(path_, name);
  std::vector<hsize_t> dims{0};
  std::vector<hsize_t> max_dims{H5S_UNLIMITED};
  std::vector<hsize_t> chunk{std::max<hsize_t>(1, layout.chunk_frames)};
  for (auto d : layout.inner_dims) {
    dims.push_back(d);
    max_dims.push_back(d);
    chunk.push_back(std::max<hsize_t>(1, d));
  }
  Handle space = simple_space(dims, p, max_dims);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", where(p)), Handle::Kind::plist);
  check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "H5Pset_chunk", where(p));
  if (layout.deflate_level > 0) {
    check_status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle", where(p));
    check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(layout.deflate_level)), "H5Pset_deflate", where(p));
  }
  Handle string_t;
  hid_t file_type = native_type(type);
  if (type == ElementType::string) {
    string_t = string_type(p);
    file_type = string_t.get();
  }
  // Frames are only appended, never re-read: the chunk cache needs the chunk being filled, not
  // HDF5's default 1 MiB per dataset, which made memory grow with the frame count.
  std::uint64_t chunk_bytes = 8;
  for (auto c : chunk) chunk_bytes *= c;
  Handle dapl(check(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate", where(p)), Handle::Kind::plist);
  check_status(H5Pset_chunk_cache(dapl.get(), 13, 2 * chunk_bytes, 1.0), "H5Pset_chunk_cache", where(p));
  return create_linked(name, file_type, space.get(), dcpl.get(), dapl.get());
}

Dataset Group::create_fixed(const std::string& name, std::span<const std::uint64_t> dims, hid element_type,
                             int deflate_level) {
  const std::string p = child_path(path_, name);
  const auto hd = to_hsize(dims);
  Handle space = simple_space(hd, where(p));
  std::uint64_t count = 1;
  for (auto d : dims) count *= d;
  if (deflate_level <= 0 || dims.empty() || count == 0) return create_linked(name, element_type, space.get());
  std::vector<hsize_t> chunk(hd.begin(), hd.end());
  const hsize_t row = count / hd[0];
  chunk[0] = std::clamp<hsize_t>((hsize_t{1} << 16) / std::max<hsize_t>(1, row), 1, hd[0]);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", where(p)), Handle::Kind::plist);
  check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "H5Pset_chunk", where(p));
  check_status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle", where(p));
  check_status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(deflate_level)), "H5Pset_deflate", where(p));
  return create_linked(name, element_type, space.get(), dcpl.get());
}

Dataset Group::create_linked(const std::string& name, hid type, hid space, hid dcpl, hid dapl) {
  const std::string p = child_path(path_, name);
  Handle lcpl(check(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate", where(p)), Handle::Kind::plist);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  static_assert(H5P_DEFAULT == 0, "dcpl/dapl 0 stands for the default property lists");
  return Dataset(Handle(check(H5Dcreate2(id(), name.c_str(), type, space, lcpl.get(), dcpl, dapl),
                              "H5Dcreate", where(p)),
                        Handle::Kind::dataset),
                 p, file_);
}

Dataset Group::create_dataset(const std::string& name, std::span<const std::uint64_t> dims,
                              std::span<const double> data, int deflate_level) {
  Dataset ds = create_fixed(name, dims, H5T_NATIVE_DOUBLE, deflate_level);
  ds.write(data);
  return ds;
}

Dataset Group::create_dataset(const std::string& name, std::span<const std::uint64_t> dims,
                              std::span<const std::int64_t> data, int deflate_level) {
  Dataset ds = create_fixed(name, dims, H5T_NATIVE_INT64, deflate_level);
  ds.write(data);
  return ds;
}

Dataset Group::create_string_dataset(const std::string& name, const std::string& value) {
  const std::string p = child_path(path_, name);
  Handle type = string_type(p);
  Handle space = scalar_space(p);
  Dataset ds = create_linked(name, type.get(), space.get());
  const char* data = value.c_str();
  check_status(H5Dwrite(ds.id(), type.get(), kWholeSpace, kWholeSpace, H5P_DEFAULT, &data), "H5Dwrite", where(p));
  return ds;
}

Dataset Group::create_string_dataset(const std::string& name, const std::vector<std::string>& values) {
  const std::string p = child_path(path_, name);
  Handle type = string_type(p);
  const hsize_t dims[1] = {values.size()};
  Handle space = simple_space(dims, where(p));
  Dataset ds = create_linked(name, type.get(), space.get());
  std::vector<const char*> data;
  for (const auto& v : values) data.push_back(v.c_str());
  if (!data.empty())
    check_status(H5Dwrite(ds.id(), type.get(), kWholeSpace, kWholeSpace, H5P_DEFAULT, data.data()), "H5Dwrite", where(p));
  return ds;
}

Dataset Group::open_dataset(const std::string& name) const {
  const std::string p = child_path(path_, name);
  if (!contains(name)) throw IoError(where(p) + ": no such dataset");
  // Chunked datasets are read or appended in order: a cache of two chunks is all that helps, and
  // HDF5's default (1 MiB per dataset) kept every chunk of a long run's scalar series in memory.
  // The cache is fixed when the dataset is first opened, so look at its layout, close, reopen.
  std::uint64_t chunk_bytes = 0;
  {
    Handle probe(check(H5Dopen2(id(), name.c_str(), H5P_DEFAULT), "H5Dopen", where(p)), Handle::Kind::dataset);
    Handle dcpl(check(H5Dget_create_plist(probe.get()), "H5Dget_create_plist", where(p)), Handle::Kind::plist);
    if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
      hsize_t chunk[H5S_MAX_RANK];
      const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk);
      chunk_bytes = 8;
      for (int i = 0; i < rank; ++i) chunk_bytes *= chunk[i];
    }
  }
  Handle dapl(check(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate", where(p)), Handle::Kind::plist);
  if (chunk_bytes > 0)
    check_status(H5Pset_chunk_cache(dapl.get(), 13, 2 * chunk_bytes, 1.0), "H5Pset_chunk_cache", where(p));
  return Dataset(Handle(check(H5Dopen2(id(), name.c_str(), dapl.get()), "H5Dopen", where(p)), Handle::Kind::dataset), p, file_);
}

namespace {
// What netCDF-4 (and h5netcdf) write as the NAME of a dimension scale that is not a variable.
constexpr const char* kNotAVariable = "This is a netCDF dimension but not a netCDF variable.";
}  // namespace

Dataset Group::create_dimension(const std::string& name, std::uint64_t size) {
  const std::string p = child_path(path_, name);
  const hsize_t dims[1] = {size};
  Handle space = simple_space(dims, where(p));
  // Never written: a contiguous dataset without data occupies no space in the file.
  Dataset ds = create_linked(name, H5T_IEEE_F32BE, space.get());
  char size_text[32];  // netCDF-4 appends the length as "%10d"
  std::snprintf(size_text, sizeof size_text, "%10llu", static_cast<unsigned long long>(size));
  const std::string scale_name = std::string(kNotAVariable) + size_text;
  check_status(H5DSset_scale(ds.id(), scale_name.c_str()), "H5DSset_scale", where(p));
  return ds;
}

void Group::create_soft_link(const std::string& name, const std::string& target) {
  const std::string p = child_path(path_, name);
  check_status(H5Lcreate_soft(target.c_str(), id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), "H5Lcreate_soft", where(p));
}

bool Group::remove(const std::string& name) {
  const std::string p = child_path(path_, name);
  // A link may exist without its object (dangling soft link): test the link itself.
  bool present = false;
  try {
    present = contains(name);
  } catch (const IoError&) {
    present = true;  // a link that does not resolve (a loop) is still removable
  }
  if (!present && H5Lexists(id(), name.c_str(), H5P_DEFAULT) <= 0) return false;
  check_status(H5Ldelete(id(), name.c_str(), H5P_DEFAULT), "H5Ldelete", where(p));
  return true;
}

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
  Handle t(check(H5Dget_type(id()), "H5Dget_type", where(path_)), Handle::Kind::datatype);
  switch (H5Tget_class(t.get())) {
    case H5T_INTEGER: return ElementType::i64;
    case H5T_STRING: return ElementType::string;
    default: return ElementType::f64;
  }
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
    check_status(H5Dread(id(), H5T_NATIVE_DOUBLE, kWholeSpace, kWholeSpace, H5P_DEFAULT, out.data()), "H5Dread", where(path_));
  return out;
}

std::vector<std::int64_t> Dataset::read_ints() const {
  Handle space(check(H5Dget_space(id()), "H5Dget_space", where(path_)), Handle::Kind::dataspace);
  std::vector<std::int64_t> out = read_buffer<std::int64_t>(element_count(space, where(path_)), where(path_));
  if (!out.empty())
    check_status(H5Dread(id(), H5T_NATIVE_INT64, kWholeSpace, kWholeSpace, H5P_DEFAULT, out.data()), "H5Dread", where(path_));
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
  for (auto c : count) total = c != 0 && total > std::numeric_limits<std::uint64_t>::max() / c ? std::numeric_limits<std::uint64_t>::max() : total * c;
  std::vector<T> out = read_buffer<T>(total, where(path_));
  const hid_t type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  if (total > 0)
    check_status(H5Dread(id(), type, mem_space.get(), file_space.get(), H5P_DEFAULT, out.data()), "H5Dread", where(path_));
  return out;
}

std::vector<double> Dataset::read_frames(std::uint64_t first, std::uint64_t count) const {
  return read_frames_as<double>(first, count);
}

std::vector<std::int64_t> Dataset::read_int_frames(std::uint64_t first, std::uint64_t count) const {
  return read_frames_as<std::int64_t>(first, count);
}

void Dataset::write(std::span<const double> values) {
  check_status(H5Dwrite(id(), H5T_NATIVE_DOUBLE, kWholeSpace, kWholeSpace, H5P_DEFAULT, values.data()), "H5Dwrite", where(path_));
}

void Dataset::write(std::span<const std::int64_t> values) {
  check_status(H5Dwrite(id(), H5T_NATIVE_INT64, kWholeSpace, kWholeSpace, H5P_DEFAULT, values.data()), "H5Dwrite", where(path_));
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

// ---- File
File File::create(const std::filesystem::path& path, CreateMode mode, bool latest_format) {
  silence_error_stack();
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", path.string()), Handle::Kind::plist);
  // SWMR needs the 1.10 file format; h5py 3 reads it.
  if (latest_format) H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  bound_metadata_cache(fapl.get(), path.string());
  Handle fcpl(check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate", path.string()), Handle::Kind::plist);
  const hid_t id = H5Fcreate(path.c_str(), mode == CreateMode::exclusive ? H5F_ACC_EXCL : H5F_ACC_TRUNC, fcpl.get(),
                             fapl.get());
  if (id < 0) {
    const std::string cause = error_cause();
    throw IoError(path.string() + ": cannot create the HDF5 file" + (cause.empty() ? "" : ": " + cause));
  }
  File f(Handle(id, Handle::Kind::file), "/", path.string());
  return f;
}

File File::open(const std::filesystem::path& path, OpenMode mode, const OpenOptions& options) {
  silence_error_stack();
  require_regular(path);
  unsigned flags = H5F_ACC_RDONLY;
  if (mode == OpenMode::read_write || mode == OpenMode::read_write_recover) flags = H5F_ACC_RDWR;
  if (mode == OpenMode::swmr_read) flags = H5F_ACC_RDONLY | H5F_ACC_SWMR_READ;
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", path.string()), Handle::Kind::plist);
  bound_metadata_cache(fapl.get(), path.string());
  // A SWMR reader retries metadata whose checksum fails (it may be half-written), by default 100
  // times with doubling sleeps: hours on a damaged file. Without a live writer, fewer suffice.
  if (options.metadata_read_attempts > 0)
    check_status(H5Pset_metadata_read_attempts(fapl.get(), options.metadata_read_attempts),
                 "H5Pset_metadata_read_attempts", path.string());
  if (!options.file_locking)
    check_status(H5Pset_file_locking(fapl.get(), false, true), "H5Pset_file_locking", path.string());
  bool restore_end = false;
  if (mode == OpenMode::read_write_recover) {
    // The properties h5clear sets; registered in the file-access class, so settable by name.
    hbool_t clear = 1;
    check_status(H5Pset(fapl.get(), "clear_status_flags", &clear), "H5Pset(clear_status_flags)", path.string());
    const auto session = unfinished_session(path);
    if (session && session->truncated) {
      hbool_t skip = 1;
      check_status(H5Pset(fapl.get(), "skip_eof_check", &skip), "H5Pset(skip_eof_check)", path.string());
      restore_end = true;
    }
  }
  const hid_t id = H5Fopen(path.c_str(), flags, fapl.get());
  if (id >= 0 && restore_end) {
    // As h5clear --increment=0: the end of file becomes the stored one again (the file is extended
    // to it at close; what the failed writes did not write reads as zeros).
    File f(Handle(id, Handle::Kind::file), "/", path.string());
    check_status(H5Fincrement_filesize(id, 0), "H5Fincrement_filesize", path.string());
    return f;
  }
  if (id < 0) {
    if (mode != OpenMode::read_only && mode != OpenMode::swmr_read && H5Fis_hdf5(path.c_str()) > 0)
      throw IoError(path.string() + ": cannot open for writing (is it open in another program?)");
    const std::string cause = error_cause();
    if (H5Fis_hdf5(path.c_str()) > 0)
      throw IoError(path.string() + ": cannot open the HDF5 file" + (cause.empty() ? "" : ": " + cause));
    throw IoError(path.string() + ": not an HDF5 file (or its superblock is damaged)");
  }
  return File(Handle(id, Handle::Kind::file), "/", path.string());
}

bool File::is_hdf5(const std::filesystem::path& path) {
  silence_error_stack();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  return H5Fis_hdf5(path.c_str()) > 0;
}

namespace {

// The file for reading its first bytes, or null: opened without blocking and kept only if it is a
// regular file, so that a FIFO put in its place after a caller's check cannot hold the open.
std::FILE* open_regular_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return nullptr;
  }
  std::FILE* f = ::fdopen(fd, "rb");
  if (!f) ::close(fd);
  return f;
}

}  // namespace

bool File::has_signature(const std::filesystem::path& path) {
  // The superblock's signature at offset 0 or at 512 times a power of two (after a user block).
  constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return false;
  std::FILE* f = open_regular_file(path);
  if (!f) return false;
  bool found = false;
  for (std::uintmax_t offset = 0; !found && offset + sizeof kSignature <= size; offset = offset == 0 ? 512 : 2 * offset) {
    unsigned char head[sizeof kSignature] = {};
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fread(head, 1, sizeof head, f) != sizeof head) break;
    found = std::memcmp(head, kSignature, sizeof kSignature) == 0;
  }
  std::fclose(f);
  return found;
}

std::optional<File::SessionFlags> File::unfinished_session(const std::filesystem::path& path) {
  // HDF5 file format, section III.A: the superblock starts with an 8-byte signature at offset 0 or
  // at 512 times a power of two (after a user block); version >= 2 has, after the version byte and
  // the sizes of offsets and lengths, the file consistency flags: bit 0 write access, bit 2 SWMR
  // write access. HDF5 sets them when a session opens the file for writing and clears them at its
  // close; the library offers no call that reads them without opening the file, which they prevent.
  constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  std::FILE* f = open_regular_file(path);
  if (!f) return std::nullopt;
  std::optional<SessionFlags> out;
  // After the flags, with 8-byte offsets: the base address, the superblock extension's address and
  // the end-of-file address, relative to the base (little-endian).
  for (std::uintmax_t offset = 0; offset + 12 <= size; offset = offset == 0 ? 512 : 2 * offset) {
    unsigned char head[36] = {};
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) break;
    const std::size_t got = std::fread(head, 1, sizeof head, f);
    if (got < 12) break;
    if (std::memcmp(head, kSignature, sizeof kSignature) != 0) continue;
    if (head[8] < 2) break;
    const bool has_flags = head[8] >= 3;  // version 2 keeps the byte but not these flags
    SessionFlags flags{has_flags && (head[11] & 0x01u) != 0, has_flags && (head[11] & 0x04u) != 0, false};
    if (got == sizeof head && head[9] == 8) {
      std::uint64_t base = 0, end = 0;
      for (int i = 7; i >= 0; --i) {
        base = (base << 8) | head[12 + i];
        end = (end << 8) | head[28 + i];
      }
      flags.truncated = base <= size && end > size - base && end != ~std::uint64_t{0};
    }
    if (flags.write || flags.swmr_write || flags.truncated) out = flags;
    break;
  }
  std::fclose(f);
  return out;
}

void File::flush() {
  // The error names the file on disk (a File's own path is its root group, "/"). Its name is taken
  // before the flush: any HDF5 call after a failure would clear the error stack that holds the cause.
  char name[4096] = {};
  const ssize_t length = H5Fget_name(id(), name, sizeof name);
  check_status(H5Fflush(id(), H5F_SCOPE_GLOBAL), "H5Fflush", length > 0 ? std::string(name) : path_);
  // Return HDF5's free-listed blocks (e.g. compressed chunks, each of its own size) to the heap,
  // so that a long run's memory does not creep.
  H5garbage_collect();
}
bool File::opened_elsewhere() const {
  const ssize_t files = H5Fget_obj_count(id(), H5F_OBJ_FILE);
  return files > 1;
}

void File::start_swmr_write() { check_status(H5Fstart_swmr_write(id()), "H5Fstart_swmr_write", where(path_)); }
void File::close() { handle_.reset(); }

}  // namespace normdyn::h5
