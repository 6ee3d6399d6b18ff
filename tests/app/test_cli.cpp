// End to end through the command line: every scheme, method, initial condition and attention-matrix
// source produces a readable run file with the right shapes, unit directions and the resolved
// configuration; bad input gives one line naming the key, exit code 2, and no file.
#define BOOST_TEST_MODULE cli
#include <boost/test/unit_test.hpp>

#include "cli_harness.hpp"
#include "io/h5.hpp"
#include "normdyn/io/run_file.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using test::Scratch;

namespace {

const char* kBase = R"([model]
n = 6
d = 3
beta = 2.0
[solver]
t_end = 2.0
[output]
samples = 11
)";

// Checks what every successful run file must satisfy; returns the reader.
RunReader check_run_file(const std::filesystem::path& p, Index n, Index d, std::size_t frames) {
  RunReader r(p);
  BOOST_TEST(r.n() == n);
  BOOST_TEST(r.d() == d);
  BOOST_TEST(r.frames() == frames);
  for (std::size_t i = 0; i < r.frames(); ++i) {
    const Tokens t = r.frame(i);
    BOOST_TEST((t.theta.rowwise().norm().array() - 1.0).abs().maxCoeff() <= test::kSphereNorm);
    BOOST_TEST((t.r.array() > 0.0).all());
  }
  // The stored configuration reproduces itself.
  BOOST_TEST(to_toml(r.config()) == r.config_toml());
  BOOST_TEST(r.summary().has_value());
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_scheme_runs_from_the_cli) {
  Scratch s;
  s.write("base.toml", kBase);
  for (const char* scheme : {"post", "pre", "mix", "peri", "ngpt", "cod"}) {
    const std::string out = std::string(scheme) + ".h5";
    const auto r = s.normdyn("run base.toml -q -o " + out + " --set model.scheme=" + scheme);
    BOOST_TEST_INFO("scheme " << scheme << ": " << r.err);
    BOOST_REQUIRE_EQUAL(r.exit_code, 0);
    BOOST_TEST(r.err.empty());  // --quiet and success: nothing on stderr
    const RunReader reader = check_run_file(s / out, 6, 3, 11);
    BOOST_TEST(scheme_key(reader.config().model.scheme) == scheme);
    BOOST_TEST(reader.times().back() == 2.0);
  }
}

BOOST_AUTO_TEST_CASE(every_method_runs_from_the_cli) {
  Scratch s;
  s.write("base.toml", kBase);
  for (const char* method : {"dopri5", "cash_karp54", "fehlberg78", "bulirsch_stoer", "rk4", "euler", "discrete"}) {
    const std::string out = std::string(method) + ".h5";
    const auto r =
        s.normdyn("run base.toml -q -o " + out + " --set solver.method=" + method + " --set model.scheme=peri");
    BOOST_TEST_INFO("method " << method << ": " << r.err);
    BOOST_REQUIRE_EQUAL(r.exit_code, 0);
    const RunReader reader = check_run_file(s / out, 6, 3, 11);
    if (std::string(method) == "discrete") BOOST_TEST(reader.steps().back() == 200);  // 2.0 / 0.01 layers
  }
}

BOOST_AUTO_TEST_CASE(every_initial_condition_runs_from_the_cli) {
  Scratch s;
  s.write("base.toml", kBase);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o uniform.h5 --set model.scheme=pre --set init.r0=2.5").exit_code,
                      0);
  BOOST_TEST(RunReader(s / "uniform.h5").frame(0).r(0) == 2.5);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o gaussian.h5 --set init.kind=gaussian").exit_code, 0);
  const Tokens g = RunReader(s / "gaussian.h5").frame(0);
  BOOST_TEST(g.r.maxCoeff() != g.r.minCoeff());
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o ortho.h5 --set init.kind=orthonormal --set model.d=6").exit_code,
                      0);
  const Tokens o = RunReader(s / "ortho.h5").frame(0);
  BOOST_TEST((o.theta * o.theta.transpose() - RowMatrix::Identity(6, 6)).cwiseAbs().maxCoeff() < 1e-14);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o cap.h5 --set init.kind=cap --set init.delta=0.05").exit_code, 0);
  const Tokens c = RunReader(s / "cap.h5").frame(0);
  BOOST_TEST((c.theta * c.theta.transpose()).minCoeff() >= 0.95 - 1e-14);
  // Continue from the last frame of the Gaussian run: radii come with it.
  BOOST_REQUIRE_EQUAL(
      s.normdyn("run base.toml -q -o cont.h5 --set init.kind=file --set init.file=gaussian.h5 --set model.scheme=pre")
          .exit_code,
      0);
  const Tokens last = RunReader(s / "gaussian.h5").frame(10);
  const Tokens first = RunReader(s / "cont.h5").frame(0);
  BOOST_TEST((first.theta - last.theta).cwiseAbs().maxCoeff() < 1e-15);
  BOOST_TEST(bool(first.r == last.r));
}

BOOST_AUTO_TEST_CASE(attention_matrix_sources_run_from_the_cli) {
  Scratch s;
  s.write("base.toml", kBase);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o g.h5 --set model.qkv=gaussian").exit_code, 0);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o gl.h5 --set model.qkv=gaussian_per_layer").exit_code, 0);
  BOOST_TEST((RunReader(s / "g.h5").frame(10).theta - RunReader(s / "gl.h5").frame(10).theta).cwiseAbs().maxCoeff() >
             1e-3);
  {
    auto f = h5::File::create(s / "qkv.h5", h5::CreateMode::exclusive);
    std::vector<double> eye{1, 0, 0, 0, 1, 0, 0, 0, 1};
    const std::uint64_t dims[2] = {3, 3};
    for (const char* m : {"Q", "K", "V"}) f.create_dataset(m, dims, std::span<const double>(eye));
  }
  // Identity matrices from a file give the identity run, up to round-off.
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o f.h5 --set model.qkv=file --set model.qkv_file=qkv.h5").exit_code,
                      0);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o i.h5").exit_code, 0);
  BOOST_TEST((RunReader(s / "f.h5").frame(10).theta - RunReader(s / "i.h5").frame(10).theta).cwiseAbs().maxCoeff() <
             1e-12);
}

BOOST_AUTO_TEST_CASE(synchronization_stop_is_recorded) {
  Scratch s;
  s.write("base.toml", kBase);
  const auto r = s.normdyn(
      "run base.toml -o sync.h5 --set solver.t_end=200 --set output.samples=401 --set solver.sync_epsilon=1e-6");
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_TEST(r.err.find("synchronized") != std::string::npos);
  const RunReader reader(s / "sync.h5");
  BOOST_TEST(reader.summary()->status == RunStatus::synchronized);
  BOOST_TEST(reader.frames() < 401u);
  const Tokens last = reader.frame(reader.frames() - 1);
  BOOST_TEST((last.theta * last.theta.transpose()).minCoeff() > 1.0 - 1e-6);
  const Tokens before = reader.frame(reader.frames() - 2);
  BOOST_TEST((before.theta * before.theta.transpose()).minCoeff() <= 1.0 - 1e-6);
}

BOOST_AUTO_TEST_CASE(overflowing_attention_is_a_diverged_run_with_its_frames_kept) {
  Scratch s;
  s.write("base.toml", kBase);
  {
    auto f = h5::File::create(s / "huge.h5", h5::CreateMode::exclusive);
    const std::vector<double> small{1, 0, 0, 0, 1, 0, 0, 0, 1};
    std::vector<double> layers(small);                   // layer 0: identity
    for (double v : small) layers.push_back(v * 1e200);  // layer 1: scores overflow to inf
    const std::uint64_t dims[3] = {2, 3, 3};
    for (const char* m : {"Q", "K"}) f.create_dataset(m, dims, std::span<const double>(layers));
    std::vector<double> v(layers.begin(), layers.begin() + 9);
    v.insert(v.end(), small.begin(), small.end());
    f.create_dataset("V", dims, std::span<const double>(v));
  }
  const auto r = s.normdyn("run base.toml -q -o nan.h5 --set model.qkv=file --set model.qkv_file=huge.h5");
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err.find("diverged") != std::string::npos);
  const RunReader reader(s / "nan.h5");
  BOOST_TEST(reader.summary()->status == RunStatus::diverged);
  BOOST_TEST(reader.frames() == 6u);  // t = 0, 0.2, ..., 1.0: everything before the second layer
  BOOST_TEST(reader.frame(5).theta.allFinite());
}

BOOST_AUTO_TEST_CASE(bad_input_is_one_line_exit_2_and_no_file) {
  Scratch s;
  s.write("base.toml", kBase);
  s.write("typo.toml", "[model]\nbetta = 2.0\n");
  struct Case {
    std::string args, expected;
  };
  for (const Case& c :
       {Case{"run typo.toml -o x.h5", "normdyn: error: model.betta: unknown key; did you mean model.beta?"},
        Case{"run base.toml -o x.h5 --set model.n=0", "normdyn: error: model.n: must be >= 1"},
        Case{"run base.toml -o x.h5 --set solver.method=rk5",
             "normdyn: error: solver.method: unknown value \"rk5\"; valid: dopri5, cash_karp54, "
             "fehlberg78, bulirsch_stoer, rk4, euler, stratonovich_heun, euler_maruyama, discrete, split (did you mean "
             "\"rk4\"?)"},
        Case{"run missing.toml -o x.h5", "normdyn: error: missing.toml: no such configuration file"},
        Case{"run base.toml -o x.h5 --set init.kind=file --set init.file=nope.h5",
             "normdyn: error: init.file: nope.h5: no such file"},
        Case{"run base.toml -o x.h5 --threads=-1", "normdyn: error: --threads"},
        Case{"runn base.toml", "normdyn: error: unknown command 'runn'; did you mean 'run'?"},
        Case{"help analyse", "normdyn: error: help: unknown command 'analyse'; did you mean 'analyze'?"},
        Case{"run --from base.toml -o x.h5", "normdyn: error: --from: "},
        Case{"run base.toml -o x.h5 --progress=fancy", "normdyn: error: --progress"}}) {
    const auto r = s.normdyn(c.args);
    BOOST_TEST_INFO(c.args);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(r.err.rfind(c.expected, 0) == 0, "stderr: " << r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    BOOST_TEST(!std::filesystem::exists(s / "x.h5"));
  }
}

BOOST_AUTO_TEST_CASE(existing_output_is_never_overwritten_silently) {
  Scratch s;
  s.write("base.toml", kBase);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o a.h5").exit_code, 0);
  const auto before = std::filesystem::last_write_time(s / "a.h5");
  const auto again = s.normdyn("run base.toml -q -o a.h5 --set model.beta=3");
  BOOST_TEST(again.exit_code == 2);
  BOOST_TEST(again.err.find("a.h5 exists; pass --force") != std::string::npos);
  BOOST_TEST((std::filesystem::last_write_time(s / "a.h5") == before));
  BOOST_TEST(RunReader(s / "a.h5").config().model.beta == 2.0);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o a.h5 --set model.beta=3 --force").exit_code, 0);
  BOOST_TEST(RunReader(s / "a.h5").config().model.beta == 3.0);
}

BOOST_AUTO_TEST_CASE(informational_commands) {
  Scratch s;
  const auto schemes = s.normdyn("list-schemes");
  BOOST_TEST(schemes.exit_code == 0);
  for (const char* k : {"post", "pre", "mix", "peri", "ngpt", "cod", "r_j |A_j|", "sqrt(t + 1)"})
    BOOST_TEST(schemes.out.find(k) != std::string::npos);
  // Every alternative of every attention list, with its parameters and the traits it breaks.
  const auto attention = s.normdyn("list-attention");
  BOOST_TEST(attention.exit_code == 0);
  for (const char* k : {"causal", "strictly_causal", "alibi", "rope", "attention.rope_base (float, default 10000)",
                        "softmax", "uniform", "sinkhorn", "attention.sinkhorn_tol (float, default 1e-12)",
                        "(attention.bias)", "attention.bias_file (string, default \"\")", "not: exchangeable"})
    BOOST_TEST(attention.out.find(k) != std::string::npos, k);
  // The equiangular model: particles against the closed form, the rates; bad flags named.
  const auto eq = s.normdyn(
      "study equiangular --n 6 --beta 1 --rho0 0.2 --normalizer uniform --t-end 4 --samples 80 --json eq.json");
  BOOST_TEST(eq.exit_code == 0, eq.err);
  BOOST_TEST(eq.out.find("rate of 1 - rho: theory 5.4365637") != std::string::npos, eq.out);
  BOOST_TEST(std::filesystem::exists(s / "eq.json"));
  const auto bad_rho = s.normdyn("study equiangular --n 6 --rho0 -0.5");
  BOOST_TEST(bad_rho.exit_code == 2);
  BOOST_TEST(bad_rho.err.find("--rho0") != std::string::npos, bad_rho.err);
  const auto ref = s.normdyn("config-reference");
  BOOST_TEST(ref.exit_code == 0);
  // The documentation's configuration reference is this table: the page generates it at the site's
  // build (tests/docs/check_reference.py checks that it covers every key).
  const std::string page = Scratch::slurp(std::filesystem::path(NORMDYN_SOURCE_DIR) / "docs/reference/config.md");
  BOOST_TEST(page.find("```{normdyn-output} config-reference") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(help_version_and_defaults) {
  Scratch s;
  const auto help = s.normdyn("help");
  BOOST_TEST(help.exit_code == 0);
  for (const char* command : {"run", "analyze", "plot", "sweep", "list-schemes", "config-reference", "help"})
    BOOST_TEST(help.out.find(command) != std::string::npos, command);
  const auto run_help = s.normdyn("help run");
  BOOST_TEST(run_help.exit_code == 0);
  BOOST_TEST(run_help.out.find("--resume") != std::string::npos);
  BOOST_TEST(run_help.out.find("--from") != std::string::npos);
  for (const char* flag : {"-V", "--version"}) {
    const auto v = s.normdyn(flag);
    BOOST_TEST(v.exit_code == 0);
    BOOST_TEST(v.out.rfind("normdyn ", 0) == 0, "stdout: " << v.out);
  }
  // Without a configuration file: the built-in defaults, with --set on top.
  const auto r = s.normdyn("run -q -o d.h5 --set model.n=5 --set solver.t_end=0.5");
  BOOST_TEST_REQUIRE(r.exit_code == 0, "stderr: " << r.err);
  const RunConfig c = RunReader(s / "d.h5").config();
  BOOST_TEST(c.model.n == 5);
  BOOST_TEST(c.model.d == RunConfig{}.model.d);
}

BOOST_AUTO_TEST_CASE(run_from_repeats_a_run_and_never_writes_its_input) {
  Scratch s;
  s.write("base.toml", kBase);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o a.h5").exit_code, 0);
  const auto before = std::filesystem::last_write_time(s / "a.h5");
  const auto again = s.normdyn("run --from a.h5 -q -o b.h5");
  BOOST_TEST_REQUIRE(again.exit_code == 0, "stderr: " << again.err);
  const RunReader a(s / "a.h5"), b(s / "b.h5");
  BOOST_TEST_REQUIRE(a.frames() == b.frames());
  for (std::size_t f = 0; f < a.frames(); ++f) BOOST_TEST((a.frame(f).theta == b.frame(f).theta));
  // --set on top of the stored configuration.
  BOOST_REQUIRE_EQUAL(s.normdyn("run --from a.h5 -q -o c.h5 --set model.beta=3").exit_code, 0);
  BOOST_TEST(RunReader(s / "c.h5").config().model.beta == 3.0);
  // Never into its input, not even with --force.
  const auto self = s.normdyn("run --from a.h5 -o ./a.h5 --force");
  BOOST_TEST(self.exit_code == 2);
  BOOST_TEST(self.err.find("would overwrite its input") != std::string::npos, "stderr: " << self.err);
  BOOST_TEST((std::filesystem::last_write_time(s / "a.h5") == before));
}

BOOST_AUTO_TEST_CASE(progress_for_logs_when_asked) {
  Scratch s;
  s.write("base.toml", kBase);
  // Not a terminal: silent by default.
  const auto quiet = s.normdyn("run base.toml -o q.h5");
  BOOST_TEST((quiet.err.find("steps/s") == std::string::npos), "stderr: " << quiet.err);
  const auto json = s.normdyn("run base.toml -o j.h5 --progress jsonl");
  BOOST_TEST_REQUIRE(json.exit_code == 0);
  // At least the final event, with absolute fraction 1 and every frame.
  BOOST_TEST(json.err.find("\"done\": true") != std::string::npos, "stderr: " << json.err);
  BOOST_TEST(json.err.find("\"fraction\": 1.000000") != std::string::npos, "stderr: " << json.err);
  BOOST_TEST(json.err.find("\"frames\": 11") != std::string::npos, "stderr: " << json.err);
  const auto plain = s.normdyn("run base.toml -o p.h5 --progress plain");
  BOOST_TEST(plain.err.find("11 of 11 frames") != std::string::npos, "stderr: " << plain.err);
}

BOOST_AUTO_TEST_CASE(config_template_runs_as_it_is) {
  Scratch s;
  const auto t = s.normdyn("config-reference --toml");
  BOOST_TEST_REQUIRE(t.exit_code == 0, t.err);
  // Every key is in it, set or commented out.
  for (const auto& k : config_reference()) {
    const std::string name = k.key.substr(k.key.find('.') + 1);
    const bool listed =
        t.out.find("\n" + name + " = ") != std::string::npos || t.out.find("\n# " + name + " = ") != std::string::npos;
    BOOST_TEST(listed, k.key);
  }
  s.write("template.toml", t.out);
  const auto r = s.normdyn("run template.toml -q -o t.h5 --set solver.t_end=0.5");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  // The template is the defaults.
  RunConfig expected;
  expected.solver.t_end = 0.5;
  expected.output.path = s / "t.h5";
  RunConfig got = RunReader(s / "t.h5").config();
  got.output.path = expected.output.path;
  BOOST_TEST(to_toml(got) == to_toml(expected));
}

BOOST_AUTO_TEST_CASE(run_continue_extends_a_finished_run_into_a_new_file) {
  Scratch s;
  s.write("base.toml", kBase);  // t_end = 2, 11 samples
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o a.h5").exit_code, 0);
  BOOST_REQUIRE_EQUAL(s.normdyn("run base.toml -q -o whole.h5 --set solver.t_end=4 --set output.samples=21").exit_code,
                      0);
  const auto before = std::filesystem::last_write_time(s / "a.h5");
  const auto r = s.normdyn("run --continue a.h5 --t-end 4 -q -o b.h5");
  BOOST_TEST_REQUIRE(r.exit_code == 0, "stderr: " << r.err);
  BOOST_TEST((std::filesystem::last_write_time(s / "a.h5") == before));
  const RunReader a(s / "a.h5"), b(s / "b.h5"), whole(s / "whole.h5");
  // The new file starts at the input's last frame, at the same spacing, and says where it came from.
  const auto times = b.times();
  BOOST_TEST_REQUIRE(times.size() == 11u);
  BOOST_TEST(times.front() == 2.0);
  BOOST_TEST(times.back() == 4.0);
  // Equal up to the round-off of putting the read frame back on the sphere (bit for bit with
  // -march=native; one ulp apart without FMA).
  BOOST_TEST((b.frame(0).theta - a.frame(a.frames() - 1).theta).cwiseAbs().maxCoeff() <= test::kRoundoff);
  const RunConfig c = b.config();
  BOOST_TEST(c.solver.t_start == 2.0);
  BOOST_TEST(c.init.file == std::filesystem::absolute(s / "a.h5"));
  // It continues the same trajectory: the run to t = 4 in one go agrees to the tolerance.
  const Tokens end = b.frame(b.frames() - 1), reference = whole.frame(whole.frames() - 1);
  BOOST_TEST((end.theta - reference.theta).cwiseAbs().maxCoeff() < 1e-6);
  // Refusals: no --t-end, an end before the last frame, the input as output.
  for (const char* args : {"run --continue a.h5 -o c.h5", "run --continue a.h5 --t-end 1 -o c.h5",
                           "run --continue a.h5 --t-end 5 -o a.h5 --force"}) {
    const auto bad = s.normdyn(args);
    BOOST_TEST_INFO(args);
    BOOST_TEST(bad.exit_code == 2, "stderr: " << bad.err);
    BOOST_TEST(!std::filesystem::exists(s / "c.h5"));
  }
  BOOST_TEST((std::filesystem::last_write_time(s / "a.h5") == before));
}

BOOST_AUTO_TEST_CASE(plot_interpreter_from_path_named_when_it_lacks_the_packages) {
  Scratch s;
  s.write("base.toml", kBase);
  std::filesystem::create_directories(s / "bin");
  s.write("bin/fakepython", "#!/bin/sh\nexit 1\n");
  std::filesystem::permissions(s / "bin/fakepython", std::filesystem::perms::owner_all);
  // A bare name is looked up on PATH; an interpreter without numpy, h5py and matplotlib is named.
  auto r =
      s.shell("PATH=\"$PWD/bin:$PATH\" NORMDYN_PYTHON=fakepython " + std::string(NORMDYN_BINARY) + " plot base.toml");
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(r.err.find("NORMDYN_PYTHON: " + (s / "bin/fakepython").string() +
                        " cannot import numpy, h5py and matplotlib") != std::string::npos,
             r.err);
  r = s.shell("NORMDYN_PYTHON=no-such-python-here " + std::string(NORMDYN_BINARY) + " plot base.toml");
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(r.err.find("no-such-python-here: no such interpreter") != std::string::npos, r.err);
}
