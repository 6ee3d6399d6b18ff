// normdyn under mpirun with 2 processes, through the binary:
//  * `mpirun -n 2 normdyn run`: one run sharded over the processes, written by rank 0, the
//    single-process run bit for bit (deterministic or noisy); interrupted, it resumes under mpirun
//    and ends bit for bit where the uninterrupted one-process run ends;
//  * `mpirun -n 2 normdyn sweep`: the points spread over both processes, each run the same as in a
//    sweep on one process;
//  * `mpirun -n 2 normdyn ensemble`: the members spread over both processes, the file bit for bit
//    the one-process file; interrupted, it continues from rank 0's journal;
//  * a user's term failing on one process: every process ends the run (user_term_failed), and an
//    ensemble records the members it ended;
//  * bad input: one message (rank 0's), exit code 2;
//  * without a launcher the program loads neither Open MPI nor (with HDF5's static archives)
//    libcurl, and a missing MPI module under a launcher is one message and exit code 2.
#define BOOST_TEST_MODULE mpi_cli
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cli_harness.hpp"
#include "normdyn/io/run_file.hpp"
#include "sweep_harness.hpp"
#include "tolerances.hpp"

#ifndef NORMDYN_MPIEXEC
#error "NORMDYN_MPIEXEC must name the MPI launcher with its flags (tests/CMakeLists.txt)"
#endif

using namespace normdyn;
using test::contains;
using test::Scratch;

namespace {

std::string mpirun(int ranks) { return std::string(NORMDYN_MPIEXEC) + " -n " + std::to_string(ranks) + " "; }

// Largest |a − b| / max(1, |b|) over every frame's directions and radii; the frame counts must agree.
double max_difference(const std::filesystem::path& a, const std::filesystem::path& b) {
  const RunReader ra(a), rb(b);
  BOOST_REQUIRE_EQUAL(ra.frames(), rb.frames());
  double worst = 0.0;
  for (std::size_t f = 0; f < ra.frames(); ++f) {
    const Tokens x = ra.frame(f), y = rb.frame(f);
    worst = std::max(worst, (x.theta - y.theta).cwiseAbs().maxCoeff());
    worst = std::max(worst, ((x.r - y.r).cwiseAbs().array() / y.r.cwiseAbs().array().max(1.0)).maxCoeff());
  }
  return worst;
}

const char* kShard = R"([model]
scheme = "pre"
n = 150
d = 6
beta = 3.0
[init]
kind = "gaussian"
seed = 4
[solver]
t_end = 12.0
[output]
samples = 61
)";

}  // namespace

BOOST_AUTO_TEST_CASE(a_sharded_run_equals_the_single_process_run) {
  Scratch s;
  s.write("shard.toml", kShard);
  for (const std::string set :
       {" --set model.qkv=identity", " --set model.qkv=gaussian_per_layer",
        " --set noise.kind:=value --set noise.sigma=0.3 --set solver.dt=0.02 --set model.qkv=gaussian",
        " --set noise.kind:=independent --set noise.sigma=0.3 --set solver.dt=0.02",
        " --set noise.kind:=value --set noise.sigma=0.3 --set solver.dt=0.02 --set model.qkv=gaussian"
        " --set noise.increments=tree",
        " --set noise.kind:=independent --set noise.sigma=0.3 --set solver.dt=0.02"
        " --set noise.increments=tree"}) {
    BOOST_REQUIRE_EQUAL(s.normdyn("run shard.toml -q --threads 1 -o one.h5 --force" + set).exit_code, 0);
    const auto r = s.shell(mpirun(2) + NORMDYN_BINARY + " run shard.toml -q -o two.h5 --force" + set);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    BOOST_TEST(r.err.empty(), r.err);  // nothing extra on a quiet run
    const double difference = max_difference(s / "two.h5", s / "one.h5");
    BOOST_TEST(difference == 0.0, set);
    const auto one = *RunReader(s / "one.h5").summary();
    const auto two = *RunReader(s / "two.h5").summary();
    BOOST_TEST(two.status == RunStatus::ok);
    BOOST_TEST(two.accepted_steps == one.accepted_steps);
    BOOST_TEST(two.rejected_steps == one.rejected_steps);
    BOOST_TEST(two.rhs_evaluations == one.rhs_evaluations);
  }
  const auto ranks = s.shell(std::string(NORMDYN_PYTHON) +
                             " -c \"import h5py; print(h5py.File('two.h5')['parameters'].attrs['mpi_ranks'])\"");
  BOOST_TEST(ranks.out == "2\n", ranks.err);
}

// A user's compiled terms in a sharded run: one that sees every token (a pull towards the mean
// direction, which no row block could compute) and one declared row-local; every process evaluates
// them as the single process does, so the run is the single-process run bit for bit.
BOOST_AUTO_TEST_CASE(a_sharded_run_with_user_terms_equals_the_single_process_run) {
  Scratch s;
  s.write("terms.c", R"(#include <stdint.h>
void mean_pull(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user) {
  const double* p = (const double*)user;
  for (int64_t k = 0; k < d; ++k) {
    double mean = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += theta[i * d + k];
    for (int64_t i = 0; i < n; ++i) out[i * d + k] += p[0] * (1.0 + t) * mean / (double)n;
  }
}
void radial_drift(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user) {
  const double* p = (const double*)user;
  for (int64_t i = 0; i < n; ++i) out[i * d + (i % d)] += p[0] * r[i];
}
)");
  const auto cc = s.shell("cc -O2 -shared -fPIC terms.c -o libterms.so");
  BOOST_REQUIRE_MESSAGE(cc.exit_code == 0, cc.err);
  s.write("terms.toml", std::string(kShard) + R"(
[[terms]]
library = "libterms.so"
symbol = "mean_pull"
params = { strength = 0.7 }

[[terms]]
library = "libterms.so"
symbol = "radial_drift"
rows = true
params = { strength = 0.2 }
)");
  const auto single = s.normdyn("run terms.toml -q --threads 1 -o one.h5 --force");
  BOOST_REQUIRE_MESSAGE(single.exit_code == 0, single.err);
  const auto r = s.shell(mpirun(2) + NORMDYN_BINARY + " run terms.toml -q -o two.h5 --force");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(max_difference(s / "two.h5", s / "one.h5") == 0.0);
  // The terms act: the same run without them ends elsewhere.
  s.write("plain.toml", kShard);
  BOOST_REQUIRE_EQUAL(s.normdyn("run plain.toml -q --threads 1 -o plain.h5 --force").exit_code, 0);
  BOOST_TEST(max_difference(s / "plain.h5", s / "one.h5") > 1e-3);
}

namespace {

// A compiled term that fails on the process of rank 1 only (NaN after t = 1), and sleeps on rank 0 at
// its first call (so that, in an ensemble, rank 1 takes members): a failure no other process sees.
const char* kFailOnRank1 = R"(#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
static int rank_is(char which) {
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank) rank = getenv("PMIX_RANK");
  return rank && rank[0] == which && rank[1] == '\0';
}
void fail_on_rank_1(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user) {
  static int called = 0;
  if (!called++ && rank_is('0')) usleep(500000);
  if (t > 1.0 && rank_is('1')) out[0] = NAN;
}
)";

}  // namespace

// A sharded run whose term failed on one process ended that process's step alone, and the other
// waited for it in the next exchange for ever. Every process ends the run with user_term_failed,
// the message names the term and the rank, and rank 0's file keeps the frames before.
BOOST_AUTO_TEST_CASE(a_term_failing_on_one_process_ends_the_sharded_run_on_every_process) {
  Scratch s;
  s.write("fail.c", kFailOnRank1);
  const auto cc = s.shell("cc -O2 -shared -fPIC fail.c -o libfail.so");
  BOOST_REQUIRE_MESSAGE(cc.exit_code == 0, cc.err);
  s.write("fail.toml", std::string(kShard) + "\n[[terms]]\nlibrary = \"libfail.so\"\nsymbol = \"fail_on_rank_1\"\n");
  const auto r = s.shell("timeout 300 " + mpirun(2) + NORMDYN_BINARY + " run fail.toml -o two.h5");
  BOOST_TEST(r.exit_code == static_cast<int>(exit_code(RunStatus::user_term_failed)), r.exit_code << ": " << r.err);
  BOOST_TEST(contains(r.err, "the term 'fail_on_rank_1' returned a non-finite value"), r.err);
  BOOST_TEST(contains(r.err, "MPI rank 1"), r.err);
  const RunReader reader(s / "two.h5");
  BOOST_REQUIRE(reader.summary());
  BOOST_TEST(reader.summary()->status == RunStatus::user_term_failed);
  BOOST_TEST(reader.frames() >= 5u);  // t = 0, 0.2, ..., 0.8 and up to 1 at least
  BOOST_TEST(reader.times().back() <= 1.0 + 1e-12);
}

// The same term in an ensemble: the members rank 1 integrated end with user_term_failed, and their
// records reach rank 0 (which refused them as damaged and aborted every process); the others are ok.
BOOST_AUTO_TEST_CASE(members_whose_term_failed_on_another_process_are_recorded) {
  Scratch s;
  s.write("fail.c", kFailOnRank1);
  const auto cc = s.shell("cc -O2 -shared -fPIC fail.c -o libfail.so");
  BOOST_REQUIRE_MESSAGE(cc.exit_code == 0, cc.err);
  s.write("base.toml",
          "[model]\nn = 12\nd = 3\n[solver]\nmethod = \"rk4\"\ndt = 0.05\nt_end = 3.0\n[output]\n"
          "samples = 7\n[[terms]]\nlibrary = \"libfail.so\"\nsymbol = \"fail_on_rank_1\"\n");
  s.write("sweep.toml", "base = \"base.toml\"\n[axes]\n\"init.seed\" = [1, 2, 3, 4, 5, 6]\n");
  const auto r = s.shell("timeout 300 " + mpirun(2) + NORMDYN_BINARY + " ensemble sweep.toml -o two.h5 --threads 1");
  // The ensemble ends with its members' failure as its status (a non-zero exit), never as a damaged
  // record that aborts the processes.
  BOOST_TEST(r.exit_code != 0, r.err);
  BOOST_TEST(!contains(r.err, "damaged"), r.err);
  BOOST_TEST(contains(r.err, "user_term_failed"), r.err);
  const auto statuses = s.shell(std::string(NORMDYN_PYTHON) +
                                " -c \"import h5py, collections; f = h5py.File('two.h5'); s = f['status']; "
                                "names = s.attrs['flag_meanings'].split(); "
                                "print(sorted(collections.Counter(names[v] for v in s[()].ravel()).items()))\"");
  BOOST_TEST(contains(statuses.out, "('user_term_failed', "), statuses.out << statuses.err);
}

BOOST_AUTO_TEST_CASE(an_interrupted_sharded_run_resumes_under_mpirun) {
  Scratch s;
  s.write("shard.toml", kShard);
  // Fixed steps (rk4, one thread per process so that the ranks do not compete for the cores). The
  // signal goes as soon as the file exists; a run short enough to end before it arrives (a fast,
  // idle machine) is repeated four times longer, so the test neither races nor waits for long
  // runs under sanitizers or load.
  constexpr int kSamples = 31;
  std::optional<RunSummary> summary;
  std::string long_run;
  double t_end = 3.0;
  for (; t_end <= 800.0; t_end *= 4.0) {
    long_run = " --threads 1 --set model.n=100 --set solver.method=rk4 --set solver.dt=0.01 --set solver.t_end=" +
               std::to_string(t_end) + " --set output.samples=" + std::to_string(kSamples) +
               " --set output.flush_seconds=0.05";
    std::filesystem::remove(s / "two.h5");
    // mpirun in the background; SIGINT to it reaches both processes (as SIGTERM).
    const auto started = s.shell("(" + mpirun(2) + NORMDYN_BINARY + " run shard.toml -q -o two.h5" + long_run +
                                 " > mpirun.out 2>&1 & echo $! > mpirun.pid)");
    BOOST_REQUIRE_EQUAL(started.exit_code, 0);
    const int pid = std::stoi(Scratch::slurp(s / "mpirun.pid"));
    for (int i = 0; i < 3000 && !std::filesystem::exists(s / "two.h5"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(pid, SIGINT);
    for (int i = 0; i < 3000 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    summary = RunReader(s / "two.h5").summary();
    BOOST_REQUIRE(summary.has_value());
    if (summary->status != RunStatus::ok) break;
  }
  BOOST_TEST_MESSAGE("interrupted at t = " << summary->t_reached << " of " << t_end << " after " << summary->frames
                                           << " of " << kSamples << " frames");
  BOOST_TEST(summary->status == RunStatus::interrupted, Scratch::slurp(s / "mpirun.out"));
  // A signal can arrive after the last step and before the last frame: t_reached is then t_end,
  // and what the resume has left to do is that frame.
  BOOST_TEST(summary->t_reached <= t_end);
  BOOST_TEST(summary->frames < kSamples);
  BOOST_REQUIRE_EQUAL(s.normdyn("run shard.toml -q -o one.h5" + long_run).exit_code, 0);
  const auto resumed = s.shell(mpirun(2) + NORMDYN_BINARY + " run --resume two.h5 -q --threads 1");
  BOOST_TEST(resumed.exit_code == 0, resumed.err);
  BOOST_TEST(RunReader(s / "two.h5").summary()->status == RunStatus::ok);
  BOOST_TEST(max_difference(s / "two.h5", s / "one.h5") == 0.0);
}

BOOST_AUTO_TEST_CASE(a_sweep_spreads_its_points_over_the_processes) {
  Scratch s;
  s.write("base.toml", "[model]\nn = 12\n[solver]\nt_end = 8.0\n[output]\nsamples = 17\n");
  s.write("sweep.toml", "base = \"base.toml\"\n[axes]\n\"model.beta\" = [1.0, 9.0]\n\"init.seed\" = [1, 2, 3, 4, 5]\n");
  const auto r = s.shell(mpirun(2) + NORMDYN_BINARY + " sweep sweep.toml -o two");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.out, "10 points: 10 ok (10 run)"), r.out);
  BOOST_TEST(contains(r.out, "2 processes x 1 job"), r.out);
  BOOST_TEST(contains(r.out, "busy per rank: 0: "), r.out);
  const test::SweepIndex two(s / "two");
  std::map<std::int64_t, int> per_rank;
  for (auto rank : two.ints("rank")) ++per_rank[rank];
  BOOST_TEST(per_rank.size() == 2u);  // both processes ran points
  BOOST_TEST(per_rank[0] + per_rank[1] == 10);
  BOOST_TEST(std::get<std::int64_t>(two.attributes.at("ranks")) == 2);
  // The same sweep on one process: the same figures, bit for bit (each run is a one-process run).
  const auto local = s.normdyn("sweep sweep.toml -o one -j 1 -q");
  BOOST_REQUIRE_EQUAL(local.exit_code, 0);
  const test::SweepIndex one(s / "one");
  BOOST_TEST(one.doubles("final_variance") == two.doubles("final_variance"));
  BOOST_TEST(one.ints("final_cluster_count") == two.ints("final_cluster_count"));
  BOOST_TEST(one.ints("accepted_steps") == two.ints("accepted_steps"));
  // Run again under mpirun: everything reused.
  const auto again = s.shell(mpirun(2) + NORMDYN_BINARY + " sweep sweep.toml -o two");
  BOOST_TEST(again.exit_code == 0, again.err);
  BOOST_TEST(contains(again.out, "10 points: 10 ok (10 reused)"), again.out);
}

namespace {

// The names of the datasets of two HDF5 files that differ (values, NaN in the same places equal);
// "same" when none does.
std::string differing_datasets(const Scratch& s, const std::string& a, const std::string& b) {
  const auto r = s.shell(std::string(NORMDYN_PYTHON) +
                         " -c \"import h5py, numpy as np, sys\n"
                         "a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])\n"
                         "bad = [k for k in a if k not in b or not np.array_equal(a[k][()], b[k][()], "
                         "equal_nan=a[k].dtype.kind == 'f')]\n"
                         "bad += [k for k in b if k not in a]\n"
                         "print(' '.join(bad) if bad else 'same')\" " +
                         a + " " + b);
  return r.exit_code == 0 ? r.out : r.err;
}

const char* kEnsembleBase =
    "[model]\nscheme = \"post\"\nn = 12\nd = 2\n[solver]\nt_end = 8.0\n[output]\nsamples = 17\n";
const char* kEnsembleSweep =
    "base = \"base.toml\"\n[axes]\n\"model.beta\" = [1.0, 9.0]\n\"init.seed\" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, "
    "12, "
    "13, 14, 15, 16, 17, 18, 19, 20]\n";

}  // namespace

BOOST_AUTO_TEST_CASE(an_ensemble_spreads_its_members_over_the_processes) {
  Scratch s;
  s.write("base.toml", kEnsembleBase);
  s.write("sweep.toml", kEnsembleSweep);
  // Fixed steps, about a second of work in all: whether the second process gets members must not
  // depend on how fast it is scheduled on a loaded machine (0.1 s of work was not always enough).
  const std::string steps = " --threads 1 --set solver.method=rk4 --set solver.dt=0.01 --set solver.t_end=40";
  BOOST_REQUIRE_EQUAL(s.normdyn("ensemble sweep.toml -o one.h5 -q" + steps).exit_code, 0);
  const auto r = s.shell(mpirun(2) + NORMDYN_BINARY + " ensemble sweep.toml -o two.h5" + steps);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.err, "40 members (0 kept from an earlier session) on 2 processes"), r.err);
  BOOST_TEST(r.err.find("normdyn:") == r.err.rfind("normdyn:"), r.err);  // one summary (rank 0's)
  BOOST_TEST(!contains(r.err, "per process: 40 0"), r.err);              // the second process took members
  BOOST_TEST(differing_datasets(s, "one.h5", "two.h5") == "same\n");
  BOOST_TEST(!std::filesystem::exists(s / "two.h5.journal"));
  // Each process must be given the same ensemble: told apart, nothing is written.
  const auto mixed = s.shell(mpirun(1) + NORMDYN_BINARY + " ensemble sweep.toml -o a.h5 : -n 1 " + NORMDYN_BINARY +
                             " ensemble sweep.toml -o b.h5");
  BOOST_TEST(mixed.exit_code == 2);
  const std::string line = "normdyn: error: mpirun: the processes were given different ensembles";
  BOOST_TEST(contains(mixed.err, line), mixed.err);
  BOOST_TEST(mixed.err.find(line) == mixed.err.rfind(line), mixed.err);
  for (const char* f : {"a.h5", "b.h5", "a.h5.journal", "b.h5.journal"}) BOOST_TEST(!std::filesystem::exists(s / f), f);
  // An output holding this ensemble is returned by rank 0, nothing integrated; one that is not an
  // ensemble's file is refused once, by rank 0.
  const auto same = s.shell(mpirun(2) + NORMDYN_BINARY + " ensemble sweep.toml -o two.h5" + steps);
  BOOST_TEST(same.exit_code == 0, same.err);
  BOOST_TEST(contains(same.err, "two.h5 already holds this ensemble"), same.err);
  BOOST_TEST(same.err.find("normdyn:") == same.err.rfind("normdyn:"), same.err);
  BOOST_TEST(differing_datasets(s, "one.h5", "two.h5") == "same\n");
  BOOST_REQUIRE(s.shell("echo x > junk.h5").exit_code == 0);
  const auto taken = s.shell(mpirun(2) + NORMDYN_BINARY + " ensemble sweep.toml -o junk.h5");
  BOOST_TEST(taken.exit_code == 2);
  BOOST_TEST(
      contains(taken.err, "normdyn: error: -o: junk.h5 exists and is not an ensemble's file; --force replaces it"),
      taken.err);
  BOOST_TEST(taken.err.find("normdyn: error") == taken.err.rfind("normdyn: error"), taken.err);
}

BOOST_AUTO_TEST_CASE(an_interrupted_ensemble_continues_under_mpirun) {
  Scratch s;
  s.write("base.toml", kEnsembleBase);
  s.write("sweep.toml", kEnsembleSweep);
  // Fixed steps, so that the cost grows with t_end. The signal goes as soon as rank 0 journaled a
  // member; an ensemble short enough to end before it arrives is repeated four times longer.
  std::string longer;
  bool interrupted = false;
  for (double t_end = 40.0; t_end <= 2600.0 && !interrupted; t_end *= 4.0) {
    longer = " --threads 1 --set solver.method=rk4 --set solver.dt=0.01 --set solver.t_end=" + std::to_string(t_end);
    for (const char* f : {"two.h5", "two.h5.journal"}) std::filesystem::remove(s / f);
    const auto started = s.shell("(" + mpirun(2) + NORMDYN_BINARY + " ensemble sweep.toml -o two.h5" + longer +
                                 " > mpirun.out 2>&1 & echo $! > mpirun.pid)");
    BOOST_REQUIRE_EQUAL(started.exit_code, 0);
    const int pid = std::stoi(Scratch::slurp(s / "mpirun.pid"));
    const auto journal = s / "two.h5.journal";
    std::uintmax_t header = 0;
    for (int i = 0; i < 3000 && !std::filesystem::exists(s / "two.h5"); ++i) {
      std::error_code ec;
      const std::uintmax_t size = std::filesystem::file_size(journal, ec);
      if (!ec && header == 0) header = size;
      if (!ec && header > 0 && size > header) break;  // a member journaled
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid, SIGINT);
    for (int i = 0; i < 3000 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    interrupted = !std::filesystem::exists(s / "two.h5");
  }
  BOOST_TEST_MESSAGE("interrupted with" << longer);
  BOOST_REQUIRE_MESSAGE(interrupted, Scratch::slurp(s / "mpirun.out"));
  BOOST_TEST(std::filesystem::exists(s / "two.h5.journal"), Scratch::slurp(s / "mpirun.out"));
  BOOST_TEST(contains(Scratch::slurp(s / "mpirun.out"), "run the same command again to continue"),
             Scratch::slurp(s / "mpirun.out"));
  const auto resumed = s.shell(mpirun(2) + NORMDYN_BINARY + " ensemble sweep.toml -o two.h5" + longer);
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  BOOST_TEST(!contains(resumed.err, "(0 kept from an earlier session)"), resumed.err);
  BOOST_REQUIRE_EQUAL(s.normdyn("ensemble sweep.toml -o one.h5 -q" + longer).exit_code, 0);
  BOOST_TEST(differing_datasets(s, "one.h5", "two.h5") == "same\n");
}

BOOST_AUTO_TEST_CASE(bad_input_under_mpirun_is_one_message_and_exit_code_2) {
  Scratch s;
  s.write("bad.toml", "[model]\nbeta = -1.0\n");
  const auto run = s.shell(mpirun(2) + NORMDYN_BINARY + " run bad.toml -o x.h5");
  BOOST_TEST(run.exit_code == 2);
  const std::string line = "normdyn: error: model.beta: must be >= 0, got -1";
  BOOST_TEST(contains(run.err, line), run.err);
  BOOST_TEST(run.err.find(line) == run.err.rfind(line), run.err);  // once, not once per process
  BOOST_TEST(!std::filesystem::exists(s / "x.h5"));
  // A failure of rank 0 alone (the output exists): the other process does not wait for it.
  s.write("ok.toml", "[model]\nn = 8\n[solver]\nt_end = 1.0\n");
  s.write("taken.h5", "");
  const auto taken = s.shell(mpirun(2) + NORMDYN_BINARY + " run ok.toml -o taken.h5");
  BOOST_TEST(taken.exit_code == 2);
  BOOST_TEST(contains(taken.err, "taken.h5 exists; pass --force to overwrite it"), taken.err);
  // A mean-field run is not sharded: every process refuses it in set-up, so it is said once.
  s.write("mf.toml", "[model]\nkind = \"meanfield\"\n[solver]\nt_end = 1.0\n");
  const auto mf = s.shell(mpirun(2) + NORMDYN_BINARY + " run mf.toml -o mf.h5");
  BOOST_TEST(mf.exit_code == 2);
  BOOST_TEST(contains(mf.err, "normdyn: error: model.kind: mean-field runs cannot be sharded"), mf.err);
  BOOST_TEST(mf.err.find("model.kind") == mf.err.rfind("model.kind"), mf.err);
  BOOST_TEST(!std::filesystem::exists(s / "mf.h5"));
  // Sinkhorn attention needs every row at once: refused naming its key.
  const auto sk = s.shell(mpirun(2) + NORMDYN_BINARY + " run ok.toml -o sk.h5 --set attention.normalizer=sinkhorn");
  BOOST_TEST(sk.exit_code == 2);
  BOOST_TEST(contains(sk.err,
                      "normdyn: error: attention.normalizer: attention.normalizer = \"sinkhorn\", "
                      "attention.sinkhorn_tol = 1e-12 needs every row"),
             sk.err);
  BOOST_TEST(!std::filesystem::exists(s / "sk.h5"));
  // Sweeps: rank 0 reads the sweep file.
  s.write("sweep.toml", "[axes]\n\"model.beta\" = [1.0, -1.0]\n");
  const auto sweep = s.shell(mpirun(2) + NORMDYN_BINARY + " sweep sweep.toml -o out");
  BOOST_TEST(sweep.exit_code == 2);
  BOOST_TEST(contains(sweep.err, "axes.\"model.beta\": point 2 of 2"), sweep.err);
  // Commands that do not share their work refuse several processes.
  const auto other = s.shell(mpirun(2) + NORMDYN_BINARY + " list-schemes");
  BOOST_TEST(other.exit_code == 2);
  BOOST_TEST(contains(other.err, "only `normdyn run`, `normdyn sweep` and `normdyn ensemble`"), other.err);
}

// The libraries the dynamic loader opened for `normdyn run`, from glibc's LD_DEBUG=files trace.
BOOST_AUTO_TEST_CASE(a_run_without_a_launcher_loads_only_the_runtimes) {
  Scratch s;
  const auto r = s.shell("LD_DEBUG=files " + std::string(NORMDYN_BINARY) + " run -q --set model.n=8 -o r.h5");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_REQUIRE(contains(r.err, "file=libstdc++"));  // the trace is there
  BOOST_TEST(!contains(r.err, "file=libmpi"));
  BOOST_TEST(!contains(r.err, "file=libopen-pal"));
  BOOST_TEST(!contains(r.err, "file=libtomlplusplus"));
#if NORMDYN_STATIC_ARCHIVES_LINKED
  BOOST_TEST(!contains(r.err, "file=libgomp"));
  // The C and C++ runtimes, nothing else (HDF5, szip, zlib, FFTW and libgomp from their archives).
  const std::set<std::string> expected = {"libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6"};
  std::set<std::string> loaded;
  std::istringstream trace(r.err);
  for (std::string line; std::getline(trace, line);) {
    const auto at = line.find("file=");
    if (at == std::string::npos || line.find("[0];  needed by") == std::string::npos) continue;
    const auto end = line.find_first_of(" \t[", at + 5);
    const std::string name = line.substr(at + 5, end - at - 5);
    loaded.insert(name);
  }
  BOOST_TEST(
      loaded == expected, "loaded: " << [&] {
        std::string names;
        for (const auto& n : loaded) names += n + " ";
        return names;
      }());
#else
  // The shared libraries (the default): the passive waiting comes with its own small library.
  BOOST_TEST(contains(r.err, "file=libnormdyn_passive_wait.so"), r.err);
#endif
  // Under a launcher (its variable set) the module is loaded: named explicitly and missing here.
  const auto missing = s.shell("OMPI_COMM_WORLD_SIZE=2 NORMDYN_MPI_MODULE=/nonexistent/libnormdyn_mpi.so " +
                               std::string(NORMDYN_BINARY) + " run -q --set model.n=8 -o m.h5");
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(contains(missing.err, "mpirun: normdyn's MPI module"));
  BOOST_TEST(contains(missing.err, "/nonexistent/libnormdyn_mpi.so"));
  BOOST_TEST(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);
  BOOST_TEST(!std::filesystem::exists(s / "m.h5"));
}
