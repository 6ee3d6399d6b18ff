// `normdyn sweep` after a crash or an interrupt: a run killed from outside is recorded as
// crashed while the sweep goes on; an interrupted sweep records what it did; the same command again
// resumes both, ending with the files an uninterrupted run writes.
#define BOOST_TEST_MODULE sweep_recovery
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <thread>

#include "cli_harness.hpp"
#include "normdyn/io/run_file.hpp"
#include "sweep_harness.hpp"

using namespace normdyn;
using test::compare_with_reference;
using test::contains;
using test::Scratch;
using test::SweepIndex;

namespace {

// Two long points (pre-LN to t = 1200, 4801 frames flushed often; about 0.7 CPU-s each, several
// seconds under the sanitizers) and two short ones.
const char* kLongBase = R"([model]
scheme = "pre"
n = 24
d = 4
beta = 4.0
[init]
kind = "gaussian"
[output]
samples = 4801
flush_frames = 5
flush_seconds = 0.02
)";
const char* kLongSweep = R"(base = "long.toml"
[axes]
"solver.t_end" = [1200.0, 3.0]
"init.seed" = [1, 2]
)";

}  // namespace

BOOST_AUTO_TEST_CASE(a_killed_run_is_recorded_and_resumed_the_next_time) {
  Scratch s;
  s.write("long.toml", kLongBase);
  s.write("sweep.toml", kLongSweep);
  const test::Child sweep = test::spawn_normdyn(s.dir(), {"sweep", "sweep.toml", "-o", "out", "-j", "2"});
  // Kill the run of one long point from outside (as the OOM killer would) once it has its file.
  const std::string victim = "t_end=1200_seed=2";
  int killed = 0;
  for (int i = 0; i < 400 && !killed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto pids = test::children_of(sweep.pid, victim);
    if (!pids.empty() && std::filesystem::exists(s / "out" / "runs" / (victim + ".h5"))) {
      ::kill(pids.front(), SIGKILL);
      killed = pids.front();
    }
  }
  BOOST_REQUIRE(killed);
  const test::ChildExit e = test::wait_child(sweep);
  BOOST_TEST(e.exit_code == 1);
  {
    const SweepIndex index(s / "out");
    const std::size_t row = index.row(victim);
    BOOST_TEST(index.strings("status")[row] == "crashed");
    BOOST_TEST(contains(index.strings("message")[row], "killed by signal 9"), index.strings("message")[row]);
    for (std::size_t i = 0; i < index.size(); ++i)
      if (i != row) BOOST_TEST(index.strings("status")[i] == "ok");
  }
  // The same command again resumes it; the file is the one an uninterrupted run writes.
  const auto again = s.normdyn("sweep sweep.toml -o out -j 2");
  BOOST_TEST(again.exit_code == 0, again.err);
  BOOST_TEST(contains(again.out, "4 points: 4 ok (1 resumed, 3 reused)"), again.out);
  compare_with_reference(s, victim);
  BOOST_TEST(RunReader(s / "out" / "runs" / (victim + ".h5")).summary()->status == RunStatus::ok);
}

BOOST_AUTO_TEST_CASE(an_interrupted_sweep_resumes_where_it_stopped) {
  Scratch s;
  s.write("long.toml", kLongBase);
  s.write("sweep.toml", kLongSweep);
  // One slot: the costliest point first, the others wait.
  const test::Child sweep = test::spawn_normdyn(s.dir(), {"sweep", "sweep.toml", "-o", "out", "-j", "1"});
  const std::string first = "t_end=1200_seed=1";
  // Interrupt once the run has used 0.2 CPU-s (under a third of it): timed by its own progress,
  // since under load a wall-clock wait can outlast the whole run. Given up after a minute.
  bool interrupted = false;
  for (int i = 0; i < 12000 && !interrupted; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto pids = test::children_of(sweep.pid, first);
    if (pids.empty() || !std::filesystem::exists(s / "out" / "runs" / (first + ".h5"))) continue;
    if (test::process_progress(pids.front()).cpu_seconds >= 0.2) {
      ::kill(sweep.pid, SIGINT);
      interrupted = true;
    }
  }
  BOOST_REQUIRE(interrupted);
  const test::ChildExit e = test::wait_child(sweep);
  BOOST_TEST(e.exit_code == 130);
  {
    const SweepIndex index(s / "out");
    BOOST_TEST(index.strings("status")[index.row(first)] == "interrupted");
    BOOST_TEST(index.strings("status")[index.row("t_end=3_seed=2")] == "not_run");
    BOOST_TEST(std::get<std::int64_t>(index.attributes.at("complete")) == 1);  // the sweep ended, interrupted
  }
  const auto again = s.normdyn("sweep sweep.toml -o out -j 2 -q");
  BOOST_TEST(again.exit_code == 0, again.err);
  const SweepIndex index(s / "out");
  BOOST_TEST(index.strings("action")[index.row(first)] == "resume");
  for (const auto& status : index.strings("status")) BOOST_TEST(status == "ok");
  compare_with_reference(s, first);
  const std::string log = RunReader(s / "out" / "runs" / (first + ".h5")).config_toml();
  BOOST_TEST(contains(log, "t_end = 1200.0"));
}
