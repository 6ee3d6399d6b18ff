#include "sweep.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <thread>

#include <Eigen/Core>

#include "child_process.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/stopwatch.hpp"
#include "normdyn/sweep.hpp"
#include "plot.hpp"
#include "signals.hpp"
#include "sweep_index.hpp"
#include "sweep_jobs.hpp"

#ifndef NORMDYN_SWEEP_PLOT_SCRIPT
#error "NORMDYN_SWEEP_PLOT_SCRIPT must name scripts/plot_sweep.py (set by app/CMakeLists.txt)"
#endif

namespace normdyn::app {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// Messages between the manager (rank 0) and the workers.
enum Tag : int { kRequest = 1, kResult = 2, kAssign = 3, kNone = 4, kDone = 5 };
// How often a waiting process looks for messages: it sleeps in between, so that it leaves the
// cores to the runs (Open MPI's blocking receives would spin).
constexpr std::chrono::milliseconds kPoll{2};
// How often the manager rewrites the index while the sweep runs.
constexpr double kIndexSeconds = 30.0;

// Everything rank 0 knows before the first run starts: per point its name and index columns, not
// its resolved configuration (SweepPoints recomputes that where it is needed).
struct Plan {
  SweepSpec spec;
  std::vector<IndexedPoint> points;
  fs::path dir;
  std::vector<Job> jobs;                         // one per point
  std::vector<std::optional<JobResult>> reused;  // finished runs whose stored result still holds
  std::deque<std::size_t> queue;                 // points to hand out, in order
  int lock_fd = -1;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (lock_fd >= 0) ::close(lock_fd);
  }
};

// The configuration as compared with an existing run file: where it is written and with how many
// threads do not matter.
RunConfig comparable(RunConfig c) {
  c.output.path = "run.h5";
  c.solver.threads = 0;
  return c;
}

std::string first_difference(const RunConfig& stored, const RunConfig& wanted) {
  const auto a = config_values(comparable(stored));
  const auto b = config_values(comparable(wanted));
  std::map<std::string, std::string> there;
  for (const auto& [k, v] : a) there[k] = value_label(v);
  for (const auto& [k, v] : b) {
    const auto it = there.find(k);
    const std::string here = value_label(v);
    if (it == there.end()) return k + " = " + here + " here, not set there";
    if (it->second != here) return k + " = " + it->second + " there, " + here + " here";
  }
  for (const auto& [k, v] : a)
    if (std::none_of(b.begin(), b.end(), [&](const auto& kv) { return kv.first == k; }))
      return k + " = " + value_label(v) + " there, not set here";
  return "?";
}

double cost_estimate(const RunConfig& c) {
  const auto n = static_cast<double>(c.model.n), d = static_cast<double>(c.model.d);
  return n * n * d * c.solver.t_end;
}

// Creates DIR/runs, takes DIR's lock (one sweep per directory) and removes what killed runs left.
void lock_directory(Plan& plan) {
  std::error_code ec;
  fs::create_directories(plan.dir / "runs", ec);
  if (ec) throw IoError(plan.dir.string() + ": cannot create the sweep directory: " + ec.message());
  const fs::path lock = plan.dir / ".normdyn-sweep.lock";
  plan.lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (plan.lock_fd < 0) throw IoError(lock.string() + ": cannot create: " + std::strerror(errno));
  if (::flock(plan.lock_fd, LOCK_EX | LOCK_NB) != 0)
    throw IoError(plan.dir.string() + ": another normdyn sweep is working in this directory");
  // Temporary files of runs killed while creating their file: with the lock held, nobody writes them.
  for (const auto& e : fs::directory_iterator(plan.dir / "runs", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.ends_with(".tmp")) fs::remove(e.path(), ec);
  }
}

SweepSpec read_spec(const SweepRequest& request) {
  SweepSpec spec = load_sweep(request.sweep_file);
  add_overrides(spec, request.set);
  return spec;
}

// Reads the sweep, validates every point (one at a time: nothing holds the resolved
// configurations), looks at what DIR already holds. Also takes DIR's lock and writes the point
// configurations.
void plan_sweep(const SweepRequest& request, Plan& plan) {
  plan.spec = read_spec(request);
  const SweepPoints lazy(plan.spec);
  plan.dir = fs::absolute(request.output_dir).lexically_normal();
  // DIR is locked before its files are looked at; a new DIR is created only once every point has
  // passed (bad input leaves nothing behind).
  std::error_code exists_ec;
  const bool existed = fs::is_directory(plan.dir / "runs", exists_ec);
  if (existed) lock_directory(plan);
  const analysis::FigureOptions figures{plan.spec.ensemble.cluster_epsilon, plan.spec.ensemble.pair_cosine};
  std::vector<std::size_t> to_run, to_summarize;
  std::vector<double> cost(lazy.size());
  std::size_t mismatches = 0;
  std::string first_mismatch;
  plan.reused.assign(lazy.size(), std::nullopt);
  plan.points.reserve(lazy.size());
  SweepDuplicates duplicates;
  for (std::size_t index = 0; index < lazy.size(); ++index) {
    SweepPoint p = lazy.point(index);
    p.name = duplicates.check(lazy, p);
    Job job;
    job.index = p.index;
    const fs::path stem = plan.dir / "runs" / p.name;
    job.file = fs::path(stem.string() + ".h5");
    job.config = fs::path(stem.string() + ".toml");
    job.log = fs::path(stem.string() + ".log");
    job.record = fs::path(stem.string() + ".json");
    job.threads = request.threads;
    job.figures = figures;
    p.config.output.path = job.file;
    p.config.solver.threads = request.threads;
    cost[index] = cost_estimate(p.config);
    std::error_code ec;
    if (!fs::exists(job.file, ec)) {
      job.action = JobAction::run;
    } else if (request.force) {
      job.action = JobAction::run;
      job.force = true;
    } else {
      try {
        const RunReader reader(job.file);
        const RunConfig stored = reader.config();
        if (to_toml(comparable(stored)) != to_toml(comparable(p.config))) {
          if (mismatches++ == 0) first_mismatch = job.file.string() + " (" + first_difference(stored, p.config) + ")";
        }
        const auto summary = reader.summary();
        job.action = summary && summary->status != RunStatus::interrupted ? JobAction::summarize : JobAction::resume;
      } catch (const std::exception&) {
        job.action = JobAction::summarize;  // unreadable: the job records why
      }
    }
    if (job.action == JobAction::summarize) {
      plan.reused[p.index] = cached_result(job);
      if (!plan.reused[p.index]) to_summarize.push_back(p.index);
    } else {
      to_run.push_back(p.index);
    }
    plan.jobs.push_back(std::move(job));
    plan.points.push_back({p.index, std::move(p.coordinates), std::move(p.name), column_values(plan.spec, p.config)});
  }
  if (mismatches > 0)
    throw InputError("SWEEP", std::to_string(mismatches) + " run file" + (mismatches > 1 ? "s" : "") +
                                  " in the directory hold a different configuration than the sweep gives them, e.g. " +
                                  first_mismatch + "; write to another -o DIR, or pass --force to run them again");
  // The costliest runs first (n² d t_end), so that no long run starts last; then the summaries.
  std::stable_sort(to_run.begin(), to_run.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  plan.queue.assign(to_run.begin(), to_run.end());
  plan.queue.insert(plan.queue.end(), to_summarize.begin(), to_summarize.end());
  if (!existed) lock_directory(plan);
  write_atomically(plan.dir / "sweep.toml", plan.spec.text);
  // Written once every point has passed (a bad point leaves nothing behind), each resolved again.
  for (const auto& job : plan.jobs) {
    if (job.action != JobAction::run) continue;
    RunConfig c = lazy.point(job.index).config;
    c.output.path = job.file;
    c.solver.threads = request.threads;
    write_atomically(job.config, to_toml(c));
  }
}

// --list: the points and what would be done with each, streamed. Names and values come from the
// sweep file as written; each value of each axis is validated once (with the other axes at their
// first value), every point before a run. Touches nothing.
void list_sweep(const SweepRequest& request, bool print) {
  const SweepSpec spec = read_spec(request);
  const SweepPoints lazy(spec);
  for (std::size_t a = 0, stride = lazy.size(); a < spec.axes.size(); ++a) {
    stride /= spec.axes[a].values.size();
    for (std::size_t v = 0; v < spec.axes[a].values.size(); ++v) (void)lazy.point(v * stride);
  }
  if (spec.axes.empty()) (void)lazy.point(0);
  if (!print) return;
  const fs::path dir = fs::absolute(request.output_dir).lexically_normal();
  std::error_code ec;
  const bool has_runs = fs::is_directory(dir / "runs", ec);
  const analysis::FigureOptions figures{spec.ensemble.cluster_epsilon, spec.ensemble.pair_cosine};
  std::printf("%zu points in %s (first axis slowest):\n", lazy.size(), dir.c_str());
  std::string line;
  for (std::size_t index = 0; index < lazy.size(); ++index) {
    const std::string name = lazy.name(index);
    const char* action = "run";
    const fs::path stem = dir / "runs" / name;
    if (has_runs && fs::exists(stem.string() + ".h5", ec)) {
      if (request.force) {
        action = "run again";
      } else {
        Job job;
        job.index = index;
        job.file = stem.string() + ".h5";
        job.record = stem.string() + ".json";
        job.figures = figures;
        bool finished = false;
        try {
          const auto summary = RunReader(job.file).summary();
          finished = summary && summary->status != RunStatus::interrupted;
        } catch (const std::exception&) {
          finished = true;
        }
        action = !finished ? "resume" : cached_result(job) ? "done" : "summarize";
      }
    }
    std::printf("%5zu  %-10s %s  (%s)\n", index, action, name.c_str(), lazy.describe(index, true).c_str());
  }
}

// The manager: hands out the points to its own slots and, under MPI, to the workers.
class Manager {
 public:
  Manager(Plan& plan, const SweepRequest& request, int jobs, Team* team)
      : plan_(plan), request_(request), slots_(jobs), team_(team), jobs_(jobs) {
    results_.resize(plan.points.size());
    for (std::size_t i = 0; i < results_.size(); ++i) {
      results_[i].index = i;
      results_[i].status = point_status::not_run;
      results_[i].message = "not run: the sweep was interrupted";
      results_[i].figures.final_variance = results_[i].figures.final_one_minus_mean_cosine =
          results_[i].figures.final_pair_fraction = results_[i].figures.t_sync =
              std::numeric_limits<double>::quiet_NaN();
      if (plan.reused[i]) {
        results_[i] = *plan.reused[i];
        results_[i].started = results_[i].finished = 0.0;
        ++reused_;
      }
    }
    started_.assign(plan.points.size(), 0.0);
    workers_ = team ? team->size() - 1 : 0;
  }

  int run() {
    if (!request_.quiet && reused_ > 0)
      std::fprintf(stderr, "normdyn sweep: %zu of %zu points finished earlier (files unchanged)\n", reused_,
                   results_.size());
    total_to_do_ = plan_.queue.size();
    bool forwarded = false;
    double last_index = 0.0;
    while (true) {
      if (interrupt_requested() && !forwarded) {
        forwarded = true;
        stop_ = true;
        slots_.signal_children(interrupt_signal());
      }
      while (slots_.has_free()) {
        auto job = next();
        if (!job) break;
        slots_.start(*job);
      }
      if (team_) handle_messages();
      for (auto& r : slots_.collect(team_ ? kPoll : std::chrono::milliseconds(250))) {
        r.rank = team_ ? team_->rank() : 0;
        record(std::move(r));
      }
      if (seconds_since(t0_) - last_index > kIndexSeconds) {
        last_index = seconds_since(t0_);
        write(false);
      }
      const bool work_left = !stop_ && !plan_.queue.empty();
      if (!work_left && slots_.running() == 0 && workers_done_ == workers_) break;
    }
    write(true);
    return finish();
  }

 private:
  std::optional<Job> next() {
    if (stop_ || plan_.queue.empty()) return std::nullopt;
    const std::size_t i = plan_.queue.front();
    plan_.queue.pop_front();
    started_[i] = seconds_since(t0_);
    return plan_.jobs[i];
  }

  void handle_messages() {
    while (auto m = team_->try_receive()) {
      switch (m->tag) {
        case kResult:
          record(result_from_json(m->text));
          [[fallthrough]];
        case kRequest:
          if (auto job = next())
            team_->send(m->source, kAssign, to_json(*job));
          else
            team_->send(m->source, kNone, "");
          break;
        case kDone:
          ++workers_done_;
          break;
        default:
          break;
      }
    }
  }

  void record(JobResult r) {
    r.started = started_[r.index];
    r.finished = seconds_since(t0_);
    // A run interrupted anywhere (a signal, or a worker that stopped) stops the hand-out.
    if (r.status == "interrupted" || r.status == point_status::not_run) stop_ = true;
    busy_[r.rank] += r.elapsed_seconds;
    ++runs_of_[r.rank];
    ++done_;
    if (!request_.quiet) {
      const int width = static_cast<int>(std::to_string(total_to_do_).size());
      // The sweep's time left from its own throughput so far (runs overlap in the slots).
      std::string eta;
      if (done_ < total_to_do_ && done_ >= 2)
        eta = ", sweep ETA " +
              std::to_string(static_cast<long long>(std::ceil(seconds_since(t0_) / static_cast<double>(done_) *
                                                              static_cast<double>(total_to_do_ - done_)))) +
              " s";
      std::fprintf(stderr, "[%*zu/%zu] %s: %s (%.3g s%s%s)%s%s\n", width, done_, total_to_do_,
                   plan_.points[r.index].name.c_str(), r.status.c_str(), r.elapsed_seconds,
                   team_ ? (", rank " + std::to_string(r.rank)).c_str() : "", eta.c_str(),
                   is_success_status(r.status) ? "" : ": ", is_success_status(r.status) ? "" : r.message.c_str());
    }
    results_[r.index] = std::move(r);
  }

  void write(bool complete) {
    IndexContent c;
    c.spec = &plan_.spec;
    c.points = &plan_.points;
    c.results = &results_;
    c.command_line = request_.command_line;
    c.ranks = team_ ? team_->size() : 1;
    c.jobs_per_rank = jobs_;
    c.wall_seconds = seconds_since(t0_);
    c.complete = complete;
    write_index(plan_.dir, c);
  }

  int finish() {
    std::map<std::string, std::size_t> by_status, by_action;
    for (const auto& r : results_) {
      ++by_status[r.status];
      if (!r.action.empty())
        ++by_action[r.action == "cached"   ? "reused"
                    : r.action == "run"    ? "run"
                    : r.action == "resume" ? "resumed"
                                           : "summarized"];
    }
    bool all_good = true;
    for (const auto& [status, count] : by_status) all_good = all_good && is_success_status(status);
    const int code = interrupt_requested() || by_status.count("interrupted") || by_status.count(point_status::not_run)
                         ? static_cast<int>(ExitCode::interrupted)
                     : all_good ? 0
                                : static_cast<int>(ExitCode::numerical_failure);
    if (request_.quiet && code == 0) return code;
    std::string statuses, actions;
    for (const auto& [s, n] : by_status) statuses += (statuses.empty() ? "" : ", ") + std::to_string(n) + " " + s;
    for (const auto& [a, n] : by_action) actions += (actions.empty() ? "" : ", ") + std::to_string(n) + " " + a;
    const double wall = seconds_since(t0_);
    std::printf("normdyn sweep: %zu points: %s (%s) in %.3g s\n", results_.size(), statuses.c_str(), actions.c_str(),
                wall);
    if (done_ > 0) {
      double busy = 0.0;
      for (const auto& [rank, b] : busy_) busy += b;
      std::printf("  %d process%s x %d job%s; run time %.3g s in all", team_ ? team_->size() : 1,
                  team_ && team_->size() > 1 ? "es" : "", jobs_, jobs_ > 1 ? "s" : "", busy);
      if (team_ && team_->size() > 1) {
        std::printf("; busy per rank:");
        for (const auto& [rank, b] : busy_) std::printf(" %d: %.3g s (%zu)", rank, b, runs_of_[rank]);
      }
      std::printf("\n");
    }
    std::printf("  index: %s, %s\n", (plan_.dir / "index.h5").c_str(), (plan_.dir / "index.csv").c_str());
    std::size_t shown = 0;
    for (const auto& r : results_) {
      if (is_success_status(r.status) || r.status == point_status::not_run) continue;
      if (shown++ == 10) {
        std::printf("  ... (the index lists every status)\n");
        break;
      }
      std::printf("  %s: %s: %s\n", plan_.points[r.index].name.c_str(), r.status.c_str(), r.message.c_str());
    }
    std::fflush(stdout);
    return code;
  }

  Plan& plan_;
  const SweepRequest& request_;
  LocalSlots slots_;
  Team* team_;
  int jobs_;
  int workers_ = 0;
  int workers_done_ = 0;
  bool stop_ = false;
  std::vector<JobResult> results_;
  std::vector<double> started_;
  std::map<int, double> busy_;
  std::map<int, std::size_t> runs_of_;
  std::size_t reused_ = 0, done_ = 0, total_to_do_ = 0;
  Clock::time_point t0_ = Clock::now();
};

// A worker (rank > 0): asks rank 0 for a point whenever one of its slots is free, runs it, returns
// the result; stops when every slot has been told there is nothing left.
void work(Team& team, int jobs) {
  LocalSlots slots(jobs);
  for (int i = 0; i < jobs; ++i) team.send(0, kRequest, "");
  int retired = 0;
  bool forwarded = false;
  while (true) {
    if (interrupt_requested() && !forwarded) {
      forwarded = true;
      slots.signal_children(interrupt_signal());
    }
    while (auto m = team.try_receive()) {
      if (m->tag == kNone) {
        ++retired;
      } else if (m->tag == kAssign) {
        const Job job = job_from_json(m->text);
        if (interrupt_requested()) {  // hand it back unrun; the manager stops handing out
          JobResult r;
          r.index = job.index;
          r.rank = team.rank();
          r.status = point_status::not_run;
          r.message = "not run: the sweep was interrupted";
          team.send(0, kResult, to_json(r));
        } else {
          slots.start(job);
        }
      }
    }
    for (auto& r : slots.collect(kPoll)) {
      r.rank = team.rank();
      team.send(0, kResult, to_json(r));
    }
    if (retired == jobs && slots.running() == 0) break;
  }
  team.send(0, kDone, "");
}

int run_plot(const fs::path& dir) {
  const char* env = std::getenv("NORMDYN_SWEEP_PLOT_SCRIPT");
  const fs::path script = env && *env ? fs::path(env) : fs::path(NORMDYN_SWEEP_PLOT_SCRIPT);
  if (!fs::exists(script)) throw IoError(script.string() + ": plot script not found (set NORMDYN_SWEEP_PLOT_SCRIPT)");
  const std::filesystem::path python = plot_python();
  const ChildOutcome outcome = run_child_process({python.string(), script.string(), dir.string()});
  if (outcome.exit_code != 0) explain_python_failure(python);
  return outcome.signal ? static_cast<int>(ExitCode::io_failure) : outcome.exit_code;
}

}  // namespace

int sweep_command(const SweepRequest& request) {
  install_interrupt_handlers();
  // The figures of each run are computed in the thread that waited for it; parallelism is across
  // runs. Eigen's own OpenMP products inside those threads made each summary 25x slower (a team of
  // spinning threads per slot thread): one thread per product.
  Eigen::setNbThreads(1);
  Team* team = request.team && request.team->size() > 1 ? request.team : nullptr;
  const bool root = !team || team->is_root();
  // Runs at once: the cores this process may use (its binding under mpirun, its share of the
  // machine among the processes on it) divided by the threads of each run.
  const int cores = request.team ? request.team->cores() : 1;
  const int jobs = request.jobs > 0 ? request.jobs : std::max(1, cores / std::max(1, request.threads));
  if (!request.list && !request.quiet && jobs * request.threads > cores)
    std::fprintf(stderr, "normdyn sweep: %s%d job%s x %d thread%s on %d core%s%s: the runs will share cores\n",
                 team ? ("rank " + std::to_string(team->rank()) + ": ").c_str() : "", jobs, jobs > 1 ? "s" : "",
                 request.threads, request.threads > 1 ? "s" : "", cores, cores > 1 ? "s" : "",
                 team ? " (its binding; mpirun --bind-to none lifts it)" : "");

  if (request.list) {  // every process reads the sweep (errors alike everywhere); rank 0 prints
    list_sweep(request, root);
    return 0;
  }
  Plan plan;
  if (root) plan_sweep(request, plan);
  if (team) {
    if (const int code = team->agree(0); code != 0) throw PeerFailure{code};
  }
  if (!root) {
    work(*team, jobs);
    return team->max(0);  // rank 0's exit code
  }
  int code = Manager(plan, request, jobs, team).run();
  if (team) team->max(code);  // the workers exit with rank 0's code
  if (request.plot && code != static_cast<int>(ExitCode::interrupted)) {
    const int plotted = run_plot(plan.dir);
    if (plotted != 0 && code == 0) code = plotted;
  }
  return code;
}

}  // namespace normdyn::app
