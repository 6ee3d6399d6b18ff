#pragma once
// The command line of the analysis: `analyze`, `plot` and `study`. Flags are parsed here into the
// typed requests of the analysis library (its option table), plot.hpp and study.hpp; nothing
// downstream sees a string option.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace normdyn {
struct AnalyzeRequest;
}

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
  static int analyze_many(AnalyzeRequest request, const std::vector<std::filesystem::path>& runs);
  void add_study_commands(CLI::App& cli);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace normdyn::app
