#pragma once
// `normdyn run`: configuration → initial state, dynamics, integrator → run file.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <chrono>

#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn::app {

class Team;

struct RunOptions {
  bool force = false;   // overwrite an existing output file
  bool quiet = false;   // no progress line, no closing line
  std::string command_line;
  // The processes of an MPI launch sharing this run (mpi.hpp): with more than one, the
  // tokens are sharded over them (sharded_dynamics.hpp) and rank 0 writes the file. Every process
  // calls run_experiment / resume_experiment with the same configuration. nullptr: this process.
  Team* team = nullptr;
};

class ProgressLine;

// The integrator settings of a configuration (all methods but "discrete").
IntegratorOptions integrator_options(const SolverConfig& solver);

// What every run does between steps and samples: progress, the flush cadence, interrupts, and the
// integration time excluding its own (summed over resumed sessions). Subclasses write the samples.
class RunRecorder : public SampleObserver {
 public:
  RunRecorder(RunWriter& writer, ProgressLine& progress, double earlier_wall_seconds);
  std::optional<RunStatus> on_step(double t, const Counters& counters) override;
  double integration_seconds() const;

 protected:
  using Clock = std::chrono::steady_clock;
  RunWriter& writer_;
  ProgressLine& progress_;
  double earlier_;
  Clock::time_point start_;
  double own_seconds_ = 0.0;  // time spent here and in on_sample, not integrating
};

// The summary of an integration that stored `frames` samples (status, counters, wall time over every session, message).
RunSummary summarize(const IntegrationResult& result, std::int64_t frames, const RunConfig& config,
                     double earlier_wall_seconds);

// The pieces of a run, built from a validated configuration (reads input files; writes nothing).
AttentionDynamics make_dynamics(const RunConfig& config);
// The attention matrices of the run (reads the qkv file, if any).
QkvSource make_qkv(const ModelConfig& m);
Tokens make_initial_tokens(const RunConfig& config);

// Runs one experiment and writes its file. Throws InputError / IoError before anything is
// written if the configuration or its input files are bad.
RunSummary run_experiment(const RunConfig& config, const RunOptions& options);
// Continues an interrupted or killed run from its last checkpoint; `config` receives its stored
// configuration. The trajectory is the one the uninterrupted run would have produced.
RunSummary resume_experiment(const std::filesystem::path& path, std::optional<int> threads, const RunOptions& options,
                             RunConfig& config);

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
