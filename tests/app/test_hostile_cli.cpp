// Hostile inputs and scenarios through the command line, by family: concurrent access, damaged and
// forged files, resource faults (small limits set in the child), special paths, numerical abuse.
// Every case asserts the exit code, the message, that the command ends (each runs under a 30 s
// `timeout`, whose exit code 124 would mean a hang) and that no file was damaged.
#define BOOST_TEST_MODULE hostile_cli
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include "cli_harness.hpp"
#include "hostile_harness.hpp"
#include "normdyn/io/run_file.hpp"

using namespace normdyn;
using test::contains;
using test::Scratch;
namespace fs = std::filesystem;

using namespace normdyn::test::hostile;

namespace {

constexpr const char* kMeanField = R"([model]
kind = "meanfield"
scheme = "post"
beta = 4.0
[meanfield]
grid = 64
[init]
kind = "von_mises"
centers = [0.5, 2.9]
kappa = [1.0]
[solver]
t_end = 2.0
[output]
samples = 21
)";

// Steps of seconds (n² d = 1.9e8 per evaluation of the field, about 0.5 s each here, 3 s a step):
// a signal lands inside one.
constexpr const char* kSlowSteps = R"([model]
n = 8000
d = 3
[init]
kind = "uniform"
seed = 5
[solver]
t_end = 1e6
threads = 1
[output]
samples = 11
)";

// A finished small mean-field run, `name`.
void meanfield_run(const Scratch& s, const std::string& name) {
  s.write("meanfield.toml", kMeanField);
  const auto r = bounded(s, "run meanfield.toml -q -o " + name);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
}

// No staging file of an atomic replacement is left in the scratch directory (or `sub` below it).
void no_staging_files(const Scratch& s, const std::string& sub = "") {
  for (const auto& entry : fs::directory_iterator(s / sub))
    BOOST_TEST(!contains(entry.path().filename().string(), ".tmp"), entry.path());
}

// A tmpfs of `size` mounted at `dir` (root only; unmounted at the end of the scope).
class SmallDisk {
 public:
  SmallDisk(const Scratch& s, const std::string& dir, const std::string& size) : path_(s / dir) {
    fs::create_directories(path_);
    mounted_ = s.shell("mount -t tmpfs -o size=" + size + " normdyn_test " + dir).exit_code == 0;
  }
  ~SmallDisk() {
    if (mounted_) (void)std::system(("umount '" + path_.string() + "'").c_str());
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  // Fills the disk up to about `leave` bytes.
  void fill(const Scratch& s, std::uintmax_t leave) const {
    const auto space = fs::space(path_);
    const std::uintmax_t bytes = space.available > leave ? space.available - leave : 0;
    std::ofstream(path_ / "filler", std::ios::binary) << std::string(bytes, 'x');
    (void)s;
  }

 private:
  fs::path path_;
  bool mounted_ = false;
};

bool wait_for(const fs::path& p, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(concurrent_access)

BOOST_AUTO_TEST_CASE(a_live_writer_keeps_its_file) {
  Scratch s;
  s.write("long.toml", kLong);
  const test::Child writer = test::spawn_normdyn(s.dir(), {"run", "long.toml", "-q", "-o", "live.h5"});
  BOOST_REQUIRE(wait_for(s / "live.h5", 20.0));
  const std::string pid = "pid " + std::to_string(writer.pid);

  // A resume of the live file is refused, naming the writer; so is a --force run to the same path.
  const auto resume = bounded(s, "run --resume live.h5 -q");
  BOOST_TEST(resume.exit_code == 3, resume.err);
  BOOST_TEST(contains(resume.err, "live.h5 is being written by another process (" + pid), resume.err);
  const auto forced = bounded(s, "run long.toml -q -o live.h5 --force");
  BOOST_TEST(forced.exit_code == 3, forced.err);
  BOOST_TEST(contains(forced.err, pid), forced.err);

  // analyze reads the live file and writes its observables beside it.
  const auto analyzed = bounded(s, "analyze live.h5 -q --no-velocity --json live.json");
  BOOST_TEST(analyzed.exit_code == 0, analyzed.err);
  BOOST_TEST(fs::exists(s / "live.observables.h5"));

  // The writer is undisturbed: interrupted cleanly, with a readable file, and resumable.
  ::kill(writer.pid, SIGINT);
  const test::ChildExit e = test::wait_child(writer);
  BOOST_TEST(e.exit_code == 130);
  const RunReader reader(s / "live.h5");
  BOOST_TEST(reader.summary().has_value());
  BOOST_TEST(reader.summary()->status == RunStatus::interrupted);
  BOOST_TEST(!fs::exists(s / "live.h5.lock"));  // released on a clean end
}

BOOST_AUTO_TEST_CASE(no_replacement_without_force_and_force_replaces_regular_files_only) {
  Scratch s;
  small_run(s, "a.h5");
  const std::string before = bytes_of(s / "a.h5");
  const auto again = bounded(s, "run small.toml -q -o a.h5");
  BOOST_TEST(again.exit_code == 2);
  BOOST_TEST(contains(again.err, "output.path: a.h5 exists; pass --force to overwrite it"), again.err);
  BOOST_TEST(bytes_of(s / "a.h5") == before);

  BOOST_REQUIRE(s.shell("mkfifo fifo && mkdir dir").exit_code == 0);
  for (const char* target : {"fifo", "dir"}) {
    const auto r = bounded(s, std::string("run small.toml -q --force -o ") + target);
    BOOST_TEST_INFO(target);
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "is not a regular file; --force replaces only regular files"), r.err);
  }
  BOOST_TEST(fs::is_fifo(s / "fifo"));
  BOOST_TEST(fs::is_directory(s / "dir"));
  // Nothing left behind by the refused runs.
  for (const auto& entry : fs::directory_iterator(s.dir()))
    BOOST_TEST(!contains(entry.path().filename().string(), ".tmp"), entry.path());
}

// --force replaces an earlier output, never one of the run's inputs: its configuration file, its
// initial tokens, its attention matrices.
BOOST_AUTO_TEST_CASE(force_never_replaces_an_input_of_the_run) {
  Scratch s;
  small_run(s, "r.h5");
  const std::string config = bytes_of(s / "small.toml"), run = bytes_of(s / "r.h5");
  const auto self = bounded(s, "run small.toml -q --force -o ./small.toml");
  BOOST_TEST(self.exit_code == 2);
  BOOST_TEST(contains(self.err,
                      "output.path: ./small.toml is the configuration file of this run; the run file never "
                      "replaces one of its inputs, not even with --force"),
             self.err);
  BOOST_TEST(bytes_of(s / "small.toml") == config);
  const auto tokens = bounded(s, "run small.toml -q --force -o r.h5 --set init.kind=file --set init.file=r.h5");
  BOOST_TEST(tokens.exit_code == 2);
  BOOST_TEST(contains(tokens.err, "r.h5 is this run's initial tokens (init.file)"), tokens.err);
  BOOST_TEST(bytes_of(s / "r.h5") == run);
  // Another output is fine, and --force still replaces an earlier run.
  BOOST_TEST(bounded(s, "run small.toml -q --force -o r2.h5 --set init.kind=file --set init.file=r.h5").exit_code == 0);
  BOOST_TEST(bounded(s, "run small.toml -q --force -o r.h5").exit_code == 0);
}

BOOST_AUTO_TEST_CASE(analyze_outputs_never_overwrite_an_input_or_another_run) {
  Scratch s;
  small_run(s, "r.h5");
  BOOST_REQUIRE(bounded(s, "run small.toml -q -o other.h5").exit_code == 0);
  const std::string run = bytes_of(s / "r.h5"), other = bytes_of(s / "other.h5");
  const auto json = bounded(s, "analyze r.h5 -q --json r.h5");
  BOOST_TEST(json.exit_code == 2);
  BOOST_TEST(contains(json.err, "--json: r.h5 is the run file being analyzed"), json.err);
  const auto obs = bounded(s, "analyze r.h5 -q --observables-file other.h5");
  BOOST_TEST(obs.exit_code == 2);
  BOOST_TEST(contains(obs.err, "--observables-file: other.h5 is a normdyn run file"), obs.err);
  const auto self = bounded(s, "analyze r.h5 -q --observables-file ./r.h5");
  BOOST_TEST(self.exit_code == 2);
  BOOST_TEST(contains(self.err, "is the run file"), self.err);
  BOOST_TEST(bytes_of(s / "r.h5") == run);
  BOOST_TEST(bytes_of(s / "other.h5") == other);
  // The analysis itself leaves the run file as it was.
  const auto ok = bounded(s, "analyze r.h5 -q --json r.json");
  BOOST_TEST(ok.exit_code == 0, ok.err);
  BOOST_TEST(bytes_of(s / "r.h5") == run);
  BOOST_TEST(fs::exists(s / "r.observables.h5"));
  // The report replaces an earlier report, never another file: not the configuration, not notes.
  BOOST_TEST(bounded(s, "analyze r.h5 -q --json r.json").exit_code == 0);
  const std::string config = bytes_of(s / "small.toml");
  const auto clobber = bounded(s, "analyze r.h5 -q --json small.toml");
  BOOST_TEST(clobber.exit_code == 2);
  BOOST_TEST(contains(clobber.err, "--json: small.toml exists and is not a normdyn analysis report"), clobber.err);
  BOOST_TEST(bytes_of(s / "small.toml") == config);
  s.write("other.json", "{\"schema\": \"someone.else/1\"}\n");
  BOOST_TEST(bounded(s, "analyze r.h5 -q --json other.json").exit_code == 2);
  s.write("empty.json", "");
  BOOST_TEST(bounded(s, "analyze r.h5 -q --json empty.json").exit_code == 0);
}

BOOST_AUTO_TEST_CASE(an_interrupted_analysis_leaves_the_run_readable) {
  Scratch s;
  small_run(s, "r.h5");
  const std::string run = bytes_of(s / "r.h5");
  // Killed at once, at every moment of a short analysis: the run file is never opened for writing.
  for (int delay_ms : {0, 20, 60, 150}) {
    const test::Child child = test::spawn_normdyn(s.dir(), {"analyze", "r.h5", "-q", "--no-velocity"});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child.pid, SIGTERM);
    const test::ChildExit e = test::wait_child(child);
    // (A signal before the handlers are installed ends it by the default action.)
    BOOST_TEST((e.exit_code == 0 || e.exit_code == 130 || e.signal == SIGTERM),
               "exit " << e.exit_code << " signal " << e.signal);
    BOOST_TEST(bytes_of(s / "r.h5") == run);
  }
  for (const auto& entry : fs::directory_iterator(s.dir()))
    BOOST_TEST(!contains(entry.path().filename().string(), ".tmp"), entry.path());
  BOOST_TEST(bounded(s, "analyze r.h5 -q").exit_code == 0);
}

BOOST_AUTO_TEST_CASE(an_interrupted_mean_field_analysis_leaves_every_file_readable) {
  Scratch s;
  meanfield_run(s, "mf.h5");
  const std::string run = bytes_of(s / "mf.h5");
  BOOST_REQUIRE(bounded(s, "analyze mf.h5 -q").exit_code == 0);
  // The observables go beside the run, never into it, as for particles.
  BOOST_TEST(bytes_of(s / "mf.h5") == run);
  BOOST_REQUIRE(fs::exists(s / "mf.observables.h5"));
  for (int delay_ms : {0, 20, 60, 150}) {
    const test::Child child = test::spawn_normdyn(s.dir(), {"analyze", "mf.h5", "-q", "--modes", "6"});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child.pid, SIGTERM);
    const test::ChildExit e = test::wait_child(child);
    BOOST_TEST((e.exit_code == 0 || e.exit_code == 130 || e.signal == SIGTERM),
               "exit " << e.exit_code << " signal " << e.signal);
    BOOST_TEST(bytes_of(s / "mf.h5") == run);
    // The observables file is the old one or the new one, whole: h5py opens it and finds the series.
    python(s, "f = h5py.File('mf.observables.h5', 'r'); assert 'observables/mode_amplitude/value' in f\n");
  }
  no_staging_files(s);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(damaged_and_forged_files)

BOOST_AUTO_TEST_CASE(shapes_that_contradict_the_configuration) {
  Scratch s;
  small_run(s, "r.h5");
  // The stored configuration says n = 8; the data hold 16 tokens. Its hash removed (as in a file
  // written before it was stored), so that the shapes are what tells.
  python(s,
         "f = h5py.File('r.h5', 'r+'); g = f['parameters']\n"
         "g.attrs['config'] = g.attrs['config'].replace('n = 16', 'n = 8'); del g.attrs['config_hash']\n");
  const std::string before = bytes_of(s / "r.h5");
  for (const char* command : {"analyze r.h5 -q", "run --resume r.h5 -q"}) {
    const auto r = bounded(s, command);
    BOOST_TEST_INFO(command);
    BOOST_TEST(r.exit_code == 3, r.err);
    BOOST_TEST(contains(r.err,
                        "r.h5: damaged run file: /particles/tokens/direction/value has shape [11, 16, 3], expected "
                        "[frames, 8, 3]"),
               r.err);
  }
  BOOST_TEST(bytes_of(s / "r.h5") == before);
}

BOOST_AUTO_TEST_CASE(non_finite_frames_and_reversed_times) {
  Scratch s;
  small_run(s, "nan.h5");
  fs::copy_file(s / "nan.h5", s / "back.h5");
  python(
      s,
      "f = h5py.File('nan.h5', 'r+'); v = f['particles/tokens/direction/value']; v[4, 2, 1] = np.nan; rechecksum(f)\n"
      "g = h5py.File('back.h5', 'r+'); t = g['particles/tokens/direction/time']; t[5] = t[2]; rechecksum(g)\n");
  const auto nan = bounded(s, "analyze nan.h5 -q");
  BOOST_TEST(nan.exit_code == 3, nan.err);
  BOOST_TEST(
      contains(nan.err, "nan.h5: damaged run file: /particles/tokens/direction/value frame 4 has non-finite values"),
      nan.err);
  const auto back = bounded(s, "analyze back.h5 -q");
  BOOST_TEST(back.exit_code == 3, back.err);
  BOOST_TEST(contains(back.err, "back.h5: damaged run file: /particles/tokens/direction/time frame 5"), back.err);
}

BOOST_AUTO_TEST_CASE(frames_off_the_sphere_are_flagged) {
  Scratch s;
  small_run(s, "r.h5");
  python(s, "f = h5py.File('r.h5', 'r+'); v = f['particles/tokens/direction/value']; v[3] = 2 * v[3]; rechecksum(f)\n");
  const auto r = bounded(s, "analyze r.h5 --no-velocity");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.out, "note: frames off the unit sphere"), r.out);
  const auto strict = bounded(s, "analyze r.h5 -q --no-velocity --fail-on-check");
  BOOST_TEST(strict.exit_code == 1);
}

BOOST_AUTO_TEST_CASE(resume_refuses_a_checkpoint_that_does_not_fit) {
  Scratch s;
  resumable_run(s, "base.h5");
  struct Forgery {
    std::string name, code, message;
  };
  const std::vector<Forgery> forgeries{
      {"dt0.h5", "f['checkpoint/a/record'][1] = 0.0; f['checkpoint/b/record'][1] = 0.0", "step size dt = 0"},
      {"tnan.h5", "f['checkpoint/a/record'][0] = np.nan; f['checkpoint/b/record'][0] = np.nan",
       "record holds non-finite values"},
      {"thuge.h5", "f['checkpoint/a/record'][0] = 1e300; f['checkpoint/b/record'][0] = 1e300",
       "outside [solver.t_start, solver.t_end] = [0, 2"},
      {"next.h5",
       "c = f['checkpoint/current']; s = 'ab'[c[0]]; f['checkpoint/' + s + '/record'][6] = 1e9; c[1] = 1000000000",
       "points at sample 1000000000"},
      {"short.h5",
       "[f[p].resize(3, axis=0) for p in ['particles/tokens/direction/value', 'particles/tokens/direction/time',"
       " 'particles/tokens/direction/step']]",
       "but the file holds 3 complete frames"},
      {"scheme.h5", "f['h5md/modules/normdyn'].attrs['scheme'] = 'pre'", "/h5md/modules/normdyn@scheme says \"pre\""},
      // A checkpoint that says nothing was recorded yet, at a later time: its frames would be wrong.
      {"rewound.h5", "c = f['checkpoint/current']; s = 'ab'[c[0]]; f['checkpoint/' + s + '/record'][6] = 0; c[1] = 0",
       "past sample 0 (t = 0), which it says is still to record"},
      // An edited stored configuration: the frames are another configuration's.
      {"edited.h5",
       "import re; a = f['parameters'].attrs; a['config'] = re.sub(r'beta = [^\\n]*', 'beta = 2.5', a['config'])",
       "/parameters@config was edited after the run was written"},
  };
  for (const Forgery& forgery : forgeries) {
    BOOST_TEST_CONTEXT(forgery.name) {
      fs::copy_file(s / "base.h5", s / forgery.name);
      python(s, "f = h5py.File('" + forgery.name + "', 'r+')\n" + forgery.code + "\n");
      const std::string before = bytes_of(s / forgery.name);
      const auto r = bounded(s, "run --resume " + forgery.name + " -q");
      BOOST_TEST(r.exit_code == 3, r.err);
      BOOST_TEST(contains(r.err, forgery.name + ": damaged run file"), r.err);
      BOOST_TEST(contains(r.err, forgery.message), r.err);
      BOOST_TEST((bytes_of(s / forgery.name) == before));
    }
  }
  // The unforged file resumes.
  const auto ok = bounded(s, "run --resume base.h5 -q");
  BOOST_TEST(ok.exit_code == 0, ok.err);
}

// One bit of one value changed after the run wrote it (a bad disk or copy): the values stay finite and
// plausible, so only the frame checksums tell. Every reader names the frame; a resume refuses to keep
// it; the file is left as it was.
BOOST_AUTO_TEST_CASE(a_changed_bit_in_a_frame_fails_its_checksum) {
  Scratch s;
  resumable_run(s, "base.h5");
  struct Change {
    std::string name, code, frame;
  };
  const std::vector<Change> changes{
      {"direction.h5", "v = f['particles/tokens/direction/value']; x = v[6]; x.view(np.int64)[2, 1] ^= 1; v[6] = x",
       "frame 6"},
      {"radius.h5", "v = f['particles/tokens/radius/value']; x = v[3]; x.view(np.int64)[0] ^= 1 << 40; v[3] = x",
       "frame 3"},
      {"step.h5", "v = f['particles/tokens/radius/step']; v[9] = v[9] + 1", "frame 9"},
      {"observable.h5", "v = f['observables/energy/value']; x = v[2:3]; x.view(np.int64)[0] ^= 1; v[2:3] = x",
       "frame 2"},
  };
  for (const Change& change : changes) {
    BOOST_TEST_CONTEXT(change.name) {
      fs::copy_file(s / "base.h5", s / change.name);
      python(s, "f = h5py.File('" + change.name + "', 'r+')\n" + change.code + "\n");
      const std::string before = bytes_of(s / change.name);
      for (const std::string& command :
           {"analyze " + change.name + " -q", "run --resume " + change.name + " -q", "verify " + change.name}) {
        const auto r = bounded(s, command);
        BOOST_TEST_INFO(command);
        BOOST_TEST(r.exit_code == 3, r.err);
        BOOST_TEST(contains(r.err, change.name + ": damaged run file: " + change.frame + " (t = "), r.err);
        BOOST_TEST(contains(r.err, "does not match its checksum in /checksums/frames"), r.err);
      }
      BOOST_TEST((bytes_of(s / change.name) == before));
    }
  }
  // The same edits with their checksums rewritten pass the checksums (what a forger can do): the
  // checksums guard against damage, not against a deliberate edit.
  fs::copy_file(s / "base.h5", s / "forged.h5");
  python(s, "f = h5py.File('forged.h5', 'r+')\n" + changes[0].code + "\nrechecksum(f)\n");
  const auto forged = bounded(s, "analyze forged.h5 -q");
  BOOST_TEST(forged.exit_code == 0, forged.err);
  const auto base = bounded(s, "analyze base.h5 -q");
  BOOST_TEST(base.exit_code == 0, base.err);
  // `verify` checks every file it is given and ends with the worst outcome.
  const auto all = bounded(s, "verify base.h5 radius.h5 forged.h5");
  BOOST_TEST(all.exit_code == 3, all.err);
  BOOST_TEST(all.out == "base.h5: 11 frames match their checksums\nforged.h5: 11 frames match their checksums\n",
             all.out);
  BOOST_TEST(contains(all.err, "radius.h5: damaged run file: frame 3"), all.err);
}

BOOST_AUTO_TEST_CASE(truncated_and_flipped_files_fail_within_seconds) {
  Scratch s;
  small_run(s, "r.h5");
  const std::string whole = bytes_of(s / "r.h5");
  const std::vector<std::pair<std::string, std::string>> damaged{
      {"half.h5", whole.substr(0, whole.size() / 2)},
      {"head.h5", whole.substr(0, 2048)},
      {"flip.h5",
       [&] {
         std::string b = whole;
         for (std::size_t i = 200; i < b.size(); i += 997) b[i] = static_cast<char>(b[i] ^ 0x5a);
         return b;
       }()},
  };
  for (const auto& [name, bytes] : damaged) {
    BOOST_TEST_CONTEXT(name) {
      std::ofstream(s / name, std::ios::binary) << bytes;
      // A SWMR-marked copy too: the retries of a reader that believes a writer is still at work.
      for (const std::string& command : {"analyze " + name + " -q", "run --resume " + name + " -q"}) {
        const auto start = std::chrono::steady_clock::now();
        const auto r = bounded(s, command);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        BOOST_TEST_INFO(command << ": " << r.err);
        BOOST_TEST((r.exit_code == 2 || r.exit_code == 3));  // not a run file / damaged; never a hang or crash
        BOOST_TEST(contains(r.err, name));
        BOOST_TEST(seconds < 10.0);
      }
      BOOST_TEST(bytes_of(s / name) == bytes);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(resource_faults)

BOOST_AUTO_TEST_CASE(too_large_for_memory_or_disk_is_refused_before_allocation) {
  Scratch s;
  s.write("small.toml", kSmall);
  const auto huge = bounded(s, "run small.toml -q -o big.h5 --set model.n=1000000000");
  BOOST_TEST(huge.exit_code == 2, huge.err);
  BOOST_TEST(contains(huge.err, "model.n: the run needs about"), huge.err);
  BOOST_TEST(contains(huge.err, "--no-size-check"), huge.err);
  // Under a memory limit (ulimit -v, in KiB). AddressSanitizer reserves terabytes of address space
  // for its shadow memory, so a sanitized binary cannot start under such a limit at all.
#ifndef NORMDYN_SANITIZED
  const auto limited = s.shell(std::string("ulimit -v 1000000; ") + kBound + NORMDYN_BINARY +
                               " run small.toml -q -o big.h5 --set model.n=10000000");
  BOOST_TEST(limited.exit_code == 2, limited.err);
  BOOST_TEST(contains(limited.err, "address-space limit (ulimit -v)"), limited.err);
#else
  BOOST_TEST_MESSAGE("address-space limit case skipped: sanitized binaries need unlimited address space");
#endif
  // Disk: a file-size limit (ulimit -f, in KiB) smaller than the run file.
  const auto disk = s.shell(std::string("ulimit -f 64; ") + kBound + NORMDYN_BINARY +
                            " run small.toml -q -o big.h5 --set output.samples=10000");
  BOOST_TEST(disk.exit_code == 2, disk.err);
  BOOST_TEST(contains(disk.err, "output.samples: the run file would grow to about"), disk.err);
  BOOST_TEST(!fs::exists(s / "big.h5"));
}

BOOST_AUTO_TEST_CASE(a_file_size_limit_is_a_clean_io_error) {
  Scratch s;
  s.write("small.toml", kSmall);
  // Past the size check: the writes fail with EFBIG (SIGXFSZ is ignored), the error names the
  // cause, and the process ends with exit 3, not a signal or a crash at exit.
  const auto r = s.shell(std::string("ulimit -f 64; ") + kBound + NORMDYN_BINARY +
                         " run small.toml -q -o big.h5 --no-size-check --set model.n=2000 --set output.samples=400");
  BOOST_TEST(r.exit_code == 3, r.err);
  BOOST_TEST(contains(r.err, "File too large"), r.err);
  BOOST_TEST(!contains(r.err, "unexpected"), r.err);
}

BOOST_AUTO_TEST_CASE(a_resume_cut_short_by_a_file_size_limit_is_recovered_by_the_next_resume) {
  Scratch s;
  // SIGINT once 1 MB of the 400 frames (25.6 kB each) is on disk (the file is published before its
  // first frame): a tenth of the run, however fast the machine; what the resume has left to write
  // outgrows the limit set below. 400 fixed steps of n = 200, d = 16: short, also sanitized.
  s.write("long.toml", R"([model]
n = 200
d = 16
[init]
kind = "uniform"
seed = 3
[solver]
method = "rk4"
dt = 0.05
t_end = 20.0
threads = 1
[output]
samples = 400
flush_seconds = 0.05
)");
  const std::string bin = NORMDYN_BINARY;
  const auto stopped =
      s.shell("(" + bin +
              " run long.toml -q -o r.h5 & pid=$!; for i in $(seq 1 1200); do "
              "[ \"$(stat -c %s r.h5 2> /dev/null || echo 0)\" -gt 1000000 ] && break; sleep 0.02; done; "
              "kill -INT $pid; wait $pid)");
  BOOST_REQUIRE_MESSAGE(stopped.exit_code == 130 || stopped.exit_code == 0, stopped.err);
  const auto size_kib = fs::file_size(s / "r.h5") / 1024;
  BOOST_REQUIRE_MESSAGE(contains(stopped.err, "interrupted"), "the run ended before SIGINT: " + stopped.err);
  const std::string before = bytes_of(s / "r.h5");
  const std::string limit =
      "ulimit -f " + std::to_string(size_kib + 2048) + "; " + kBound + bin + " run --resume r.h5 -q";
  // The final size is checked before the file is touched: a write failing in the resume's first,
  // plain session would leave HDF5's metadata half-written.
  const auto refused = s.shell(limit);
  BOOST_TEST(refused.exit_code == 2, refused.err);
  BOOST_TEST(contains(refused.err, "output.samples: the run file would grow to about"), refused.err);
  BOOST_TEST(contains(refused.err, "(ulimit -f); make room, or pass --no-size-check to resume anyway"), refused.err);
  BOOST_TEST((bytes_of(s / "r.h5") == before));
  // Past the check, the writes fail with EFBIG. Mostly the frames' writes, in SWMR mode: the file
  // ends before the end HDF5 recorded. Sometimes (about one run in two on a loaded machine, never in
  // twelve on an idle one) the failure leaves HDF5's write flag of a plain session instead, whose
  // half-written metadata no resume repairs: then the next resume must fail cleanly, naming the file.
  const auto failed = s.shell(limit + " --no-size-check");
  BOOST_TEST(failed.exit_code == 3, failed.err);
  BOOST_TEST(contains(failed.err, "File too large"), failed.err);
  const auto read = bounded(s, "analyze r.h5 -q --no-write");
  BOOST_TEST(read.exit_code == 3, read.err);
  const bool cut_short = contains(read.err, "r.h5: its last write failed");
  const auto resumed = s.shell(kRunBound + bin + " run --resume r.h5 -q");
  if (!cut_short) {
    BOOST_TEST_MESSAGE("the failed resume left a plain session's write flag: " << read.err);
    BOOST_TEST(contains(read.err, "r.h5: left by a writer killed while it wrote outside SWMR mode"), read.err);
    BOOST_TEST(resumed.exit_code == 3, "exit " << resumed.exit_code << ": " << resumed.err);
    BOOST_TEST(contains(resumed.err, "r.h5"), resumed.err);
    return;
  }
  // Readers name the cause and the remedy instead of calling the file damaged, and the next resume
  // restores the file's end and completes the run.
  BOOST_TEST(contains(read.err, "normdyn run --resume r.h5 recovers it if the rest is intact"), read.err);
  BOOST_TEST(resumed.exit_code == 0, resumed.err);
  const auto after = bounded(s, "analyze r.h5 -q --no-write");
  BOOST_TEST(after.exit_code == 0, after.err);
  RunReader reader(s / "r.h5");
  BOOST_TEST(reader.summary()->status == RunStatus::ok);
  BOOST_TEST(reader.frames() == 400u);
}

BOOST_AUTO_TEST_CASE(a_failed_write_never_crashes_at_exit) {
  Scratch s;
  s.write("small.toml", kSmall);
  // The write fails at different moments of the file's life (creation, first frames, late frames,
  // the summary): each time exit 3 naming the cause, never a crash in HDF5's cleanup at exit.
  for (const char* limit : {"4", "16", "40", "96", "200", "400"}) {
    BOOST_TEST_CONTEXT("ulimit -f " << limit) {
      const auto r =
          s.shell(std::string("ulimit -f ") + limit + "; " + kBound + NORMDYN_BINARY +
                  " run small.toml -q --force -o big.h5 --no-size-check --set model.n=1000 --set output.samples=400");
      clean_exit(r, 3);
      BOOST_TEST(contains(r.err, "File too large"), r.err);
      BOOST_TEST(contains(r.err, "big.h5"), r.err);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_mean_field_analysis_that_cannot_write_leaves_every_file_as_it_was) {
  Scratch s;
  meanfield_run(s, "mf.h5");
  const std::string run = bytes_of(s / "mf.h5");
  // No observables file yet: none is left behind, half-written or staged.
  const auto first = s.shell(std::string("ulimit -f 8; ") + kBound + NORMDYN_BINARY + " analyze mf.h5 -q");
  clean_exit(first, 3);
  BOOST_TEST(contains(first.err, "File too large"), first.err);
  BOOST_TEST(!fs::exists(s / "mf.observables.h5"));
  no_staging_files(s);
  // An existing observables file stays as it was when its replacement cannot be written.
  BOOST_REQUIRE(bounded(s, "analyze mf.h5 -q --json mf.json").exit_code == 0);
  const std::string observables = bytes_of(s / "mf.observables.h5"), report = bytes_of(s / "mf.json");
  const auto kib = std::to_string(fs::file_size(s / "mf.observables.h5") / 2048);
  const auto again =
      s.shell("ulimit -f " + kib + "; " + kBound + NORMDYN_BINARY + " analyze mf.h5 -q --modes 6 --json mf.json");
  clean_exit(again, 3);
  BOOST_TEST(contains(again.err, "mf.observables.h5"), again.err);
  BOOST_TEST(contains(again.err, "File too large"), again.err);
  BOOST_TEST(bytes_of(s / "mf.observables.h5") == observables);
  BOOST_TEST(bytes_of(s / "mf.json") == report);
  BOOST_TEST(bytes_of(s / "mf.h5") == run);
  no_staging_files(s);
}

BOOST_AUTO_TEST_CASE(a_full_disk_is_a_clean_io_error) {
  Scratch s;
  small_run(s, "r.h5");
  // A report to a device that is always full (/dev/full: every write fails with ENOSPC).
  const auto full = bounded(s, "analyze r.h5 -q --no-write --json /dev/full");
  clean_exit(full, 3);
  BOOST_TEST(contains(full.err, "/dev/full: cannot write the report: No space left on device"), full.err);

  const SmallDisk disk(s, "disk", "512k");
  if (!disk.mounted()) {
    BOOST_TEST_MESSAGE("no tmpfs mount here (needs root): the small-disk cases are not run");
    return;
  }
  // The size check sees the free space (statvfs) and refuses before writing.
  const auto refused = bounded(s, "run small.toml -q -o disk/r.h5 --set model.n=400 --set output.samples=2000");
  clean_exit(refused, 2);
  BOOST_TEST(contains(refused.err, "output.samples"), refused.err);
  BOOST_TEST(!fs::exists(s / "disk/r.h5"));
  // Past the check the disk fills at different moments of the run; each time exit 3 naming the file
  // and the cause, no crash at exit, no staging file, and the frames written so far readable.
  for (const char* samples : {"60", "300", "2000"}) {
    BOOST_TEST_CONTEXT("output.samples = " << samples) {
      for (const auto& entry : fs::directory_iterator(s / "disk")) fs::remove_all(entry.path());
      const auto r = bounded(s, std::string("run small.toml -q -o disk/r.h5 --no-size-check --set model.n=400 "
                                            "--set output.samples=") +
                                    samples);
      clean_exit(r, 3);
      BOOST_TEST(contains(r.err, "r.h5"), r.err);
      BOOST_TEST(contains(r.err, "No space left on device"), r.err);
      no_staging_files(s, "disk");
      if (fs::exists(s / "disk/r.h5")) BOOST_CHECK_NO_THROW(RunReader(s / "disk/r.h5").frames());
    }
  }
  // A --force run that cannot even be set up on the disk the last one filled leaves the old file as
  // it was.
  if (fs::exists(s / "disk/r.h5")) {
    const std::string old = bytes_of(s / "disk/r.h5");
    const auto forced = bounded(s, "run small.toml -q --force -o disk/r.h5 --no-size-check --set model.n=400");
    clean_exit(forced, 3);
    BOOST_TEST(contains(forced.err, "No space left on device"), forced.err);
    BOOST_TEST(bytes_of(s / "disk/r.h5") == old);
    no_staging_files(s, "disk");
  }
  for (const auto& entry : fs::directory_iterator(s / "disk")) fs::remove_all(entry.path());
  // The analysis: its observables and its report on a disk with almost no room.
  disk.fill(s, 4096);
  const std::string run = bytes_of(s / "r.h5");
  const auto obs = bounded(s, "analyze r.h5 -q --observables-file disk/o.h5");
  clean_exit(obs, 3);
  BOOST_TEST(contains(obs.err, "o.h5"), obs.err);
  BOOST_TEST(contains(obs.err, "No space left on device"), obs.err);
  BOOST_TEST(!fs::exists(s / "disk/o.h5"));
  fs::remove(s / "disk/filler");
  disk.fill(s, 0);
  const auto report_full = bounded(s, "analyze r.h5 -q --no-write --json disk/r.json");
  clean_exit(report_full, 3);
  BOOST_TEST(contains(report_full.err, "r.json"), report_full.err);
  BOOST_TEST(contains(report_full.err, "No space left on device"), report_full.err);
  BOOST_TEST(!fs::exists(s / "disk/r.json"));
  no_staging_files(s, "disk");
  BOOST_TEST(bytes_of(s / "r.h5") == run);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(signals)

BOOST_AUTO_TEST_CASE(a_second_signal_ends_a_long_step_at_once) {
  Scratch s;
  s.write("slow.toml", kSlowSteps);
  // The first SIGINT is read after the step in progress, which lasts seconds; a second one ends the
  // process at once (exit 130) and leaves the file as a killed writer does: readable. (Before the
  // first step ends the first signal already ends it at once: later moments are tried then.)
  bool caught_in_a_step = false;
  for (int delay_ms : {5000, 9000, 15000, 25000}) {
    const std::string name = "slow" + std::to_string(delay_ms) + ".h5";
    const test::Child child = test::spawn_normdyn(s.dir(), {"run", "slow.toml", "-q", "-o", name});
    BOOST_REQUIRE(wait_for(s / name, 60.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child.pid, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int status = 0;
    if (::waitpid(child.pid, &status, WNOHANG) == child.pid) continue;  // ended by the first signal
    const auto start = std::chrono::steady_clock::now();
    ::kill(child.pid, SIGINT);
    const test::ChildExit e = test::wait_child(child);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BOOST_TEST(e.exit_code == 130, "exit " << e.exit_code << " signal " << e.signal);
    BOOST_TEST(seconds < 2.0);
    const RunReader reader(s / name);
    // The step had ended soon after the first signal and the run had finished its file, while the
    // process was still exiting (slow under the sanitizers): not the moment sought; try a later one.
    if (const auto summary = reader.summary()) {
      BOOST_TEST(summary->status == RunStatus::interrupted);
      continue;
    }
    caught_in_a_step = true;
    BOOST_TEST(reader.frames() >= 1u);
    break;
  }
#ifdef NORMDYN_SANITIZED
  // Under the sanitizers set-up and steps are several times slower and the moment inside a step is
  // not always found within the four attempts; the case is then reported, not failed.
  BOOST_WARN(caught_in_a_step);
#else
  BOOST_TEST(caught_in_a_step);
#endif
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(special_paths)

BOOST_AUTO_TEST_CASE(fifos_devices_and_directories_as_inputs) {
  Scratch s;
  s.write("small.toml", kSmall);
  BOOST_REQUIRE(s.shell("mkfifo fifo && mkdir dir").exit_code == 0);
  s.write("fifo_base.toml", "base = \"fifo\"\n[axes]\n\"init.seed\" = [1, 2]\n");
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases{
      {"run fifo -q -o x.h5", "fifo: not a regular file"},
      {"run dir -q -o x.h5", "dir: is a directory, not a configuration file"},
      {"run /dev/zero -q -o x.h5", "/dev/zero: not a regular file"},
      {"run small.toml -q -o x.h5 --set init.kind=file --set init.file=fifo", "init.file: fifo: not a regular file"},
      {"run small.toml -q -o x.h5 --set model.qkv=file --set model.qkv_file=dir",
       "model.qkv_file: dir: not a regular file"},
      {"analyze fifo -q", "fifo: not a regular file"},
      {"run --resume fifo -q", "--resume: fifo: not a regular file"},
      // Sweep files and their base: a FIFO would block the read, /dev/zero would fill the memory.
      {"sweep fifo -o sw", "fifo: not a regular file (a FIFO or device), not a sweep file"},
      {"sweep /dev/zero -o sw", "/dev/zero: not a regular file (a FIFO or device), not a sweep file"},
      {"ensemble fifo -o e.h5", "fifo: not a regular file (a FIFO or device), not a sweep file"},
      {"ensemble /dev/zero -o e.h5", "/dev/zero: not a regular file (a FIFO or device), not a sweep file"},
      {"ensemble dir -o e.h5", "dir: is a directory, not a sweep file"},
      {"ensemble fifo_base.toml -o e.h5",
       "base: fifo: not a regular file (a FIFO or device), not a configuration file"},
  };
  for (const Case& c : cases) {
    const auto r = bounded(s, c.args);
    BOOST_TEST_INFO(c.args << ": " << r.err);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, c.message));
  }
  for (const char* output : {"x.h5", "sw", "e.h5", "e.h5.journal"}) BOOST_TEST(!fs::exists(s / output), output);
}

BOOST_AUTO_TEST_CASE(configuration_on_standard_input_under_the_size_cap) {
  Scratch s;
  s.write("small.toml", kSmall);
  const auto ok = s.shell(std::string("cat small.toml | ") + kBound + NORMDYN_BINARY + " run - -q -o in.h5");
  BOOST_TEST(ok.exit_code == 0, ok.err);
  BOOST_TEST(RunReader(s / "in.h5").config().model.n == 16);
  const auto endless = s.shell(std::string(kBound) + NORMDYN_BINARY + " run - -q -o zero.h5 < /dev/zero");
  BOOST_TEST(endless.exit_code == 2, endless.err);
  BOOST_TEST(contains(endless.err, "standard input: larger than 4 MiB"), endless.err);
}

BOOST_AUTO_TEST_CASE(a_signal_during_set_up_ends_the_process_at_once) {
  Scratch s;
  // Waiting for a configuration on a pipe that never delivers one: the signal is sent once the
  // process blocks in read(0, ...) (/proc/PID/syscall: number 0, first argument 0x0), not after a
  // fixed delay, which the start of a sanitized build on a loaded machine can outlast.
  // ($! of a background pipeline is its last command, normdyn.)
  s.write("setup.sh", std::string(NORMDYN_BINARY) +
                          " run - -q -o x.h5 < <(sleep 5) &\np=$!\n"
                          "for i in $(seq 300); do read -r nr fd rest < /proc/$p/syscall 2>/dev/null || true; "
                          "[ \"$nr $fd\" = \"0 0x0\" ] && break; sleep 0.01; done\n"
                          "kill -TERM $p\nwait $p\n");
  const auto start = std::chrono::steady_clock::now();
  const auto r = s.shell("bash setup.sh");
  BOOST_TEST(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 4.0);
  BOOST_TEST(r.exit_code == 130, r.err);
}

BOOST_AUTO_TEST_CASE(an_unknown_command_and_long_names_are_named) {
  Scratch s;
  s.write("small.toml", kSmall);
  const auto unknown = bounded(s, "rnu small.toml");
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(contains(unknown.err, "unknown command 'rnu'; did you mean 'run'?"), unknown.err);
  const std::string long_name(240, 'x');
  const auto name = bounded(s, "run small.toml -q -o " + long_name + ".h5");
  BOOST_TEST(name.exit_code == 2, name.err);
  BOOST_TEST(contains(name.err, "file name too long"), name.err);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(numerical_abuse)

BOOST_AUTO_TEST_CASE(a_cap_below_round_off_ends) {
  Scratch s;
  s.write("small.toml", kSmall);
  for (const char* delta : {"1e-17", "1e-300", "5e-324"}) {
    const auto r =
        bounded(s, std::string("run small.toml -q --force -o cap.h5 --set init.kind=cap --set init.delta=") + delta);
    BOOST_TEST_INFO(delta << ": " << r.err);
    BOOST_TEST((r.exit_code == 0 || r.exit_code == 2));
    if (r.exit_code == 2) BOOST_TEST(contains(r.err, "init.delta"));
  }
  const auto wide =
      bounded(s, "run small.toml -q --force -o cap.h5 --set init.kind=cap --set init.delta=1e-12 --set model.d=200");
  BOOST_TEST(wide.exit_code == 0, wide.err);
}

BOOST_AUTO_TEST_SUITE_END()
