// Bad input through the command line: every malformed configuration gives one line on
// stderr that names the key or flag, exit code 2, and no output file; I/O failures give exit 3.
#define BOOST_TEST_MODULE bad_input
#include <boost/test/unit_test.hpp>

#include "cli_harness.hpp"
#include "io/h5.hpp"

using namespace normdyn;
using test::Scratch;

namespace {

struct Case {
  std::string toml;      // the configuration file
  std::string flags;     // extra flags
  std::string expected;  // what stderr must start with, after "normdyn: error: "
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all{
      {"[model]\nn = = 3\n", "", "cfg.toml:2:5: invalid TOML"},
      {"[modle]\nn = 3\n", "",
       "[modle]: unknown section; valid: [model], [attention], [feedforward], [noise], [meanfield], [init], [solver], "
       "[output] (did you mean [model]?)"},
      {"[model]\nbta = 1.0\n", "", "model.bta: unknown key; did you mean model.beta?"},
      {"n = 3\n", "", "n: unknown key; keys live in the sections"},
      {"[model]\nn = 0\n", "", "model.n: must be >= 1, got 0"},
      {"[model]\nn = \"ten\"\n", "", "model.n: expected an integer, got a string"},
      {"[model]\nd = 1\n", "", "model.d: must be >= 2, got 1"},
      {"[model]\nbeta = -0.5\n", "", "model.beta: must be >= 0, got -0.5"},
      {"[model]\nbeta = nan\n", "", "model.beta: must be finite"},
      {"[model]\nscheme = \"prenorm\"\n", "",
       "model.scheme: unknown scheme \"prenorm\"; valid: post, pre, mix, peri, ngpt, cod"},
      {"[model]\ntau = 2.0\n", "", "model.tau: applies only to model.scheme = \"mix\" (model.scheme is \"post\")"},
      {"[model]\nscheme = \"mix\"\nalpha = 2.0\n", "",
       "model.alpha: applies only to model.scheme = \"ngpt\" (model.scheme is \"mix\")"},
      {"[model]\nscheme = \"ngpt\"\nalpha = -1.0\n", "", "model.alpha: must be > 0, got -1"},
      {"[model]\nqkv = \"random\"\n", "",
       "model.qkv: unknown value \"random\"; valid: identity, gaussian, gaussian_per_layer, gaussian_unit_norm, file"},
      {"[model]\nqkv = \"file\"\n", "", "model.qkv_file: is required when model.qkv = \"file\""},
      {"[model]\nqkv = \"file\"\nqkv_file = \"nowhere.h5\"\n", "", "model.qkv_file: nowhere.h5: no such file"},
      {"[init]\nkind = \"sphere\"\n", "",
       "init.kind: unknown value \"sphere\"; valid: uniform, gaussian, orthonormal, cap, file"},
      {"[model]\nn = 8\nd = 4\n[init]\nkind = \"orthonormal\"\n", "",
       "init.kind: \"orthonormal\" needs model.d >= model.n (d = 4, n = 8)"},
      {"[init]\nkind = \"cap\"\ndelta = 0.0\n", "", "init.delta: must be in (0, 2), got 0"},
      {"[init]\ndelta = 0.1\n", "", "init.delta: applies only to init.kind = \"cap\" (init.kind is \"uniform\")"},
      {"[init]\nr0 = -1.0\n", "", "init.r0: must be > 0, got -1"},
      {"[init]\nkind = \"gaussian\"\nr0 = 2.0\n", "", "init.r0: does not apply to init.kind = \"gaussian\""},
      {"[init]\nkind = \"file\"\nfile = \"cfg.toml\"\n", "", "init.file: cfg.toml: not an HDF5 file"},
      {"[init]\nkind = \"file\"\nfile = \"wrong_shape.h5\"\ndataset = \"x\"\n", "",
       "init.dataset: x has shape [2, 2], expected [32, 3] or [frames, 32, 3] (model.n, model.d)"},
      {"[solver]\nmethod = \"rk45\"\n", "",
       "solver.method: unknown value \"rk45\"; valid: dopri5, cash_karp54, fehlberg78, bulirsch_stoer, rk4, euler, "
       "stratonovich_heun, euler_maruyama, discrete, split (did you mean \"rk4\"?)"},
      {"[solver]\nmethod = \"rk4\"\nrtol = 1e-6\n", "",
       "solver.rtol: applies only to solver.method = \"dopri5\" or \"cash_karp54\" or \"fehlberg78\" or "
       "\"bulirsch_stoer\" (solver.method is \"rk4\")"},
      {"[solver]\natol = 0\n", "", "solver.atol: must be > 0, got 0"},
      {"[solver]\nt_end = -1.0\n", "", "solver.t_end: must be > 0, got -1"},
      {"[solver]\nmethod = \"discrete\"\ndt = 0.3\nt_end = 1.0\n", "",
       "solver.dt: with solver.method = \"discrete\", solver.t_end = 1 must be a whole number of layers of step 0.3"},
      {"[solver]\nsync_epsilon = 3.0\n", "", "solver.sync_epsilon: must be in [0, 2), got 3"},
      {"[output]\nsamples = 1\n", "", "output.samples: must be >= 2, got 1"},
      {"[output]\ntimes = [0.0, 2.0, 1.0]\n", "", "output.times: must be strictly increasing (entry 2)"},
      {"[output]\ntimes = [0.0, 30.0]\n", "", "output.times: the last sample time 30 exceeds solver.t_end = 20"},
      {"[output]\nflush_frames = 0\n", "", "output.flush_frames: must be >= 1, got 0"},
      {"[output]\ncompression = 12\n", "", "output.compression: must be in [0, 9], got 12"},
      // The mean field: combinations it does not implement, each naming its key.
      {"[model]\nkind = \"meanfield\"\n[attention]\nnormalizer = \"sinkhorn\"\n", "",
       "attention.normalizer: \"sinkhorn\" does not apply to model.kind = \"meanfield\""},
      {"[model]\nkind = \"meanfield\"\n[attention]\npositions = \"rope\"\n", "",
       "attention.positions: \"rope\" does not apply to model.kind = \"meanfield\""},
      {"[model]\nkind = \"meanfield\"\nd = 4\n", "", "model.d: "},
      {"[model]\nkind = \"meanfield\"\nscheme = \"peri\"\n[init]\nradius_width = 0.05\n[noise]\nkind = "
       "\"independent\"\nsigma = 0.1\n",
       "", "model.scheme: \"peri\" with noise.kind = \"independent\" does not apply to model.kind = \"meanfield\""},
      {"[model]\nkind = \"meanfield\"\nscheme = \"ngpt\"\n[noise]\nkind = \"independent\"\nsigma = 0.1\n", "",
       "model.scheme: \"ngpt\" with noise.kind = \"independent\" does not apply to model.kind = \"meanfield\""},
      {"[model]\nkind = \"meanfield\"\n[attention]\nbias = \"alibi\"\nalibi_slope = 1.0\n", "",
       "attention.bias: \"alibi\" applies to model.kind = \"meanfield\" only with attention.mask = \"causal\" or "
       "\"strictly_causal\""},
      {"[model]\nkind = \"meanfield\"\nscheme = \"pre\"\n[init]\nradius_width = 0.05\n[attention]\nmask = \"causal\"\n",
       "", "model.scheme: \"pre\" with attention.mask = \"causal\" does not apply to model.kind = \"meanfield\""},
      {"[model]\nkind = \"meanfield\"\n[meanfield]\ncursor_grid = 16\n", "",
       "meanfield.cursor_grid: applies only to attention.mask = \"causal\" or \"strictly_causal\""},
      {"[model]\nkind = \"meanfield\"\n[attention]\nmask = \"strictly_causal\"\n[meanfield]\ncursor_grid = 0\n", "",
       "meanfield.cursor_grid: must be in [1, 65536], got 0"},
      {"[model]\nn = 8\n[meanfield]\ncursor_grid = 16\n", "",
       "meanfield.cursor_grid: applies only to model.kind = \"meanfield\""},
      {"", "--set model.beta", "--set: expected section.key=value, got \"model.beta\""},
      {"", "--set solver.method=eulr", "solver.method: unknown value \"eulr\""},
      {"", "--threads -1", "--threads: Value -1 not in range 0 to 4096"},
  };
  return all;
}

}  // namespace

BOOST_AUTO_TEST_CASE(malformed_configurations_each_give_one_named_line_and_no_file) {
  Scratch s;
  {
    auto f = h5::File::create(s / "wrong_shape.h5", h5::CreateMode::exclusive);
    const std::vector<double> v{1, 2, 3, 4};
    const std::uint64_t dims[2] = {2, 2};
    f.create_dataset("x", dims, std::span<const double>(v));
  }
  BOOST_TEST(cases().size() >= 25u);
  for (const Case& c : cases()) {
    s.write("cfg.toml", c.toml);
    const auto r = s.normdyn("run cfg.toml -o out.h5 " + c.flags);
    BOOST_TEST_INFO("config: " << c.toml << " flags: " << c.flags);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(r.err.rfind("normdyn: error: " + c.expected, 0) == 0, "stderr: " << r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    BOOST_TEST(!std::filesystem::exists(s / "out.h5"));
    for (const auto& entry : std::filesystem::directory_iterator(s.dir()))
      BOOST_TEST(entry.path().filename().string().find(".tmp") == std::string::npos);  // no staging leftovers
  }
}

BOOST_AUTO_TEST_CASE(io_failures_exit_with_3) {
  Scratch s;
  s.write("ok.toml", "[solver]\nt_end = 1.0\n");
  const auto r = s.normdyn("run ok.toml -o no/such/dir/out.h5");
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.rfind("normdyn: error: no/such/dir/out.h5: directory no/such/dir does not exist", 0) == 0, r.err);
  const auto resume = s.normdyn("run --resume ok.toml");
  BOOST_TEST(resume.exit_code == 2);
  BOOST_TEST(resume.err.rfind("normdyn: error: --resume: ok.toml: not an HDF5 file", 0) == 0, resume.err);
}

BOOST_AUTO_TEST_CASE(progress_only_on_a_terminal) {
  Scratch s;
  // About 2 s: long enough for the progress line (before uncompressed output, n = 64 sufficed).
  s.write("slow.toml",
          "[model]\nn = 256\nd = 8\nbeta = 4.0\n[solver]\nt_end = 300.0\nthreads = 1\n[output]\nsamples = 3001\n");
  // Under `script` stderr is a terminal: the progress line appears (t / t_end, steps, rate, ETA).
  const auto tty = s.shell("script -qfec '" + std::string(NORMDYN_BINARY) + " run slow.toml -o a.h5' /dev/null");
  BOOST_TEST(tty.exit_code == 0);
  BOOST_TEST(tty.out.find("normdyn: t = ") != std::string::npos, tty.out);
  BOOST_TEST(tty.out.find("steps/s") != std::string::npos);
  BOOST_TEST(tty.out.find("ETA") != std::string::npos);
  // --quiet on a terminal, and any run into a pipe or file: no progress.
  const auto quiet = s.shell("script -qfec '" + std::string(NORMDYN_BINARY) + " run slow.toml -q -o b.h5' /dev/null");
  BOOST_TEST(quiet.out.find("normdyn: t = ") == std::string::npos);
  const auto piped = s.normdyn("run slow.toml -o c.h5");
  BOOST_TEST(piped.err.find("normdyn: t = ") == std::string::npos);
  BOOST_TEST(piped.err.rfind("normdyn: ok:", 0) == 0);  // the one closing line
}
