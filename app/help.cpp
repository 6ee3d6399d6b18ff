#include "help.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <map>
#include <sstream>

#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"

namespace normdyn::app {
namespace {

// One example per command, by its path. A command added without an example is listed by
// add_examples (and fails the test that runs `normdyn help` on every command).
const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> table{
      {"run", "normdyn run data/configs/default.toml -o runs/post.h5 --set model.scheme=post"},
      {"list-schemes", "normdyn list-schemes"},
      {"list-attention", "normdyn list-attention"},
      {"config-reference", "normdyn config-reference --toml > my.toml"},
      {"verify", "normdyn verify runs/post.h5"},
      {"analyze", "normdyn analyze runs/post.h5 --law exponential"},
      {"plot", "normdyn plot runs/post.h5 --kind decay --format pdf -o figures"},
      {"animate", "normdyn animate runs/post.h5 -o post.mp4"},
      {"study", "normdyn study symmetric --n 256 --beta 5 --t-end 50"},
      {"study theorem-4.2", "normdyn study theorem-4.2 --n 64,256 --d 32,128 --seeds 5"},
      {"study symmetric", "normdyn study symmetric --n 256 --beta 5 --t-end 50 --json symmetric.json"},
      {"study equiangular", "normdyn study equiangular --n 8 --beta 2 --rho0 0.5"},
      {"reproduce", "normdyn reproduce --quick -o reproduction"},
      {"sweep", "normdyn sweep data/configs/sweep_beta_circle.toml -o runs/beta -j 2"},
      {"ensemble", "normdyn ensemble data/configs/sweep_beta_circle.toml -o runs/beta.h5"},
      {"help", "normdyn help study symmetric"},
  };
  return table;
}

void collect(CLI::App& app, const std::string& prefix, std::vector<std::string>& missing) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    const auto found = examples().find(path);
    if (found == examples().end())
      missing.push_back(path);
    else
      sub->footer("Example:\n  " + found->second);
    collect(*sub, path, missing);
  }
}

// The column where a line's description starts: after the first run of two spaces that follows
// text; none (npos) for a line of plain text.
std::size_t description_column(const std::string& line) {
  const std::size_t text = line.find_first_not_of(' ');
  if (text == std::string::npos) return std::string::npos;
  const std::size_t gap = line.find("  ", text);
  if (gap == std::string::npos) return std::string::npos;
  return line.find_first_not_of(' ', gap);
}

void wrap_line(const std::string& line, std::size_t width, std::string& out) {
  if (line.size() <= width) {
    out += line + '\n';
    return;
  }
  const std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) {
    out += '\n';
    return;
  }
  // An option's name stays in front; its description continues under itself.
  const std::size_t column = description_column(line);
  const bool aligned = column != std::string::npos && column <= width / 2;
  // A line of plain text continues two columns in, a description already indented under itself.
  const std::size_t indent = aligned ? column : lead == 0 ? 2 : lead;
  std::string current = line.substr(0, aligned ? column : lead);
  std::size_t pos = current.size();
  // The words of the rest, each placed on the current line if it fits.
  bool first_word = true;
  while (pos < line.size()) {
    const std::size_t start = line.find_first_not_of(' ', pos);
    if (start == std::string::npos) break;
    std::size_t end = line.find(' ', start);
    if (end == std::string::npos) end = line.size();
    const std::string word = line.substr(start, end - start);
    const std::size_t spaces = first_word ? start - pos : 1;
    if (!first_word && current.size() + spaces + word.size() > width) {
      out += current + '\n';
      current = std::string(indent, ' ') + word;
    } else {
      current += std::string(spaces, ' ') + word;
    }
    first_word = false;
    pos = end;
  }
  out += current + '\n';
}

}  // namespace

std::size_t help_width() {
  winsize size{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 40)
    return size.ws_col;
  return 80;
}

std::string wrap_help(const std::string& text, std::size_t width) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) wrap_line(line, width, out);
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

std::string WrappingFormatter::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
  return wrap_help(CLI::Formatter::make_help(app, std::move(name), mode), width_);
}

std::vector<std::string> add_examples(CLI::App& cli) {
  std::vector<std::string> missing;
  collect(cli, "", missing);
  return missing;
}

const CLI::App* find_command(const CLI::App& cli, const std::vector<std::string>& words) {
  const CLI::App* current = &cli;
  std::string path;
  for (const std::string& word : words) {
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == word) next = sub;
      names.push_back(sub->get_name());
    }
    if (!next) {
      std::string message = "unknown command '" + (path.empty() ? word : path + " " + word) + "'";
      if (names.empty())
        message = "'" + path + "' has no subcommands";
      else if (const auto close = did_you_mean(word, names))
        message += "; did you mean '" + *close + "'?";
      throw InputError("help", message);
    }
    path += (path.empty() ? "" : " ") + word;
    current = next;
  }
  return current;
}

}  // namespace normdyn::app
