#include "normdyn/io/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "normdyn/errors.hpp"

namespace normdyn {
namespace {

std::string bound_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

[[noreturn]] void too_large(const std::string& key, const std::string& named, std::uint64_t max_bytes,
                            const std::string& noun) {
  throw InputError(key, named + "larger than " + bound_text(max_bytes) + ": not a " + noun);
}

// Reads at most max_bytes from `fd` (a regular file or standard input).
std::string read_capped(int fd, const std::string& name, const std::string& key, const std::string& named,
                        const std::string& noun, std::uint64_t max_bytes, std::uint64_t expected) {
  std::string text;
  if (expected > 0 && expected <= max_bytes) text.reserve(static_cast<std::size_t>(expected));
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(name + ": cannot read the " + noun + ": " + std::strerror(errno));
    }
    if (got == 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > max_bytes) too_large(key, named, max_bytes, noun);
  }
}

// The key is often the file's own name: then it is not said twice.
std::string named_prefix(const std::filesystem::path& file, const std::string& key) {
  return key == file.string() ? "" : file.string() + ": ";
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& file, const std::string& key, const std::string& noun,
                     std::uint64_t max_bytes)
    : max_bytes_(max_bytes), name_(file.string()), key_(key), noun_(noun) {
  const std::string named = named_prefix(file, key);
  // Non-blocking, so that a FIFO cannot hold the open; only regular files are read.
  fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    const int err = errno;
    if (err == ENOENT) throw InputError(key, named + "no such " + noun);
    throw IoError(file.string() + ": cannot read the " + noun + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw IoError(file.string() + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(key, named + (S_ISDIR(st.st_mode) ? "is a directory, not a " + noun
                                                       : "not a regular file (a FIFO or device), not a " + noun));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ > max_bytes_) {
    ::close(fd_);
    too_large(key, named, max_bytes_, noun);
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::read_all() {
  return read_capped(fd_, name_, key_, key_ == name_ ? "" : name_ + ": ", noun_, max_bytes_, size_);
}

void require_input_file(const std::filesystem::path& file, const std::string& key, const std::string& noun,
                        std::uint64_t max_bytes) {
  InputFile checked(file, key, noun, max_bytes);
}

std::string read_text_file(const std::filesystem::path& file, const std::string& key, const std::string& noun,
                           std::uint64_t max_bytes) {
  if (file == "-") return read_capped(STDIN_FILENO, "standard input", "standard input", "", noun, max_bytes, 0);
  return InputFile(file, key, noun, max_bytes).read_all();
}

}  // namespace normdyn
