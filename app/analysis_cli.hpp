#pragma once
// The command line of the analysis: `analyze`, `plot` and `study`. Flags are parsed here into the
// typed requests of analyze.hpp, plot.hpp and study.hpp; nothing downstream sees a string option.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace normdyn::app {

class AnalysisCli {
 public:
  // Adds the subcommands to `cli`.
  explicit AnalysisCli(CLI::App& cli);
  ~AnalysisCli();
  // Whether one of its subcommands was given.
  bool parsed() const;
  // Runs it; returns the exit code. Throws InputError (naming the flag) / IoError.
  int run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace normdyn::app
