#include "child_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "normdyn/errors.hpp"

extern char** environ;

namespace normdyn::app {

ChildOutcome run_child_process(const std::vector<std::string>& args, const ChildOptions& options) {
  // Everything the child needs is prepared before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> arg_strings = args;
  std::vector<char*> argv;
  for (auto& a : arg_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  char** env = environ;
  if (options.environment) {
    env_strings = *options.environment;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    env = envp.data();
  }
  int log_fd = -1;
  if (options.stderr_file) {
    log_fd = ::open(options.stderr_file->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) throw IoError(options.stderr_file->string() + ": cannot create: " + std::strerror(errno));
  }
  const int null_fd = options.discard_stdio ? ::open("/dev/null", O_RDWR | O_CLOEXEC) : -1;
  const pid_t parent = ::getpid();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (options.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(options.exec_failure_code);
    }
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDOUT_FILENO);
    }
    if (log_fd >= 0) ::dup2(log_fd, STDERR_FILENO);
    ::execve(argv[0], argv.data(), env);
    static constexpr char kPrefix[] = "normdyn: error: cannot run ";
    [[maybe_unused]] auto w1 = ::write(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
    [[maybe_unused]] auto w2 = ::write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
    [[maybe_unused]] auto w3 = ::write(STDERR_FILENO, "\n", 1);
    ::_exit(options.exec_failure_code);
  }
  if (log_fd >= 0) ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  if (pid < 0) throw IoError("cannot start " + args.front() + ": " + std::strerror(errno));
  if (options.pid) *options.pid = pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      if (options.pid) *options.pid = 0;
      throw IoError("waiting for " + args.front() + " failed: " + std::strerror(errno));
    }
  }
  if (options.pid) *options.pid = 0;
  ChildOutcome out;
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  return out;
}

}  // namespace normdyn::app
