// xarray opens every group of normdyn's files as they are (HDF5 dimension scales on every axis, no
// phony_dims): run files of particles (with and without masses) and of the mean field (fixed and
// moving grids), the observables of `normdyn analyze` in the run file and in a file of their own,
// a sweep index, and a killed run through a SWMR reader, before and after its resume. The checks
// are tests/app/check_xarray_groups.py, run with Debian's python3 (xarray, h5netcdf, h5py).
#define BOOST_TEST_MODULE xarray_groups
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <chrono>
#include <thread>

#include "cli_harness.hpp"
#include "normdyn/io/run_file.hpp"

using namespace normdyn;
using test::contains;
using test::Scratch;

namespace {

const char* kParticles = R"([model]
scheme = "post"
n = 12
d = 3
beta = 2.0
[init]
kind = "uniform"
[solver]
t_end = 5.0
[output]
samples = 11
)";

const char* kMeanField = R"([model]
kind = "meanfield"
scheme = "post"
beta = 4.0
[meanfield]
grid = 32
[init]
kind = "von_mises"
centers = [0.5, 2.9]
kappa = [1.0]
[solver]
t_end = 1.0
[output]
samples = 6
)";

// Long enough to be killed while it runs; flushes often.
const char* kLong = R"([model]
scheme = "pre"
n = 24
d = 4
beta = 4.0
[init]
kind = "gaussian"
[solver]
t_end = 1000.0
threads = 1
[output]
samples = 10001
flush_frames = 5
flush_seconds = 0.02
)";

test::CommandResult check_groups(const Scratch& s, const std::string& files) {
  return s.shell(std::string(NORMDYN_PYTHON) + " " + NORMDYN_SOURCE_DIR + "/tests/app/check_xarray_groups.py " + files);
}

void require_ok(const test::CommandResult& r) { BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err); }

}  // namespace

BOOST_AUTO_TEST_CASE(every_group_of_run_files_and_observables_files_opens) {
  Scratch s;
  s.write("particles.toml", kParticles);
  s.write("meanfield.toml", kMeanField);
  require_ok(s.normdyn("run particles.toml -q -o p.h5"));
  require_ok(
      s.normdyn("run particles.toml -q -o w.h5 --set model.d=2 --set init.kind=von_mises "
                "--set 'init.centers=[1.0]' --set 'init.kappa=[1.0]' --set init.sampling=grid"));
  require_ok(s.normdyn("run particles.toml -q -o a.h5"));
  require_ok(s.normdyn("analyze a.h5 -q"));                                      // into the run file
  require_ok(s.normdyn("analyze p.h5 -q --observables-file p.observables.h5"));  // a file of their own
  require_ok(s.normdyn("run meanfield.toml -q -o mf.h5"));
  require_ok(
      s.normdyn("run meanfield.toml -q -o mfr.h5 --set model.scheme=pre --set init.radius_width=0.1 "
                "--set meanfield.radial_grid=6"));
  const auto r = check_groups(s, "p.h5 w.h5 a.h5 p.observables.h5 mf.h5 mfr.h5");
  BOOST_TEST(r.exit_code == 0, r.err);
  for (const char* f : {"p.h5", "w.h5", "a.h5", "p.observables.h5", "mf.h5", "mfr.h5"})
    BOOST_TEST(contains(r.out, std::string("ok ") + f + " "), f << ": " << r.out);
  // The masses and the moving radial grid were there to be checked.
  const auto layout = s.shell(std::string(NORMDYN_PYTHON) +
                              " -c \"import h5py; print('particles/tokens/mass' in h5py.File('w.h5'), "
                              "'fields/density/r' in h5py.File('mfr.h5'))\"");
  BOOST_TEST(layout.out == "True True\n", layout.out << layout.err);
}

BOOST_AUTO_TEST_CASE(every_group_of_a_sweep_index_opens) {
  Scratch s;
  s.write("base.toml", kParticles);
  s.write("sweep.toml", R"(base = "base.toml"
[axes]
"model.beta" = [1.0, 4.0]
"init.seed" = [1, 2]
)");
  require_ok(s.normdyn("sweep sweep.toml -o out -q"));
  const auto r = check_groups(s, "out/index.h5");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == "ok out/index.h5 5\n", r.out);
}

BOOST_AUTO_TEST_CASE(a_killed_run_opens_as_a_swmr_reader_and_after_its_resume) {
  Scratch s;
  s.write("long.toml", kLong);
  const test::Child child = test::spawn_normdyn(s.dir(), {"run", "long.toml", "-q", "-o", "k.h5"});
  // Killed once it has computed for 0.3 s (about a tenth of the run) and the file exists.
  for (int i = 0; i < 6000; ++i) {
    const test::ChildProgress p = test::child_progress(child);
    if (!p.running || (p.cpu_seconds >= 0.3 && std::filesystem::exists(s / "k.h5"))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child.pid, SIGKILL);
  const test::ChildExit e = test::wait_child(child);
  BOOST_REQUIRE(e.signal == SIGKILL);
  BOOST_REQUIRE(std::filesystem::exists(s / "k.h5"));
  BOOST_REQUIRE(RunReader(s / "k.h5").frames() > 0);
  // The writer's flags are still set: only a SWMR reader opens it, and xarray through it.
  const auto killed = check_groups(s, "--swmr k.h5");
  BOOST_TEST(killed.exit_code == 0, killed.err);
  BOOST_TEST(killed.out == "ok k.h5 29\n", killed.out);
  // The resume shrinks the datasets to the checkpoint and appends: the scales stay attached.
  require_ok(s.normdyn("run --resume k.h5 -q"));
  BOOST_TEST(RunReader(s / "k.h5").summary()->status == RunStatus::ok);
  const auto resumed = check_groups(s, "k.h5");
  BOOST_TEST(resumed.exit_code == 0, resumed.err);
  BOOST_TEST(resumed.out == "ok k.h5 29\n", resumed.out);
}
