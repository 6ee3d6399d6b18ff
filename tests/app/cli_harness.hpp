#pragma once
// Runs the normdyn binary in a scratch directory and captures its exit code and output.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace normdyn::test {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

class Scratch {
 public:
  Scratch() {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("normdyn_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path operator/(const std::string& name) const { return dir_ / name; }

  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }

  // Runs `normdyn <args>` with the scratch directory as working directory.
  CommandResult normdyn(const std::string& args) const { return shell(std::string(NORMDYN_BINARY) + " " + args); }

  CommandResult shell(const std::string& command) const {
    const std::string line = "cd '" + dir_.string() + "' && " + command + " > stdout.txt 2> stderr.txt";
    const int status = std::system(line.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_ / "stdout.txt");
    r.err = slurp(dir_ / "stderr.txt");
    return r;
  }

  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace normdyn::test

namespace normdyn::test {

// A child process running normdyn, for signal and memory tests.
struct Child {
  pid_t pid = -1;
};

inline Child spawn_normdyn(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    // Keep the child's stderr out of the test log.
    std::FILE* sink = std::freopen("child_stderr.txt", "w", stderr);
    (void)sink;
    std::vector<char*> argv;
    std::string binary = NORMDYN_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return Child{pid};
}

// CPU seconds a running child has used (user + system), and whether it is still running: a kill
// timed by the child's own progress rather than by the wall clock, which load stretches 2-4x.
struct ChildProgress {
  double cpu_seconds = 0.0;
  bool running = false;
};

// The fields of /proc/PID/stat after the command name (state, ppid, ...; field 3 onwards), empty when
// the process is gone. The name is skipped up to its last ')': it may hold spaces.
inline std::vector<std::string> proc_stat_fields(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return {};
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

inline ChildProgress process_progress(int pid) {
  const std::vector<std::string> f = proc_stat_fields(pid);
  if (f.size() < 13) return {};
  const long ticks = std::stol(f[11]) + std::stol(f[12]);  // utime, stime (fields 14, 15)
  return {double(ticks) / double(::sysconf(_SC_CLK_TCK)), f[0] != "Z" && f[0] != "X"};
}

inline ChildProgress child_progress(const Child& c) { return process_progress(c.pid); }

struct ChildExit {
  int exit_code = -1;   // when it exited
  int signal = 0;       // when a signal ended it
  long max_rss_kb = 0;  // peak resident memory
};

inline ChildExit wait_child(const Child& c) {
  int status = 0;
  struct rusage usage {};
  ::wait4(c.pid, &status, 0, &usage);
  ChildExit e;
  if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  e.max_rss_kb = usage.ru_maxrss;
  return e;
}

}  // namespace normdyn::test
