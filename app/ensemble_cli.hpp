#pragma once
// The command line of `normdyn ensemble`: flags, progress and signals over run_ensemble
// (experiment/ensemble.hpp).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace normdyn {
class Team;
}

namespace normdyn::app {

class EnsembleCli {
 public:
  explicit EnsembleCli(CLI::App& cli);
  ~EnsembleCli();
  bool parsed() const;
  // Runs it; returns the exit code. Throws InputError (naming the flag) / IoError.
  // Under mpirun every process calls it; rank 0 alone prints.
  int run(Team& team, const std::string& command_line);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace normdyn::app
