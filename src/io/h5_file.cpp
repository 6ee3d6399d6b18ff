// The HDF5 wrapper: files, their creation, opening (SWMR), signature and unfinished sessions.
#include "io/h5_internal.hpp"

namespace normdyn::h5 {

// ---- File
File File::create(const std::filesystem::path& path, CreateMode mode, bool latest_format) {
  silence_error_stack();
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", path.string()), Handle::Kind::plist);
  // SWMR needs the 1.10 file format; h5py 3 reads it.
  if (latest_format) H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  bound_metadata_cache(fapl.get(), path.string());
  Handle fcpl(check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate", path.string()), Handle::Kind::plist);
  const hid_t id =
      H5Fcreate(path.c_str(), mode == CreateMode::exclusive ? H5F_ACC_EXCL : H5F_ACC_TRUNC, fcpl.get(), fapl.get());
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
  for (std::uintmax_t offset = 0; !found && offset + sizeof kSignature <= size;
       offset = offset == 0 ? 512 : 2 * offset) {
    unsigned char head[sizeof kSignature] = {};
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fread(head, 1, sizeof head, f) != sizeof head)
      break;
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
