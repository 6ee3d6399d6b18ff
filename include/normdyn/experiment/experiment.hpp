#pragma once
// The experiment: configuration → system → initial state → integration → recorders, written once
// for every client (the command line, the Python package, ensembles). One entry starts a run, one
// resumes it; whether the run is a particle system, a mean-field density, or sharded over the
// processes of an MPI launch is decided here and nowhere else.
//
// Errors by kind: bad configuration or input files throw InputError, file problems IoError, both
// before anything is written; numerical outcomes (diverged, step_underflow, interrupted, ...) are
// the status of the returned summary, with every frame up to that point recorded.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn {

class Team;

// Where a run is: sent to the progress listener at most every ExperimentOptions::progress_interval
// seconds of wall time, and once at the end. Times are absolute (a resumed run continues at its
// checkpoint's t); rates are of this session.
struct ProgressEvent {
  double t = 0.0;          // the integrator's time
  double t_start = 0.0;    // where the run started (solver.t_start)
  double t_begin = 0.0;    // where this session started (t_start, or the resume point)
  double t_end = 0.0;      // the last sample time
  std::int64_t steps = 0;  // accepted steps, over every session
  std::int64_t session_steps = 0;
  double session_seconds = 0.0;  // wall time of this session so far
  std::size_t frames = 0;        // frames recorded, over every session
  std::size_t total_frames = 0;  // frames of the whole run
  bool done = false;             // the last event of the session

  // The fraction of the whole run done, over every session.
  double fraction() const { return t_end > t_start ? std::clamp((t - t_start) / (t_end - t_start), 0.0, 1.0) : 1.0; }
};

using ProgressListener = std::function<void(const ProgressEvent&)>;

struct ExperimentOptions {
  // Write the run file at config.output.path (refusing an existing file unless `force`). Without
  // it, only the recorders passed to run_experiment see the frames.
  bool write_file = true;
  bool force = false;
  std::string force_name = "--force";  // how the caller names `force` in messages (force=True)
  // The file the configuration was read from, if any: like the input files the configuration
  // names (init.file, model.qkv_file), never replaced by the run file, even with force.
  std::filesystem::path config_file;
  // Refuse (InputError naming the key) a run whose memory or run file would not fit the machine
  // (resources.hpp); off: run anyway.
  bool size_check = true;
  std::string command_line;  // stored as provenance
  // Polled after every accepted step (keep it cheap): a non-zero value ends the run with status
  // `interrupted`; the value (e.g. a signal number) is named in the summary's message.
  std::function<int()> stop_requested;
  // How to continue an interrupted run, appended to the summary's message (e.g. the command).
  std::string resume_hint;
  ProgressListener progress;
  double progress_interval = 0.2;  // seconds between progress events
  // The processes of an MPI launch sharing this run: with more than one, the tokens are sharded
  // over them and rank 0 records. Every process calls the same entry with the same
  // configuration. nullptr: this process alone.
  Team* team = nullptr;
  // resume_experiment: the user's terms supplied again (Python's terms=), matched by name to those the
  // run file records (bind_user_terms); a run that used terms is not resumed without them.
  std::vector<UserTermSpec> terms;
};

// Runs one experiment into the run file (options.write_file) and `recorders`. Throws InputError /
// IoError before anything is recorded if the configuration or its input files are bad.
RunSummary run_experiment(const RunConfig& config, const ExperimentOptions& options,
                          const std::vector<Recorder*>& recorders = {});

// Continues an interrupted or killed run file from its last checkpoint, with the same steps the
// uninterrupted run would have taken. `config` receives the stored configuration; `threads`
// overrides solver.threads. Throws InputError for a finished run or a file that is not a run.
RunSummary resume_experiment(const std::filesystem::path& path, std::optional<int> threads,
                             const ExperimentOptions& options, RunConfig& config);

// The pieces of a run, built from a validated configuration (they read input files; they write
// nothing).
// The integrator settings of a configuration's [solver] section (every method but "discrete").
IntegratorOptions integrator_options(const SolverConfig& solver);
AttentionDynamics make_dynamics(const RunConfig& config);
// The same with the block's terms given (an analysis passes the weights its run file stored).
AttentionDynamics make_dynamics(const RunConfig& config, BlockTerms terms);
// The block's terms of a run: the feed-forward term with `weights` (read_feedforward(config), or the
// weights a run file stored) and feedforward.block.
BlockTerms make_terms(const RunConfig& config, std::optional<FeedForward> weights);
// The attention matrices of the run (reads model.qkv_file, if any).
QkvSource make_qkv(const RunConfig& config);
Tokens make_initial_tokens(const RunConfig& config);
// The configuration that repeats a run from its file (`run --from`): its stored text with `sets` on
// top (parsed as from `source`), the given Q, K, V and tokens of `stored` (RunReader::config) where
// the result still asks for them, the feed-forward `weights` as run in place of feedforward.file,
// and its recorded user terms (make_terms refuses them until they are supplied).
RunConfig repeated_config(const RunConfig& stored, const std::string& text, const std::optional<FeedForward>& weights,
                          const std::string& source, const std::vector<std::string>& sets);

}  // namespace normdyn
