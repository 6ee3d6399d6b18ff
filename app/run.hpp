#pragma once
// `normdyn run`: configuration → initial state, dynamics, integrator → run file.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/io/run_file.hpp"

namespace normdyn::app {

struct RunOptions {
  bool force = false;   // overwrite an existing output file
  bool quiet = false;   // no progress line, no closing line
  std::string command_line;
};

// The pieces of a run, built from a validated configuration (reads input files; writes nothing).
AttentionDynamics make_dynamics(const RunConfig& config);
Tokens make_initial_tokens(const RunConfig& config);

// Runs one experiment and writes its file. Throws InputError / IoError before anything is
// written if the configuration or its input files are bad.
RunSummary run_experiment(const RunConfig& config, const RunOptions& options);

struct RunRequest {
  std::filesystem::path config;
  std::vector<std::string> sets;
  std::optional<std::filesystem::path> output;
  std::optional<int> threads;
  RunOptions options;
};
// The command: returns the process exit code.
int run_command(const RunRequest& request);

}  // namespace normdyn::app
