// `normdyn sweep` through the binary: every point run into its own file with an index that
// Python reads without normdyn; runs at once (--jobs); bad input found before anything runs; failed
// runs recorded while the sweep goes on; the same command again skips finished runs.
// Crashes and interrupts: test_sweep_recovery.cpp.
#define BOOST_TEST_MODULE sweep_cli
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
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

const char* kBase = R"([model]
scheme = "post"
n = 12
d = 3
beta = 1.0
[init]
kind = "uniform"
[solver]
t_end = 10.0
[output]
samples = 21
)";

}  // namespace

BOOST_AUTO_TEST_CASE(every_point_gets_its_file_and_the_index_reads_without_normdyn) {
  Scratch s;
  s.write("base.toml", kBase);
  s.write("sweep.toml", R"(base = "base.toml"
[axes]
"model.scheme" = ["post", "pre"]
"model.beta" = [1.0, 4.0]
"init.seed" = [1, 2, 3]
)");
  const auto r = s.normdyn("sweep sweep.toml -o out -j 2 --plot");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.out, "12 points: 12 ok (12 run)"), r.out);
  BOOST_TEST(contains(r.out, "2 jobs"), r.out);
  BOOST_TEST(contains(r.err, "[12/12]"), r.err);

  const SweepIndex index(s / "out");
  BOOST_REQUIRE_EQUAL(index.size(), 12u);
  BOOST_TEST(index.strings("name")[7] == "scheme=pre_beta=1_seed=2");  // the documented order
  BOOST_TEST(index.strings("model.scheme")[7] == "pre");
  BOOST_TEST(index.doubles("model.beta")[7] == 1.0);
  BOOST_TEST(index.ints("init.seed")[7] == 2);
  for (std::size_t i = 0; i < index.size(); ++i) {
    BOOST_TEST(index.strings("status")[i] == "ok");
    BOOST_TEST(std::filesystem::exists(s / "out" / index.strings("file")[i]));
    BOOST_TEST(index.ints("frames")[i] == 21);
    BOOST_TEST(index.ints("group")[i] == static_cast<std::int64_t>(i / 3));  // seeds of one configuration
  }
  // Python, without normdyn: CSV = HDF5, and the figures agree with the run files.
  const auto check =
      s.shell(std::string(NORMDYN_PYTHON) + " " + NORMDYN_SOURCE_DIR + "/tests/app/check_sweep_index.py out");
  BOOST_TEST(check.exit_code == 0, check.err);
  BOOST_TEST(check.out == "ok 12\n");
  // A sweep's run is the run of its point.
  compare_with_reference(s, "scheme=pre_beta=4_seed=3");
  // Ensemble statistics: 4 configurations × 21 sample times; figures.
  BOOST_TEST(index.ensemble.at("cluster_count").rows == 4u);
  BOOST_TEST(index.ensemble.at("cluster_count").cols == 21u);
  for (const char* png : {"clusters.png", "sync_probability.png", "phase_diagram.png", "medians.png"})
    BOOST_TEST(std::filesystem::file_size(s / "out" / "plots" / png) > 10000u, png);
  // The per-group table: one line per configuration (4) under its header.
  std::ifstream groups(s / "out" / "plots" / "groups.csv");
  std::size_t lines = 0;
  for (std::string line; std::getline(groups, line);) ++lines;
  BOOST_TEST(lines == 5u);

  // Two slots: some two runs overlapped in time.
  const auto& started = index.doubles("started");
  const auto& finished = index.doubles("finished");
  bool overlap = false;
  for (std::size_t i = 0; i < index.size(); ++i)
    for (std::size_t j = i + 1; j < index.size(); ++j)
      overlap = overlap || (started[i] < finished[j] && started[j] < finished[i]);
  BOOST_TEST(overlap);
}

BOOST_AUTO_TEST_CASE(finished_runs_are_skipped_and_missing_ones_run) {
  Scratch s;
  s.write("base.toml", kBase);
  s.write("sweep.toml", "base = \"base.toml\"\n[axes]\n\"model.beta\" = [1.0, 4.0]\n\"init.seed\" = [1, 2, 3]\n");
  BOOST_REQUIRE_EQUAL(s.normdyn("sweep sweep.toml -o out -j 2 -q").exit_code, 0);
  std::vector<long long> before;
  for (const auto& e : std::filesystem::directory_iterator(s / "out" / "runs"))
    if (e.path().extension() == ".h5") before.push_back(test::mtime_ns(e.path()));
  BOOST_REQUIRE_EQUAL(before.size(), 6u);
  const auto again = s.normdyn("sweep sweep.toml -o out -j 2");
  BOOST_TEST(again.exit_code == 0, again.err);
  BOOST_TEST(contains(again.out, "6 points: 6 ok (6 reused)"), again.out);
  std::vector<long long> after;
  for (const auto& e : std::filesystem::directory_iterator(s / "out" / "runs"))
    if (e.path().extension() == ".h5") after.push_back(test::mtime_ns(e.path()));
  BOOST_TEST(before == after);  // no run file was touched
  BOOST_TEST(SweepIndex(s / "out").strings("action")[0] == "cached");

  // A lost file is run again, the rest reused; a lost stored result is recomputed from the file.
  std::filesystem::remove(s / "out" / "runs" / "beta=4_seed=2.h5");
  std::filesystem::remove(s / "out" / "runs" / "beta=1_seed=1.json");
  const auto third = s.normdyn("sweep sweep.toml -o out -j 2 -q");
  BOOST_TEST(third.exit_code == 0, third.err);
  const SweepIndex index(s / "out");
  BOOST_TEST(index.strings("action")[index.row("beta=4_seed=2")] == "run");
  BOOST_TEST(index.strings("action")[index.row("beta=1_seed=1")] == "summarize");
  BOOST_TEST(index.strings("action")[index.row("beta=1_seed=2")] == "cached");
  BOOST_TEST(index.strings("status")[index.row("beta=4_seed=2")] == "ok");

  // --list says so without running anything.
  const auto list = s.normdyn("sweep sweep.toml -o out --list");
  BOOST_TEST(list.exit_code == 0);
  BOOST_TEST(contains(list.out, "    0  done       beta=1_seed=1  (model.beta = 1, init.seed = 1)"), list.out);

  // The base changed: the existing files are not this sweep's; --force runs everything again.
  s.write("base.toml", std::string(kBase).replace(std::string(kBase).find("n = 12"), 6, "n = 10"));
  const auto changed = s.normdyn("sweep sweep.toml -o out -q");
  BOOST_TEST(changed.exit_code == 2);
  BOOST_TEST(contains(changed.err, "6 run files in the directory hold a different configuration"), changed.err);
  BOOST_TEST(contains(changed.err, "model.n = 12 there, 10 here"), changed.err);
  const auto forced = s.normdyn("sweep sweep.toml -o out -q --force");
  BOOST_TEST(forced.exit_code == 0, forced.err);
  BOOST_TEST(RunReader(s / "out" / "runs" / "beta=1_seed=1.h5").n() == 10);
}

BOOST_AUTO_TEST_CASE(bad_input_is_reported_before_anything_runs) {
  Scratch s;
  s.write("base.toml", kBase);
  s.write("sweep.toml", "base = \"base.toml\"\n[axes]\n\"init.seed\" = [1, 2]\n\"model.beta\" = [1.0, -2.0]\n");
  const auto r = s.normdyn("sweep sweep.toml -o out");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err ==
             "normdyn: error: axes.\"model.beta\": point 2 of 4 (init.seed = 1, model.beta = -2.0): must be "
             ">= 0, got -2\n");
  BOOST_TEST(!std::filesystem::exists(s / "out"));
  const auto missing = s.normdyn("sweep nothing.toml -o out");
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(contains(missing.err, "nothing.toml: no such sweep file"), missing.err);
  const auto flag = s.normdyn("sweep sweep.toml");
  BOOST_TEST(flag.exit_code == 2);
  BOOST_TEST(contains(flag.err, "--output is required"), flag.err);
  // --set: a conflict with the base names the base's key; := replaces it.
  s.write("good.toml", "base = \"base.toml\"\n[axes]\n\"init.seed\" = [1, 2]\n");
  const auto conflict = s.normdyn("sweep good.toml -o out --list --set 'output.times=[0.0, 1.0]'");
  BOOST_TEST(conflict.exit_code == 2);
  BOOST_TEST(contains(conflict.err, "normdyn: error: output.samples: "), conflict.err);
  BOOST_TEST(!std::filesystem::exists(s / "out"));
  const auto replaced = s.normdyn("sweep good.toml -o out --list --set 'output.times:=[0.0, 1.0]'");
  BOOST_TEST(replaced.exit_code == 0, replaced.err);
  BOOST_TEST(contains(replaced.out, "    1  run        seed=2  (init.seed = 2)"), replaced.out);
  const auto axis = s.normdyn("sweep good.toml -o out --list --set init.seed=3");
  BOOST_TEST(axis.exit_code == 2);
  BOOST_TEST(contains(axis.err, "--set init.seed: is an axis"), axis.err);
}

BOOST_AUTO_TEST_CASE(failed_runs_are_recorded_and_the_sweep_goes_on) {
  Scratch s;
  s.write("base.toml", kBase);
  // The initial state of the file points: an earlier run (n = 12, d = 3); the other file is missing,
  // which only the run finds out.
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o start.h5").exit_code, 0);
  s.write("sweep.toml", R"(base = "base.toml"
[set]
"init.kind" = "file"
[axes]
"init.file" = ["start.h5", "missing.h5"]
"solver.max_steps" = [0, 3]
)");
  const auto r = s.normdyn("sweep sweep.toml -o out -j 2");
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.out, "4 points: 2 bad_input, 1 max_steps, 1 ok"), r.out);
  const SweepIndex index(s / "out");
  const auto& status = index.strings("status");
  BOOST_TEST(status[0] == "ok");
  BOOST_TEST(status[1] == "max_steps");
  BOOST_TEST(status[2] == "bad_input");
  BOOST_TEST(status[3] == "bad_input");
  BOOST_TEST(contains(index.strings("message")[2], "missing.h5"), index.strings("message")[2]);
  BOOST_TEST(contains(index.strings("message")[1], "solver.max_steps = 3"), index.strings("message")[1]);
  BOOST_TEST(index.ints("exit_code")[1] == 1);
  BOOST_TEST(index.ints("exit_code")[2] == 2);
  BOOST_TEST(index.ints("frames")[1] >= 1);  // a failed run keeps its frames
  // The log of a failed run stays for the user.
  BOOST_TEST(std::filesystem::exists(s / "out" / "runs" / "file=missing.h5_max_steps=0.log"));
  BOOST_TEST(!std::filesystem::exists(s / "out" / "runs" / "file=start.h5_max_steps=0.log"));
  // Again: the finished failure (max_steps) is kept, the refused ones are tried again.
  const SweepIndex again = [&] {
    s.normdyn("sweep sweep.toml -o out -q");
    return SweepIndex(s / "out");
  }();
  BOOST_TEST(again.strings("action")[1] == "cached");
  BOOST_TEST(again.strings("action")[2] == "run");
  BOOST_TEST(again.strings("status")[2] == "bad_input");
}

BOOST_AUTO_TEST_CASE(the_documentation_reads_the_index_as_written) {
  // The fenced block after `<!-- docs-example: sweep-index -->` of the page on loading results, run
  // against a small sweep, with its output checked.
  const std::string page = Scratch::slurp(std::filesystem::path(NORMDYN_SOURCE_DIR) / "docs/howto/load.md");
  const auto at = page.find("<!-- docs-example: sweep-index -->");
  BOOST_REQUIRE(at != std::string::npos);
  const auto open = page.find("```python\n", at);
  const auto close = page.find("```", open + 10);
  Scratch s;
  s.write("base.toml", kBase);
  s.write("sweep.toml", "base = \"base.toml\"\n[axes]\n\"model.beta\" = [1.0, 30.0]\n\"init.seed\" = [1, 2]\n");
  BOOST_REQUIRE_EQUAL(s.normdyn("sweep sweep.toml -o runs/sweep_beta -q").exit_code, 0);
  s.write("docs_sweep.py", page.substr(open + 10, close - open - 10));
  const auto r = s.shell(std::string(NORMDYN_PYTHON) + " docs_sweep.py");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.out, "4 runs: {'ok': 4}\n"), r.out);
  BOOST_TEST(contains(r.out, "beta = 1: P(synchronized by t = 10) = "), r.out);
  BOOST_TEST(contains(r.out, "beta = 30: P(synchronized by t = 10) = "), r.out);
}

BOOST_AUTO_TEST_CASE(a_damaged_run_file_is_a_failed_point_not_a_failed_sweep) {
  Scratch s;
  s.write("base.toml", kBase);
  s.write("sweep.toml", "base = \"base.toml\"\n[axes]\n\"init.seed\" = [1, 2, 3]\n");
  BOOST_REQUIRE_EQUAL(s.normdyn("sweep sweep.toml -o out -q").exit_code, 0);
  std::filesystem::remove(s / "out" / "runs" / "seed=2.json");
  s.write("out/runs/seed=2.h5", "not an HDF5 file");
  const auto r = s.normdyn("sweep sweep.toml -o out");
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.out, "3 points: 1 io_error, 2 ok"), r.out);
  BOOST_TEST(contains(r.out, "remove seed=2.h5 or pass --force"), r.out);
  const auto forced = s.normdyn("sweep sweep.toml -o out -q --force");
  BOOST_TEST(forced.exit_code == 0, forced.err);
  BOOST_TEST(SweepIndex(s / "out").strings("status")[1] == "ok");
}

BOOST_AUTO_TEST_CASE(the_index_records_the_command_lines_overrides) {
  Scratch s;
  s.write("base.toml", kBase);
  s.write("sweep.toml", "base = \"base.toml\"\n[set]\n\"model.beta\" = 2.0\n[axes]\n\"init.seed\" = [1, 2]\n");
  const auto r = s.normdyn("sweep sweep.toml -o out -q --set model.n=6");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // sweep_toml alone would not reproduce the runs: the --set is in `overrides`, after [set].
  BOOST_TEST(std::get<std::string>(SweepIndex(s / "out").attributes.at("overrides")) == "model.beta=2.0\nmodel.n=6\n");
}
