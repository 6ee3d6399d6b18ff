// Hostile inputs against the integrity of run files, through the command line: checksums that no
// longer cover what the run says it wrote, forged /checksums metadata and links, extents beyond the
// configuration, changed checkpoints, damaged first bytes, and a killed file whose damage once made a
// resume retry for minutes. Every case asserts the exit code and the message, runs under a 30 s
// `timeout` (a hang fails it), and compares the bytes of the file before and after.
#define BOOST_TEST_MODULE hostile_integrity
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include "cli_harness.hpp"
#include "hostile_harness.hpp"

using namespace normdyn;
using test::contains;
using test::Scratch;
namespace fs = std::filesystem;

using namespace normdyn::test::hostile;

namespace {

struct Forgery {
  std::string name, code, message;
};

// Copies `base` to each forgery's name, applies its code (with `f` the file open for writing), and
// checks that each of `commands` (with NAME replaced by the file) ends with exit 3 naming the file as
// damaged with the forgery's message, the file left as it was.
void expect_damage(const Scratch& s, const std::string& base, const std::vector<Forgery>& forgeries,
                   const std::vector<std::string>& commands) {
  std::string code;
  for (const Forgery& forgery : forgeries) {
    fs::copy_file(s / base, s / forgery.name, fs::copy_options::overwrite_existing);
    code += "f = h5py.File('" + forgery.name + "', 'r+')\n" + forgery.code + "\nf.close()\n";
  }
  python(s, code);
  for (const Forgery& forgery : forgeries) {
    BOOST_TEST_CONTEXT(forgery.name) {
      const std::string before = bytes_of(s / forgery.name);
      for (std::string command : commands) {
        command.replace(command.find("NAME"), 4, forgery.name);
        const auto r = bounded(s, command);
        BOOST_TEST_INFO(command);
        clean_exit(r, 3);
        BOOST_TEST(contains(r.err, forgery.name + ": damaged run file"), r.err);
        BOOST_TEST(contains(r.err, forgery.message), r.err);
      }
      BOOST_TEST((bytes_of(s / forgery.name) == before));
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(checksums_cover_the_recorded_frames)

// A /checksums/frames cut short describes fewer frames than the run wrote: damage, not a shorter run.
BOOST_AUTO_TEST_CASE(checksums_cut_short_are_damage_not_a_shorter_run) {
  Scratch s;
  resumable_run(s, "base.h5");
  const std::vector<Forgery> ended{
      {"cut4.h5", "f['checksums/frames'].resize((4,))",
       "/checksums/frames holds the checksums of 4 frames, but /summary@frames says the run wrote 11"},
      {"cut0.h5", "f['checksums/frames'].resize((0,))",
       "/checksums/frames holds the checksums of 0 frames, but /summary@frames says the run wrote 11"},
  };
  expect_damage(s, "base.h5", ended, {"verify NAME", "analyze NAME -q"});
  // A killed run (no ended summary): its checkpoint counts the frames written.
  const std::vector<Forgery> killed{
      {"killed4.h5", "f['summary'].attrs['status'] = 'running'; f['checksums/frames'].resize((4,))",
       "/checksums/frames holds the checksums of 4 frames, but the checkpoint (/checkpoint/current) says 11 were "
       "written"},
  };
  expect_damage(s, "base.h5", killed, {"verify NAME", "analyze NAME -q"});
  // A resume refuses both (its checkpoint points past the checksummed frames).
  for (const char* name : {"cut4.h5", "cut0.h5", "killed4.h5"}) {
    const auto r = bounded(s, std::string("run --resume ") + name + " -q");
    clean_exit(r, 3);
    BOOST_TEST(contains(r.err, std::string(name) + ": damaged run file"), r.err);
  }
  const auto ok = bounded(s, "verify base.h5");
  clean_exit(ok, 0);
  BOOST_TEST(ok.out == "base.h5: 11 frames match their checksums\n");
}

// What the checksums cover, and how they are stored, is part of what is checked: a file whose
// /checksums says something other than the writer wrote is damaged, in every command.
BOOST_AUTO_TEST_CASE(forged_checksum_metadata_is_damage) {
  Scratch s;
  resumable_run(s, "base.h5");
  const std::string copy =
      "old = f['checksums/frames']; values = old[...]; covers = old.attrs['covers']; "
      "del f['checksums/frames']\n";
  const std::vector<Forgery> forgeries{
      {"empty.h5", "f['checksums/frames'].attrs['covers'] = ''", "/checksums/frames@covers lists no datasets"},
      {"missing.h5", "del f['checksums/frames'].attrs['covers']", "/checksums/frames@covers is missing"},
      {"bogus.h5", "f['checksums/frames'].attrs['covers'] = '/particles/tokens/direction/time'",
       "/checksums/frames@covers does not list the datasets of this file's frames"},
      {"number.h5", "f['checksums/frames'].attrs['covers'] = 7", "/checksums/frames@covers is not text"},
      {"strings.h5",
       copy + "d = f.create_dataset('checksums/frames', data=[str(v) for v in values], dtype=h5py.string_dtype()); "
              "d.attrs['covers'] = covers",
       "/checksums/frames has elements of the wrong type (expected integers)"},
      {"floats.h5",
       copy + "d = f.create_dataset('checksums/frames', data=values.astype(float)); d.attrs['covers'] = covers",
       "/checksums/frames has elements of the wrong type (expected integers)"},
      {"matrix.h5",
       copy + "d = f.create_dataset('checksums/frames', data=values[:10].reshape(2, 5)); d.attrs['covers'] = covers",
       "/checksums/frames has shape [2, 5], expected [frames]"},
      // Links: never followed, never taken for a file written before checksums.
      {"loop.h5", "del f['checksums/frames']; f['checksums/frames'] = h5py.SoftLink('/checksums/frames')",
       "/checksums/frames is a soft link"},
      {"elsewhere.h5",
       "del f['checksums/frames']; f['checksums/frames'] = h5py.ExternalLink('base.h5', '/checksums/frames')",
       "/checksums/frames is a link to another file"},
      {"group.h5", "del f['checksums/frames']; f.create_group('checksums/frames')",
       "/checksums/frames is not what the layout puts there"},
      {"nodata.h5", "del f['checksums/frames']", "/checksums/frames is missing"},
  };
  expect_damage(s, "base.h5", forgeries, {"verify NAME", "analyze NAME -q", "run --resume NAME -q"});
}

// Extents are bounded by the configuration before anything is read: a sparse dataset of a gibibyte
// in place of a frame's steps is refused at once (it was read whole: >30 s and 1 GB).
BOOST_AUTO_TEST_CASE(an_extent_beyond_the_configuration_is_refused_before_reading) {
  Scratch s;
  resumable_run(s, "base.h5");
  const auto sparse = [](const std::string& dataset, const std::string& type) {
    return "p = '" + dataset +
           "'; old = f[p][...]; del f[p]; d = f.create_dataset(p, shape=(1 << 27,), maxshape=(None,), "
           "chunks=(1 << 16,), dtype='" +
           type + "'); d[:len(old)] = old";
  };
  const std::vector<Forgery> forgeries{
      {"steps.h5", sparse("particles/tokens/direction/step", "i8"),
       "/particles/tokens/direction/step holds 134217728 frames, more than the 11 samples of its configuration"},
      {"energy.h5", sparse("observables/energy/value", "f8"),
       "/observables/energy/value holds 134217728 frames, more than the 11 samples of its configuration"},
      {"sums.h5",
       "covers = f['checksums/frames'].attrs['covers']; " + sparse("checksums/frames", "i8") +
           "; d.attrs['covers'] = covers",
       "/checksums/frames holds 134217728 frames, more than the 11 samples"},
  };
  expect_damage(s, "base.h5", forgeries, {"verify NAME", "analyze NAME -q", "run --resume NAME -q"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(checkpoint_checksum)

// One flipped bit of the checkpoint's state, a small change of a value, an edited t or dt: plausible
// values that no other check can tell from the real ones. The checkpoint's checksum tells; the
// frames before it stay usable.
BOOST_AUTO_TEST_CASE(a_changed_checkpoint_is_damage_and_its_frames_stay_usable) {
  Scratch s;
  resumable_run(s, "base.h5");
  const std::string slot = "s = 'ab'[f['checkpoint/current'][0]]; ";
  const std::string message = "does not match its checksum in /checkpoint/";
  const std::vector<Forgery> forgeries{
      {"bit.h5", slot + "v = f['checkpoint/' + s + '/state']; x = v[...]; x.view(np.int64)[5] ^= 1; v[...] = x",
       message},
      {"plus.h5", slot + "v = f['checkpoint/' + s + '/state']; x = v[...]; x[7] += 1e-3; v[...] = x", message},
      {"time.h5", slot + "v = f['checkpoint/' + s + '/record']; x = v[...]; x[0] *= 0.95; v[...] = x", message},
      {"step.h5", slot + "v = f['checkpoint/' + s + '/record']; x = v[...]; x[1] *= 2; v[...] = x", message},
      // A file of this layout without the checksum was not written so.
      {"nosum.h5", slot + "del f['checkpoint/' + s + '/checksum']", "/checksum is missing (layout version 1.1"},
  };
  expect_damage(s, "base.h5", forgeries, {"run --resume NAME -q"});
  for (const char* name : {"bit.h5", "plus.h5", "time.h5", "step.h5"}) {
    BOOST_TEST_CONTEXT(name) {
      const auto r = bounded(s, std::string("run --resume ") + name + " -q");
      BOOST_TEST(contains(r.err, std::string(name) + ": damaged run file: checkpoint /checkpoint/"), r.err);
      // The frames are the run's: verify, analyze and Python's load accept them.
      const auto verify = bounded(s, std::string("verify ") + name);
      clean_exit(verify, 0);
      BOOST_TEST(contains(verify.out, "11 frames match their checksums"), verify.out);
      clean_exit(bounded(s, std::string("analyze ") + name + " -q"), 0);
    }
  }
  // A file written before checkpoint checksums (layout 1.0) resumes as before, and its log says
  // the checkpoint was not checked.
  fs::copy_file(s / "base.h5", s / "old.h5");
  python(s,
         "f = h5py.File('old.h5', 'r+'); del f['checkpoint/a/checksum']; del f['checkpoint/b/checksum']; "
         "f['h5md/modules/normdyn'].attrs['version'] = np.array([1, 0], dtype=np.int64)\n");
  clean_exit(bounded(s, "run --resume old.h5 -q"), 0);
  python(s,
         "f = h5py.File('old.h5', 'r'); log = f['parameters'].attrs['resume_log']\n"
         "assert 'its checkpoint predates checkpoint checksums and was not checked' in log, log\n");
  // The unchanged file resumes, and its resumed checkpoint is checksummed again.
  clean_exit(bounded(s, "run --resume base.h5 -q"), 0);
  python(s,
         "import zlib\nf = h5py.File('base.h5', 'r'); s = 'ab'[f['checkpoint/current'][0]]; g = f['checkpoint/' + s]\n"
         "assert g['checksum'][0] == zlib.crc32(g['state'][...].tobytes() + g['record'][...].tobytes())\n");
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(damaged_files)

// A run killed mid-way, then one byte of its first blocks changed: a resume, which holds the file's
// writer lock, once took its own lock for a live writer's and let HDF5 retry the damaged metadata for
// minutes. Every command now fails at once.
BOOST_AUTO_TEST_CASE(a_killed_run_with_a_changed_byte_fails_at_once_in_every_command) {
  Scratch s;
  s.write("long.toml", kLong);
  const test::Child child = test::spawn_normdyn(s.dir(), {"run", "long.toml", "-q", "-o", "killed.h5"});
  for (int i = 0; i < 12000 && !fs::exists(s / "killed.h5"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double started = test::child_progress(child).cpu_seconds;
  for (int i = 0; i < 12000 && test::child_progress(child).cpu_seconds < started + 1.0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(child.pid, SIGKILL);
  BOOST_REQUIRE(test::wait_child(child).signal == SIGKILL);
  const std::string whole = bytes_of(s / "killed.h5");
  for (const std::size_t offset : {300, 1000}) {
    const std::string name = "flip" + std::to_string(offset) + ".h5";
    BOOST_TEST_CONTEXT(name) {
      std::string bytes = whole;
      bytes[offset] = static_cast<char>(bytes[offset] ^ 0xff);
      std::ofstream(s / name, std::ios::binary) << bytes;
      for (const std::string& command : {"run --resume " + name + " -q", "analyze " + name + " -q", "verify " + name}) {
        const auto r = bounded(s, command);
        BOOST_TEST_INFO(command);
        clean_exit(r, 3);
        BOOST_TEST(contains(r.err, name + ": "), r.err);
        BOOST_TEST(contains(r.err, "damaged"), r.err);
      }
      BOOST_TEST((bytes_of(s / name) == bytes));
    }
  }
}

// A file cut short, or changed in its first bytes, still begins with HDF5's signature: it was an
// HDF5 file and is damaged (exit 3), not "not a normdyn run file" (exit 2).
BOOST_AUTO_TEST_CASE(files_cut_short_or_changed_in_their_first_bytes_are_damaged) {
  Scratch s;
  resumable_run(s, "r.h5");
  const std::string whole = bytes_of(s / "r.h5");
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::size_t size : {96, 200, 512, 2048, 16384}) {
    BOOST_REQUIRE(size < whole.size());
    files.emplace_back("cut" + std::to_string(size) + ".h5", whole.substr(0, size));
  }
  std::string flipped = whole;
  flipped[100] = static_cast<char>(flipped[100] ^ 0xff);
  files.emplace_back("flip100.h5", flipped);
  for (const auto& [name, bytes] : files) {
    BOOST_TEST_CONTEXT(name) {
      std::ofstream(s / name, std::ios::binary) << bytes;
      for (const std::string& command : {"verify " + name, "analyze " + name + " -q", "run --resume " + name + " -q"}) {
        const auto r = bounded(s, command);
        BOOST_TEST_INFO(command);
        clean_exit(r, 3);
        BOOST_TEST(contains(r.err, name + ": "), r.err);
        BOOST_TEST(contains(r.err, "damaged"), r.err);
      }
      BOOST_TEST((bytes_of(s / name) == bytes));
    }
  }
  // A file that never was HDF5 stays bad input.
  s.write("text.h5", std::string(4096, 'x'));
  const auto text = bounded(s, "verify text.h5");
  clean_exit(text, 2);
  BOOST_TEST(contains(text.err, "text.h5: not an HDF5 file"), text.err);
}

// Reading a dataset too large for memory is an I/O failure naming the dataset and its file, not "not
// enough memory for this configuration (model.n, model.d, output.samples)". The file claims n = 10^8
// tokens (configuration and its hash rewritten, every dataset of that shape, sparse).
BOOST_AUTO_TEST_CASE(a_dataset_too_large_for_memory_is_named) {
  Scratch s;
  resumable_run(s, "huge.h5");
  python(s, R"(import re
f = h5py.File('huge.h5', 'r+'); a = f['parameters'].attrs
config = re.sub(r'(?m)^n = 16$', 'n = 100000000', a['config'])
assert config != a['config']
h = 1469598103934665603
for b in config.encode():
    h = ((h ^ b) * 1099511628211) % (1 << 64)
a['config'] = config; a['config_hash'] = '%016x' % h
N = 100000000
for p, shape, chunks in [('particles/tokens/direction/value', (11, N, 3), (1, 1 << 14, 3)),
                         ('particles/tokens/radius/value', (11, N), (1, 1 << 16)),
                         ('checkpoint/a/state', (4 * N,), (1 << 20,)), ('checkpoint/b/state', (4 * N,), (1 << 20,))]:
    del f[p]; f.create_dataset(p, shape=shape, chunks=chunks, dtype='f8')
)");
  // Under a memory limit (ulimit -v, in KiB); a sanitized binary cannot start under one.
#ifndef NORMDYN_SANITIZED
  const auto r = s.shell(std::string("ulimit -v 1500000; ") + kBound + NORMDYN_BINARY + " verify huge.h5");
  clean_exit(r, 3);
  BOOST_TEST(contains(r.err, "huge.h5:/particles/tokens/direction/value: not enough memory to read"), r.err);
  BOOST_TEST(!contains(r.err, "model.n"), r.err);
#else
  BOOST_TEST_MESSAGE("memory-limit case skipped: sanitized binaries need unlimited address space");
#endif
}

BOOST_AUTO_TEST_SUITE_END()
