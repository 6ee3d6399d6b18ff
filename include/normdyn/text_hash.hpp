#pragma once
// The 64-bit FNV-1a hash of a text, to recognize a text again: a sweep's repeated points, an
// ensemble's members, a run file's stored configuration. Not a cryptographic digest: it detects
// accidents and edits, not a forger who recomputes it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace normdyn {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;

// FNV-1a continued over `bytes` bytes from the hash `h` (kFnvOffset to start), so that several
// pieces hash as their concatenation.
inline std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t h = kFnvOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

inline std::uint64_t text_hash(std::string_view text) { return fnv1a(text.data(), text.size()); }

// A hash as 16 hexadecimal digits.
inline std::string hash_hex(std::uint64_t hash) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

inline std::string text_hash_hex(std::string_view text) { return hash_hex(text_hash(text)); }

}  // namespace normdyn
