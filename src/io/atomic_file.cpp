#include "normdyn/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "normdyn/errors.hpp"

namespace normdyn {
namespace {

// Without the fsync a crash after the rename could leave an empty file under the old name.
void sync_file(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(p.string() + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw IoError(p.string() + ": cannot write: " + std::strerror(err));
}

// std::filesystem::copy_file reports a failed write (a full disk, a file-size limit) as EIO; this
// names the cause.
void copy_contents(const std::filesystem::path& from, const std::filesystem::path& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw IoError(from.string() + ": " + std::strerror(errno));
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    const int err = errno;
    ::close(in);
    throw IoError(to.string() + ": " + std::strerror(err));
  }
  std::vector<char> buffer(1 << 16);
  int err = 0;
  for (;;) {
    const ssize_t got = ::read(in, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) err = errno;
      break;
    }
    for (ssize_t done = 0; done < got && err == 0;) {
      const ssize_t put = ::write(out, buffer.data() + done, static_cast<std::size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0)
        err = errno;
      else
        done += put;
    }
    if (err != 0) break;
  }
  ::close(in);
  if (::close(out) != 0 && err == 0) err = errno;
  if (err != 0) throw IoError(to.string() + ": cannot write: " + std::strerror(err));
}

}  // namespace

void replace_file_atomically(const std::filesystem::path& target,
                             const std::function<void(const std::filesystem::path& staging)>& write, bool copy_existing,
                             const std::function<void(const std::filesystem::path&)>& on_staging) {
  namespace fs = std::filesystem;
  fs::path staging = target;
  staging += ".normdyn-" + std::to_string(::getpid()) + ".tmp";
  if (on_staging) on_staging(staging);
  auto discard = [&] {
    std::error_code ec;
    fs::remove(staging, ec);
    if (on_staging) on_staging({});
  };
  try {
    std::error_code ec;
    fs::remove(staging, ec);
    if (copy_existing && fs::exists(target, ec)) copy_contents(target, staging);
    write(staging);
    sync_file(staging);
    if (::rename(staging.c_str(), target.c_str()) != 0)
      throw IoError(target.string() + ": cannot move the new file into place: " + std::strerror(errno));
  } catch (const fs::filesystem_error& e) {
    discard();
    throw IoError(target.string() + ": " + e.code().message());
  } catch (...) {
    discard();
    throw;
  }
  if (on_staging) on_staging({});
}

bool is_special_entry(const std::filesystem::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ec),
                              cb = std::filesystem::weakly_canonical(b, ec);
  return !ca.empty() && ca == cb;
}

}  // namespace normdyn
