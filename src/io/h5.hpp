#pragma once
// The HDF5 layer: every HDF5 C call of normdyn is made in h5.cpp, once, and a failure becomes an
// IoError that names the call and the object. Only src/io/ includes this header; the rest of the
// program sees the typed readers and writers of include/normdyn/io/.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace normdyn::h5 {

using hid = std::int64_t;  // hid_t, without dragging hdf5.h into users of this header

// Owns one HDF5 identifier and closes it with the right H5*close.
class Handle {
 public:
  enum class Kind { none, file, group, dataset, dataspace, datatype, attribute, plist };
  Handle() = default;
  Handle(hid id, Kind kind) : id_(id), kind_(kind) {}
  Handle(Handle&& o) noexcept : id_(o.id_), kind_(o.kind_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() noexcept;
  hid get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid id_ = -1;
  Kind kind_ = Kind::none;
};

enum class ElementType { f64, i64, string };

class Dataset;
class Group;

// Attributes on a file, group or dataset.
class Object {
 public:
  const std::string& path() const { return path_; }
  // The file on disk, as it was opened or created ("" for an object of no file).
  const std::string& file_name() const { return file_; }
  hid id() const { return handle_.get(); }

  void set_attribute(const std::string& name, double value);
  void set_attribute(const std::string& name, std::int64_t value);
  void set_attribute(const std::string& name, const std::string& value);
  void set_attribute(const std::string& name, const char* value) { set_attribute(name, std::string(value)); }
  void set_attribute(const std::string& name, std::span<const double> values);
  void set_attribute(const std::string& name, std::span<const std::int64_t> values);
  void set_attribute(const std::string& name, const std::vector<std::string>& values);
  // A scalar fixed-length ASCII string, the type H5MD prescribes for `unit` (h5py reads it as bytes,
  // h5netcdf and attribute_string as text).
  void set_ascii_attribute(const std::string& name, const std::string& value);

  bool has_attribute(const std::string& name) const;
  std::vector<std::string> attribute_names() const;
  std::optional<double> attribute_double(const std::string& name) const;
  std::optional<std::int64_t> attribute_int(const std::string& name) const;
  std::optional<std::string> attribute_string(const std::string& name) const;
  std::vector<double> attribute_doubles(const std::string& name) const;
  std::vector<std::int64_t> attribute_ints(const std::string& name) const;
  // The class of a scalar attribute's values (integer, string, or else floating point).
  ElementType attribute_type(const std::string& name) const;

 protected:
  Object(Handle h, std::string path, std::string file = {})
      : handle_(std::move(h)), path_(std::move(path)), file_(std::move(file)) {}
  // An object path as errors name it: with its file, so that a message about an HDF5 object says
  // which file it is in ("run.h5:/particles/tokens").
  std::string where(const std::string& object_path) const {
    return file_.empty() ? object_path : file_ + ":" + object_path;
  }
  Handle handle_;
  std::string path_;
  std::string file_;
};

struct ChunkedLayout {
  std::vector<std::uint64_t> inner_dims;  // shape of one frame ({} for scalars per frame)
  std::uint64_t chunk_frames = 1;         // frames per chunk
  int deflate_level = 0;                  // 0: no compression; 1..9: shuffle + deflate
};

class Group : public Object {
 public:
  Group create_group(const std::string& name);
  Group open_group(const std::string& name) const;
  Group require_group(const std::string& name);
  bool contains(const std::string& name) const;  // a link of that name exists (nested paths allowed)
  // What the link `name` (one component, a member of this group) is, without following it: a hard
  // link says what it points to; a soft or external link is reported as such (never resolved, so a
  // soft-link loop or a link to another file is seen, not followed).
  enum class Link { none, group, dataset, other, soft, external };
  Link link(const std::string& name) const;
  std::vector<std::string> member_names() const;

  // Extendable along the first axis, starting empty: [0, inner_dims...].
  Dataset create_extendable(const std::string& name, ElementType type, const ChunkedLayout& layout);
  // Fixed-size datasets written at once.
  // deflate_level 1..9: stored in chunks of whole rows of the first axis (about 64 Ki values), with
  // shuffle + deflate.
  Dataset create_dataset(const std::string& name, std::span<const std::uint64_t> dims, std::span<const double> data,
                         int deflate_level = 0);
  Dataset create_dataset(const std::string& name, std::span<const std::uint64_t> dims,
                         std::span<const std::int64_t> data, int deflate_level = 0);
  Dataset create_string_dataset(const std::string& name, const std::string& value);
  // A 1-D dataset of variable-length UTF-8 strings (h5py: .asstr()[()]).
  Dataset create_string_dataset(const std::string& name, const std::vector<std::string>& values);
  Dataset open_dataset(const std::string& name) const;
  // A netCDF-4 dimension without a coordinate variable: an empty 1-D dimension scale of `size`
  // elements whose NAME says so, so that h5netcdf (xarray) names an axis `name` after it without
  // listing a variable. Attach it to the axes it names with Dataset::attach_scale.
  Dataset create_dimension(const std::string& name, std::uint64_t size);
  // A soft link `name` → `target` (an absolute path), as H5MD uses for shared time/step datasets.
  void create_soft_link(const std::string& name, const std::string& target);
  // Unlinks `name` (a group, dataset or link) if it exists; returns whether it existed. HDF5 does
  // not reclaim the space inside the file (h5repack does).
  bool remove(const std::string& name);

 protected:
  Group(Handle h, std::string path, std::string file) : Object(std::move(h), std::move(path), std::move(file)) {}

 private:
  Dataset create_fixed(const std::string& name, std::span<const std::uint64_t> dims, hid element_type,
                       int deflate_level);
  // Every dataset is created here, intermediate groups included; dcpl/dapl 0 (H5P_DEFAULT) for the defaults.
  Dataset create_linked(const std::string& name, hid type, hid space, hid dcpl = 0, hid dapl = 0);
  bool through_dataset(const std::string& partial) const;
};

class Dataset : public Object {
 public:
  Dataset() : Object(Handle(), "", "") {}
  std::vector<std::uint64_t> shape() const;
  ElementType element_type() const;

  // Appends `frames` frames along the first axis.
  void append(std::span<const double> values, std::uint64_t frames = 1);
  void append(std::span<const std::int64_t> values, std::uint64_t frames = 1);
  // Shrinks or grows the first axis (e.g. to drop frames after a resume point).
  void resize_frames(std::uint64_t frames);

  std::vector<double> read_doubles() const;
  std::vector<std::int64_t> read_ints() const;
  // Frames [first, first + count) of an N-D integer dataset, flattened.
  std::vector<std::int64_t> read_int_frames(std::uint64_t first, std::uint64_t count) const;
  std::string read_string() const;
  // Every element of a 1-D string dataset.
  std::vector<std::string> read_strings() const;
  // Frames [first, first + count) of an N-D double dataset, flattened.
  std::vector<double> read_frames(std::uint64_t first, std::uint64_t count) const;
  // Overwrites the whole (fixed-size) dataset.
  void write(std::span<const double> values);
  void write(std::span<const std::int64_t> values);
  // Re-reads metadata written by a SWMR writer.
  void refresh();
  void flush();
  // Attaches HDF5 dimension scales: `scale` becomes the scale of axis `axis` of this dataset.
  // Attach before SWMR mode: attaching writes attributes on both datasets. Appends and resizes
  // later leave the attachment intact.
  void attach_scale(const Dataset& scale, unsigned axis);
  void make_scale(const std::string& dimension_name);
  // A dimension made by Group::create_dimension (a scale that holds no data of its own).
  bool is_dimension_only() const;
  // Whether this dataset is a dimension scale, and the names of the scales attached to each axis
  // ("" for an axis without one).
  bool is_scale() const;
  std::vector<std::string> scale_names() const;
  void set_dimension_label(unsigned axis, const std::string& label);

 private:
  Dataset(Handle h, std::string path, std::string file) : Object(std::move(h), std::move(path), std::move(file)) {}
  friend class Group;
  template <class T>
  void append_impl(std::span<const T> values, std::uint64_t frames);
  template <class T>
  std::vector<T> read_frames_as(std::uint64_t first, std::uint64_t count) const;
};

enum class OpenMode {
  read_only,
  read_write,
  swmr_read,
  // read-write, clearing the "open for writing" flags that a killed SWMR writer leaves behind
  // (what `h5clear -s` does)
  read_write_recover,
};
enum class CreateMode { exclusive, truncate };

struct OpenOptions {
  unsigned metadata_read_attempts = 0;  // SWMR reads: attempts per metadata read (0: HDF5's 100)
  bool file_locking = true;             // HDF5's own flock(2) of the file (off where a WriterLock rules)
};

class File : public Group {
 public:
  File() : Group(Handle(), "", "") {}
  static File create(const std::filesystem::path& path, CreateMode mode, bool latest_format = true);
  // Only regular files: anything else is an IoError before HDF5 sees it.
  static File open(const std::filesystem::path& path, OpenMode mode, const OpenOptions& options = {});
  static bool is_hdf5(const std::filesystem::path& path);
  // Whether the file holds HDF5's superblock signature where HDF5 looks for it: it was written as an
  // HDF5 file, even if HDF5 cannot read it any more.
  static bool has_signature(const std::filesystem::path& path);
  // A writing session left unfinished (its process killed): the superblock's file consistency flags
  // (version 3 superblock) hold the write flag, with the SWMR flag if the session wrote in SWMR
  // mode; or its last write failed and the file ends before the end the superblock (version 2 or
  // 3) records. Nothing for an older superblock, an unreadable file, or a file a closed session left
  // consistent.
  struct SessionFlags {
    bool write = false, swmr_write = false;
    // The superblock's end of file lies beyond the file's last byte: a write that extended the
    // file failed (disk full, a file-size limit) and HDF5 refuses the file until its end is restored.
    bool truncated = false;
  };
  static std::optional<SessionFlags> unfinished_session(const std::filesystem::path& path);

  void flush();
  // Whether this process holds the file open through another identifier too (HDF5 then shares one
  // cache of its metadata between them).
  bool opened_elsewhere() const;
  // Single-writer/multiple-reader mode: readers may open the file while it is written.
  void start_swmr_write();
  void close();

 private:
  File(Handle h, std::string path, std::string file) : Group(std::move(h), std::move(path), std::move(file)) {}
};

// Silences HDF5's automatic error stack printing (errors become exceptions instead).
void silence_error_stack();

// Sets the metadata read attempts of a SWMR reader on a file-access property list made by another
// user of this process's HDF5 library (h5py's, through the Python package); its id as hid_t.
void set_metadata_read_attempts(std::int64_t file_access_list, unsigned attempts);

}  // namespace normdyn::h5
