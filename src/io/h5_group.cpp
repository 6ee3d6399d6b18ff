// The HDF5 wrapper: groups, their links and the datasets they create.
#include "io/h5_internal.hpp"

namespace normdyn::h5 {

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
  return Group(Handle(check(H5Gopen2(id(), name.c_str(), H5P_DEFAULT), "H5Gopen", where(p)), Handle::Kind::group), p,
               file_);
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
        throw IoError("HDF5 H5Lexists failed for " + where(child_path(path_, partial)) +
                      (cause.empty() ? "" : ": " + cause));
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
  // Chunks of about 2^16 elements: the last dimensions whole while they fit, then as many of the
  // next as fit, one of the others. A chunk is compressed whole (HDF5 holds it and its filtered
  // copies at once): cut only along the first dimension, a chunk of an ensemble's member figures
  // ([group, member, time], one group per chunk) took 8 MB and the write some 20 MB more.
  std::vector<hsize_t> chunk(hd.size(), 1);
  hsize_t inner = 1;
  for (std::size_t k = hd.size(); k-- > 0;) {
    chunk[k] = std::clamp<hsize_t>((hsize_t{1} << 16) / inner, 1, hd[k]);
    if (chunk[k] < hd[k]) break;
    inner *= hd[k];
  }
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
  return Dataset(
      Handle(check(H5Dcreate2(id(), name.c_str(), type, space, lcpl.get(), dcpl, dapl), "H5Dcreate", where(p)),
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
    check_status(H5Dwrite(ds.id(), type.get(), kWholeSpace, kWholeSpace, H5P_DEFAULT, data.data()), "H5Dwrite",
                 where(p));
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
  return Dataset(Handle(check(H5Dopen2(id(), name.c_str(), dapl.get()), "H5Dopen", where(p)), Handle::Kind::dataset), p,
                 file_);
}

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
  check_status(H5Lcreate_soft(target.c_str(), id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), "H5Lcreate_soft",
               where(p));
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

}  // namespace normdyn::h5
