#include "normdyn/studies/output.hpp"

#include <fstream>
#include <system_error>
#include <unistd.h>

#include "normdyn/errors.hpp"

namespace normdyn::studies {

void write_new_file(const std::filesystem::path& path, const std::string& text, bool force) {
  std::error_code ec;
  if (!force && std::filesystem::exists(path, ec))
    throw IoError(path.string() + ": exists; remove it or choose another name (or --force)");
  const std::filesystem::path staging = path.string() + ".part" + std::to_string(::getpid());
  {
    std::ofstream out(staging, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(staging, ec);
      throw IoError(path.string() + ": cannot write");
    }
  }
  std::filesystem::rename(staging, path, ec);
  if (ec) {
    std::filesystem::remove(staging, ec);
    throw IoError(path.string() + ": cannot write (" + ec.message() + ")");
  }
}

}  // namespace normdyn::studies
