#pragma once
// What the hostile-input suites (test_hostile_cli, test_hostile_integrity, test_hostile_inputs)
// share: every command under a bound (a hang fails it), small and long runs to damage, forging
// through h5py, and the check of a clean exit.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>

#include "cli_harness.hpp"

namespace normdyn::test::hostile {

inline constexpr const char* kBound = "timeout -s KILL 30 ";  // 137: the command hung
// For a command that computes a whole run (a resume of hundreds of frames): under the sanitizers on a
// loaded machine that took more than 30 s, and 137 then meant a slow run, not a hang.
inline constexpr const char* kRunBound = "timeout -s KILL 600 ";

inline constexpr const char* kSmall = R"([model]
n = 16
d = 3
[init]
kind = "uniform"
seed = 3
[solver]
t_end = 2.0
threads = 1
[output]
samples = 11
)";

// Long enough to be caught alive (seconds on the shared machine), short enough to finish.
inline constexpr const char* kLong = R"([model]
n = 300
d = 3
[init]
kind = "uniform"
seed = 5
[solver]
rtol = 1e-12
atol = 1e-14
t_end = 1e6
threads = 1
[output]
samples = 2001
flush_seconds = 0.2
)";

// `normdyn ARGS` in the scratch directory, killed after 30 s.
inline CommandResult bounded(const Scratch& s, const std::string& args) {
  return s.shell(std::string(kBound) + NORMDYN_BINARY + " " + args);
}

inline std::string bytes_of(const std::filesystem::path& p) { return Scratch::slurp(p); }

// A forger's (or a faulty writer's) edit of the frames that also rewrites their checksums, as
// /checksums/frames@description documents them: what the readers' own checks must then catch.
inline constexpr const char* kRechecksum = R"(import zlib
def rechecksum(f):
    c = f['checksums/frames']
    covers = c.attrs['covers'].split('\n')
    c[...] = [zlib.crc32(b''.join(np.ascontiguousarray(f[p][i]).tobytes() for p in covers)) for i in range(c.shape[0])]
)";

// Runs a Python snippet (h5py, numpy as np, os, and rechecksum above) in the scratch directory;
// requires success.
inline void python(const Scratch& s, const std::string& code) {
  s.write("forge.py", std::string("import h5py, numpy as np, os\n") + kRechecksum + code);
  const auto r = s.shell(std::string(NORMDYN_PYTHON) + " forge.py");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "forge.py: " + r.err);
}

// A finished small run (kSmall: 11 frames), `name`.
inline void small_run(const Scratch& s, const std::string& name) {
  s.write("small.toml", kSmall);
  const auto r = bounded(s, "run small.toml -q -o " + name);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
}

// A small run whose summary says interrupted, so that --resume accepts it (its checkpoint is the
// last flush, at the end).
inline void resumable_run(const Scratch& s, const std::string& name) {
  small_run(s, name);
  python(s, "f = h5py.File('" + name + "', 'r+'); f['summary'].attrs['status'] = 'interrupted'\n");
}

// The process exited (no signal, no crash in an atexit handler) with `code`, and said nothing of a
// crash or of HDF5's internals.
inline void clean_exit(const CommandResult& r, int code) {
  BOOST_TEST(r.exit_code == code, "exit " << r.exit_code << ": " << r.err);
  for (const char* crash : {"Segmentation", "AddressSanitizer", "HDF5-DIAG", "unexpected", "Aborted"})
    BOOST_TEST(!contains(r.err, crash), r.err);
}

}  // namespace normdyn::test::hostile
