#pragma once
// The 64-bit FNV-1a hash of a text, to recognize a text again: a sweep's repeated points, an
// ensemble's members, a run file's stored configuration. Not a cryptographic digest: it detects
// accidents and edits, not a forger who recomputes it.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace normdyn {

inline std::uint64_t text_hash(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// The hash as 16 hexadecimal digits.
inline std::string text_hash_hex(std::string_view text) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(text_hash(text)));
  return hex;
}

}  // namespace normdyn
