// libFuzzer harness for the configuration parser. Any input must either parse into a
// configuration whose resolved TOML parses back to the same configuration, or be rejected with an
// InputError; anything else (a crash, a sanitizer report, another exception) is a bug.
//
// Lines of the input that start with "#set " are also passed as --set overrides, so that the
// override path is fuzzed too.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string toml;
  std::vector<std::string> overrides;
  std::size_t start = 0;
  while (start <= input.size()) {
    const std::size_t end = input.find('\n', start);
    const std::string_view line =
        input.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (line.substr(0, 5) == "#set ")
      overrides.emplace_back(line.substr(5));
    else
      toml.append(line).append("\n");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  try {
    const normdyn::RunConfig config = normdyn::parse_config(toml, "fuzz.toml", overrides);
    const std::string resolved = normdyn::to_toml(config);
    const normdyn::RunConfig again = normdyn::parse_config(resolved, "resolved.toml");
    if (normdyn::to_toml(again) != resolved) std::abort();
  } catch (const normdyn::InputError&) {
    // Rejected input: the expected outcome for most of what a fuzzer produces.
  }
  return 0;
}
