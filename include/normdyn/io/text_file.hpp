#pragma once
// How every input file is opened: a configuration, a sweep file and its base, an ensemble's
// journal, a sweep's records (runs/*.json), and, before HDF5 or h5py opens them, run files, indexes
// and observables files. Only a regular file is read, opened without blocking (a FIFO cannot hold
// the open, and is refused before a read could block; a device such as /dev/zero would be read
// without end), and no more than a bound stated by the caller: its size is checked before a byte is
// read, and the read stops at the bound should the file grow meanwhile. Standard input ("-") is read
// where a caller allows it, under the same bound.
#include <cstdint>
#include <filesystem>
#include <string>

namespace normdyn {

// The bound of a small text input (a configuration, a sweep file, a record): a few kilobytes in
// practice; anything near this is not one.
inline constexpr std::uint64_t kMaxTextBytes = std::uint64_t{4} << 20;
// No bound: for files read piecewise by HDF5, which need only the regular-file check.
inline constexpr std::uint64_t kUnboundedInput = ~std::uint64_t{0};

// A regular file open for reading (no O_NONBLOCK once checked), closed at the end of its scope.
class InputFile {
 public:
  // InputError(key) for a missing file, a directory, a FIFO or device, or more than `max_bytes`;
  // IoError for a file that cannot be opened. `noun` names the file in the messages ("journal").
  InputFile(const std::filesystem::path& file, const std::string& key, const std::string& noun,
            std::uint64_t max_bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::uint64_t size() const { return size_; }
  // The whole file, at most `max_bytes` (InputError beyond).
  std::string read_all();

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0, max_bytes_ = 0;
  std::string name_, key_, noun_;
};

// The checks of InputFile alone, for a file another library then opens by name (HDF5, h5py).
void require_input_file(const std::filesystem::path& file, const std::string& key, const std::string& noun,
                        std::uint64_t max_bytes = kUnboundedInput);

// The text of `file` ("-": standard input), at most `max_bytes`; errors as InputFile.
std::string read_text_file(const std::filesystem::path& file, const std::string& key, const std::string& noun,
                           std::uint64_t max_bytes = kMaxTextBytes);

}  // namespace normdyn
