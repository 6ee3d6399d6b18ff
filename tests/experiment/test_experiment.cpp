// The experiment library: one run recorded in memory and in the run file holds the same numbers
// bit for bit; progress events are absolute and end with `done`; an interrupt through
// stop_requested keeps every frame and resumes to the uninterrupted run, also when it comes after
// the last step and before the last frame; mean-field runs record fields in memory.
#define BOOST_TEST_MODULE experiment
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>

#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/io/run_file.hpp"

namespace fs = std::filesystem;
using namespace normdyn;

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

bool same_bits(const double* a, const double* b, std::size_t count) {
  return std::memcmp(a, b, count * sizeof(double)) == 0;
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
