#pragma once
// The text of a small input file: a configuration, a sweep file, a sweep's base. Only a regular
// file is read (opened without blocking, so a FIFO cannot hold the open; a device such as
// /dev/zero would be read without end), or standard input for "-", and at most 4 MiB either way.
#include <filesystem>
#include <string>

namespace normdyn {

// InputError(key) for a missing file, a directory, a FIFO or device, or more than 4 MiB; IoError
// for a file that cannot be read. `noun` names the file in the messages ("configuration file").
std::string read_text_file(const std::filesystem::path& file, const std::string& key, const std::string& noun);

}  // namespace normdyn
