// In-process ensembles: a member is the single run of its configuration bit for bit; the group
// statistics are those of the members' own trajectories; an interrupted ensemble resumes to the
// file of the uninterrupted one; bad input is refused before anything runs.
#define BOOST_TEST_MODULE ensemble
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <bit>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "normdyn/analysis/ensemble.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/ensemble.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/io/file_lock.hpp"
#include "normdyn/io/grid_file.hpp"
#include "tolerances.hpp"

namespace fs = std::filesystem;
using namespace normdyn;

namespace {

// The journal's record markers (experiment/ensemble.cpp): a member's, a group's statistics'.
constexpr std::uint64_t kMemberMark = 0x4e44454e53524543ULL, kGroupMark = 0x4e4447524f555053ULL;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string mark_bytes(std::uint64_t mark) { return std::string(reinterpret_cast<const char*>(&mark), sizeof mark); }

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("normdyn_ensemble_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// 2 values of β × 3 seeds of 8 tokens in R^3, Pre-LN (radii move), a few time units.
SweepSpec small_sweep(const std::string& extra = "") {
  return parse_sweep(
      "[set]\n\"model.scheme\" = \"pre\"\n\"model.n\" = 8\n\"model.d\" = 3\n\"solver.t_end\" = 6.0\n"
      "\"output.samples\" = 13\n" +
          extra + "[axes]\n\"model.beta\" = [1.0, 4.0]\n\"init.seed\" = [1, 2, 3]\n",
      "test.toml");
}

// What the file holds: every dimension, variable and attribute, bit for bit (HDF5 records object
// times, so the files' bytes differ; tests/python compares the files themselves).
bool same_grid(const GridFile& a, const GridFile& b) {
  auto same_values = [](const GridValues& x, const GridValues& y) {
    if (x.index() != y.index()) return false;
    return std::visit(
        [&](const auto& u) {
          using T = std::decay_t<decltype(u)>;
          const auto& v = std::get<T>(y);
          if constexpr (std::is_same_v<T, std::vector<std::string>>)
            return u == v;
          else
            return u.size() == v.size() && std::memcmp(u.data(), v.data(), u.size() * sizeof(u[0])) == 0;
        },
        x);
  };
  if (a.attributes != b.attributes || a.dimensions.size() != b.dimensions.size() ||
      a.variables.size() != b.variables.size())
    return false;
  for (std::size_t i = 0; i < a.dimensions.size(); ++i)
    if (a.dimensions[i].name != b.dimensions[i].name ||
        !same_values(a.dimensions[i].coordinate, b.dimensions[i].coordinate))
      return false;
  for (std::size_t i = 0; i < a.variables.size(); ++i)
    if (a.variables[i].name != b.variables[i].name || a.variables[i].dimensions != b.variables[i].dimensions ||
        !same_values(a.variables[i].values, b.variables[i].values))
      return false;
  return true;
}

// The ensemble of `o` run whole (to whole.h5), then to parts.h5 with a stop asked for once
// `stop_after` members are done. The stop is seen by the calling thread while the worker goes on:
// on a loaded machine the worker may finish more members, every one even (the journal then holds
// them all, and nothing is published). `parts` continues it when run again.
struct Interrupted {
  EnsembleOutcome whole, first;
  EnsembleOptions parts;
};
Interrupted interrupted_after(const TempDir& dir, const SweepSpec& spec, EnsembleOptions o, std::size_t stop_after) {
  Interrupted r;
  o.output = dir.path / "whole.h5";
  r.whole = run_ensemble(spec, o);
  BOOST_REQUIRE(r.whole.status == RunStatus::ok);
  BOOST_CHECK(fs::exists(o.output));
  BOOST_CHECK(!fs::exists(dir.path / "whole.h5.journal"));
  r.parts = o;
  r.parts.output = dir.path / "parts.h5";
  std::size_t done = 0;
  r.parts.progress_interval = 0.0;
  r.parts.progress = [&done](const EnsembleProgress& e) { done = e.done; };
  r.parts.stop_requested = [&done, stop_after] { return done >= stop_after ? SIGINT : 0; };
  r.first = run_ensemble(spec, r.parts);
  r.parts.progress = nullptr;
  r.parts.stop_requested = nullptr;
  BOOST_REQUIRE(r.first.status == RunStatus::interrupted);
  BOOST_CHECK(!fs::exists(r.parts.output));
  BOOST_CHECK(fs::exists(dir.path / "parts.h5.journal"));
  BOOST_REQUIRE_GE(r.first.integrated, stop_after);
  return r;
}

// The group statistics are analysis::ensemble_series of the members' figures, bit for bit.
void same_as_ensemble_series(const EnsembleResult& r) {
  const std::size_t F = r.time.size(), M = r.members_per_group;
  for (std::size_t g = 0; g < r.groups; ++g) {
    std::vector<analysis::RunSeries> series(M);
    std::vector<analysis::EnsembleMember> members;
    for (std::size_t m = 0; m < M; ++m) {
      const std::size_t at = g * M + m, frames = static_cast<std::size_t>(r.member_frames[at]);
      for (std::size_t f = 0; f < frames; ++f)
        series[m].push_back(r.time[f],
                            analysis::FrameFigures{0.0, r.member_one_minus_mean_cosine[at * F + f],
                                                   static_cast<std::int64_t>(r.member_cluster_count[at * F + f]),
                                                   r.member_pair_fraction[at * F + f]});
      members.push_back({&series[m], r.status[at] == static_cast<std::int64_t>(RunStatus::synchronized)});
    }
    const analysis::EnsembleSeries e = analysis::ensemble_series(members);
    for (std::size_t f = 0; f < F; ++f) {
      const std::size_t at = g * F + f;
      const bool any = f < e.t.size();
      BOOST_CHECK_EQUAL(r.members_at[at], any ? e.runs[f] : 0);
      const double expected[] = {any ? e.pair_fraction_mean[f] : r.pair_fraction[at],
                                 any ? e.cluster_mean[f] : r.cluster_count[at],
                                 any ? e.sync_probability[f] : r.sync_probability[at]};
      const double got[] = {r.pair_fraction[at], r.cluster_count[at], r.sync_probability[at]};
      for (std::size_t k = 0; k < 3; ++k)
        BOOST_CHECK_MESSAGE(
            std::bit_cast<std::uint64_t>(got[k]) == std::bit_cast<std::uint64_t>(expected[k]),
            "group " << g << " time " << f << " statistic " << k << ": " << got[k] << " vs " << expected[k]);
      if (!any) BOOST_CHECK(std::isnan(r.pair_fraction[at]) && std::isnan(r.cluster_count[at]));
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_member_is_the_single_run_bit_for_bit) {
  const SweepSpec spec = small_sweep();
  EnsembleOptions o;
  o.threads = 2;
  o.trajectories = {4, 1};
  const EnsembleOutcome out = run_ensemble(spec, o);
  BOOST_REQUIRE(out.status == RunStatus::ok);
  const auto points = expand_sweep(spec);
  for (std::size_t k = 0; k < o.trajectories.size(); ++k) {
    RunConfig c = points[o.trajectories[k]].config;
    ExperimentOptions eo;
    eo.write_file = false;
    MemoryRecorder rec;
    run_experiment(c, eo, {&rec});
    const std::size_t per = rec.direction.size();
    BOOST_REQUIRE_EQUAL(per, out.result.time.size() * 8 * 3);
    BOOST_CHECK(
        std::memcmp(rec.direction.data(), out.result.trajectory_direction.data() + k * per, per * sizeof(double)) == 0);
    BOOST_CHECK(std::memcmp(rec.radius.data(), out.result.trajectory_radius.data() + k * rec.radius.size(),
                            rec.radius.size() * sizeof(double)) == 0);
    // The member's summary is the run's.
    const std::size_t at = o.trajectories[k];  // groups are β, members the seeds: point = g * 3 + m
    BOOST_CHECK_EQUAL(out.result.accepted_steps[at], rec.summary->accepted_steps);
    BOOST_CHECK_EQUAL(out.result.rhs_evaluations[at], rec.summary->rhs_evaluations);
  }
}

BOOST_AUTO_TEST_CASE(statistics_are_those_of_the_members_trajectories) {
  const SweepSpec spec = small_sweep();
  EnsembleOptions o;
  o.threads = 2;
  o.quantiles = {0.0, 0.5, 1.0};
  o.trajectories = {0, 1, 2, 3, 4, 5};
  const EnsembleOutcome out = run_ensemble(spec, o);
  const EnsembleResult& r = out.result;
  BOOST_REQUIRE_EQUAL(r.groups, 2u);
  BOOST_REQUIRE_EQUAL(r.members_per_group, 3u);
  BOOST_CHECK_EQUAL(r.axes.size(), 1u);
  BOOST_CHECK_EQUAL(r.axes[0].dimension, "beta");
  BOOST_CHECK_EQUAL(r.over.dimension, "seed");
  const std::size_t F = r.time.size(), n = 8, d = 3;
  const analysis::FigureOptions fo{spec.ensemble.cluster_epsilon, spec.ensemble.pair_cosine};
  for (std::size_t g = 0; g < 2; ++g)
    for (std::size_t f = 0; f < F; ++f) {
      double pairs = 0, clusters = 0, omc = 0, radius = 0, omc_min = 1e300, omc_max = -1e300;
      double synced = 0;
      for (std::size_t m = 0; m < 3; ++m) {
        const std::size_t k = g * 3 + m;
        const double* theta = r.trajectory_direction.data() + (k * F + f) * n * d;
        const RowMatrix t = Eigen::Map<const RowMatrix>(theta, static_cast<Index>(n), static_cast<Index>(d));
        const analysis::FrameFigures fig = analysis::frame_figures(t, fo);
        pairs += fig.pair_fraction;
        clusters += static_cast<double>(fig.cluster_count);
        omc += fig.one_minus_mean_cosine;
        omc_min = std::min(omc_min, fig.one_minus_mean_cosine);
        omc_max = std::max(omc_max, fig.one_minus_mean_cosine);
        double rs = 0;
        for (std::size_t j = 0; j < n; ++j) rs += r.trajectory_radius[(k * F + f) * n + j];
        radius += rs / static_cast<double>(n);
        if (r.t_sync[k] <= r.time[f]) synced += 1;
      }
      const std::size_t at = g * F + f;
      BOOST_CHECK_CLOSE_FRACTION(r.pair_fraction[at] + 1.0, pairs / 3 + 1.0, test::kRoundoff);
      BOOST_CHECK_CLOSE_FRACTION(r.cluster_count[at], clusters / 3, test::kRoundoff);
      BOOST_CHECK_CLOSE_FRACTION(r.one_minus_mean_cosine[at], omc / 3, test::kRoundoff);
      BOOST_CHECK_CLOSE_FRACTION(r.mean_radius[at], radius / 3, test::kRoundoff);
      BOOST_CHECK_CLOSE_FRACTION(r.sync_probability[at] + 1.0, synced / 3 + 1.0, test::kRoundoff);
      BOOST_CHECK_EQUAL(r.one_minus_mean_cosine_quantiles[(g * 3 + 0) * F + f], omc_min);
      BOOST_CHECK_EQUAL(r.one_minus_mean_cosine_quantiles[(g * 3 + 2) * F + f], omc_max);
      BOOST_CHECK_EQUAL(r.members_at[at], 3);
    }
  // β = 1 synchronizes these seeds by t = 6 less often than never: at least the figures move.
  BOOST_CHECK_LT(r.one_minus_mean_cosine[F - 1], r.one_minus_mean_cosine[0]);
  same_as_ensemble_series(r);
}

// Members stopped by their synchronization stop stand at their last frame (hold_last), others run
// to the end: the statistics follow ensemble_series' rule there too.
BOOST_AUTO_TEST_CASE(statistics_hold_the_last_frame_of_synchronized_members) {
  const SweepSpec spec = small_sweep("\"solver.sync_epsilon\" = 0.5\n");
  EnsembleOptions o;
  o.threads = 2;
  const EnsembleOutcome out = run_ensemble(spec, o);
  BOOST_REQUIRE(out.status == RunStatus::ok);
  const EnsembleResult& r = out.result;
  std::size_t stopped = 0, whole = 0;
  for (std::size_t at = 0; at < r.members(); ++at) {
    if (r.status[at] == static_cast<std::int64_t>(RunStatus::synchronized) &&
        static_cast<std::size_t>(r.member_frames[at]) < r.time.size())
      ++stopped;
    if (static_cast<std::size_t>(r.member_frames[at]) == r.time.size()) ++whole;
  }
  BOOST_TEST_MESSAGE(stopped << " members stopped early, " << whole << " ran to the end");
  BOOST_CHECK_GT(stopped, 0u);
  same_as_ensemble_series(r);
}

BOOST_AUTO_TEST_CASE(an_interrupted_ensemble_resumes_to_the_same_file) {
  TempDir dir;
  const SweepSpec spec = small_sweep();
  EnsembleOptions o;
  o.threads = 1;
  o.trajectories = {5, 0};
  // Stopped once two members are done: the journal holds them, no output is published.
  auto [whole, first, p] = interrupted_after(dir, spec, o, 2);
  BOOST_WARN_LT(first.integrated, 6u);
  // A record torn by a crash is dropped.
  {
    std::ofstream j(dir.path / "parts.h5.journal", std::ios::binary | std::ios::app);
    j << "torn";
  }
  const EnsembleOutcome second = run_ensemble(spec, p);
  BOOST_REQUIRE(second.status == RunStatus::ok);
  BOOST_CHECK_EQUAL(second.resumed, first.integrated);
  BOOST_CHECK_EQUAL(second.resumed + second.integrated, 6u);
  BOOST_CHECK(!fs::exists(dir.path / "parts.h5.journal"));
  BOOST_CHECK(fs::exists(p.output));
  BOOST_CHECK(same_grid(ensemble_grid(whole.result), ensemble_grid(second.result)));
  // Not vacuous: another ensemble's grid differs.
  EnsembleOptions q;
  q.trajectories = {5, 0};
  q.quantiles = {0.5};
  BOOST_CHECK(!same_grid(ensemble_grid(whole.result), ensemble_grid(run_ensemble(spec, q).result)));
}

// Occurrences of a record marker (each record carries two) in the journal's bytes.
std::size_t marks(const fs::path& journal, std::uint64_t mark) {
  const std::string bytes = bytes_of(journal);
  const std::string m = mark_bytes(mark);
  std::size_t count = 0;
  for (std::size_t at = bytes.find(m); at != std::string::npos; at = bytes.find(m, at + 1)) ++count;
  return count;
}

BOOST_AUTO_TEST_CASE(complete_groups_replace_their_members_in_the_journal) {
  TempDir dir;
  const SweepSpec spec = small_sweep();  // 2 groups (beta) of 3 members (seeds)
  EnsembleOptions o;
  o.threads = 1;  // members in order: the first group is complete after 3
  o.trajectories = {4, 0};
  o.journal_rewrite_bytes = 0;
  auto [whole, first, p] = interrupted_after(dir, spec, o, 4);
  const fs::path journal = dir.path / "parts.h5.journal";
  // The first group's record; the last group, whose completion completes the ensemble, journals none.
  BOOST_CHECK_EQUAL(marks(journal, kGroupMark), 2u);
  // Once every group is complete the journal is not rewritten (the file is written next): when the
  // worker finished all six before the stop, the last group's members keep their records,
  // and so do the first group's when the scheduler saw both groups complete at once (a loaded machine).
  const std::size_t member_marks = marks(journal, kMemberMark);
  if (first.integrated == 6)
    BOOST_CHECK_MESSAGE(member_marks == 2 * 3 || member_marks == 2 * 6, member_marks << " member marks");
  else
    BOOST_CHECK_EQUAL(member_marks, 2 * (first.integrated % 3));
  BOOST_CHECK(!fs::exists(dir.path / "parts.h5.journal.tmp"));

  const EnsembleOutcome second = run_ensemble(spec, p);
  BOOST_REQUIRE(second.status == RunStatus::ok);
  BOOST_CHECK_EQUAL(second.resumed, first.integrated);
  BOOST_CHECK_EQUAL(second.resumed + second.integrated, 6u);
  BOOST_CHECK(!fs::exists(journal));
  BOOST_CHECK(same_grid(ensemble_grid(whole.result), ensemble_grid(second.result)));
}

// Stopped at the very end, once every member is done: the last group's members are in the journal
// as members (no group record holds their figures a second time), and the next session publishes
// the file of the uninterrupted ensemble from them.
BOOST_AUTO_TEST_CASE(the_last_group_is_journaled_as_its_members) {
  TempDir dir;
  const SweepSpec spec = small_sweep();
  EnsembleOptions o;
  o.threads = 1;  // members in order: the second group completes the ensemble
  o.trajectories = {4, 0, 4};
  o.journal_rewrite_bytes = 0;
  auto [whole, first, p] = interrupted_after(dir, spec, o, 6);
  BOOST_REQUIRE_EQUAL(first.integrated, 6u);
  const fs::path journal = dir.path / "parts.h5.journal";
  BOOST_CHECK_EQUAL(marks(journal, kGroupMark), 2u);
  const std::size_t member_marks = marks(journal, kMemberMark);
  BOOST_CHECK_MESSAGE(member_marks == 2 * 3 || member_marks == 2 * 6, member_marks << " member marks");
  const EnsembleOutcome second = run_ensemble(spec, p);
  BOOST_REQUIRE(second.status == RunStatus::ok);
  BOOST_CHECK_EQUAL(second.resumed, 6u);
  BOOST_CHECK_EQUAL(second.integrated, 0u);
  BOOST_CHECK(!fs::exists(journal));
  BOOST_CHECK(same_grid(ensemble_grid(whole.result), ensemble_grid(second.result)));
  // A point kept twice: both places hold its trajectory.
  const std::size_t D = whole.result.trajectory_direction.size() / 3;
  BOOST_CHECK(std::memcmp(whole.result.trajectory_direction.data(), whole.result.trajectory_direction.data() + 2 * D,
                          D * sizeof(double)) == 0);
  BOOST_CHECK(!std::isnan(whole.result.trajectory_direction[0]));
}

BOOST_AUTO_TEST_CASE(a_record_damaged_on_disk_is_dropped_and_its_member_integrated_again) {
  TempDir dir;
  const SweepSpec spec = small_sweep();
  EnsembleOptions o;
  o.threads = 1;
  o.trajectories = {5, 0};
  o.journal_rewrite_bytes = 0;  // a complete group's record replaces its members': every record counts
  auto [whole, first, p] = interrupted_after(dir, spec, o, 2);
  // One bit of the journal's first record, 16 bytes into its payload: the lowest byte of a member's
  // t_reached (point, status, t_reached, ...) or of a group's second pair fraction (group, pair
  // fractions, ...). The record stays framed whole; only the digest tells that its figures are wrong.
  const fs::path journal = dir.path / "parts.h5.journal";
  std::string bytes = bytes_of(journal);
  const std::size_t at = std::min(bytes.find(mark_bytes(kMemberMark)), bytes.find(mark_bytes(kGroupMark)));
  BOOST_REQUIRE(at != std::string::npos);
  bytes[at + 2 * sizeof kMemberMark + 16] ^= 1;
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << bytes;

  const EnsembleOutcome second = run_ensemble(spec, p);
  BOOST_REQUIRE(second.status == RunStatus::ok);
  BOOST_CHECK_EQUAL(second.journal_damaged, 1u);
  BOOST_CHECK_LT(second.resumed, first.integrated);
  BOOST_CHECK_EQUAL(second.resumed + second.integrated, 6u);
  BOOST_CHECK_MESSAGE(second.message.find("1 damaged record") != std::string::npos, second.message);
  BOOST_CHECK(same_grid(ensemble_grid(whole.result), ensemble_grid(second.result)));
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_before_anything_runs) {
  TempDir dir;
  const SweepSpec spec = small_sweep();
  auto refuses = [&](EnsembleOptions o, const std::string& key) {
    try {
      run_ensemble(spec, o);
    } catch (const InputError& e) {
      BOOST_CHECK_MESSAGE(std::string(e.what()).find(key) != std::string::npos, e.what());
      return;
    }
    BOOST_ERROR("no InputError naming " + key);
  };
  EnsembleOptions o;
  o.quantiles = {0.5, 1.5};
  refuses(o, "quantiles");
  o = {};
  o.trajectories = {6};
  refuses(o, "trajectories");
  o = {};
  o.output = dir.path / "exists.h5";
  std::ofstream(o.output) << "x";
  refuses(o, "-o");
  // A journal of another ensemble is not continued.
  o.output = dir.path / "other.h5";
  std::ofstream(dir.path / "other.h5.journal") << "normdyn.ensemble.\nsomething else";
  refuses(o, "journal of another ensemble");
  // Nor one of an older format.
  std::ofstream(dir.path / "other.h5.journal") << "normdyn.ensemble.journal/3\nsomething else";
  refuses(o, "another version of normdyn (normdyn.ensemble.journal/3");
  o.force = true;  // ... unless asked to start over
  o.threads = 2;
  BOOST_CHECK(run_ensemble(spec, o).status == RunStatus::ok);
  // Members must share their sample times.
  const SweepSpec times = parse_sweep("[axes]\n\"solver.t_end\" = [1.0, 2.0]\n", "t.toml");
  BOOST_CHECK_THROW(run_ensemble(times, EnsembleOptions{}), InputError);
}

// The output is created or replaced only as a regular file of its own: never through a FIFO, a
// device, a directory or a symbolic link (nor their journal), and never while another writer holds
// the output's lock.
BOOST_AUTO_TEST_CASE(the_output_replaces_only_regular_files_and_takes_the_writer_lock) {
  TempDir dir;
  const SweepSpec spec = small_sweep();
  auto refused = [&](const fs::path& output, bool force, const std::string& says) {
    EnsembleOptions o;
    o.output = output;
    o.force = force;
    try {
      run_ensemble(spec, o);
    } catch (const std::exception& e) {
      BOOST_CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
      return;
    }
    BOOST_ERROR(output.string() + ": not refused");
  };
  const fs::path fifo = dir.path / "fifo.h5";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  refused(fifo, true, "not a regular file");
  BOOST_CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  const fs::path target = dir.path / "target.h5";
  std::ofstream(target) << "kept";
  const fs::path link = dir.path / "link.h5";
  fs::create_symlink(target, link);
  refused(link, true, "not a regular file");
  BOOST_CHECK(fs::is_symlink(fs::symlink_status(link)));
  BOOST_CHECK_EQUAL(fs::file_size(target), 4u);
  refused(dir.path, true, "not a regular file");
  // A journal that is a FIFO is neither read (which would wait forever) nor written.
  const fs::path journaled = dir.path / "j.h5";
  BOOST_REQUIRE(::mkfifo((dir.path / "j.h5.journal").c_str(), 0644) == 0);
  refused(journaled, false, "j.h5.journal exists and is not a regular file");
  // Another writer of the same output (a live run, a concurrent ensemble) holds its lock.
  const fs::path locked = dir.path / "locked.h5";
  {
    const WriterLock held = WriterLock::acquire(locked);
    refused(locked, true, "locked.h5");
    BOOST_CHECK(!fs::exists(locked));
  }
  EnsembleOptions o;
  o.output = locked;
  BOOST_CHECK(run_ensemble(spec, o).status == RunStatus::ok);
  BOOST_CHECK(fs::is_regular_file(fs::symlink_status(locked)));
  BOOST_CHECK(!fs::exists(WriterLock::lock_path(locked)));
}

// An existing output is never overwritten silently: the same ensemble is returned from it (nothing
// integrated, the file untouched); one with more seeds or new axis values extends it, reading its
// members back, to the file of the ensemble run whole; one lacking some of its members, or a kept
// trajectory, is refused; force starts over.
BOOST_AUTO_TEST_CASE(an_existing_output_is_returned_or_extended_never_overwritten) {
  TempDir dir;
  auto refused = [](const SweepSpec& spec, const EnsembleOptions& o, const std::string& says) {
    try {
      run_ensemble(spec, o);
    } catch (const InputError& e) {
      BOOST_CHECK_EQUAL(e.key(), "-o");
      BOOST_CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
      return;
    }
    BOOST_ERROR("not refused: " + says);
  };
  // The whole ensemble (β ∈ {1, 4} × seeds 1..3, point 4 = (4, 2)), run at once for reference.
  const SweepSpec whole = small_sweep();
  EnsembleOptions o;
  o.threads = 2;
  o.trajectories = {0, 4};
  o.output = dir.path / "whole.h5";
  BOOST_REQUIRE(run_ensemble(whole, o).status == RunStatus::ok);

  // A part of it: β = 1, seeds 1 and 2, point 0's trajectory kept.
  const SweepSpec part = parse_sweep(
      "[set]\n\"model.scheme\" = \"pre\"\n\"model.n\" = 8\n\"model.d\" = 3\n\"solver.t_end\" = 6.0\n"
      "\"output.samples\" = 13\n[axes]\n\"model.beta\" = [1.0]\n\"init.seed\" = [1, 2]\n",
      "part.toml");
  o.output = dir.path / "grown.h5";
  o.trajectories = {0};
  const EnsembleOutcome first = run_ensemble(part, o);
  BOOST_REQUIRE(first.status == RunStatus::ok);
  BOOST_CHECK_EQUAL(first.integrated, 2u);

  // The same ensemble again: returned from the file, which stays as it was.
  const std::string before = bytes_of(o.output);
  const EnsembleOutcome again = run_ensemble(part, o);
  BOOST_REQUIRE(again.status == RunStatus::ok);
  BOOST_CHECK(again.unchanged);
  BOOST_CHECK_EQUAL(again.integrated, 0u);
  BOOST_CHECK_EQUAL(again.read_back, 2u);
  BOOST_CHECK(bytes_of(o.output) == before);
  BOOST_CHECK(same_grid(ensemble_grid(first.result), ensemble_grid(again.result)));

  // Another quantile is another file of the same members: rewritten, nothing integrated.
  o.quantiles = {0.5};
  const EnsembleOutcome requantiled = run_ensemble(part, o);
  BOOST_CHECK(!requantiled.unchanged);
  BOOST_CHECK_EQUAL(requantiled.integrated, 0u);
  BOOST_CHECK(bytes_of(o.output) != before);
  o.quantiles = EnsembleOptions{}.quantiles;

  // Extended to the whole ensemble: a new β and a new seed; two members read back, four integrated,
  // and the file is the whole ensemble's.
  o.trajectories = {0, 4};
  const EnsembleOutcome grown = run_ensemble(whole, o);
  BOOST_REQUIRE(grown.status == RunStatus::ok);
  BOOST_CHECK(!grown.unchanged);
  BOOST_CHECK_EQUAL(grown.read_back, 2u);
  BOOST_CHECK_EQUAL(grown.integrated, 4u);
  BOOST_CHECK(same_grid(read_grid_file(dir.path / "whole.h5"), read_grid_file(o.output)));
  // Not vacuous: the part's file differs from the whole's.
  BOOST_CHECK(!same_grid(ensemble_grid(first.result), ensemble_grid(grown.result)));

  // The part again, on the whole's file: four of its members would be lost.
  const std::string whole_bytes = bytes_of(o.output);
  o.trajectories = {0};
  refused(part, o, "4 of its 6 members are not members here");
  // The whole without point 4's trajectory: the file keeps it.
  refused(whole, o, "1 of its kept trajectories are not kept here");
  BOOST_CHECK(bytes_of(o.output) == whole_bytes);
  // Force starts over: nothing read back.
  o.force = true;
  const EnsembleOutcome replaced = run_ensemble(part, o);
  BOOST_CHECK_EQUAL(replaced.read_back, 0u);
  BOOST_CHECK_EQUAL(replaced.integrated, 2u);
  BOOST_CHECK(same_grid(read_grid_file(o.output), read_grid_file(dir.path / "whole.h5")) == false);

  // Without the members' figures the file is smaller and cannot be reused.
  o.force = false;
  o.member_figures = false;
  o.output = dir.path / "small.h5";
  BOOST_REQUIRE(run_ensemble(part, o).status == RunStatus::ok);
  const GridFile small = read_grid_file(o.output);
  BOOST_CHECK(std::none_of(small.variables.begin(), small.variables.end(),
                           [](const GridVariable& v) { return v.name == "member_one_minus_mean_cosine"; }));
  BOOST_CHECK(std::any_of(small.variables.begin(), small.variables.end(),
                          [](const GridVariable& v) { return v.name == "member_config"; }));
  refused(part, o, "without its members' figures");
}
