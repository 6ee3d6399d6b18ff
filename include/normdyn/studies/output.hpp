#pragma once
// The files of the studies: written whole (a temporary file beside the target, renamed over it
// once complete), never over an existing file unless `force`.
#include <filesystem>
#include <string>

namespace normdyn::studies {

// Throws IoError if `path` exists (and not `force`) or cannot be written.
void write_new_file(const std::filesystem::path& path, const std::string& text, bool force);

}  // namespace normdyn::studies
