#pragma once
// TOML text of scalar values, shared by the two readers of TOML (config.cpp, sweep.cpp) so that a
// configuration written back (`/parameters@config_toml`, sweep points) reads as the same values.
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

namespace normdyn::toml_text {

// A float in its shortest round-trip form, always a TOML float ("2.0", not "2"; nan, inf, -inf).
inline std::string float_text(double v) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string text(buffer, end);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// A basic TOML string with every character that needs it escaped.
inline std::string string_text(std::string_view v) {
  std::string out = "\"";
  for (const char ch : v) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(ch));
          out += esc;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

}  // namespace normdyn::toml_text
