#pragma once
// In-process ensembles: the points of a sweep (sweep.hpp) integrated in one process as independent
// systems, each with its own adaptive steps and single-threaded, spread over threads (parallel over
// members), with no process or run file per member. Each member is exactly the run of its
// configuration (run_experiment with solver.threads = 1): the same steps, the same frames, bit for bit.
//
// What is kept is chosen. Per member only its figures per sample time (analysis/ensemble.hpp:
// pair fraction, cluster count, 1 − mean cosine; and the mean radius) and its summary (status,
// t_sync, final cluster count, counters); full trajectories only for the members asked for. The
// members that repeat one configuration (the values of the `over` axis of [ensemble], e.g. the
// seeds) form a group; per group and sample time:
//   pair_fraction       mean over the group of the fraction of pairs with cosine > pair_cosine
//   sync_probability    fraction of the group synchronized (every pair) by t
//   cluster_count       mean number of clusters (cosine > 1 − cluster_epsilon, single linkage)
//   one_minus_mean_cosine, mean_radius: mean and the chosen quantiles (linear interpolation, as
//                       numpy's default) over the group
// with the rule of analysis::ensemble_series: a member stopped by its synchronization stop stands
// at its last frame for the remaining times; another that ended early contributes up to its end.
//
// Resumable: with an output file, every finished member is appended to a journal beside it
// (OUT.journal); a rerun of the same ensemble keeps the members already done and integrates only
// the others. The output file is written once, atomically, when every member is done; then the
// journal is removed.
//
// Extensible: the file keeps each member's figures per frame and a digest of its resolved
// configuration (with the figure options), so an existing output is reused, never overwritten
// silently. Without force, an output that holds
//   * this very ensemble is returned as it is (read back, nothing integrated, the file untouched);
//   * a part of it (every member of the file is a member here: e.g. more seeds or new values of
//     an axis) is extended: its members are read back instead of integrated, the others run, and
//     the whole ensemble replaces the file;
//   * members that this ensemble does not have is refused (force replaces it).
// The statistics of an extended ensemble are those of the ensemble run whole, bit for bit.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "normdyn/io/grid_file.hpp"
#include "normdyn/status.hpp"
#include "normdyn/sweep.hpp"

namespace normdyn {

class Team;

struct EnsembleProgress {
  std::size_t done = 0;     // members finished, including those kept from an earlier session
  std::size_t resumed = 0;  // members kept from the journal
  std::size_t total = 0;
  double seconds = 0.0;   // wall time of this session
  bool finished = false;  // the last event
};

struct EnsembleOptions {
  // The HDF5 file of the ensemble (empty: none, and no journal: nothing is resumable).
  std::filesystem::path output;
  bool force = false;              // replace an existing output file (reusing nothing) and ignore an existing journal
  std::string output_name = "-o";  // how the caller names the output (for messages)
  std::string force_name = "--force";  // how the caller names `force`
  // The files the caller read the ensemble from (the sweep file, a configuration file), which the
  // output never replaces, as neither the base configuration nor any member's input file.
  std::vector<std::filesystem::path> inputs;
  int threads = 0;  // members at once (0: the cores this process may use)
  std::vector<double> quantiles{0.1, 0.5, 0.9};
  // Keep each member's figures per frame in the file (about 1.4 kB per member at 200 frames,
  // compressed), by which a later call reuses the members. Without them the file is smaller by
  // that much but cannot be returned or extended.
  bool member_figures = true;
  // Point indices (sweep order) whose full trajectories are kept.
  std::vector<std::size_t> trajectories;
  std::string command_line;      // stored as provenance
  std::vector<std::string> set;  // the overrides given besides the sweep file (--set), stored as provenance
  // The processes of an MPI launch (null or one process: this one alone). Every process calls
  // run_ensemble with the same spec and options; the members are spread over them (each with its
  // `threads`, default its share of the cores), rank 0 alone keeps the journal, computes the
  // statistics and writes the output; the others return rank 0's status.
  Team* team = nullptr;
  // Polled by the calling thread every few milliseconds; non-zero ends the ensemble: members
  // running are abandoned (they are integrated again on the next run), those done stay in the journal.
  std::function<int()> stop_requested;
  std::function<void(const EnsembleProgress&)> progress;  // called on the calling thread
  // Applied to every point's configuration once the sweep is expanded: arrays given with the ensemble
  // (Python's qkv=, tokens=; given.hpp). The output stores point 0's.
  std::function<void(RunConfig&)> give;
  double progress_interval = 0.2;
  // Once the journal reaches this size (or twice its size after its last rewrite) and a group is
  // complete, it is rewritten with that group's statistics in place of its members' records (0: at
  // every complete group).
  std::size_t journal_rewrite_bytes = std::size_t{64} << 20;
};

// What is kept of one member.
struct EnsembleRecord {
  RunStatus status = RunStatus::ok;
  double t_reached = 0.0;
  std::int64_t accepted_steps = 0, rhs_evaluations = 0;
  // Per recorded frame (a prefix of the sample times).
  std::vector<double> pair_fraction, cluster_count, one_minus_mean_cosine, mean_radius;
  // Only for the members of EnsembleOptions::trajectories: [frames, n, d] and [frames, n].
  std::vector<double> direction, radius;
  std::size_t frames() const { return pair_fraction.size(); }
};

struct EnsembleAxis {
  std::string key;        // configuration key
  std::string dimension;  // its dimension name (the last component of the key, unless two axes share it)
  GridValues values;      // typed coordinate values
};

struct EnsembleResult {
  std::vector<EnsembleAxis> axes;  // the group axes, in file order (every axis but `over`)
  EnsembleAxis over;               // the repetitions (dimension "member", values 0 when no axis)
  std::vector<double> time;
  std::vector<double> quantiles;
  std::size_t groups = 0, members_per_group = 0;
  // [group, time] (group row-major over `axes`)
  std::vector<double> pair_fraction, sync_probability, cluster_count, one_minus_mean_cosine, mean_radius;
  std::vector<std::int64_t> members_at;  // members contributing at each time
  // [group, quantile, time]
  std::vector<double> one_minus_mean_cosine_quantiles, mean_radius_quantiles;
  // [group, member]
  std::vector<std::int64_t> status, final_cluster_count, accepted_steps, rhs_evaluations;
  std::vector<double> t_sync, t_reached;
  // The late-time fit of 1 − mean cosine (analysis::run_figures, as `normdyn analyze` and the sweep
  // index): law (-1: no fit; else the DecayLaw), parameter and its standard error (NaN: no fit),
  // problem (0: citable; k: kProblemTokens[k − 1], why the number is not to be cited as it is).
  std::vector<std::int64_t> rate_law, rate_problem;
  std::vector<double> rate_parameter, rate_stderr;
  // Kept trajectories, in the order of EnsembleOptions::trajectories.
  std::vector<std::size_t> trajectory_points;
  std::vector<double> trajectory_direction, trajectory_radius;  // [k, time, n, d], [k, time, n]; NaN after the end
  std::int64_t n = 0, d = 0;
  // Provenance.
  std::string config_toml;  // resolved configuration of point 0
  RunConfig first_config;   // point 0's, with the arrays given with the ensemble (if any)
  std::string sweep_text;
  std::vector<std::string> set;  // EnsembleOptions::set
  std::string command_line;
  double pair_cosine = 0.999, cluster_epsilon = 1e-3;

  // [group, member, time]: each member's figures per sample time (NaN after its last frame), and
  // [group, member] its frame count and the digest (FNV-1a) of its resolved configuration with the
  // figure options, by which a later ensemble recognizes it; [k] the digest of kept trajectory k.
  std::vector<double> member_pair_fraction, member_cluster_count, member_one_minus_mean_cosine, member_mean_radius;
  std::vector<std::int64_t> member_frames, member_config, trajectory_config;
  bool member_figures = true;  // the member_* figures are written (member_config always is)
  std::string identity;        // digest of everything the file depends on (the same ensemble: the same identity)

  std::size_t members() const { return groups * members_per_group; }
  std::size_t failed = 0;  // members with a numerical failure (diverged, step_underflow, max_steps)
};

struct EnsembleOutcome {
  RunStatus status = RunStatus::ok;  // interrupted: stopped, nothing written but the journal
  std::string message;
  std::size_t resumed = 0, integrated = 0;
  std::size_t read_back = 0;  // members read back from the existing output (extended or returned)
  // Journal records dropped because their payload did not match its digest (damaged on disk):
  // their members were integrated again. The message says so.
  std::size_t journal_damaged = 0;
  bool unchanged = false;                // the output already held this ensemble: returned, not rewritten
  std::vector<std::size_t> per_process;  // rank 0 of an MPI launch: members integrated by each process
  double seconds = 0.0;
  EnsembleResult result;  // complete only when status != interrupted
};

// Runs the ensemble of `spec` (every point, grouped by spec.ensemble.over). Throws InputError before
// anything runs for bad input (points, quantiles, an existing output without force, a journal of
// another ensemble), IoError for file problems.
EnsembleOutcome run_ensemble(const SweepSpec& spec, const EnsembleOptions& options);

// The ensemble as a grid file: dimensions = the group axes, `over`, quantile, time (and trajectory,
// token, component when trajectories are kept); provenance as root attributes. The grid borrows the
// result's arrays (spans): `result` must outlive it.
GridFile ensemble_grid(const EnsembleResult& result);

}  // namespace normdyn
