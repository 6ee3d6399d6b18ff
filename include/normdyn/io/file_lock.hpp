#pragma once
// One writer per file. Every process that writes a file normdyn owns (a run file, an observables
// file) holds its writer lock for as long as it may write: an advisory flock(2) on the lock file
// FILE.lock beside it, which records the holder (pid, host, start time, command). The kernel drops
// the lock when the process ends, however it ends, so a killed writer never leaves a stale lock; the
// lock file is removed by the holder on a clean release and reused otherwise.
//
// The lock is a sibling file rather than a lock on the data file itself because HDF5 takes and
// drops flock(2) locks of its own on the data file (SWMR writers release theirs), and POSIX record
// locks on the data file would be dropped whenever HDF5 closes one of its descriptors.
#include <filesystem>
#include <optional>
#include <string>

namespace normdyn {

class WriterLock {
 public:
  // Takes the lock of `file` without waiting; throws IoError naming the holder if another process
  // holds it.
  static WriterLock acquire(const std::filesystem::path& file);
  // As acquire(), but nothing when another process holds the lock.
  static std::optional<WriterLock> try_acquire(const std::filesystem::path& file);
  // Whether a live process holds the lock of `file` (creates nothing).
  static bool held(const std::filesystem::path& file);
  // FILE.lock, beside the file its path resolves to.
  static std::filesystem::path lock_path(const std::filesystem::path& file);

  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();

 private:
  WriterLock(int fd, std::filesystem::path lock) : fd_(fd), lock_(std::move(lock)) {}
  void release() noexcept;
  int fd_ = -1;
  std::filesystem::path lock_;
};

// What the lock file of a held lock says about its holder ("pid 123 on host, since ...: command").
std::string lock_holder(const std::filesystem::path& file);

}  // namespace normdyn
