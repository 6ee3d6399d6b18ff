#include "normdyn/io/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "normdyn/errors.hpp"

namespace normdyn {
namespace {

// An input of this kind is a few kilobytes; anything near this is not one (e.g. /dev/zero).
constexpr std::size_t kMaxTextBytes = std::size_t{4} << 20;

// Reads at most kMaxTextBytes from `fd` (a regular file or standard input).
std::string read_capped(int fd, const std::string& name, const std::string& noun) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(name + ": cannot read the " + noun + ": " + std::strerror(errno));
    }
    if (got == 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > kMaxTextBytes)
      throw InputError(name, "larger than " + std::to_string(kMaxTextBytes >> 20) + " MiB: not a " + noun);
  }
}

}  // namespace

std::string read_text_file(const std::filesystem::path& file, const std::string& key, const std::string& noun) {
  if (file == "-") return read_capped(STDIN_FILENO, "standard input", noun);
  // The key is often the file's own name: then it is not said twice.
  const std::string named = key == file.string() ? "" : file.string() + ": ";
  // Non-blocking, so that a FIFO cannot hold the open; only regular files are read.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw InputError(key, named + "no such " + noun);
    throw IoError(file.string() + ": cannot read the " + noun + ": " + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(file.string() + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputError(key, named + (S_ISDIR(st.st_mode) ? "is a directory, not a " + noun
                                                       : "not a regular file (a FIFO or device), not a " + noun));
  if (static_cast<std::uint64_t>(st.st_size) > kMaxTextBytes)
    throw InputError(key, named + "larger than " + std::to_string(kMaxTextBytes >> 20) + " MiB: not a " + noun);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return read_capped(fd, key, noun);
}

}  // namespace normdyn
