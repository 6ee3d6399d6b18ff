#pragma once
// The unit of work of a sweep: one point, run (or resumed) as a child process `normdyn run`, then
// summarized from its run file. A crash of the run ends the child, not the sweep.
//
// Jobs and their results travel as JSON text: between the threads of one process and between MPI
// processes alike. A result is also stored beside its run file (runs/<name>.json) once complete, so
// that a sweep run again reuses it as long as the run file is unchanged.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "normdyn/analysis/ensemble.hpp"

namespace normdyn::app {

enum class JobAction {
  run,        // start the run (replacing a file only with `force`)
  resume,     // continue an interrupted or killed run file (normdyn run --resume)
  summarize,  // the run is complete: only read its file
};
std::string_view to_string(JobAction a) noexcept;

struct Job {
  std::size_t index = 0;
  JobAction action = JobAction::run;
  std::filesystem::path config;  // the point's configuration (run)
  std::filesystem::path file;    // its run file
  std::filesystem::path log;     // the child's stderr
  std::filesystem::path record;  // where the result is kept (runs/<name>.json)
  bool force = false;            // run: replace an existing file
  int threads = 1;               // attention-kernel threads of the run
  analysis::FigureOptions figures;
};

// Statuses of a point besides the RunStatus names (ok, synchronized, diverged, step_underflow,
// max_steps, interrupted).
namespace point_status {
inline constexpr const char* crashed = "crashed";      // the run process died (signal); its file can be resumed
inline constexpr const char* bad_input = "bad_input";  // the run refused its input (exit 2), no file
inline constexpr const char* io_error = "io_error";    // the run or its file failed (exit 3, unreadable)
inline constexpr const char* not_run = "not_run";      // the sweep was interrupted before this point
}  // namespace point_status

// Whether a status is a finished run that a sweep run again keeps (every RunStatus but interrupted).
bool is_final_status(const std::string& status);
// Whether a status is a success (ok, synchronized).
bool is_success_status(const std::string& status);

struct JobResult {
  std::size_t index = 0;
  std::string action;  // "run", "resume", "summarize" or "cached"
  std::string status;  // a RunStatus name or one of point_status
  std::string message;
  int exit_code = -1;                    // of the child; -1 without one
  int signal = 0;                        // that ended the child
  int rank = 0;                          // process that did the job
  double elapsed_seconds = 0.0;          // wall time of the job (child and summary)
  double started = 0.0, finished = 0.0;  // seconds since the sweep started (manager's clock)
  // From the run file's /summary.
  double t_reached = std::numeric_limits<double>::quiet_NaN();
  std::int64_t frames = 0, accepted_steps = 0, rhs_evaluations = 0;
  double run_seconds = std::numeric_limits<double>::quiet_NaN();  // integration time (all sessions)
  // The run file this result was computed from: size and modification time (reuse check).
  std::int64_t file_size = -1, file_mtime_ns = -1;
  analysis::RunSeries series;
  analysis::RunFigures figures;
  double cluster_epsilon = 0.0, pair_cosine = 0.0;  // the options of the figures
};

std::string to_json(const Job& job);
Job job_from_json(const std::string& text);
std::string to_json(const JobResult& result);
JobResult result_from_json(const std::string& text);

// The stored result of a complete run, if it exists, was computed with these figure options and
// the run file has not changed since.
std::optional<JobResult> cached_result(const Job& job);

// Does the job in this thread: starts the child and waits for it (run, resume), reads the run file,
// computes the figures, stores the result beside the file. `child` holds the child's pid while it
// runs (0 otherwise), for interrupts. Never throws: failures are statuses.
JobResult execute_job(const Job& job, std::atomic<int>& child);

// Up to `slots` jobs at once, each in its own thread that waits for its child process.
class LocalSlots {
 public:
  explicit LocalSlots(int slots);
  ~LocalSlots();
  LocalSlots(const LocalSlots&) = delete;
  LocalSlots& operator=(const LocalSlots&) = delete;

  int capacity() const { return static_cast<int>(slots_.size()); }
  int running() const;
  bool has_free() const { return running() < capacity(); }
  void start(const Job& job);
  // The results finished since the last call; waits up to `timeout` when there are none yet.
  std::vector<JobResult> collect(std::chrono::milliseconds timeout);
  // Sends a signal to every running child (an interrupt of the sweep reaches its runs).
  void signal_children(int sig);

 private:
  struct Slot {
    std::thread thread;
    std::atomic<int> child{0};
    bool busy = false;
  };
  std::vector<std::unique_ptr<Slot>> slots_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::deque<std::pair<std::size_t, JobResult>> finished_;  // (slot, result)
};

// Replaces `path` by `text` atomically (write a staging file, rename).
void write_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace normdyn::app
