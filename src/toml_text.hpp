#pragma once
// Text shared by the two readers of TOML (src/config/, sweep.cpp): TOML text of scalar values, so
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

// The length of the well-formed UTF-8 sequence at the start of `v` (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), 0 if there is none.
inline std::size_t utf8_sequence_length(std::string_view v) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(v[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf)
    length = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    if (b0 == 0xe0) low = 0xa0;
    if (b0 == 0xed) high = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    if (b0 == 0xf0) low = 0x90;
    if (b0 == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (v.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  return length;
}

// A basic TOML string with every character that needs it escaped. TOML text is UTF-8: a byte that
// is not part of a well-formed sequence (a file name of another encoding, which the OS accepts)
// is written as U+FFFD, so that the text always reads back. Only output.path can hold one (every
// other string comes from TOML text; `run --continue` refuses an input whose name would become
// init.file, is_utf8), and the stored output.path is never read back as a path: a resume writes to
// the file it is given.
inline std::string string_text(std::string_view v) {
  std::string out = "\"";
  for (std::size_t i = 0; i < v.size();) {
    const char ch = v[i];
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(ch));
          out += esc;
        } else if (const std::size_t length = utf8_sequence_length(v.substr(i)); length == 0) {
          out += "\\ufffd";
        } else {
          out.append(v.substr(i, length));
          i += length;
          continue;
        }
    }
    ++i;
  }
  return out + "\"";
}

}  // namespace normdyn::toml_text
