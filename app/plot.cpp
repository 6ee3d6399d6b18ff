#include "plot.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "child_process.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/observables_file.hpp"
#include "normdyn/io/text_file.hpp"

#ifndef NORMDYN_PLOT_SCRIPT
#error "NORMDYN_PLOT_SCRIPT must name scripts/plot_run.py (set by app/CMakeLists.txt)"
#endif
#ifndef NORMDYN_ANIMATE_SCRIPT
#error "NORMDYN_ANIMATE_SCRIPT must name scripts/animate_run.py (set by app/CMakeLists.txt)"
#endif

namespace normdyn::app {

std::filesystem::path plot_script() {
  if (const char* env = std::getenv("NORMDYN_PLOT_SCRIPT"); env && *env) return env;
  return NORMDYN_PLOT_SCRIPT;
}

namespace {

// A program name without a slash is looked up in PATH, as a shell would.
std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return std::filesystem::path(name);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

std::filesystem::path plot_python() {
  const char* env = std::getenv("NORMDYN_PYTHON");
  const bool chosen = env && *env;
  const std::string name = chosen ? env : "/usr/bin/python3";
  const auto program = find_program(name);
  if (!program || ::access(program->c_str(), X_OK) != 0) {
    if (chosen) throw InputError("NORMDYN_PYTHON", name + ": no such interpreter (on PATH or as a path)");
    throw IoError(name + ": not found; install Debian's python3 (bash scripts/install-deps.sh) or set NORMDYN_PYTHON");
  }
  return *program;
}

void explain_python_failure(const std::filesystem::path& python) {
  // Probed only after a failure, so a working plot pays no second interpreter start-up.
  ChildOptions quiet;
  quiet.discard_stdio = true;
  quiet.stderr_file = "/dev/null";
  const ChildOutcome probe = run_child_process({python.string(), "-c", "import numpy, h5py, matplotlib"}, quiet);
  if (probe.exit_code == 0) return;
  const char* env = std::getenv("NORMDYN_PYTHON");
  const std::string problem = python.string() + " cannot import numpy, h5py and matplotlib; ";
  if (env && *env)
    throw InputError("NORMDYN_PYTHON", problem +
                                           "point it to /usr/bin/python3, which has Debian's packages "
                                           "(bash scripts/install-deps.sh), or install them for it");
  throw IoError(problem + "install them with: bash scripts/install-deps.sh");
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
  if (!r.width.empty()) {
    args.push_back("--width");
    args.push_back(r.width);
  }
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

namespace {

// Runs a figure script: the files named must exist; a failure of the interpreter is explained.
int run_script(const std::filesystem::path& script, const char* override_variable,
               const std::vector<std::filesystem::path>& inputs, const std::vector<std::string>& args) {
  if (!std::filesystem::exists(script))
    throw IoError(script.string() + ": script not found (set " + override_variable + ")");
  // The script opens them and their observables files with h5py, which a FIFO would block; a sweep's
  // directory (the phase diagram) is read by the script file by file.
  for (const auto& run : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(run, ec)) continue;
    require_input_file(run, "RUN", "run file");
    const std::filesystem::path sibling = ObservablesFile::sibling_path(run);
    if (std::filesystem::exists(std::filesystem::symlink_status(sibling, ec)))
      require_input_file(sibling, "RUN", "observables file");
  }
  ChildOptions options;
  options.exec_failure_code = static_cast<int>(ExitCode::io_failure);
  const ChildOutcome outcome = run_child_process(args, options);
  if (outcome.exit_code != 0) explain_python_failure(args.front());
  return outcome.signal ? static_cast<int>(ExitCode::io_failure) : outcome.exit_code;
}

std::filesystem::path animate_script() {
  if (const char* env = std::getenv("NORMDYN_ANIMATE_SCRIPT"); env && *env) return env;
  return NORMDYN_ANIMATE_SCRIPT;
}

std::string argument_text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

int plot_command(const PlotRequest& request) {
  return run_script(plot_script(), "NORMDYN_PLOT_SCRIPT", request.runs, plot_arguments(request));
}

std::vector<std::string> animate_arguments(const AnimateRequest& r) {
  std::vector<std::string> args{plot_python().string(),
                                animate_script().string(),
                                r.run.string(),
                                "-o",
                                r.output.string(),
                                "--fps",
                                argument_text(r.fps),
                                "--max-frames",
                                std::to_string(r.max_frames),
                                "--width",
                                r.width,
                                "--dpi",
                                argument_text(r.dpi)};
  if (r.force) args.push_back("--force");
  if (r.quiet) args.push_back("--quiet");
  return args;
}

int animate_command(const AnimateRequest& request) {
  // Checked here too, so that the message names the flag before Python starts.
  const std::string ext = request.output.extension().string();
  if (ext != ".mp4" && ext != ".gif")
    throw InputError("--output", request.output.string() + ": must end in .mp4 or .gif");
  if (std::filesystem::exists(request.output) && !request.force)
    throw InputError("--output", request.output.string() + " exists (--force replaces it)");
  return run_script(animate_script(), "NORMDYN_ANIMATE_SCRIPT", {request.run}, animate_arguments(request));
}

}  // namespace normdyn::app
