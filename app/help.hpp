#pragma once
// Help texts: wrapped to the terminal's width (80 columns when standard output is not a terminal),
// one example per command, and `normdyn help COMMAND [SUBCOMMAND]`.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace normdyn::app {

// The width help is wrapped to: the terminal's columns when standard output is one, else 80.
std::size_t help_width();

// `text` with every line longer than `width` broken at spaces; a continuation is indented to the
// column where the line's description starts (after a run of two spaces), as CLI11 aligns them.
std::string wrap_help(const std::string& text, std::size_t width);

// CLI11's formatter, wrapping every help it makes (set on the top command before its subcommands
// are added, which inherit it).
class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(std::size_t width) : width_(width) {}
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;

 private:
  std::size_t width_;
};

// Sets each command's footer to its example (the table in help.cpp). Returns the command paths
// ("study symmetric") that have none, which the tests require to be empty.
std::vector<std::string> add_examples(CLI::App& cli);

// The command `words` names under `cli` ("study", "symmetric"); throws InputError("help", ...)
// naming the first word that is not a command, with the closest one.
const CLI::App* find_command(const CLI::App& cli, const std::vector<std::string>& words);

}  // namespace normdyn::app
