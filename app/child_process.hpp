#pragma once
// Running another program and waiting for it (fork, execve, waitpid): `normdyn plot` and
// `normdyn sweep --plot` run Python, a sweep runs each point as `normdyn run`.
#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace normdyn::app {

struct ChildOptions {
  // The child's environment as "NAME=value" strings; none: this process's environment.
  std::optional<std::vector<std::string>> environment;
  std::optional<std::filesystem::path> stderr_file;  // created or truncated; none: inherited
  bool discard_stdio = false;                        // stdin and stdout on /dev/null
  bool die_with_parent = false;                      // SIGTERM when the calling thread ends
  int exec_failure_code = 127;                       // the child's exit code if execve fails
  std::atomic<int>* pid = nullptr;                   // holds the child's pid while it runs
};

struct ChildOutcome {
  int exit_code = -1;  // -1: ended by a signal
  int signal = 0;
};

// Runs argv[0] (a path, not looked up in PATH) with `argv` and waits for it. Throws IoError if it
// cannot be started or waited for.
ChildOutcome run_child_process(const std::vector<std::string>& argv, const ChildOptions& options = {});

}  // namespace normdyn::app
