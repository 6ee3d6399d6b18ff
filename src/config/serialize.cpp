// The resolved configuration written back: TOML text, the list of values, the reference.
#include "config/config_internal.hpp"
#include "normdyn/utf8.hpp"

namespace normdyn::config_internal {

// Shortest text that parses back to the same double (std::to_chars), always with a decimal point
// or exponent so that TOML reads it as a float.
using toml_text::float_text;
using toml_text::string_text;

std::string toml_value(const ConfigScalar& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>)
          return float_text(v);
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>)
          return string_text(v);
        else {
          std::string out = "[";
          for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + float_text(v[i]);
          return out + "]";
        }
      },
      value);
}

}  // namespace normdyn::config_internal

namespace normdyn {

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = toml_text::utf8_sequence_length(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string to_toml(const RunConfig& c) {
  std::string out;
  std::string section;
  for (const auto& [key, value] : config_values(c)) {
    const std::string s = section_of(key);
    if (s != section) {
      out += (section.empty() ? "[" : "\n[") + s + "]\n";
      section = s;
    }
    out += name_of(key) + " = " + toml_value(value) + "\n";
  }
  for (const UserTermSpec& t : c.terms) {
    if (t.kind != "library") continue;  // given with the run: recorded beside the text
    out += "\n[[terms]]\nname = " + string_text(t.name) + "\nlibrary = " + string_text(t.library.string()) +
           "\nsymbol = " + string_text(t.symbol) + "\nrows = " + (t.rows ? "true" : "false") + "\n";
    if (!t.digest.empty()) out += "digest = " + string_text(t.digest) + "\n";
    if (!t.numbers.empty()) {
      out += "params = {";
      for (std::size_t i = 0; i < t.numbers.size(); ++i)
        out += (i ? ", " : " ") + string_text(t.numbers[i].first) + " = " + float_text(t.numbers[i].second);
      out += " }\n";
    }
  }
  return out;
}

std::vector<std::pair<std::string, ConfigScalar>> config_values(const RunConfig& c) {
  std::vector<std::pair<std::string, ConfigScalar>> out;
  for (const auto& k : keys()) {
    if (!k.why_not(c).empty()) continue;
    if (auto v = k.value(c)) out.emplace_back(k.path, std::move(*v));
  }
  return out;
}

std::vector<ConfigKeyDoc> config_reference() {
  // Defaults of scheme parameters come from the first scheme that has them.
  std::map<std::string, std::string> defaults;
  for (const auto& [key, value] : config_values(RunConfig{})) defaults[key] = toml_value(value);
  for_each_scheme([&](auto scheme) {
    RunConfig c;
    c.model.scheme = scheme;
    for (const auto& [key, value] : config_values(c)) defaults.emplace(key, toml_value(value));
  });
  std::vector<ConfigKeyDoc> out;
  for (const auto& k : keys())
    out.push_back({k.path, k.type,
                   !k.default_text.empty()  ? k.default_text
                   : defaults.count(k.path) ? defaults[k.path]
                                            : "",
                   k.doc});
  return out;
}

}  // namespace normdyn
