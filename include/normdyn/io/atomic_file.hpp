#pragma once
// A file replaced whole, never changed in place: readers, an interrupt, a full disk or a file-size
// limit see the old file (or none) or the new one, never a part of either.
#include <filesystem>
#include <functional>

namespace normdyn {

// `write(staging)` fills a staging file beside `target` (TARGET.normdyn-PID.tmp; a copy of `target`
// when `copy_existing` and it exists), which is flushed to disk and renamed over `target`.
// `on_staging`, if given, is told the staging path before anything is written and an empty path once
// the staging file is gone, so that a signal handler can remove it. Any failure removes the staging
// file and leaves `target` as it was; file-system errors become IoError naming `target` and the
// cause.
void replace_file_atomically(const std::filesystem::path& target,
                             const std::function<void(const std::filesystem::path& staging)>& write,
                             bool copy_existing = false,
                             const std::function<void(const std::filesystem::path&)>& on_staging = {});

// Whether something that is not a regular file stands at `p` (a FIFO, a device, a directory or a
// symbolic link, which is not followed): an output is never replaced, and a side file never read,
// through such an entry.
bool is_special_entry(const std::filesystem::path& p);

// Whether two paths name the same file: the same inode, or (for a file not there yet) the same
// canonical path, so that an output is recognized as one of the command's inputs however spelled.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace normdyn
