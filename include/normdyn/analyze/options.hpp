#pragma once
// The options of the analysis, listed once. Each row is a flag of `normdyn analyze`
// (--cluster-epsilon) and a keyword argument of normdyn.analyze (cluster_epsilon=...): the command
// line builds its flags and help from this table, the Python package checks its keyword arguments
// against it, and docs/guide/analysis.md shows the table analyze_options_markdown() prints. A
// value is checked here, once (its type, range or choices), whoever gives it.
//
// Adding an option: a member in AnalyzeOptions (analyze.hpp) or AnalyzeRequest, and one row in
// analyze_options() (options.cpp).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "normdyn/analyze/analyze.hpp"

namespace normdyn {

// One analysis as a client asks for it: the run, the options, and where the results go.
struct AnalyzeRequest {
  std::filesystem::path run_file;                         // empty: a run in memory
  std::optional<std::filesystem::path> json;              // the report as JSON
  std::optional<std::filesystem::path> observables_file;  // else RUN.observables.h5 beside the run
  bool write_observables = true;
  bool quiet = false;           // command line: no report on stdout
  bool fail_on_check = false;   // command line: exit code 1 when a theorem check fails
  bool keyword_labels = false;  // errors name keyword arguments (json) rather than flags (--json)
  AnalyzeOptions options;

  // How errors name an option of this request: "--observables-file" or "observables_file".
  std::string label(std::string_view name) const;

  // The requests before any option: `normdyn analyze` writes the observables beside the run;
  // normdyn.analyze writes nothing unless asked (json=PATH, observables_file=PATH, no_write=False).
  static AnalyzeRequest command_line();
  static AnalyzeRequest python();
};

enum class OptionType { real, integer, flag, choice, window, path };
std::string_view to_string(OptionType t) noexcept;
enum class OptionScope {
  everywhere,    // a flag of `normdyn analyze` and a keyword of normdyn.analyze
  command_line,  // `normdyn analyze` only (printing, exit codes)
};

// real: double; integer: int64; flag: bool; choice and path: string; window: TimeWindow.
using OptionValue = std::variant<bool, std::int64_t, double, std::string, analysis::TimeWindow>;

struct AnalyzeOption {
  std::string_view name;        // the keyword; the flag is "--" + name with '-' for '_'
  std::string_view short_flag;  // e.g. "-q"; empty: none
  OptionType type;
  OptionScope scope;
  std::string_view doc;
  // real and integer: the accepted range.
  double lower = -1e308, upper = 1e308;
  bool lower_open = false;                          // lower itself is refused
  std::vector<std::string> (*choices)() = nullptr;  // choice: the accepted values
  void (*set)(AnalyzeRequest&, const OptionValue&) = nullptr;
  std::optional<OptionValue> (*get)(const AnalyzeRequest&) = nullptr;  // none: unset (automatic)
};

const std::vector<AnalyzeOption>& analyze_options();
const AnalyzeOption* find_analyze_option(std::string_view name);
std::string option_flag(const AnalyzeOption& option);  // "--cluster-epsilon"

// Checks `value` against the option (type, range, choices) and sets it. InputError naming `label`
// (the flag or the keyword, as the client spells it).
void apply_option(AnalyzeRequest& request, const AnalyzeOption& option, const OptionValue& value,
                  const std::string& label);
// The value of the command line's text: "0.5", "12", "variance", "T0:T1" (either side may be
// empty). InputError naming `label`.
OptionValue parse_option_text(const AnalyzeOption& option, const std::string& text, const std::string& label);
std::string option_value_text(const OptionValue& value);
// The range or the choices of an option, in words ("in [0, 2]", "one of a, b"); empty if none.
std::string option_domain(const AnalyzeOption& option);
// The default of an option in the command line's request, as text ("auto" when unset).
std::string option_default(const AnalyzeOption& option);
// The help of a flag: its description, domain and default.
std::string option_help(const AnalyzeOption& option);
// The table of every option (Markdown), as docs/guide/analysis.md shows it.
std::string analyze_options_markdown();

}  // namespace normdyn
