#pragma once
// Text shared by the two readers of TOML (config.cpp, sweep.cpp): TOML text of scalar values, so
// that a configuration written back (`/parameters@config_toml`, sweep points) reads as the same
// values, and the pieces of their messages.
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace normdyn::toml_text {

// The shortest text that reads back as the same double, for messages: 0.3, not 0.29999999999999999.
inline std::string number_text(double v) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, end);
}

// A float in its shortest round-trip form, always a TOML float ("2.0", not "2"; nan, inf, -inf).
inline std::string float_text(double v) {
  std::string text = number_text(v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

inline std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

inline std::string join(const std::vector<std::string>& words, std::string_view sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) out += sep;
    out += words[i];
  }
  return out;
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
