// The experiment library: one run recorded in memory and in the run file holds the same numbers
// bit for bit; progress events are absolute and end with `done`; an interrupt through
// stop_requested keeps every frame and resumes to the uninterrupted run, also when it comes after
// the last step and before the last frame; mean-field runs record fields in memory.
#define BOOST_TEST_MODULE experiment
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "../test_support.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/given.hpp"
#include "io/h5.hpp"
#include "normdyn/io/run_file.hpp"
#include "toml_text.hpp"

namespace fs = std::filesystem;
using namespace normdyn;
using test::same_bits;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("normdyn_experiment_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

RunConfig small_run(const std::string& scheme, const fs::path& out) {
  return parse_config("[model]\nscheme = \"" + scheme +
                          "\"\nn = 12\nd = 3\nbeta = 2.0\n[solver]\nt_end = 4.0\n[output]\nsamples = 21\n",
                      "test", {"output.path=\"" + out.string() + "\""});
}

}  // namespace

BOOST_AUTO_TEST_CASE(memory_recorder_equals_run_file_bit_for_bit) {
  TempDir dir;
  for (const std::string scheme : {"post", "pre", "ngpt"}) {
    const RunConfig config = small_run(scheme, dir.path / (scheme + ".h5"));
    MemoryRecorder memory;
    ExperimentOptions options;
    const RunSummary s = run_experiment(config, options, {&memory});
    BOOST_TEST_REQUIRE(static_cast<int>(s.status) == static_cast<int>(RunStatus::ok));
    BOOST_TEST_REQUIRE(memory.summary.has_value());
    const RunReader reader(config.output.path);
    BOOST_TEST_REQUIRE(reader.frames() == memory.frames());
    BOOST_TEST(memory.frames() == 21u);
    const auto times = reader.times();
    BOOST_TEST(same_bits(times.data(), memory.times.data(), times.size()));
    const std::size_t nd = static_cast<std::size_t>(config.model.n * config.model.d);
    for (std::size_t f = 0; f < reader.frames(); ++f) {
      const Tokens t = reader.frame(f);
      BOOST_TEST(same_bits(t.theta.data(), memory.direction.data() + f * nd, nd));
      BOOST_TEST(same_bits(t.r.data(), memory.radius.data() + f * static_cast<std::size_t>(config.model.n),
                           static_cast<std::size_t>(config.model.n)));
    }
    BOOST_TEST_REQUIRE(memory.observable_names == frame_observable_names());
    for (std::size_t k = 0; k < memory.observable_names.size(); ++k) {
      const auto stored = reader.observable(memory.observable_names[k]);
      BOOST_TEST(same_bits(stored.data(), memory.observables[k].data(), stored.size()));
    }
    BOOST_TEST(memory.config_toml == reader.config_toml());
  }
}

BOOST_AUTO_TEST_CASE(memory_only_run_writes_no_file) {
  TempDir dir;
  const RunConfig config = small_run("post", dir.path / "none.h5");
  MemoryRecorder memory;
  ExperimentOptions options;
  options.write_file = false;
  run_experiment(config, options, {&memory});
  BOOST_TEST(!fs::exists(config.output.path));
  BOOST_TEST(memory.frames() == 21u);
}

BOOST_AUTO_TEST_CASE(interrupt_keeps_frames_and_progress_is_absolute_after_resume) {
  TempDir dir;
  RunConfig config = small_run("pre", dir.path / "interrupted.h5");
  config.output.flush_frames = 1;  // a checkpoint after every frame
  // The uninterrupted run, for reference.
  RunConfig whole = config;
  whole.output.path = dir.path / "whole.h5";
  const RunSummary reference = run_experiment(whole, ExperimentOptions{});
  BOOST_TEST_REQUIRE(reference.accepted_steps > 16);  // long enough to be interrupted half-way

  ExperimentOptions options;
  int steps = 0;
  options.stop_requested = [&steps] { return ++steps > 8 ? 15 : 0; };
  options.resume_hint = "continue later";
  const RunSummary first = run_experiment(config, options);
  BOOST_TEST_REQUIRE(static_cast<int>(first.status) == static_cast<int>(RunStatus::interrupted));
  BOOST_TEST(first.message.find("interrupted by signal 15") != std::string::npos);
  BOOST_TEST(first.message.find("continue later") != std::string::npos);
  BOOST_TEST(first.frames > 0);
  BOOST_TEST(first.t_reached < config.solver.t_end);

  std::vector<ProgressEvent> events;
  ExperimentOptions again;
  again.progress = [&events](const ProgressEvent& e) { events.push_back(e); };
  again.progress_interval = 0.0;  // every step
  RunConfig stored;
  const RunSummary second = resume_experiment(config.output.path, std::nullopt, again, stored);
  BOOST_TEST_REQUIRE(static_cast<int>(second.status) == static_cast<int>(RunStatus::ok));
  BOOST_TEST_REQUIRE(events.size() >= 2u);
  BOOST_TEST(events.front().t_begin > 0.0);  // the resume point, not 0
  BOOST_TEST(events.front().t >= events.front().t_begin);
  BOOST_TEST(events.front().steps > events.front().session_steps);  // steps count every session
  BOOST_TEST(events.back().done);
  BOOST_TEST(events.back().fraction() == 1.0);
  BOOST_TEST(events.back().frames == 21u);

  const RunReader a(config.output.path), b(whole.output.path);
  BOOST_TEST_REQUIRE(a.frames() == b.frames());
  const Tokens x = a.frame(a.frames() - 1), y = b.frame(b.frames() - 1);
  BOOST_TEST(same_bits(x.theta.data(), y.theta.data(), static_cast<std::size_t>(x.theta.size())));
  BOOST_TEST(same_bits(x.r.data(), y.r.data(), static_cast<std::size_t>(x.r.size())));
}

BOOST_AUTO_TEST_CASE(a_stop_after_the_last_step_leaves_the_last_frame_to_the_resume) {
  // The signal arrives between the step that reaches t_end and the frame at t_end: the run is
  // interrupted at t_end, one frame short, and the resume writes that frame only.
  TempDir dir;
  RunConfig config = small_run("pre", dir.path / "late.h5");
  config.solver.method = Method::rk4;
  config.solver.dt = 0.1;  // 40 steps to t_end = 4
  config.output.flush_frames = 1;
  RunConfig whole = config;
  whole.output.path = dir.path / "late_whole.h5";
  const RunSummary reference = run_experiment(whole, ExperimentOptions{});
  BOOST_TEST_REQUIRE(reference.accepted_steps == 40);

  ExperimentOptions options;
  std::int64_t steps = 0;
  options.stop_requested = [&steps, &reference] { return ++steps == reference.accepted_steps ? 2 : 0; };
  const RunSummary first = run_experiment(config, options);
  BOOST_TEST_REQUIRE(static_cast<int>(first.status) == static_cast<int>(RunStatus::interrupted));
  BOOST_TEST(first.t_reached == config.solver.t_end);
  BOOST_TEST(first.frames == 20);
  BOOST_TEST(RunReader(config.output.path).frames() == 20u);

  RunConfig stored;
  const RunSummary second = resume_experiment(config.output.path, std::nullopt, ExperimentOptions{}, stored);
  BOOST_TEST_REQUIRE(static_cast<int>(second.status) == static_cast<int>(RunStatus::ok));
  BOOST_TEST(second.accepted_steps == reference.accepted_steps);
  const RunReader a(config.output.path), b(whole.output.path);
  BOOST_TEST_REQUIRE(a.frames() == 21u);
  const Tokens x = a.frame(20), y = b.frame(20);
  BOOST_TEST(same_bits(x.theta.data(), y.theta.data(), static_cast<std::size_t>(x.theta.size())));
  BOOST_TEST(same_bits(x.r.data(), y.r.data(), static_cast<std::size_t>(x.r.size())));
}

BOOST_AUTO_TEST_CASE(bad_input_records_nothing) {
  TempDir dir;
  RunConfig config = small_run("post", dir.path / "bad.h5");
  config.init.kind = InitKind::file;
  config.init.file = dir.path / "missing.h5";
  MemoryRecorder memory;
  BOOST_CHECK_THROW(run_experiment(config, ExperimentOptions{}, {&memory}), std::exception);
  BOOST_TEST(!fs::exists(config.output.path));
  BOOST_TEST(memory.frames() == 0u);
}

BOOST_AUTO_TEST_CASE(meanfield_fields_in_memory) {
  TempDir dir;
  const RunConfig config = parse_config(
      "[model]\nkind = \"meanfield\"\nscheme = \"pre\"\nbeta = 2.0\n[meanfield]\ngrid = 64\nradial_grid = 8\n"
      "[init]\nkind = \"perturbed_uniform\"\nradius_width = 0.05\n[solver]\nt_end = 1.0\n[output]\nsamples = 5\n",
      "test", {"output.path=\"" + (dir.path / "mf.h5").string() + "\""});
  MemoryRecorder memory;
  run_experiment(config, ExperimentOptions{}, {&memory});
  BOOST_TEST(!memory.particles());
  // The density on (phi, r), its angular marginal and the resolution of its clusters (one per frame).
  BOOST_TEST_REQUIRE(memory.fields.size() == 3u);
  BOOST_TEST(memory.fields[0].values.size() == 5u * 64u * 8u);
  BOOST_TEST_REQUIRE(memory.fields[0].moving.size() == 1u);
  BOOST_TEST(memory.fields[0].moving[0].size() == 5u * 8u);
  BOOST_TEST(memory.fields[1].values.size() == 5u * 64u);
  BOOST_TEST(memory.fields[2].spec.name == "narrowest_cluster_cells");
  BOOST_TEST(memory.fields[2].values.size() == 5u);
}

// Arrays given with the run (Python's qkv= and tokens=): the first frame is the given tokens; the
// run file stores the arrays, so that its stored configuration rebuilds them and an interrupted
// run resumes to the uninterrupted one bit for bit with nothing else at hand.
BOOST_AUTO_TEST_CASE(given_arrays_are_stored_and_resume_from_the_run_file) {
  TempDir dir;
  const Index n = 10, d = 4, heads = 2, layers = 2;
  std::vector<double> q(static_cast<std::size_t>(layers * heads * d * d)), k(q.size()), v(q.size()),
      x(static_cast<std::size_t>(n * d));
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = 0.5 * std::sin(1.0 + 0.7 * static_cast<double>(i));
    k[i] = 0.5 * std::cos(2.0 + 1.3 * static_cast<double>(i));
    v[i] = 0.5 * std::sin(3.0 + 0.3 * static_cast<double>(i));
  }
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 2.0 * std::sin(0.9 * static_cast<double>(i) + 0.1);
  const auto make = [&](const fs::path& out) {
    RunConfig c = parse_config(
        "[model]\nscheme = \"pre\"\nn = 10\nd = 4\nheads = 2\n[solver]\nt_end = 3.0\n[output]\nsamples = 7\n", "test",
        {"output.path=\"" + out.string() + "\""});
    give_qkv(c, q, k, v, layers, heads, d);
    give_tokens(c, x, n, d);
    return c;
  };
  const RunConfig whole = make(dir.path / "given_whole.h5");
  const RunSummary reference = run_experiment(whole, ExperimentOptions{});
  BOOST_TEST_REQUIRE(static_cast<int>(reference.status) == static_cast<int>(RunStatus::ok));
  const RunReader w(whole.output.path);
  const Tokens first = w.frame(0);
  for (Index i = 0; i < n; ++i)
    for (Index c = 0; c < d; ++c)
      BOOST_TEST(first.r(i) * first.theta(i, c) == x[static_cast<std::size_t>(i * d + c)],
                 boost::test_tools::tolerance(1e-14));
  const RunConfig stored = w.config();
  BOOST_TEST(to_string(stored.model.qkv) == "given");
  BOOST_TEST_REQUIRE(stored.model.given_qkv);
  BOOST_TEST_REQUIRE(stored.model.given_qkv->size() == 2u);
  BOOST_TEST((*stored.model.given_qkv)[1].other_heads.at(0).K(3, 2) ==
             k[static_cast<std::size_t>(((1 * heads + 1) * d + 3) * d + 2)]);

  RunConfig config = make(dir.path / "given.h5");
  ExperimentOptions options;
  int steps = 0;
  options.stop_requested = [&steps] { return ++steps > 5 ? 15 : 0; };
  BOOST_TEST_REQUIRE(static_cast<int>(run_experiment(config, options).status) ==
                     static_cast<int>(RunStatus::interrupted));
  RunConfig resumed;
  BOOST_TEST_REQUIRE(
      static_cast<int>(resume_experiment(config.output.path, std::nullopt, ExperimentOptions{}, resumed).status) ==
      static_cast<int>(RunStatus::ok));
  const RunReader a(config.output.path);
  BOOST_TEST_REQUIRE(a.frames() == w.frames());
  const Tokens y = a.frame(a.frames() - 1), z = w.frame(w.frames() - 1);
  BOOST_TEST(same_bits(y.theta.data(), z.theta.data(), static_cast<std::size_t>(y.theta.size())));
  BOOST_TEST(same_bits(y.r.data(), z.r.data(), static_cast<std::size_t>(y.r.size())));

  // Shapes that do not fit the configuration, a token without a direction, "given" without arrays.
  const auto key_of = [](auto&& f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.key();
    }
    return std::string("accepted");
  };
  RunConfig bad = parse_config("[model]\nn = 10\nd = 3\n", "test");
  BOOST_TEST(key_of([&] { give_qkv(bad, q, k, v, layers, heads, d); }) == "qkv");
  std::vector<double> zero(x);
  std::fill_n(zero.begin() + 8, 4, 0.0);
  RunConfig four = parse_config("[model]\nn = 10\nd = 4\n", "test");
  BOOST_TEST(key_of([&] { give_tokens(four, zero, n, d); }) == "tokens");
  BOOST_TEST(key_of([&] { make_qkv(parse_config("[model]\nqkv = \"given\"\n", "test")); }) == "model.qkv");
  BOOST_TEST(key_of([&] { make_initial_tokens(parse_config("[init]\nkind = \"given\"\n", "test")); }) == "init.kind");
}

// A stochastic run interrupted and resumed from its run file draws the same noise (each increment a
// function of noise.seed and the step's number) and ends bit for bit where the uninterrupted run ends.
BOOST_AUTO_TEST_CASE(a_noisy_run_resumes_to_the_uninterrupted_one_bit_for_bit) {
  TempDir dir;
  const auto make = [&](const fs::path& out) {
    return parse_config(
        "[model]\nscheme = \"pre\"\nn = 12\nd = 3\nbeta = 2.0\n[noise]\nkind = \"independent\"\nsigma = 0.3\n"
        "[solver]\nt_end = 2.0\ndt = 0.01\n[output]\nsamples = 11\n",
        "test", {"output.path=\"" + out.string() + "\""});
  };
  const RunConfig whole = make(dir.path / "noisy_whole.h5");
  BOOST_TEST_REQUIRE(static_cast<int>(run_experiment(whole, ExperimentOptions{}).status) ==
                     static_cast<int>(RunStatus::ok));
  RunConfig config = make(dir.path / "noisy.h5");
  ExperimentOptions options;
  int steps = 0;
  options.stop_requested = [&steps] { return ++steps > 57 ? 15 : 0; };
  BOOST_TEST_REQUIRE(static_cast<int>(run_experiment(config, options).status) ==
                     static_cast<int>(RunStatus::interrupted));
  RunConfig resumed;
  BOOST_TEST_REQUIRE(
      static_cast<int>(resume_experiment(config.output.path, std::nullopt, ExperimentOptions{}, resumed).status) ==
      static_cast<int>(RunStatus::ok));
  BOOST_TEST((resumed.solver.method == Method::stratonovich_heun));
  const RunReader a(config.output.path), w(whole.output.path);
  BOOST_TEST_REQUIRE(a.frames() == w.frames());
  for (std::size_t f = 0; f < w.frames(); ++f) {
    const Tokens y = a.frame(f), z = w.frame(f);
    BOOST_TEST(same_bits(y.theta.data(), z.theta.data(), static_cast<std::size_t>(y.theta.size())), "frame " << f);
    BOOST_TEST(same_bits(y.r.data(), z.r.data(), static_cast<std::size_t>(y.r.size())), "frame " << f);
  }
}

// A feed-forward term read from a file equals the same weights given inline; the run file keeps the
// weights (/parameters/feedforward) and resumes bit for bit.
BOOST_AUTO_TEST_CASE(feedforward_weights_from_a_file_equal_the_inline_ones) {
  TempDir dir;
  const std::vector<double> a{0.9, -0.2, 0.3, 0.1, 0.7, -0.6, -0.4, 0.5, 0.2}, omega{0.8, -1.1, 0.6};
  {
    h5::File f = h5::File::create(dir.path / "ff.h5", h5::CreateMode::exclusive);
    const std::uint64_t a_dims[2] = {3, 3}, o_dims[1] = {3};
    f.create_dataset("a", a_dims, std::span<const double>(a));
    f.create_dataset("omega", o_dims, std::span<const double>(omega));
  }
  const std::string base =
      "[model]\nscheme = \"pre\"\nn = 9\nd = 3\nbeta = 2.0\n[solver]\nt_end = 3.0\n[output]\nsamples = 7\n";
  const auto list = [](const std::vector<double>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + toml_text::number_text(v[i]);
    return out + "]";
  };
  const RunConfig from_file =
      parse_config(base + "[feedforward]\nactivation = \"tanh\"\nweights = \"file\"\nfile = \"" +
                       (dir.path / "ff.h5").string() + "\"\n",
                   "test", {"output.path=\"" + (dir.path / "file.h5").string() + "\""});
  const RunConfig inline_weights =
      parse_config(base + "[feedforward]\nactivation = \"tanh\"\nweights = \"inline\"\na = " + list(a) +
                       "\nomega = " + list(omega) + "\n",
                   "test", {"output.path=\"" + (dir.path / "inline.h5").string() + "\""});
  const RunConfig without = parse_config(base, "test", {"output.path=\"" + (dir.path / "none.h5").string() + "\""});
  for (const RunConfig* c : {&from_file, &inline_weights, &without})
    BOOST_TEST_REQUIRE(static_cast<int>(run_experiment(*c, ExperimentOptions{}).status) ==
                       static_cast<int>(RunStatus::ok));
  const RunReader f(from_file.output.path), i(inline_weights.output.path), w(without.output.path);
  const Tokens y = f.frame(f.frames() - 1), z = i.frame(i.frames() - 1), u = w.frame(w.frames() - 1);
  BOOST_TEST(same_bits(y.theta.data(), z.theta.data(), static_cast<std::size_t>(y.theta.size())));
  BOOST_TEST((y.theta - u.theta).norm() > 1e-3);  // the term moved the tokens
  const h5::File file = h5::File::open(from_file.output.path, h5::OpenMode::read_only);
  BOOST_TEST(file.open_dataset("/parameters/feedforward/a").read_doubles() == a);
  BOOST_TEST(file.open_dataset("/parameters/feedforward/omega").read_doubles() == omega);
}
