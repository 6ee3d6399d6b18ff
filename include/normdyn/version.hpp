#pragma once
// Version and provenance of this build, recorded in every output file.
#include <string_view>

namespace normdyn {
std::string_view version() noexcept;     // semantic version of the project
std::string_view revision() noexcept;    // git commit, with "-dirty" for uncommitted changes
std::string_view compiler() noexcept;    // compiler id and version
std::string_view build_type() noexcept;  // CMake build type
}  // namespace normdyn
