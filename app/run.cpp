#include "run.hpp"

#include <cstdio>

#include "normdyn/errors.hpp"

#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/team.hpp"
#include "progress.hpp"
#include "signals.hpp"

namespace normdyn::app {
namespace {

Team* sharing_team(const RunOptions& options) {
  return options.team && options.team->size() > 1 ? options.team : nullptr;
}

int report(const RunSummary& s, const RunConfig& config, const RunOptions& options) {
  if (sharing_team(options) && !options.team->is_root()) return static_cast<int>(exit_code(s.status));
  if (!options.quiet || s.status != RunStatus::ok) {
    std::fprintf(stderr, "normdyn: %s: %s; %lld frames, %lld steps (%lld rejected), %lld rhs evaluations, %.3g s -> %s\n",
                 std::string(to_string(s.status)).c_str(), s.message.c_str(), static_cast<long long>(s.frames),
                 static_cast<long long>(s.accepted_steps), static_cast<long long>(s.rejected_steps),
                 static_cast<long long>(s.rhs_evaluations), s.wall_seconds, config.output.path.c_str());
  }
  // On a terminal, where to go from here.
  if (!options.quiet && s.frames > 0 && exit_code(s.status) == ExitCode::ok && ProgressLine::stderr_is_terminal()) {
    const std::string path = config.output.path.string();
    std::fprintf(stderr, "next: normdyn analyze %s   (report, rates, theorem checks)\n      normdyn plot %s      (figures)\n",
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
  o.stop_requested = [] { return interrupt_signal(); };
  o.resume_hint = "continue with: normdyn run --resume " + path.string();
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
    case ProgressMode::none: return ProgressLine::Style::none;
    case ProgressMode::plain: return ProgressLine::Style::plain;
    case ProgressMode::jsonl: return ProgressLine::Style::jsonl;
    case ProgressMode::automatic: break;
  }
  if (options.quiet || !ProgressLine::stderr_is_terminal()) return ProgressLine::Style::none;
  return ProgressLine::Style::line;
}

// The configuration of `run`: a file, the built-in defaults, or the one stored in a run file
// (--from), with --set on top.
RunConfig requested_config(const RunRequest& request) {
  if (request.from) {
    require_run_file(*request.from, "--from");
    if (!request.output) throw InputError("--from", "give the file of the new run with -o OUT (the input is never written)");
    return parse_config(RunReader(*request.from).config_toml(), request.from->string(), request.sets);
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
  if (request.output) config.output.path = *request.output;
  if (request.from && same_file(*request.from, config.output.path))
    throw InputError("-o", "the new run would overwrite its input " + request.from->string());
  if (request.threads) config.solver.threads = *request.threads;
  // Processes sharing a machine share its cores.
  else if (Team* team = sharing_team(request.options); team && config.solver.threads == 0)
    config.solver.threads = team->default_threads();
  const RunSummary s = run_experiment(config, experiment_options(request.options, config.output.path, progress));
  progress.finish();
  return report(s, config, request.options);
}

}  // namespace normdyn::app
