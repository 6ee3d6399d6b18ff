// Hostile inputs through the command line, continued from test_hostile_cli.cpp: runs that cannot
// advance (never "ok" without the work), outputs that would replace an input, files that would
// block a read or balloon it (FIFOs, devices, sparse giants), and sizes the memory check must name.
// Every case runs under a 30 s `timeout` (exit 124/137: the command hung), asserts the exit code
// and the message, and that the files involved are unchanged.
#define BOOST_TEST_MODULE hostile_inputs
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "hostile_harness.hpp"

using normdyn::test::contains;
using normdyn::test::Scratch;
namespace fs = std::filesystem;

using namespace normdyn::test::hostile;

namespace {

// A run of 51 frames to t = 5 (the suite's own: its steps are compared with t_end).
constexpr const char* kSmall51 = R"([model]
n = 16
d = 3
[init]
kind = "uniform"
seed = 3
[solver]
t_end = 5.0
threads = 1
[output]
samples = 51
)";

constexpr const char* kSweep = R"(base = "small.toml"
[axes]
"init.seed" = [1, 2]
[ensemble]
over = "init.seed"
)";

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(no_ok_without_the_work)

// Steps below the resolution of time at t_end (dt < t_end 2^-52) left t at 0: "ok: reached t =
// 0.000000; 1 frames, 0 steps" (the count t_end / dt overflowed), or, at 1e-18, 5e18 steps that
// did not move; the layer maps wrote 51 copies of the first frame. Now bad input, before any file.
BOOST_AUTO_TEST_CASE(steps_that_cannot_advance_are_refused_naming_solver_dt) {
  Scratch s;
  s.write("small.toml", kSmall51);
  const std::vector<std::string> cases{
      "--set solver.method:=rk4 --set solver.dt=1e-300",
      "--set solver.method:=euler --set solver.dt=1e-300",
      "--set solver.method:=rk4 --set solver.dt=1e-18",
      "--set solver.method:=discrete --set solver.dt=1e-300",
      "--set noise.kind:=independent --set noise.sigma=0.1 --set solver.dt=1e-20",
      "--set solver.method:=rk4 --set solver.t_end=1e300",
  };
  for (const std::string& c : cases) {
    const auto r = bounded(s, "run small.toml -q -o x.h5 " + c);
    BOOST_TEST_INFO(c << ": exit " << r.exit_code << ": " << r.err);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "solver.dt"));
    BOOST_TEST(contains(r.err, "resolution of time at solver.t_end"));
    BOOST_TEST(!fs::exists(s / "x.h5"));
  }
  // The smallest step time resolves runs (5 * 2^-52 = 1.1e-15 at t_end = 5): refused only below it.
  const auto fine = bounded(s, "run small.toml -q -o fine.h5 --set solver.method:=rk4 --set solver.dt=1e-2");
  BOOST_TEST(fine.exit_code == 0, fine.err);
}

BOOST_AUTO_TEST_CASE(ensembles_refuse_them_before_any_member_runs) {
  Scratch s;
  s.write("small.toml", kSmall51);
  s.write("S.toml", kSweep);
  for (const char* set :
       {"--set solver.method:=rk4 --set solver.dt=1e-300", "--set solver.method:=discrete --set solver.dt=1e-300"}) {
    const auto r = bounded(s, std::string("ensemble S.toml -q -o e.h5 ") + set);
    BOOST_TEST_INFO(set << ": exit " << r.exit_code << ": " << r.err);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "solver.dt"));
    BOOST_TEST(!fs::exists(s / "e.h5"));
    BOOST_TEST(!fs::exists(s / "e.h5.journal"));
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(inputs_never_overwritten)

BOOST_AUTO_TEST_CASE(an_ensemble_never_replaces_its_sweep_file_or_base) {
  Scratch s;
  s.write("small.toml", kSmall51);
  s.write("S.toml", kSweep);
  struct Case {
    std::string output, message;
  };
  for (const Case& c : {Case{"S.toml", "is an input of this ensemble"}, Case{"small.toml", "base configuration"},
                        Case{"./sub/../S.toml", "is an input of this ensemble"}}) {
    fs::create_directories(s / "sub");
    for (const char* force : {"", " --force"}) {
      const auto r = bounded(s, "ensemble S.toml -q -o " + c.output + force);
      BOOST_TEST_INFO(c.output << force << ": exit " << r.exit_code << ": " << r.err);
      BOOST_TEST(r.exit_code == 2);
      BOOST_TEST(contains(r.err, c.message));
      BOOST_TEST(contains(r.err, "-o"));
    }
  }
  BOOST_TEST(Scratch::slurp(s / "S.toml") == kSweep);
  BOOST_TEST(Scratch::slurp(s / "small.toml") == kSmall51);
  // A member's input file (init.file) is refused as well.
  const auto first = bounded(s, "run small.toml -q -o tokens.h5");
  BOOST_REQUIRE(first.exit_code == 0);
  const std::string tokens = Scratch::slurp(s / "tokens.h5");
  const auto member =
      bounded(s, "ensemble S.toml -q --force -o tokens.h5 --set init.kind:=file --set init.file=tokens.h5");
  BOOST_TEST(member.exit_code == 2, member.err);
  BOOST_TEST(contains(member.err, "a member's initial tokens (init.file)"), member.err);
  BOOST_TEST(Scratch::slurp(s / "tokens.h5") == tokens);
}

// The stored configuration holds output.path as TOML text, which is UTF-8: a file name of another
// encoding made it unreadable ("invalid TOML: Encountered invalid utf-8 sequence"), and the run
// could not be resumed or loaded.
BOOST_AUTO_TEST_CASE(a_run_under_a_name_that_is_not_utf8_resumes) {
  Scratch s;
  s.write("small.toml", kSmall51);
  s.write("name.sh", "printf 'r\\377\\376.h5'\n");
  const auto made = s.shell(std::string(kBound) + NORMDYN_BINARY + " run small.toml -q -o \"$(bash name.sh)\"");
  BOOST_REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  python(s,
         "name = os.fsencode(os.fsdecode(b'r\\xff\\xfe.h5'))\n"
         "f = h5py.File(name, 'r+'); f['summary'].attrs['status'] = 'interrupted'; f.close()\n");
  const auto resumed = s.shell(std::string(kBound) + NORMDYN_BINARY + " run --resume \"$(bash name.sh)\" -q");
  BOOST_TEST(resumed.exit_code == 0, resumed.err);
  const auto analyzed = s.shell(std::string(kBound) + NORMDYN_BINARY + " verify \"$(bash name.sh)\"");
  BOOST_TEST(analyzed.exit_code == 0, analyzed.err);
}

// `run --continue` names its input in the new run's configuration (init.file), TOML text: a name
// that is not UTF-8 was stored with U+FFFD in place of its bytes. Refused, naming the flag.
BOOST_AUTO_TEST_CASE(continue_refuses_an_input_whose_name_is_not_utf8) {
  Scratch s;
  s.write("small.toml", kSmall51);
  s.write("name.sh", "printf 'r\\377\\376.h5'\n");
  const auto made = s.shell(std::string(kBound) + NORMDYN_BINARY + " run small.toml -q -o \"$(bash name.sh)\"");
  BOOST_REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  const auto continued =
      s.shell(std::string(kBound) + NORMDYN_BINARY + " run --continue \"$(bash name.sh)\" --t-end 9 -o more.h5 -q");
  clean_exit(continued, 2);
  BOOST_TEST(contains(continued.err, "--continue"), continued.err);
  BOOST_TEST(contains(continued.err, "not valid UTF-8"), continued.err);
  BOOST_TEST(!fs::exists(s / "more.h5"));
  // Under a UTF-8 name the same run continues.
  BOOST_REQUIRE(s.shell("cp \"$(bash name.sh)\" plain.h5").exit_code == 0);
  const auto plain = s.shell(std::string(kBound) + NORMDYN_BINARY + " run --continue plain.h5 --t-end 9 -o more.h5 -q");
  BOOST_TEST(plain.exit_code == 0, plain.err);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(no_blocking_no_unbounded_reads)

BOOST_AUTO_TEST_CASE(plot_refuses_a_fifo_or_device_before_the_script_opens_it) {
  Scratch s;
  BOOST_REQUIRE(s.shell("mkfifo fifo").exit_code == 0);
  for (const char* run : {"fifo", "/dev/zero"}) {
    const auto r = bounded(s, std::string("plot ") + run + " -o p.png");
    BOOST_TEST_INFO(run << ": exit " << r.exit_code << ": " << r.err);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "not a regular file"));
  }
  BOOST_TEST(!fs::exists(s / "p.png"));
}

// A sweep's rerun reads each point's record (runs/NAME.json): a FIFO there blocked it, a link to
// /dev/zero read until the memory ran out.
// The library of a [[terms]] table is read for its digest: /dev/zero was read without end and a FIFO
// held the open.
BOOST_AUTO_TEST_CASE(a_terms_library_that_is_not_a_regular_file_is_refused) {
  Scratch s;
  BOOST_REQUIRE(s.shell("mkfifo fifo.so").exit_code == 0);
  for (const std::string library : {"/dev/zero", "fifo.so"}) {
    s.write("terms.toml", std::string(kSmall51) + "[[terms]]\nlibrary = \"" + library + "\"\nsymbol = \"f\"\n");
    const auto r = bounded(s, "run terms.toml -q -o x.h5");
    BOOST_TEST_INFO(library);
    clean_exit(r, 2);
    BOOST_TEST(contains(r.err, "terms.library"), r.err);
    BOOST_TEST(!std::filesystem::exists(s / "x.h5"));
  }
}

BOOST_AUTO_TEST_CASE(a_sweep_record_that_is_not_a_regular_file_is_refused) {
  Scratch s;
  s.write("small.toml", kSmall51);
  s.write("S.toml", kSweep);
  const auto first = bounded(s, "sweep S.toml -o sw -q");
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(s / "sw" / "runs"))
    if (e.path().extension() == ".json") records.push_back(e.path());
  BOOST_REQUIRE(!records.empty());
  const fs::path record = records.front();
  for (const std::string& make : {"mkfifo '" + record.string() + "'", "ln -s /dev/zero '" + record.string() + "'"}) {
    fs::remove(record);
    BOOST_REQUIRE(s.shell(make).exit_code == 0);
    const auto r = bounded(s, "sweep S.toml -o sw -q");
    BOOST_TEST_INFO(make << ": exit " << r.exit_code << ": " << r.err);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, record.filename().string()));
    BOOST_TEST(contains(r.err, "not a regular file"));
  }
}

// An ensemble's journal is read whole; a sparse 3 GB one read for 40 s into 1 GB of memory before a
// misleading "not enough memory". The bound comes from the ensemble's own size.
BOOST_AUTO_TEST_CASE(a_journal_larger_than_the_ensemble_can_write_is_refused_unread) {
  Scratch s;
  s.write("small.toml", kSmall51);
  s.write("S.toml", kSweep);
  BOOST_REQUIRE(s.shell("truncate -s 3G e.h5.journal").exit_code == 0);
  const auto r = bounded(s, "ensemble S.toml -q -o e.h5");
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(contains(r.err, "e.h5.journal: larger than"), r.err);
  BOOST_TEST(contains(r.err, "--force"), r.err);
  BOOST_TEST(!fs::exists(s / "e.h5"));
  BOOST_TEST(fs::file_size(s / "e.h5.journal") == std::uintmax_t{3} << 30);
  // --force starts over, as the message says.
  const auto forced = bounded(s, "ensemble S.toml -q --force -o e.h5");
  BOOST_TEST(forced.exit_code == 0, forced.err);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// `ulimit -v` leaves AddressSanitizer no room for its shadow memory: the sanitized build skips these.
#ifndef NORMDYN_SANITIZED
BOOST_AUTO_TEST_SUITE(memory_named)

// Past the size check, a failed allocation was reported as "not enough memory for this
// configuration (model.n, model.d, output.samples)", none of which was the cause.
BOOST_AUTO_TEST_CASE(the_sinkhorn_matrix_is_counted_and_named) {
  Scratch s;
  s.write("small.toml", kSmall51);
  const auto r = s.shell(std::string("ulimit -v 4000000; ") + kBound + NORMDYN_BINARY +
                         " run small.toml -q -o x.h5 --set attention.normalizer=sinkhorn --set model.n=100000");
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(contains(r.err, "attention.normalizer"), r.err);
  BOOST_TEST(contains(r.err, "n x n matrix"), r.err);
  BOOST_TEST(!fs::exists(s / "x.h5"));
}

BOOST_AUTO_TEST_CASE(a_huge_feedforward_file_is_named) {
  Scratch s;
  s.write("small.toml", kSmall51);
  // Declared, never written: the file is kilobytes, its datasets 32 GB.
  python(s,
         "f = h5py.File('ff.h5', 'w')\n"
         "f.create_dataset('a', shape=(10**9, 3), dtype='f8', chunks=(4096, 3))\n"
         "f.create_dataset('omega', shape=(10**9,), dtype='f8', chunks=(4096,))\n");
  const auto r = s.shell(std::string("ulimit -v 4000000; ") + kBound + NORMDYN_BINARY +
                         " run small.toml -q -o x.h5 --set feedforward.weights=file --set feedforward.file=ff.h5");
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(contains(r.err, "feedforward.file: ff.h5: a [M, d] = [1000000000, 3] needs about"), r.err);
  BOOST_TEST(!fs::exists(s / "x.h5"));
}

BOOST_AUTO_TEST_SUITE_END()
#endif
