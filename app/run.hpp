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
  bool force = false;      // overwrite an existing output file
  bool quiet = false;      // no progress line, no closing line
  bool size_check = true;  // refuse runs larger than memory or disk (--no-size-check turns it off)
  std::string command_line;
  // The processes of an MPI launch sharing this run (team.hpp): with more than one, the tokens are
  // sharded over them and rank 0 writes the file. nullptr: this process.
  Team* team = nullptr;
};

// How progress is shown (--progress).
enum class ProgressMode { automatic, plain, jsonl, none };
ProgressMode progress_mode_from_string(const std::string& s);

struct RunRequest {
  std::filesystem::path config;                        // empty: the built-in defaults
  std::optional<std::filesystem::path> resume;         // --resume FILE instead of a configuration
  std::optional<std::filesystem::path> from;           // --from RUN.h5: its stored configuration
  std::optional<std::filesystem::path> continue_from;  // --continue RUN.h5: from its last state ...
  std::optional<double> t_end;                         // ... to --t-end
  std::vector<std::string> sets;
  std::optional<std::filesystem::path> output;
  std::optional<int> threads;
  ProgressMode progress = ProgressMode::automatic;
  RunOptions options;
};
// The command: returns the process exit code.
int run_command(const RunRequest& request);

}  // namespace normdyn::app
