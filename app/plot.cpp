#include "plot.hpp"

#include <cstdlib>

#include "child_process.hpp"
#include "normdyn/errors.hpp"

#ifndef NORMDYN_PLOT_SCRIPT
#error "NORMDYN_PLOT_SCRIPT must name scripts/plot_run.py (set by app/CMakeLists.txt)"
#endif

namespace normdyn::app {

std::filesystem::path plot_script() {
  if (const char* env = std::getenv("NORMDYN_PLOT_SCRIPT"); env && *env) return env;
  return NORMDYN_PLOT_SCRIPT;
}

std::filesystem::path plot_python() {
  if (const char* env = std::getenv("NORMDYN_PYTHON"); env && *env) return env;
  return "/usr/bin/python3";
}

std::vector<std::string> plot_arguments(const PlotRequest& r) {
  std::vector<std::string> args{plot_python().string(), plot_script().string()};
  for (const auto& run : r.runs) args.push_back(run.string());
  if (r.output_dir) {
    args.push_back("--output-dir");
    args.push_back(r.output_dir->string());
  }
  for (const auto& k : r.kinds) {
    args.push_back("--kind");
    args.push_back(k);
  }
  if (!r.frames.empty()) {
    args.push_back("--frames");
    for (long long f : r.frames) args.push_back(std::to_string(f));
  }
  if (r.log_time) args.push_back("--log-time");
  if (r.log_cos) args.push_back("--log-cos");
  for (const auto& f : r.formats) {
    args.push_back("--format");
    args.push_back(f);
  }
  if (!r.labels.empty()) {
    args.push_back("--labels");
    for (const auto& l : r.labels) args.push_back(l);
  }
  return args;
}

int plot_command(const PlotRequest& request) {
  const std::filesystem::path script = plot_script();
  if (!std::filesystem::exists(script))
    throw IoError(script.string() + ": plot script not found (set NORMDYN_PLOT_SCRIPT)");
  for (const auto& run : request.runs)
    if (!std::filesystem::exists(run)) throw InputError("RUN", run.string() + ": no such file");
  const std::vector<std::string> args = plot_arguments(request);
  ChildOptions options;
  options.exec_failure_code = static_cast<int>(ExitCode::io_failure);
  const ChildOutcome outcome = run_child_process(args, options);
  return outcome.signal ? static_cast<int>(ExitCode::io_failure) : outcome.exit_code;
}

}  // namespace normdyn::app
