#include "normdyn/io/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include "normdyn/errors.hpp"

namespace normdyn {
namespace {

std::string read_fd_text(int fd) {
  std::string text;
  char buffer[512];
  ssize_t got = 0;
  ::lseek(fd, 0, SEEK_SET);
  while (text.size() < 4096 && (got = ::read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(got));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw)
    if (c == '\0') c = ' ';
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  if (raw.size() > 300) raw = raw.substr(0, 300) + "...";
  return raw;
}

std::string holder_text() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown host");
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "pid " + std::to_string(::getpid()) + " on " + host + ", since " + when + ": " + own_command_line() + "\n";
}

bool same_file(int fd, const std::filesystem::path& path) {
  struct stat a {
  }, b{};
  if (::fstat(fd, &a) != 0 || ::stat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The lock, or -1 when another process holds it (`holder` then says who).
int take(const std::filesystem::path& lock, std::string& holder) {
  // A reader probing the lock holds it for microseconds: try a few times before giving up.
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) throw IoError(lock.string() + ": cannot create the lock file: " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      holder = read_fd_text(fd);
      ::close(fd);
      if (err != EWOULDBLOCK) throw IoError(lock.string() + ": cannot lock: " + std::strerror(err));
      if (attempt >= 4) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    // The previous holder may have removed the lock file between our open and our flock.
    if (!same_file(fd, lock)) {
      ::close(fd);
      continue;
    }
    const std::string text = holder_text();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const int err = errno;
      ::close(fd);
      throw IoError(lock.string() + ": cannot write the lock file: " + std::strerror(err));
    }
    return fd;
  }
  throw IoError(lock.string() + ": the lock file keeps changing");
}

}  // namespace

std::filesystem::path WriterLock::lock_path(const std::filesystem::path& file) {
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(file, ec);
  if (ec || resolved.empty()) resolved = file;
  resolved += ".lock";
  return resolved;
}

std::optional<WriterLock> WriterLock::try_acquire(const std::filesystem::path& file) {
  const std::filesystem::path lock = lock_path(file);
  std::string holder;
  const int fd = take(lock, holder);
  if (fd < 0) return std::nullopt;
  return WriterLock(fd, lock);
}

WriterLock WriterLock::acquire(const std::filesystem::path& file) {
  const std::filesystem::path lock = lock_path(file);
  std::string holder;
  const int fd = take(lock, holder);
  if (fd < 0)
    throw IoError(file.string() + " is being written by another process (" +
                  (holder.empty() ? std::string("pid unknown") : holder) + "; lock " + lock.string() +
                  "): wait for it to end or stop it");
  return WriterLock(fd, lock);
}

bool WriterLock::held(const std::filesystem::path& file) {
  const std::filesystem::path lock = lock_path(file);
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // also drops the shared lock just taken
  return busy;
}

std::string lock_holder(const std::filesystem::path& file) {
  const int fd = ::open(WriterLock::lock_path(file).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return "";
  std::string text = read_fd_text(fd);
  ::close(fd);
  return text;
}

WriterLock::WriterLock(WriterLock&& other) noexcept : fd_(other.fd_), lock_(std::move(other.lock_)) { other.fd_ = -1; }
WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    lock_ = std::move(other.lock_);
    other.fd_ = -1;
  }
  return *this;
}
WriterLock::~WriterLock() { release(); }

void WriterLock::release() noexcept {
  if (fd_ < 0) return;
  // Removed while still held, so that a process that opened it meanwhile sees it replaced.
  if (same_file(fd_, lock_)) ::unlink(lock_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace normdyn
