// Crash safety and resume: a run killed with SIGKILL at any moment leaves a file that
// h5py opens with every flushed frame intact; `--resume` then completes it with the frames of an
// uninterrupted run, bit for bit; SIGINT/SIGTERM end a run cleanly with status `interrupted`;
// memory stays flat however many frames are written; same configuration, same bits.
#define BOOST_TEST_MODULE crash_safety
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <thread>

#include "cli_harness.hpp"
#include "normdyn/io/run_file.hpp"

using namespace normdyn;
using test::contains;
using test::Scratch;

namespace {

// Long enough to be killed at different moments; flushes often so that kills land in them too.
const char* kLong = R"([model]
scheme = "pre"
n = 24
d = 4
beta = 4.0
[init]
kind = "gaussian"
[solver]
t_end = 600.0
threads = 1
[output]
samples = 6001
flush_frames = 5
flush_seconds = 0.02
)";

// A mean-field run (/fields, a radius scheme on the (phi, r) grid), about 1.8 s.
const char* kField = R"([model]
kind = "meanfield"
scheme = "peri"
beta = 8.0
[meanfield]
grid = 512
radial_grid = 16
[init]
kind = "perturbed_uniform"
mode = 3
amplitude = 0.05
radius_width = 0.1
[solver]
t_end = 60.0
rtol = 1e-7
[output]
samples = 601
flush_frames = 5
flush_seconds = 0.05
)";

std::string python_compare(const Scratch& s, const std::string& run, const std::string& ref, bool complete) {
  const auto r = s.shell(std::string(NORMDYN_PYTHON) + " " + NORMDYN_SOURCE_DIR + "/tests/app/compare_runs.py " + run +
                         " " + ref + (complete ? " --complete" : ""));
  BOOST_TEST(r.exit_code == 0, "compare_runs.py " << run << ": " << r.err);
  return r.out;
}

// Runs `config` into `output` and sends `sig` once the run has used 0.1 CPU-s after its output
// file appeared (about a fifth of kLong): timed by its own progress, since a wall-clock wait
// outlasts the whole run on a fast machine and not under load, and counted from the file since
// the set-up alone (loading under the sanitizers) can take more than that before the handlers exist.
test::ChildExit signal_a_fifth_in(const Scratch& s, const std::string& config, const std::string& output, int sig) {
  const test::Child child = test::spawn_normdyn(s.dir(), {"run", config, "-q", "-o", output});
  for (int i = 0; i < 12000 && !std::filesystem::exists(s / output); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double started = test::child_progress(child).cpu_seconds;
  for (int i = 0; i < 12000 && test::child_progress(child).cpu_seconds < started + 0.1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(child.pid, sig);
  return test::wait_child(child);
}

// Leaves `name` (an interrupted run) as a kill in the middle of its next appends can: status
// `running`, and past its checkpoint a torn tail, the extents wherever each dataset's metadata
// reached the disk. "torn": the checksums 5 frames ahead, the first covered dataset (a value
// dataset) 3, the last one 1, the others none (a flush interrupted between them); "junk": every
// dataset 2 frames ahead, rows and checksums not written. The tail holds junk. "short": the last
// covered dataset cut a frame short of the checkpoint instead (damage). Returns the checkpoint's
// frame count.
int tear_after_the_checkpoint(const Scratch& s, const std::string& name, const std::string& how) {
  s.write("tear.py", R"(import sys, h5py
f = h5py.File(sys.argv[1], "r+")
checksums = f["checksums/frames"]
covers = checksums.attrs["covers"].split("\n")
k = int(f["checkpoint/current"][1])
if checksums.shape[0] != k or any(f[p].shape[0] != k for p in covers):
    sys.exit("not an interrupted run: its datasets do not all hold its checkpoint's frames")
f["summary"].attrs["status"] = "running"
grow = {"torn": {"checksums/frames": 5, covers[0]: 3, covers[-1]: 1},
        "junk": {p: 2 for p in covers + ["checksums/frames"]},
        "short": {covers[-1]: -1}}[sys.argv[2]]
for p, extra in grow.items():
    f[p].resize(k + extra, axis=0)
    if extra > 0:  # junk; times as a chunk written before them holds them (HDF5's fill value)
        f[p][k:] = 0 if p.endswith("/time") else 7
f.close()
print(k)
)");
  const auto r = s.shell(std::string(NORMDYN_PYTHON) + " tear.py " + name + " " + how);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "tear.py " << name << ": " << r.err);
  return std::stoi(r.out);
}

}  // namespace

BOOST_AUTO_TEST_CASE(sigkill_at_any_moment_then_resume) {
  Scratch s;
  s.write("long.toml", kLong);
  BOOST_REQUIRE_EQUAL(s.normdyn("run long.toml -q -o ref.h5").exit_code, 0);
  // Frequent flushes must not bloat the file: SWMR never reuses file space, so chunks rewritten at
  // every flush used to leave a dead copy each time (116 MB for half of this run). The frames hold
  // 6001 x (24 x 4 + 24 + 3 observables + time + step) doubles = 6.3 MB before compression.
  const auto bytes = std::filesystem::file_size(s / "ref.h5");
  BOOST_TEST(bytes < 2 * 6001 * (24 * 4 + 24 + 3 + 2) * 8, "ref.h5: " << bytes << " bytes");
  int killed_with_frames = 0;
  for (int delay_ms : {0, 30, 150, 400, 800, 1300, 2000}) {
    const std::string name = "k" + std::to_string(delay_ms) + ".h5";
    const test::Child child = test::spawn_normdyn(s.dir(), {"run", "long.toml", "-q", "-o", name});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child.pid, SIGKILL);
    const test::ChildExit e = test::wait_child(child);
    BOOST_TEST_INFO("killed after " << delay_ms << " ms");
    if (!std::filesystem::exists(s / name)) {
      // Killed during set-up: no half-made file under the output name.
      BOOST_TEST(e.signal == SIGKILL);
      continue;
    }
    // A kill inside the run's last session, the summary written outside SWMR mode (a loaded machine
    // moves the end of the run into the later delays), leaves a file no reader opens until the
    // resume recovers it; the resume must then give the complete run.
    if (recovery_needed(s / name) == Recovery::killed_plain_session) {
      BOOST_TEST(e.signal == SIGKILL);
      BOOST_TEST_MESSAGE("killed after " << delay_ms << " ms inside the summary session");
      const auto resumed = s.normdyn("run --resume " + name + " -q");
      BOOST_TEST(resumed.exit_code == 0, resumed.err);
      python_compare(s, name, "ref.h5", true);
      BOOST_TEST(RunReader(s / name).summary()->status == RunStatus::ok);
      continue;
    }
    // Decided by the file, not by how the process ended: the kill can land after the run finished
    // its file and before the process exited (under the sanitizers the exit takes a while).
    if (const auto summary = RunReader(s / name).summary()) {
      // The run ended before the kill: it must be the complete run.
      BOOST_TEST((e.signal == SIGKILL || e.exit_code == 0));
      BOOST_TEST(summary->status == RunStatus::ok);
      python_compare(s, name, "ref.h5", true);
      continue;
    }
    BOOST_TEST(e.signal == SIGKILL);  // an unfinished file from a process that ended by itself is a bug
    const std::string frames = python_compare(s, name, "ref.h5", false);
    if (std::stoi(frames) > 0) ++killed_with_frames;
    const auto resumed = s.normdyn("run --resume " + name + " -q");
    BOOST_TEST(resumed.exit_code == 0, resumed.err);
    python_compare(s, name, "ref.h5", true);
    const RunReader reader(s / name);
    BOOST_TEST(reader.summary()->status == RunStatus::ok);
  }
  BOOST_TEST(killed_with_frames >= 2);  // the kills did land inside the run
}

BOOST_AUTO_TEST_CASE(sigint_and_sigterm_end_the_run_cleanly) {
  Scratch s;
  s.write("long.toml", kLong);
  BOOST_REQUIRE_EQUAL(s.normdyn("run long.toml -q -o ref.h5").exit_code, 0);
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string name = "i" + std::to_string(sig) + ".h5";
    const test::ChildExit e = signal_a_fifth_in(s, "long.toml", name, sig);
    BOOST_TEST(e.exit_code == 130);
    // A complete file: a plain (non-SWMR) open works, and the summary says why it ended.
    const auto plain = s.shell(std::string(NORMDYN_PYTHON) + " -c \"import h5py; f = h5py.File('" + name +
                               "', 'r'); print(f['summary'].attrs['status'])\"");
    BOOST_TEST(plain.out == "interrupted\n", plain.err);
    BOOST_TEST(RunReader(s / name).summary()->message.find("normdyn run --resume") != std::string::npos);
    python_compare(s, name, "ref.h5", false);
    const auto resumed = s.normdyn("run --resume " + name + " -q");
    BOOST_TEST(resumed.exit_code == 0, resumed.err);
    python_compare(s, name, "ref.h5", true);
  }
}

// A writer killed in a session outside SWMR mode (its summary) leaves HDF5's write flag set, and no
// reader opens the file. Made here as such a kill leaves it before the session's final writes:
// a session opens the file for writing (the flag is written at once) and its process dies.
BOOST_AUTO_TEST_CASE(a_file_left_by_a_killed_plain_session_is_recovered_by_the_resume) {
  Scratch s;
  s.write("long.toml", kLong);
  BOOST_REQUIRE_EQUAL(s.normdyn("run long.toml -q -o ref.h5").exit_code, 0);
  const auto leave_write_flag = [&](const std::string& name) {
    const auto r = s.shell(std::string(NORMDYN_PYTHON) + " -c \"import h5py, os; f = h5py.File('" + name +
                           "', 'r+'); os._exit(9)\"");
    BOOST_REQUIRE_EQUAL(r.exit_code, 9);
    const auto plain = s.shell(std::string(NORMDYN_PYTHON) + " -c \"import h5py; h5py.File('" + name + "', 'r')\"");
    BOOST_REQUIRE(contains(plain.err, "file is already open for write"));
  };
  // An interrupted run: the resume clears the flag and completes it.
  BOOST_REQUIRE_EQUAL(signal_a_fifth_in(s, "long.toml", "i.h5", SIGINT).exit_code, 130);
  leave_write_flag("i.h5");
  const auto read = s.normdyn("analyze i.h5 -q");
  BOOST_TEST(read.exit_code == 3);
  BOOST_TEST(contains(read.err, "i.h5: left by a writer killed while it wrote outside SWMR mode"), read.err);
  BOOST_TEST(contains(read.err, "normdyn run --resume i.h5 recovers it"), read.err);
  const auto resumed = s.normdyn("run --resume i.h5 -q");
  BOOST_TEST(resumed.exit_code == 0, resumed.err);
  python_compare(s, "i.h5", "ref.h5", true);
  // A finished run: the resume clears the flag and says that the run has nothing to continue.
  std::filesystem::copy_file(s / "ref.h5", s / "done.h5");
  leave_write_flag("done.h5");
  const auto done = s.normdyn("run --resume done.h5 -q");
  BOOST_TEST(done.exit_code == 2);
  BOOST_TEST(contains(done.err, "done.h5 ended with status ok"), done.err);
  python_compare(s, "done.h5", "ref.h5", true);
  BOOST_TEST(RunReader(s / "done.h5").summary()->status == RunStatus::ok);
}

// Mean-field runs (/fields, a radius scheme on the (φ, r) grid) are checkpointed and resumed alike.
BOOST_AUTO_TEST_CASE(meanfield_sigkill_then_resume) {
  Scratch s;
  s.write("field.toml", kField);
  BOOST_REQUIRE_EQUAL(s.normdyn("run field.toml -q -o ref.h5").exit_code, 0);
  int resumed_runs = 0;
  for (int delay_ms : {0, 400}) {
    const std::string name = "f" + std::to_string(delay_ms) + ".h5";
    const test::Child child = test::spawn_normdyn(s.dir(), {"run", "field.toml", "-q", "-o", name});
    // The kill is timed from the file's creation, not from the start: a loaded machine (or a
    // sanitizer build) can take longer than a fixed delay only to start the program.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!std::filesystem::exists(s / name) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child.pid, SIGKILL);
    test::wait_child(child);
    if (!std::filesystem::exists(s / name)) continue;
    python_compare(s, name, "ref.h5", false);
    if (RunReader(s / name).summary().has_value()) continue;  // finished before the kill
    const auto resumed = s.normdyn("run --resume " + name + " -q");
    BOOST_TEST(resumed.exit_code == 0, resumed.err);
    python_compare(s, name, "ref.h5", true);
    ++resumed_runs;
  }
  BOOST_TEST(resumed_runs >= 1);  // a kill did land inside the run (it takes about 1.8 s)
}

// A kill between two datasets' appends, or inside the flush that makes them durable, leaves their
// extents torn past the checkpoint (once seen: a value dataset 215 frames long beside 220
// checksums). Only the checkpoint's frames are committed: `verify` checks the frames complete in
// every dataset, the resume cuts the tail and completes the run bit for bit; a dataset shorter than
// the checkpoint is damage. Particle and mean-field runs alike.
BOOST_AUTO_TEST_CASE(a_tail_torn_past_the_checkpoint_is_cut_by_the_resume) {
  Scratch s;
  s.write("long.toml", kLong);
  s.write("field.toml", kField);
  for (const std::string config : {"long", "field"}) {
    BOOST_TEST_CONTEXT(config) {
      const std::string ref = config + "_ref.h5", torn = config + "_torn.h5", cut = config + "_cut.h5",
                        junk = config + "_junk.h5";
      BOOST_REQUIRE_EQUAL(s.normdyn("run " + config + ".toml -q -o " + ref).exit_code, 0);
      BOOST_REQUIRE_EQUAL(signal_a_fifth_in(s, config + ".toml", torn, SIGINT).exit_code, 130);
      std::filesystem::copy_file(s / torn, s / cut);
      std::filesystem::copy_file(s / torn, s / junk);
      const int k = tear_after_the_checkpoint(s, torn, "torn");
      BOOST_TEST_MESSAGE(config << ": torn after " << k << " frames");
      const auto verified = s.normdyn("verify " + torn);
      BOOST_TEST(verified.exit_code == 0, verified.err);
      BOOST_TEST(verified.out == torn + ": " + std::to_string(k) + " frames match their checksums\n");
      {
        // Opened twice in one process (normdyn.load beside an open h5py file): the cached extents
        // are not compared with the checkpoint, and the torn tail is no more damage than above.
        const RunReader first(s / torn);
        BOOST_TEST(RunReader(s / torn).verify_frames().value_or(0) == static_cast<std::size_t>(k));
      }
      const auto resumed = s.normdyn("run --resume " + torn + " -q");
      BOOST_TEST(resumed.exit_code == 0, resumed.err);
      python_compare(s, torn, ref, true);
      BOOST_TEST(RunReader(s / torn).summary()->status == RunStatus::ok);
      // Fewer frames than the checkpoint counts: damage, in verify and in the resume.
      // A tail frame complete in every dataset whose rows or checksum never reached the disk: not
      // damage, a write the kill cut short, which the reader names with the resume that rewrites it.
      BOOST_REQUIRE_EQUAL(tear_after_the_checkpoint(s, junk, "junk"), k);
      const auto tail = s.normdyn("verify " + junk);
      BOOST_TEST(tail.exit_code == 3, tail.err);
      BOOST_TEST(contains(tail.err, junk + ": frame " + std::to_string(k) + " (t = "), tail.err);
      BOOST_TEST(contains(tail.err, "it lies past the last checkpoint (" + std::to_string(k) +
                                        " frames) of a run whose writer was killed"),
                 tail.err);
      BOOST_TEST(contains(tail.err, "normdyn run --resume " + junk + " recomputes it"), tail.err);
      BOOST_TEST(!contains(tail.err, "damaged"), tail.err);
      const auto rewritten = s.normdyn("run --resume " + junk + " -q");
      BOOST_TEST(rewritten.exit_code == 0, rewritten.err);
      python_compare(s, junk, ref, true);
      BOOST_REQUIRE_EQUAL(tear_after_the_checkpoint(s, cut, "short"), k);
      for (const std::string command : {"verify ", "run -q --resume "}) {
        const auto r = s.normdyn(command + cut);
        BOOST_TEST(r.exit_code == 3, command << ": " << r.err);
        BOOST_TEST(contains(r.err, cut + ": damaged run file"), r.err);
        if (command == "verify ")
          BOOST_TEST(contains(r.err, "holds " + std::to_string(k - 1) + " frames, fewer than the " + std::to_string(k) +
                                         " its checkpoint (/checkpoint/current) says were written"),
                     r.err);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(finished_runs_cannot_be_resumed) {
  Scratch s;
  s.write("long.toml", kLong);
  BOOST_REQUIRE_EQUAL(s.normdyn("run long.toml -q -o done.h5 --set solver.t_end=3 --set output.samples=4").exit_code,
                      0);
  const auto r = s.normdyn("run --resume done.h5");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("ended with status ok; only interrupted or killed runs can be resumed") != std::string::npos);
  BOOST_TEST(s.normdyn("run long.toml --resume done.h5").exit_code == 2);
}

BOOST_AUTO_TEST_CASE(memory_stays_flat_over_many_frames) {
#ifdef NORMDYN_SANITIZED
  BOOST_TEST_MESSAGE("skipped under AddressSanitizer: its quarantine holds freed memory");
  return;
#endif
  Scratch s;
  s.write("many.toml", R"([model]
n = 8
d = 3
[solver]
t_end = 1000.0
threads = 1
[output]
samples = 10001
)");
  const auto run = [&](const std::string& samples, const std::string& t_end) {
    const test::Child c = test::spawn_normdyn(s.dir(), {"run", "many.toml", "-q", "-o", samples + ".h5", "--set",
                                                        "output.samples=" + samples, "--set", "solver.t_end=" + t_end});
    return test::wait_child(c);
  };
  const test::ChildExit small = run("10001", "1000.0");
  const test::ChildExit large = run("100001", "10000.0");
  BOOST_REQUIRE_EQUAL(small.exit_code, 0);
  BOOST_REQUIRE_EQUAL(large.exit_code, 0);
  BOOST_TEST(RunReader(s / "100001.h5").frames() == 100001u);
  // 90 000 more frames are 25 MB of directions, radii, times, steps and observables: they must not
  // stay in memory (measured growth: 4.4 MB, HDF5 chunk indexes and its bounded metadata cache).
  const long growth_kb = large.max_rss_kb - small.max_rss_kb;
  BOOST_TEST_MESSAGE("peak RSS: " << small.max_rss_kb << " kB at 1e4 frames, " << large.max_rss_kb << " kB at 1e5");
  BOOST_TEST(growth_kb < 8192);
}

BOOST_AUTO_TEST_CASE(same_configuration_same_bits_whatever_the_thread_count) {
  Scratch s;
  s.write("det.toml", R"([model]
scheme = "peri"
n = 300
d = 16
beta = 2.0
qkv = "gaussian"
[solver]
t_end = 3.0
[output]
samples = 7
)");
  BOOST_REQUIRE_EQUAL(s.normdyn("run det.toml -q -o a.h5 --threads 1").exit_code, 0);
  BOOST_REQUIRE_EQUAL(s.normdyn("run det.toml -q -o b.h5 --threads 1").exit_code, 0);
  BOOST_REQUIRE_EQUAL(s.normdyn("run det.toml -q -o c.h5 --threads 2").exit_code, 0);
  python_compare(s, "b.h5", "a.h5", true);
  python_compare(s, "c.h5", "a.h5", true);
  const auto threads = s.shell(std::string(NORMDYN_PYTHON) +
                               " -c \"import h5py; print(h5py.File('c.h5')['parameters'].attrs['threads'])\"");
  BOOST_TEST(threads.out == "2\n");
}
