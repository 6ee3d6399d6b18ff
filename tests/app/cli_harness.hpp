#pragma once
// Runs the normdyn binary in a scratch directory and captures its exit code and output.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace normdyn::test {

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
