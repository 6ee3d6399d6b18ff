#include "run.hpp"

#include <cstdio>

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
  if (progress.enabled()) o.progress = [&progress](const ProgressEvent& e) { progress.show(e); };
  return o;
}

bool shows_progress(const RunOptions& options) {
  if (options.quiet || !ProgressLine::stderr_is_terminal()) return false;
  return !sharing_team(options) || options.team->is_root();
}

}  // namespace

int run_command(const RunRequest& request) {
  install_interrupt_handlers();
  ProgressLine progress(shows_progress(request.options));
  if (request.resume) {
    RunConfig config;
    const RunSummary s = resume_experiment(*request.resume, request.threads,
                                           experiment_options(request.options, *request.resume, progress), config);
    progress.finish();
    return report(s, config, request.options);
  }
  RunConfig config = load_config(request.config, request.sets);
  if (request.output) config.output.path = *request.output;
  if (request.threads) config.solver.threads = *request.threads;
  // Processes sharing a machine share its cores.
  else if (Team* team = sharing_team(request.options); team && config.solver.threads == 0)
    config.solver.threads = team->default_threads();
  const RunSummary s = run_experiment(config, experiment_options(request.options, config.output.path, progress));
  progress.finish();
  return report(s, config, request.options);
}

}  // namespace normdyn::app
