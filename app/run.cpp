#include "run.hpp"

#include <algorithm>
#include <cstdio>

#include "normdyn/errors.hpp"
#include "normdyn/utf8.hpp"

#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/setup.hpp"
#include "normdyn/experiment/team.hpp"
#include "progress.hpp"
#include "signals.hpp"

namespace normdyn::app {
namespace {

Team* sharing_team(const RunOptions& options) {
  return options.team && options.team->size() > 1 ? options.team : nullptr;
}

// Why the terms may not be those the run used (a library changed since), on standard error.
void warn_terms(const RunConfig& config) {
  for (const std::string& w : user_term_warnings(config.terms))
    std::fprintf(stderr, "normdyn: warning: %s\n", w.c_str());
}

int report(const RunSummary& s, const RunConfig& config, const RunOptions& options) {
  if (sharing_team(options) && !options.team->is_root()) return static_cast<int>(exit_code(s.status));
  if (!options.quiet || s.status != RunStatus::ok) {
    std::fprintf(stderr,
                 "normdyn: %s: %s; %lld frames, %lld steps (%lld rejected), %lld rhs evaluations, %.3g s -> %s\n",
                 std::string(to_string(s.status)).c_str(), s.message.c_str(), static_cast<long long>(s.frames),
                 static_cast<long long>(s.accepted_steps), static_cast<long long>(s.rejected_steps),
                 static_cast<long long>(s.rhs_evaluations), s.wall_seconds, config.output.path.c_str());
  }
  // A result the run flags as doubtful is named even when --quiet hides the closing line.
  if (options.quiet && s.status == RunStatus::ok && !s.warnings.empty()) {
    std::size_t start = 0;
    while (start < s.warnings.size()) {
      const std::size_t end = std::min(s.warnings.find('\n', start), s.warnings.size());
      std::fprintf(stderr, "normdyn: warning %s (%s)\n", s.warnings.substr(start, end - start).c_str(),
                   config.output.path.c_str());
      start = end + 1;
    }
  }
  // On a terminal, where to go from here.
  if (!options.quiet && s.frames > 0 && exit_code(s.status) == ExitCode::ok && ProgressLine::stderr_is_terminal()) {
    const std::string path = config.output.path.string();
    std::fprintf(stderr,
                 "next: normdyn analyze %s   (report, rates, theorem checks)\n      normdyn plot %s      (figures)\n",
                 path.c_str(), path.c_str());
  }
  return static_cast<int>(exit_code(s.status));
}

// The experiment options of the command line: its signals, its progress line, its provenance.
ExperimentOptions experiment_options(const RunOptions& options, const std::filesystem::path& path,
                                     ProgressLine& progress) {
  ExperimentOptions o;
  o.force = options.force;
  o.command_line = options.command_line;
  o.team = options.team;
  o.stop_requested = [] { return interrupt_requested() ? interrupt_signal() : 0; };
  o.resume_hint = "continue with: normdyn run --resume " + path.string();
  o.size_check = options.size_check;
  if (progress.enabled()) {
    o.progress = [&progress](const ProgressEvent& e) { progress.show(e); };
    o.progress_interval = progress.interval();
  }
  return o;
}

ProgressLine::Style progress_style(const RunRequest& request) {
  const RunOptions& options = request.options;
  if (sharing_team(options) && !options.team->is_root()) return ProgressLine::Style::none;
  switch (request.progress) {
    case ProgressMode::none:
      return ProgressLine::Style::none;
    case ProgressMode::plain:
      return ProgressLine::Style::plain;
    case ProgressMode::jsonl:
      return ProgressLine::Style::jsonl;
    case ProgressMode::automatic:
      break;
  }
  if (options.quiet || !ProgressLine::stderr_is_terminal()) return ProgressLine::Style::none;
  return ProgressLine::Style::line;
}

// A finished run continued from its last frame: the stored configuration, starting at the last
// frame's time from that frame (read back from the input file, which the configuration names),
// with samples at the input's last spacing up to the new end.
RunConfig continued_config(const std::filesystem::path& input, double t_end, const std::vector<std::string>& sets) {
  require_run_file(input, "--continue");
  const RunReader reader(input);
  const auto summary = reader.summary();
  if (!summary || exit_code(summary->status) != ExitCode::ok)
    throw InputError("--continue", input.string() + " is not a finished run (continue it with --resume first)");
  RunConfig c = reader.config();
  if (c.model.kind != ModelKind::particles || !reader.has_particles())
    throw InputError("--continue", "mean-field runs cannot be continued yet; rerun with a later solver.t_end");
  if (uses_density_tokens(c))
    throw InputError("--continue", "runs of weighted tokens cannot be continued yet; rerun with a later solver.t_end");
  const std::vector<double> times = reader.times();
  if (times.empty()) throw InputError("--continue", input.string() + " holds no frame");
  const double t_last = times.back();
  if (!(t_end > t_last))
    throw InputError("--t-end", "must be later than the input's last frame at t = " + std::to_string(t_last));
  const double spacing = times.size() >= 2 ? times[times.size() - 1] - times[times.size() - 2] : (t_end - t_last);
  std::vector<double> samples{t_last};
  for (std::int64_t k = 1;; ++k) {
    const double t = t_last + static_cast<double>(k) * spacing;
    if (t >= t_end - 1e-9 * spacing) break;
    samples.push_back(t);
  }
  samples.push_back(t_end);
  // The new run's configuration names the input by its bytes (init.file); TOML text holds UTF-8 only.
  const std::filesystem::path absolute = std::filesystem::absolute(input);
  if (!is_utf8(absolute.string()))
    throw InputError("--continue", absolute.string() +
                                       ": the name is not valid UTF-8, and the new run's configuration (TOML text) "
                                       "names its input in init.file; link or copy the run to a UTF-8 name");
  c.init.kind = InitKind::file;
  c.init.file = absolute;
  c.init.frame = -1;
  c.init.dataset = "/particles/tokens/direction/value";
  c.init.radius_dataset = "/particles/tokens/radius/value";
  c.solver.t_start = t_last;
  c.solver.t_end = t_end;
  c.output.samples.reset();
  c.output.times = samples;
  // Validated like any configuration, with --set on top.
  return parse_config(to_toml(c), input.string(), sets);
}

// The configuration of `run`: a file, the built-in defaults, the one stored in a run file
// (--from), or a finished run's continued (--continue), with --set on top.
RunConfig requested_config(const RunRequest& request) {
  if (request.continue_from) {
    if (!request.output)
      throw InputError("--continue", "give the file of the new run with -o OUT (the input is never written)");
    if (!request.t_end) throw InputError("--continue", "give the new end with --t-end T");
    return continued_config(*request.continue_from, *request.t_end, request.sets);
  }
  if (request.from) {
    require_run_file(*request.from, "--from");
    if (!request.output)
      throw InputError("--from", "give the file of the new run with -o OUT (the input is never written)");
    const RunReader reader(*request.from);
    return repeated_config(reader.config(), reader.config_toml(), reader.feedforward(), request.from->string(),
                           request.sets);
  }
  if (request.config.empty()) return parse_config("", "the built-in defaults", request.sets);
  return load_config(request.config, request.sets);
}

// Whether two paths name the same file (existing or not).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) return std::filesystem::equivalent(a, b, ec);
  return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}

}  // namespace

ProgressMode progress_mode_from_string(const std::string& s) {
  if (s == "plain") return ProgressMode::plain;
  if (s == "jsonl") return ProgressMode::jsonl;
  if (s == "none") return ProgressMode::none;
  return ProgressMode::automatic;
}

int run_command(const RunRequest& request) {
  install_interrupt_handlers();
  ProgressLine progress(progress_style(request));
  if (request.resume) {
    RunConfig config;
    const RunSummary s = resume_experiment(*request.resume, request.threads,
                                           experiment_options(request.options, *request.resume, progress), config);
    progress.finish();
    return report(s, config, request.options);
  }
  RunConfig config = requested_config(request);
  warn_terms(config);
  if (request.output) config.output.path = *request.output;
  for (const auto& input : {request.from, request.continue_from})
    if (input && same_file(*input, config.output.path))
      throw InputError("-o", "the new run would overwrite its input " + input->string());
  if (request.threads) config.solver.threads = *request.threads;
  // Processes sharing a machine share its cores.
  else if (Team* team = sharing_team(request.options); team && config.solver.threads == 0)
    config.solver.threads = team->default_threads();
  ExperimentOptions options = experiment_options(request.options, config.output.path, progress);
  if (request.config != "-") options.config_file = request.config;
  const RunSummary s = run_experiment(config, options);
  progress.finish();
  return report(s, config, request.options);
}

}  // namespace normdyn::app
