#pragma once
// The command line of `normdyn sweep`: flags → SweepRequest (sweep.hpp).
#include <CLI/CLI.hpp>
#include <memory>

namespace normdyn {
class Team;
}

namespace normdyn::app {

class SweepCli {
 public:
  explicit SweepCli(CLI::App& cli);
  ~SweepCli();
  bool parsed() const;
  // Runs it; returns the exit code. Throws InputError (naming the flag) / IoError.
  int run(Team& team, const std::string& command_line);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace normdyn::app
