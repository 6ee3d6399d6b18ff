#pragma once
// `normdyn run`: flags → the experiment library (normdyn/experiment/experiment.hpp), with the
// progress line, the interrupt signals and the closing line.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace normdyn {
class Team;
}

namespace normdyn::app {

struct RunOptions {
  bool force = false;   // overwrite an existing output file
  bool quiet = false;   // no progress line, no closing line
  std::string command_line;
  // The processes of an MPI launch sharing this run (team.hpp): with more than one, the tokens are
  // sharded over them and rank 0 writes the file. nullptr: this process.
  Team* team = nullptr;
};

struct RunRequest {
  std::filesystem::path config;
  std::optional<std::filesystem::path> resume;  // --resume FILE instead of a configuration
  std::vector<std::string> sets;
  std::optional<std::filesystem::path> output;
  std::optional<int> threads;
  RunOptions options;
};
// The command: returns the process exit code.
int run_command(const RunRequest& request);

}  // namespace normdyn::app
