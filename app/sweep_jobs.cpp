#include "sweep_jobs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "child_process.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/io/text_file.hpp"
#include "normdyn/status.hpp"
#include "normdyn/stopwatch.hpp"

extern char** environ;

namespace normdyn::app {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double number_of(const json& j) { return j.is_null() ? kNaN : j.get<double>(); }
json numbers(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}
std::vector<double> numbers_of(const json& j) {
  std::vector<double> out;
  for (const auto& x : j) out.push_back(number_of(x));
  return out;
}

std::filesystem::path self_executable() {
  static const std::filesystem::path path = [] {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw IoError("cannot find the normdyn executable (/proc/self/exe): " + ec.message());
    return p;
  }();
  return path;
}

// Runs `normdyn <args>` as a child process with stdout discarded and stderr in `log`, MPI off
// (NORMDYN_MPI=0), and SIGTERM when this thread dies (a killed sweep leaves no run behind).
ChildOutcome run_child(const std::vector<std::string>& args, const std::filesystem::path& log,
                       std::atomic<int>& child) {
  std::vector<std::string> argv{self_executable().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildOptions options;
  options.environment.emplace();
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "NORMDYN_MPI=", 12) != 0) options.environment->emplace_back(*e);
  options.environment->emplace_back("NORMDYN_MPI=0");
  options.stderr_file = log;
  options.discard_stdio = true;
  options.die_with_parent = true;
  options.pid = &child;
  return run_child_process(argv, options);
}

std::string last_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  // "normdyn: error: model.beta: ..." → "model.beta: ..."
  for (const char* prefix : {"normdyn: error: ", "normdyn: "})
    if (last.rfind(prefix, 0) == 0) return last.substr(std::strlen(prefix));
  return last;
}

void file_stamp(const std::filesystem::path& file, std::int64_t& size, std::int64_t& mtime_ns) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    size = mtime_ns = -1;
    return;
  }
  size = static_cast<std::int64_t>(st.st_size);
  mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Reads the run file: its summary and the figures of every frame.
void summarize_file(const Job& job, JobResult& r) {
  const RunReader reader(job.file);
  if (const auto summary = reader.summary()) {
    r.status = std::string(to_string(summary->status));
    r.message = summary->message;
    r.t_reached = summary->t_reached;
    r.frames = summary->frames;
    r.accepted_steps = summary->accepted_steps;
    r.rhs_evaluations = summary->rhs_evaluations;
    r.run_seconds = summary->wall_seconds;
  } else {
    r.status = point_status::crashed;
    std::string why =
        r.signal ? "the run process was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")"
                 : "the run process exited with code " + std::to_string(r.exit_code);
    const std::string detail = last_line(job.log);
    r.message = why + " before finishing its file" + (detail.empty() ? "" : ": " + detail) +
                "; the sweep resumes it when run again";
    r.frames = static_cast<std::int64_t>(reader.frames());
  }
  const std::vector<double> times = reader.times();
  for (std::size_t i = 0; i < times.size(); ++i)
    r.series.push_back(times[i], analysis::frame_figures(reader.frame(i).theta, job.figures));
  r.figures = analysis::run_figures(r.series);
}

}  // namespace

std::string_view to_string(JobAction a) noexcept {
  switch (a) {
    case JobAction::run:
      return "run";
    case JobAction::resume:
      return "resume";
    case JobAction::summarize:
      return "summarize";
  }
  return "?";
}

bool is_final_status(const std::string& status) {
  const auto s = run_status_from_string(status);
  return s && *s != RunStatus::interrupted;
}

bool is_success_status(const std::string& status) { return status == "ok" || status == "synchronized"; }

std::string to_json(const Job& job) {
  return json{{"index", job.index},
              {"action", std::string(to_string(job.action))},
              {"config", job.config.string()},
              {"file", job.file.string()},
              {"log", job.log.string()},
              {"record", job.record.string()},
              {"force", job.force},
              {"threads", job.threads},
              {"cluster_epsilon", job.figures.cluster_epsilon},
              {"pair_cosine", job.figures.pair_cosine}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

Job job_from_json(const std::string& text) {
  const json j = json::parse(text);
  Job job;
  job.index = j.at("index").get<std::size_t>();
  const std::string action = j.at("action").get<std::string>();
  job.action = action == "resume" ? JobAction::resume : action == "summarize" ? JobAction::summarize : JobAction::run;
  job.config = j.at("config").get<std::string>();
  job.file = j.at("file").get<std::string>();
  job.log = j.at("log").get<std::string>();
  job.record = j.at("record").get<std::string>();
  job.force = j.at("force").get<bool>();
  job.threads = j.at("threads").get<int>();
  job.figures.cluster_epsilon = j.at("cluster_epsilon").get<double>();
  job.figures.pair_cosine = j.at("pair_cosine").get<double>();
  return job;
}

std::string to_json(const JobResult& r) {
  const analysis::RateFit& fit = r.figures.rate;
  json j{{"index", r.index},
         {"action", r.action},
         {"status", r.status},
         {"message", r.message},
         {"exit_code", r.exit_code},
         {"signal", r.signal},
         {"rank", r.rank},
         {"elapsed_seconds", number(r.elapsed_seconds)},
         {"started", number(r.started)},
         {"finished", number(r.finished)},
         {"t_reached", number(r.t_reached)},
         {"frames", r.frames},
         {"accepted_steps", r.accepted_steps},
         {"rhs_evaluations", r.rhs_evaluations},
         {"run_seconds", number(r.run_seconds)},
         {"file_size", r.file_size},
         {"file_mtime_ns", r.file_mtime_ns},
         {"cluster_epsilon", r.cluster_epsilon},
         {"pair_cosine", r.pair_cosine},
         {"series",
          {{"t", numbers(r.series.t)},
           {"variance", numbers(r.series.variance)},
           {"one_minus_mean_cosine", numbers(r.series.one_minus_mean_cosine)},
           {"cluster_count", numbers(r.series.cluster_count)},
           {"pair_fraction", numbers(r.series.pair_fraction)}}},
         {"figures",
          {{"final_variance", number(r.figures.final_variance)},
           {"final_one_minus_mean_cosine", number(r.figures.final_one_minus_mean_cosine)},
           {"final_cluster_count", r.figures.final_cluster_count},
           {"final_pair_fraction", number(r.figures.final_pair_fraction)},
           {"t_sync", number(r.figures.t_sync)},
           {"rate_ok", fit.ok},
           {"rate_problem", fit.problem},
           {"rate_law", std::string(analysis::to_string(fit.law))},
           {"rate_parameter", number(fit.parameter)},
           {"rate_stderr", number(fit.parameter_stderr)},
           {"rate_window", {number(fit.window.t_start), number(fit.window.t_end)}},
           {"rate_decay_factor", number(fit.decay_factor)},
           {"rate_systematic", number(fit.systematic)},
           {"rate_problem_detail", fit.detail}}}};
  // Messages come from run files and logs: invalid UTF-8 is replaced rather than refused.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

JobResult result_from_json(const std::string& text) {
  const json j = json::parse(text);
  JobResult r;
  r.index = j.at("index").get<std::size_t>();
  r.action = j.at("action").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.message = j.at("message").get<std::string>();
  r.exit_code = j.at("exit_code").get<int>();
  r.signal = j.at("signal").get<int>();
  r.rank = j.at("rank").get<int>();
  r.elapsed_seconds = number_of(j.at("elapsed_seconds"));
  r.started = number_of(j.at("started"));
  r.finished = number_of(j.at("finished"));
  r.t_reached = number_of(j.at("t_reached"));
  r.frames = j.at("frames").get<std::int64_t>();
  r.accepted_steps = j.at("accepted_steps").get<std::int64_t>();
  r.rhs_evaluations = j.at("rhs_evaluations").get<std::int64_t>();
  r.run_seconds = number_of(j.at("run_seconds"));
  r.file_size = j.at("file_size").get<std::int64_t>();
  r.file_mtime_ns = j.at("file_mtime_ns").get<std::int64_t>();
  r.cluster_epsilon = j.at("cluster_epsilon").get<double>();
  r.pair_cosine = j.at("pair_cosine").get<double>();
  const json& s = j.at("series");
  r.series.t = numbers_of(s.at("t"));
  r.series.variance = numbers_of(s.at("variance"));
  r.series.one_minus_mean_cosine = numbers_of(s.at("one_minus_mean_cosine"));
  r.series.cluster_count = numbers_of(s.at("cluster_count"));
  r.series.pair_fraction = numbers_of(s.at("pair_fraction"));
  const json& f = j.at("figures");
  r.figures.final_variance = number_of(f.at("final_variance"));
  r.figures.final_one_minus_mean_cosine = number_of(f.at("final_one_minus_mean_cosine"));
  r.figures.final_cluster_count = f.at("final_cluster_count").get<std::int64_t>();
  r.figures.final_pair_fraction = number_of(f.at("final_pair_fraction"));
  r.figures.t_sync = number_of(f.at("t_sync"));
  analysis::RateFit& fit = r.figures.rate;
  fit.ok = f.at("rate_ok").get<bool>();
  fit.problem = f.at("rate_problem").get<std::string>();
  fit.law =
      analysis::decay_law_from_string(f.at("rate_law").get<std::string>()).value_or(analysis::DecayLaw::exponential);
  fit.parameter = number_of(f.at("rate_parameter"));
  fit.parameter_stderr = number_of(f.at("rate_stderr"));
  fit.window = {number_of(f.at("rate_window").at(0)), number_of(f.at("rate_window").at(1))};
  fit.decay_factor = number_of(f.at("rate_decay_factor"));
  // Records written before the problem tokens lack these (and their rate_problem is a sentence).
  fit.systematic = f.contains("rate_systematic") ? number_of(f.at("rate_systematic")) : kNaN;
  fit.detail = f.contains("rate_problem_detail") ? f.at("rate_problem_detail").get<std::string>() : std::string();
  return r;
}

std::optional<JobResult> cached_result(const Job& job) {
  struct stat st {};
  if (::lstat(job.record.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
  // A record is a few kilobytes; a FIFO there would block the sweep, a device fill its memory.
  const std::string text = read_text_file(job.record, job.record.string(), "sweep record (runs/*.json)");
  try {
    JobResult r = result_from_json(text);
    std::int64_t size = -1, mtime = -1;
    file_stamp(job.file, size, mtime);
    if (r.index != job.index || !is_final_status(r.status) || r.file_size != size || r.file_mtime_ns != mtime ||
        r.cluster_epsilon != job.figures.cluster_epsilon || r.pair_cosine != job.figures.pair_cosine)
      return std::nullopt;
    r.action = "cached";
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: recompute
  }
}

JobResult execute_job(const Job& job, std::atomic<int>& child) {
  const auto start = Clock::now();
  JobResult r;
  r.index = job.index;
  r.action = std::string(to_string(job.action));
  r.cluster_epsilon = job.figures.cluster_epsilon;
  r.pair_cosine = job.figures.pair_cosine;
  try {
    if (job.action != JobAction::summarize) {
      std::vector<std::string> args{"run"};
      if (job.action == JobAction::resume)
        args.insert(args.end(), {"--resume", job.file.string()});
      else
        args.insert(args.end(), {job.config.string(), "-o", job.file.string()});
      if (job.force && job.action == JobAction::run) args.push_back("--force");
      args.insert(args.end(), {"-q", "--threads", std::to_string(job.threads)});
      const ChildOutcome outcome = run_child(args, job.log, child);
      r.exit_code = outcome.exit_code;
      r.signal = outcome.signal;
    }
    std::error_code ec;
    if (std::filesystem::exists(job.file, ec)) {
      summarize_file(job, r);
    } else {
      const std::string detail = last_line(job.log);
      if (r.signal) {
        r.status = point_status::crashed;
        r.message = "the run process was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) +
                    ") before creating its file" + (detail.empty() ? "" : ": " + detail);
      } else {
        r.status =
            r.exit_code == static_cast<int>(ExitCode::bad_input) ? point_status::bad_input : point_status::io_error;
        r.message = detail.empty() ? "the run process exited with code " + std::to_string(r.exit_code) + " and no file"
                                   : detail;
      }
    }
  } catch (const std::exception& e) {
    r.status = point_status::io_error;
    r.message = e.what();
    if (job.action == JobAction::summarize)
      r.message += "; remove " + job.file.filename().string() + " or pass --force to run the point again";
  }
  std::error_code ec;
  if (std::filesystem::exists(job.log, ec) && std::filesystem::file_size(job.log, ec) == 0)
    std::filesystem::remove(job.log, ec);
  file_stamp(job.file, r.file_size, r.file_mtime_ns);
  r.elapsed_seconds = seconds_since(start);
  if (is_final_status(r.status)) {
    try {
      write_atomically(job.record, to_json(r));
    } catch (const std::exception&) {
      // Only a cache: the next sweep recomputes it.
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
LocalSlots::LocalSlots(int slots) {
  for (int i = 0; i < std::max(1, slots); ++i) slots_.push_back(std::make_unique<Slot>());
}

LocalSlots::~LocalSlots() {
  for (auto& s : slots_)
    if (s->thread.joinable()) s->thread.join();
}

int LocalSlots::running() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& s : slots_) n += s->busy ? 1 : 0;
  return n;
}

void LocalSlots::start(const Job& job) {
  std::size_t free_slot = slots_.size();
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i]->busy) {
        free_slot = i;
        slots_[i]->busy = true;
        break;
      }
  }
  if (free_slot == slots_.size()) throw std::logic_error("LocalSlots::start without a free slot");
  Slot& slot = *slots_[free_slot];
  if (slot.thread.joinable()) slot.thread.join();
  slot.thread = std::thread([this, &slot, free_slot, job] {
    JobResult r = execute_job(job, slot.child);
    {
      std::lock_guard lock(mutex_);
      finished_.emplace_back(free_slot, std::move(r));
    }
    done_.notify_all();
  });
}

std::vector<JobResult> LocalSlots::collect(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (finished_.empty()) done_.wait_for(lock, timeout, [&] { return !finished_.empty(); });
  std::vector<JobResult> out;
  while (!finished_.empty()) {
    auto [slot, result] = std::move(finished_.front());
    finished_.pop_front();
    slots_[slot]->busy = false;
    out.push_back(std::move(result));
  }
  return out;
}

void LocalSlots::signal_children(int sig) {
  for (auto& s : slots_)
    if (const int pid = s->child.load(); pid > 0) ::kill(pid, sig);
}

// A reader sees the old file or the new one, never a part: the text goes to a staging file of this
// process, which is renamed over `path`.
void write_atomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path staging = path;
  staging += ".normdyn-" + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(staging, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw IoError(staging.string() + ": cannot write");
  }
  std::error_code ec;
  std::filesystem::rename(staging, path, ec);
  if (ec) throw IoError(path.string() + ": cannot write: " + ec.message());
}

}  // namespace normdyn::app
