#include "normdyn/analyze/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "normdyn/errors.hpp"

namespace normdyn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Digits enough to read the value back (%.17g would print 0.1 as 0.10000000000000001).
std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

double real_of(const OptionValue& v) { return std::get<double>(v); }
std::int64_t integer_of(const OptionValue& v) { return std::get<std::int64_t>(v); }
bool flag_of(const OptionValue& v) { return std::get<bool>(v); }
const std::string& text_of(const OptionValue& v) { return std::get<std::string>(v); }

std::vector<std::string> law_names() { return {"auto", "exponential", "power", "stretched_exponential"}; }

// The rows. A lambda without captures converts to the function pointers of AnalyzeOption.
std::vector<AnalyzeOption> make_options() {
  using R = AnalyzeRequest;
  using V = OptionValue;
  using O = std::optional<OptionValue>;
  constexpr auto E = OptionScope::everywhere;
  std::vector<AnalyzeOption> rows;
  auto real = [&](std::string_view name, std::string_view doc, double lower, double upper, bool lower_open,
                  void (*set)(R&, const V&), O (*get)(const R&)) {
    rows.push_back({name, "", OptionType::real, E, doc, lower, upper, lower_open, nullptr, set, get});
  };
  auto integer = [&](std::string_view name, std::string_view doc, double lower, double upper, void (*set)(R&, const V&),
                     O (*get)(const R&)) {
    rows.push_back({name, "", OptionType::integer, E, doc, lower, upper, false, nullptr, set, get});
  };
  auto flag = [&](std::string_view name, std::string_view short_flag, OptionScope scope, std::string_view doc,
                  void (*set)(R&, const V&), O (*get)(const R&)) {
    rows.push_back({name, short_flag, OptionType::flag, scope, doc, -kInf, kInf, false, nullptr, set, get});
  };

  rows.push_back({"json", "", OptionType::path, E,
                  "write the report as JSON to this file (the command line with several runs: into this folder, "
                  "one RUN.json each)",
                  -kInf, kInf, false, nullptr, [](R& r, const V& v) { r.json = text_of(v); },
                  [](const R& r) -> O { return r.json ? O(r.json->string()) : O(); }});
  rows.push_back({"observables_file", "", OptionType::path, E,
                  "write the observables into this file (default: RUN.observables.h5 beside the run; never the run "
                  "file or another run)",
                  -kInf, kInf, false, nullptr,
                  [](R& r, const V& v) {
                    r.observables_file = text_of(v);
                    r.write_observables = true;
                  },
                  [](const R& r) -> O { return r.observables_file ? O(r.observables_file->string()) : O(); }});
  flag(
      "no_write", "", E,
      "do not write observables anywhere (normdyn.analyze writes none unless given observables_file or no_write=False)",
      [](R& r, const V& v) { r.write_observables = !flag_of(v); },
      [](const R& r) -> O { return !r.write_observables; });
  real(
      "cluster_epsilon", "join two tokens into a cluster when their cosine exceeds 1 - epsilon", 0.0, 2.0, false,
      [](R& r, const V& v) { r.options.clusters.epsilon = real_of(v); },
      [](const R& r) -> O { return r.options.clusters.epsilon; });
  real(
      "rank_threshold",
      "effective rank: count eigenvalues of the second-moment matrix above this fraction of its trace", 0.0, 1.0, false,
      [](R& r, const V& v) { r.options.rank_threshold = real_of(v); },
      [](const R& r) -> O { return r.options.rank_threshold; });
  real(
      "plateau_energy_tolerance", "plateau: max E / min E <= 1 + tolerance", 0.0, kInf, true,
      [](R& r, const V& v) { r.options.plateaus.energy_tolerance = real_of(v); },
      [](const R& r) -> O { return r.options.plateaus.energy_tolerance; });
  integer(
      "plateau_min_frames", "plateau: at least this many frames", 1, 1 << 30,
      [](R& r, const V& v) { r.options.plateaus.min_frames = static_cast<std::size_t>(integer_of(v)); },
      [](const R& r) -> O { return static_cast<std::int64_t>(r.options.plateaus.min_frames); });
  real(
      "plateau_min_duration", "plateau: at least this long in t", 0.0, kInf, false,
      [](R& r, const V& v) { r.options.plateaus.min_duration = real_of(v); },
      [](const R& r) -> O { return r.options.plateaus.min_duration; });
  real(
      "plateau_min_log_duration",
      "plateau: ln(t_end / t_start) at least this (metastable states live on geometric times)", 0.0, kInf, false,
      [](R& r, const V& v) { r.options.plateaus.min_log_duration = real_of(v); },
      [](const R& r) -> O { return r.options.plateaus.min_log_duration; });
  rows.push_back({"quantity", "", OptionType::choice, E, "series whose decay is fitted", -kInf, kInf, false,
                  &rate_quantity_names,
                  [](R& r, const V& v) { r.options.quantity = *rate_quantity_from_string(text_of(v)); },
                  [](const R& r) -> O { return std::string(to_string(r.options.quantity)); }});
  rows.push_back({"law", "", OptionType::choice, E,
                  "decay law of the fit (auto: the law whose local exponent is steadiest)", -kInf, kInf, false,
                  &law_names,
                  [](R& r, const V& v) {
                    if (text_of(v) == "auto")
                      r.options.rate.law.reset();
                    else
                      r.options.rate.law = analysis::decay_law_from_string(text_of(v));
                  },
                  [](const R& r) -> O {
                    return r.options.rate.law ? std::string(to_string(*r.options.rate.law)) : std::string("auto");
                  }});
  rows.push_back({"fit_window", "", OptionType::window, E,
                  "fit window T0:T1 (either side may be empty; Python: also a pair (t0, t1); default: automatic)",
                  -kInf, kInf, false, nullptr,
                  [](R& r, const V& v) { r.options.rate.window = std::get<analysis::TimeWindow>(v); },
                  [](const R& r) -> O { return r.options.rate.window ? O(*r.options.rate.window) : O(); }});
  real(
      "fit_fraction", "with a given law that has no steady stretch: this later fraction of the usable time range", 0.01,
      1.0, false, [](R& r, const V& v) { r.options.rate.late_fraction = real_of(v); },
      [](const R& r) -> O { return r.options.rate.late_fraction; });
  real(
      "fit_floor", "values at or below this are not fitted (round-off)", 0.0, kInf, false,
      [](R& r, const V& v) { r.options.rate.floor = real_of(v); },
      [](const R& r) -> O { return r.options.rate.floor; });
  flag(
      "no_correction", "", E, "report the plain fit, without fitting a shift of the time origin",
      [](R& r, const V& v) { r.options.rate.correction = !flag_of(v); },
      [](const R& r) -> O { return !r.options.rate.correction; });
  real(
      "energy_tolerance", "energy check: largest allowed relative decrease between frames", 0.0, kInf, false,
      [](R& r, const V& v) { r.options.checks.energy_tolerance = real_of(v); },
      [](const R& r) -> O { return r.options.checks.energy_tolerance; });
  flag(
      "no_velocity", "", E,
      "do not rebuild the run's dynamics: angular speed from finite differences, no <theta_j, A_j>",
      [](R& r, const V& v) { r.options.use_velocity = !flag_of(v); },
      [](const R& r) -> O { return !r.options.use_velocity; });
  integer(
      "threads", "threads of the attention kernel (0: all cores; default: 1 for small runs, else the run's)", 0, 4096,
      [](R& r, const V& v) { r.options.threads = static_cast<int>(integer_of(v)); },
      [](const R& r) -> O { return r.options.threads ? O(std::int64_t{*r.options.threads}) : O(); });
  integer(
      "modes", "mean-field runs: Fourier modes k = 1..K of the density", 1, 4096,
      [](R& r, const V& v) { r.options.density.max_mode = static_cast<int>(integer_of(v)); },
      [](const R& r) -> O { return std::int64_t{r.options.density.max_mode}; });
  real(
      "density_cluster_level", "mean-field runs: a cluster is an arc where the density exceeds this x uniform", 1.0,
      1e12, false, [](R& r, const V& v) { r.options.density.cluster_level = real_of(v); },
      [](const R& r) -> O { return r.options.density.cluster_level; });
  flag(
      "fail_on_check", "", OptionScope::command_line, "exit with code 1 if a theorem check fails",
      [](R& r, const V& v) { r.fail_on_check = flag_of(v); }, [](const R& r) -> O { return r.fail_on_check; });
  flag(
      "quiet", "-q", OptionScope::command_line, "no report on stdout", [](R& r, const V& v) { r.quiet = flag_of(v); },
      [](const R& r) -> O { return r.quiet; });
  return rows;
}

}  // namespace

AnalyzeRequest AnalyzeRequest::command_line() { return AnalyzeRequest{}; }

AnalyzeRequest AnalyzeRequest::python() {
  AnalyzeRequest r;
  r.write_observables = false;
  r.quiet = true;
  r.keyword_labels = true;
  return r;
}

std::string AnalyzeRequest::label(std::string_view name) const {
  if (keyword_labels) return std::string(name);
  const AnalyzeOption* o = find_analyze_option(name);
  return o ? option_flag(*o) : std::string(name);
}

std::string_view to_string(OptionType t) noexcept {
  switch (t) {
    case OptionType::real:
      return "float";
    case OptionType::integer:
      return "integer";
    case OptionType::flag:
      return "flag";
    case OptionType::choice:
      return "choice";
    case OptionType::window:
      return "window";
    case OptionType::path:
      return "path";
  }
  return "float";
}

const std::vector<AnalyzeOption>& analyze_options() {
  static const std::vector<AnalyzeOption> rows = make_options();
  return rows;
}

const AnalyzeOption* find_analyze_option(std::string_view name) {
  for (const auto& o : analyze_options())
    if (o.name == name) return &o;
  return nullptr;
}

std::string option_flag(const AnalyzeOption& option) {
  std::string flag = "--" + std::string(option.name);
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

std::string option_domain(const AnalyzeOption& o) {
  if (o.type == OptionType::choice) {
    std::string s = "one of ";
    const auto names = o.choices();
    for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
    return s;
  }
  if (o.type != OptionType::real && o.type != OptionType::integer) return "";
  if (std::isinf(o.upper)) return (o.lower_open ? "> " : ">= ") + number_text(o.lower);
  return "in " + std::string(o.lower_open ? "(" : "[") + number_text(o.lower) + ", " + number_text(o.upper) + "]";
}

std::string option_value_text(const OptionValue& value) {
  struct Text {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return number_text(d); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const analysis::TimeWindow& w) const {
      return number_text(w.t_start) + ":" + (std::isinf(w.t_end) ? "" : number_text(w.t_end));
    }
  };
  return std::visit(Text{}, value);
}

std::string option_default(const AnalyzeOption& option) {
  const auto value = option.get(AnalyzeRequest::command_line());
  if (!value) return option.type == OptionType::path ? "none" : "auto";
  if (option.type == OptionType::flag) return std::get<bool>(*value) ? "on" : "off";
  return option_value_text(*value);
}

std::string option_help(const AnalyzeOption& option) {
  std::string help(option.doc);
  const std::string domain = option_domain(option);
  if (!domain.empty()) help += "; " + domain;
  if (option.type != OptionType::flag && option.type != OptionType::path && option_default(option) != "auto")
    help += "; default " + option_default(option);
  return help;
}

void apply_option(AnalyzeRequest& request, const AnalyzeOption& o, const OptionValue& value, const std::string& label) {
  auto type_error = [&](const char* expected) { throw InputError(label, std::string("expected ") + expected); };
  switch (o.type) {
    case OptionType::real: {
      if (!std::holds_alternative<double>(value)) type_error("a number");
      const double v = std::get<double>(value);
      const bool above = o.lower_open ? v > o.lower : v >= o.lower;
      if (!std::isfinite(v) || !above || !(v <= o.upper))
        throw InputError(label, "must be " + option_domain(o) + ", got " + number_text(v));
      break;
    }
    case OptionType::integer: {
      if (!std::holds_alternative<std::int64_t>(value)) type_error("an integer");
      const auto v = static_cast<double>(std::get<std::int64_t>(value));
      if (!(v >= o.lower && v <= o.upper))
        throw InputError(label,
                         "must be " + option_domain(o) + ", got " + std::to_string(std::get<std::int64_t>(value)));
      break;
    }
    case OptionType::flag:
      if (!std::holds_alternative<bool>(value)) type_error("true or false");
      break;
    case OptionType::choice: {
      if (!std::holds_alternative<std::string>(value)) type_error("a string");
      const auto names = o.choices();
      if (std::find(names.begin(), names.end(), std::get<std::string>(value)) == names.end())
        throw InputError(label, "must be " + option_domain(o) + ", got \"" + std::get<std::string>(value) + "\"");
      break;
    }
    case OptionType::window: {
      if (!std::holds_alternative<analysis::TimeWindow>(value)) type_error("a window T0:T1");
      const auto& w = std::get<analysis::TimeWindow>(value);
      if (std::isnan(w.t_start) || std::isnan(w.t_end) || !(w.t_end > w.t_start))
        throw InputError(label, "needs T0 < T1, got " + option_value_text(value));
      break;
    }
    case OptionType::path:
      if (!std::holds_alternative<std::string>(value)) type_error("a path");
      if (std::get<std::string>(value).empty()) throw InputError(label, "is an empty path");
      break;
  }
  o.set(request, value);
}

OptionValue parse_option_text(const AnalyzeOption& o, const std::string& text, const std::string& label) {
  auto real = [&](const std::string& part, double fallback) {
    if (part.empty()) return fallback;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(part.c_str(), &end);
    if (errno != 0 || end != part.c_str() + part.size() || std::isnan(v))
      throw InputError(label, "\"" + part + "\" is not a number");
    return v;
  };
  switch (o.type) {
    case OptionType::real:
      if (text.empty()) throw InputError(label, "expected a number, got nothing");
      return real(text, 0.0);
    case OptionType::integer: {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || errno != 0 || end != text.c_str() + text.size())
        throw InputError(label, "\"" + text + "\" is not an integer");
      return static_cast<std::int64_t>(v);
    }
    case OptionType::flag:
      if (text == "true" || text == "1" || text.empty()) return true;
      if (text == "false" || text == "0") return false;
      throw InputError(label, "expected true or false, got \"" + text + "\"");
    case OptionType::choice:
    case OptionType::path:
      return text;
    case OptionType::window: {
      const auto colon = text.find(':');
      if (colon == std::string::npos) throw InputError(label, "expected T0:T1, got \"" + text + "\"");
      return analysis::TimeWindow{real(text.substr(0, colon), 0.0), real(text.substr(colon + 1), kInf)};
    }
  }
  return text;
}

std::string analyze_options_markdown() {
  std::string out =
      "| flag | keyword | value | default | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const auto& o : analyze_options()) {
    std::string flag = "`" + option_flag(o) + "`";
    if (!o.short_flag.empty()) flag = "`" + std::string(o.short_flag) + "`, " + flag;
    const std::string keyword =
        o.scope == OptionScope::everywhere ? "`" + std::string(o.name) + "`" : "(command line only)";
    const std::string domain = option_domain(o);
    std::string value = o.type == OptionType::choice ? domain : std::string(to_string(o.type));
    if (o.type != OptionType::choice && !domain.empty()) value += " " + domain;
    std::string doc(o.doc);
    // Markdown tables: a literal | would end the cell.
    for (std::size_t p = 0; (p = doc.find('|', p)) != std::string::npos; p += 2) doc.replace(p, 1, "\\|");
    out += "| " + flag + " | " + keyword + " | " + value + " | " + option_default(o) + " | " + doc + " |\n";
  }
  return out;
}

}  // namespace normdyn
