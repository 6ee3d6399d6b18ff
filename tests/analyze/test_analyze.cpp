// The analysis library: a run analyzed from its file and from the recorder's buffers in memory gives
// the same report, byte for byte (particles and mean field); the mean-field report warns where the
// clusters are under-resolved and only there; the option table (one row per flag and keyword) checks
// every value and documents itself in docs/guide/analysis.md.
#define BOOST_TEST_MODULE analyze
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/cli_harness.hpp"
#include "io/h5.hpp"
#include "normdyn/analyze/options.hpp"
#include "normdyn/analyze/outputs.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"

namespace fs = std::filesystem;
using namespace normdyn;

namespace {

using TempDir = test::Scratch;

// Runs `toml` into its file and into memory at once; returns the two reports.
std::pair<std::string, std::string> reports_from_file_and_memory(const std::string& toml, const fs::path& out) {
  const RunConfig config = parse_config(toml, "test", {"output.path=\"" + out.string() + "\""});
  MemoryRecorder memory;
  ExperimentOptions options;
  BOOST_REQUIRE(run_experiment(config, options, {&memory}).status == RunStatus::ok);
  AnalyzeOptions analyze;
  analyze.threads = 1;
  // The same context for both: the file's name is the only thing a run in memory cannot report.
  const ReportContext context{std::nullopt, {}, &analyze};
  const std::string from_file = report_json(analyze_run(RunFileSource(out), analyze), context);
  const std::string from_memory = report_json(analyze_run(MemorySource::view(memory), analyze), context);
  return {from_file, from_memory};
}

const char* kMeanField =
    "[model]\nkind = \"meanfield\"\nscheme = \"post\"\nbeta = 16.0\n[meanfield]\ngrid = 256\n"
    "[init]\nkind = \"von_mises\"\ncenters = [0.5, 1.6, 2.9, 4.0, 5.3]\nkappa = [1.0]\n"
    "weights = [1.0, 0.7, 1.3, 0.9, 1.1]\n[solver]\nt_end = 20.0\n[output]\nsamples = 41\n";

}  // namespace

BOOST_AUTO_TEST_CASE(a_run_in_memory_is_analyzed_as_its_file) {
  TempDir dir;
  const auto [file, memory] = reports_from_file_and_memory(
      "[model]\nscheme = \"pre\"\nn = 16\nd = 3\nbeta = 2.0\n[init]\nkind = \"gaussian\"\n[solver]\nt_end = 6.0\n"
      "[output]\nsamples = 31\n",
      dir / "p.h5");
  BOOST_TEST(file.find("\"schema\": \"normdyn.analysis/2\"") != std::string::npos);
  BOOST_TEST(file == memory);
  const auto [mf_file, mf_memory] = reports_from_file_and_memory(kMeanField, dir / "m.h5");
  BOOST_TEST(mf_file.find("\"schema\": \"normdyn.analysis.meanfield/1\"") != std::string::npos);
  BOOST_TEST(mf_file == mf_memory);
}

BOOST_AUTO_TEST_CASE(under_resolved_clusters_are_warned_about_frame_by_frame) {
  TempDir dir;
  const fs::path out = dir / "m.h5";
  const RunConfig config = parse_config(kMeanField, "test", {"output.path=\"" + out.string() + "\""});
  BOOST_REQUIRE(run_experiment(config, ExperimentOptions{}).status == RunStatus::ok);
  const MeanFieldAnalysis a = analyze_meanfield(RunFileSource(out), AnalyzeOptions{});
  BOOST_REQUIRE_EQUAL(a.warnings.size(), 1u);
  const AnalysisWarning& w = a.warnings.front();
  BOOST_TEST(w.code == "under_resolved");
  std::vector<std::size_t> expected;
  for (std::size_t i = 0; i < a.frames.size(); ++i)
    if (a.frames[i].narrowest_cluster_cells < analysis::kResolvedClusterCells) expected.push_back(i);
  BOOST_TEST(w.frames == expected, boost::test_tools::per_element());
  BOOST_REQUIRE(!w.frames.empty());
  BOOST_TEST(w.times.front() == a.t[w.frames.front()]);
  BOOST_TEST(w.message.find("meanfield.grid = 512") != std::string::npos, w.message);
  // The run recorded the same widths (with the same cluster definition), and its summary says when.
  const RunReader reader(out);
  for (std::size_t i = 0; i < a.frames.size(); ++i)
    BOOST_TEST(reader.field_frame("narrowest_cluster_cells", i).at(0) == a.frames[i].narrowest_cluster_cells);
  BOOST_TEST(reader.summary()->message.find("warning under_resolved") != std::string::npos);
  // Stopped before the clusters thin out (t = 10: still wider than a cell at M = 256), no warning.
  const fs::path early = dir / "early.h5";
  BOOST_REQUIRE(
      run_experiment(parse_config(kMeanField, "test",
                                  {"output.path=\"" + early.string() + "\"", "solver.t_end=10", "output.samples=21"}),
                     ExperimentOptions{})
          .status == RunStatus::ok);
  const MeanFieldAnalysis e = analyze_meanfield(RunFileSource(early), AnalyzeOptions{});
  BOOST_TEST(e.warnings.empty());
  BOOST_TEST(RunReader(early).summary()->message.find("warning") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_option_table_checks_every_value) {
  std::set<std::string> names, flags;
  for (const AnalyzeOption& o : analyze_options()) {
    BOOST_TEST(names.insert(std::string(o.name)).second, o.name);
    BOOST_TEST(flags.insert(option_flag(o)).second, o.name);
    BOOST_TEST(!o.doc.empty());
    BOOST_TEST((o.set != nullptr && o.get != nullptr));
    // Setting an option to its default value changes nothing.
    AnalyzeRequest request = AnalyzeRequest::command_line();
    if (const auto value = o.get(request)) {
      apply_option(request, o, *value, option_flag(o));
      BOOST_TEST(option_value_text(*o.get(request)) == option_value_text(*value), o.name);
    }
  }
  BOOST_TEST(option_flag(*find_analyze_option("cluster_epsilon")) == "--cluster-epsilon");
  AnalyzeRequest request = AnalyzeRequest::python();
  const AnalyzeOption& epsilon = *find_analyze_option("cluster_epsilon");
  apply_option(request, epsilon, 0.25, "cluster_epsilon");
  BOOST_TEST(request.options.clusters.epsilon == 0.25);
  auto message = [&](const AnalyzeOption& o, const OptionValue& v, const std::string& label) {
    try {
      AnalyzeRequest r = AnalyzeRequest::command_line();
      apply_option(r, o, v, label);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  BOOST_TEST(message(epsilon, 5.0, "cluster_epsilon") == "cluster_epsilon: must be in [0, 2], got 5");
  BOOST_TEST(message(epsilon, std::int64_t{1}, "--cluster-epsilon") == "--cluster-epsilon: expected a number");
  BOOST_TEST(message(*find_analyze_option("plateau_energy_tolerance"), 0.0, "x") == "x: must be > 0, got 0");
  BOOST_TEST(message(*find_analyze_option("law"), std::string("linear"), "law").find("one of auto, exponential") !=
             std::string::npos);
  const AnalyzeOption& window = *find_analyze_option("fit_window");
  BOOST_TEST(message(window, parse_option_text(window, "5:1", "w"), "w") == "w: needs T0 < T1, got 5:1");
  const auto open = std::get<analysis::TimeWindow>(parse_option_text(window, "2:", "w"));
  BOOST_TEST(open.t_start == 2.0);
  BOOST_TEST(std::isinf(open.t_end));
  BOOST_CHECK_THROW(parse_option_text(window, "5", "w"), InputError);
  BOOST_CHECK_THROW(parse_option_text(*find_analyze_option("threads"), "1.5", "t"), InputError);
  // Writing is the command line's default, not Python's.
  BOOST_TEST(AnalyzeRequest::command_line().write_observables);
  BOOST_TEST(!AnalyzeRequest::python().write_observables);
  BOOST_TEST(AnalyzeRequest::python().label("observables_file") == "observables_file");
  BOOST_TEST(AnalyzeRequest::command_line().label("observables_file") == "--observables-file");
}

BOOST_AUTO_TEST_CASE(the_guide_shows_the_generated_option_table) {
  std::ifstream in(std::string(NORMDYN_SOURCE_DIR) + "/docs/guide/analysis.md");
  BOOST_REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  BOOST_TEST(text.str().find(analyze_options_markdown()) != std::string::npos,
             "docs/guide/analysis.md does not hold the table of analyze_options_markdown():\n"
                 << analyze_options_markdown());
}

BOOST_AUTO_TEST_CASE(a_run_in_memory_has_no_observables_file) {
  TempDir dir;
  const RunConfig config = parse_config(kMeanField, "test", {"solver.t_end=2", "output.samples=3"});
  MemoryRecorder memory;
  ExperimentOptions options;
  options.write_file = false;
  run_experiment(config, options, {&memory});
  AnalyzeRequest request = AnalyzeRequest::python();
  apply_option(request, *find_analyze_option("no_write"), false, "no_write");
  BOOST_CHECK_EXCEPTION(analyze_and_write(MemorySource::view(memory), request), InputError,
                        [](const InputError& e) { return e.key() == "no_write"; });
  // The report alone: written where asked.
  request = AnalyzeRequest::python();
  request.json = dir / "r.json";
  const AnalysisOutcome outcome = analyze_and_write(MemorySource::view(memory), request);
  BOOST_TEST(fs::exists(dir / "r.json"));
  BOOST_TEST(outcome.report.find("\"file\": null") != std::string::npos);
}

// With a feed-forward term the energy is L = E + 2βn Σ_i Φ(θ_i) (Φ(x) = Σ_m ω_m log cosh <a_m, x> for
// tanh), recorded during the run, from the run file after its weights file is gone (the stored
// weights, which also rebuild the run's dynamics), and from memory alike; and L never decreases under the uniform normalizer (a gradient flow).
BOOST_AUTO_TEST_CASE(the_energy_adds_the_feedforward_potential) {
  TempDir dir;
  const std::vector<double> a{0.9, -0.2, 0.3, 0.1, 0.7, -0.6, -0.4, 0.5, 0.2}, omega{0.8, -1.1, 0.6};
  {
    h5::File f = h5::File::create(dir / "ff.h5", h5::CreateMode::exclusive);
    const std::uint64_t a_dims[2] = {3, 3}, o_dims[1] = {3};
    f.create_dataset("a", a_dims, std::span<const double>(a));
    f.create_dataset("omega", o_dims, std::span<const double>(omega));
  }
  const double beta = 2.0;
  const Index n = 9, d = 3;
  const RunConfig config = parse_config(
      "[model]\nscheme = \"post\"\nn = 9\nd = 3\nbeta = 2.0\n[attention]\nnormalizer = \"uniform\"\n"
      "[solver]\nt_end = 3.0\n[output]\nsamples = 13\n[feedforward]\nactivation = \"tanh\"\nweights = \"file\"\n"
      "file = \"" +
          (dir / "ff.h5").string() + "\"\n",
      "test", {"output.path=\"" + (dir / "run.h5").string() + "\""});
  MemoryRecorder memory;
  BOOST_REQUIRE(run_experiment(config, ExperimentOptions{}, {&memory}).status == RunStatus::ok);
  const auto lyapunov = [&](const Tokens& x) {
    double e = 0.0, phi = 0.0;
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < n; ++j) e += std::exp(beta * x.theta.row(i).dot(x.theta.row(j)));
      for (Index m = 0; m < 3; ++m) {
        double s = 0.0;
        for (Index k = 0; k < d; ++k) s += a[static_cast<std::size_t>(m * d + k)] * x.theta(i, k);
        phi += omega[static_cast<std::size_t>(m)] * std::log(std::cosh(s));
      }
    }
    return e + 2.0 * beta * double(n) * phi;
  };
  const RunReader reader(config.output.path);
  const std::vector<double> recorded = reader.observable("energy");
  BOOST_TEST_REQUIRE(recorded.size() == reader.frames());
  for (std::size_t k = 0; k < recorded.size(); ++k) {
    BOOST_TEST(recorded[k] == lyapunov(reader.frame(k)), boost::test_tools::tolerance(1e-12));
    if (k > 0) BOOST_TEST(recorded[k] >= recorded[k - 1] * (1.0 - 1e-12));
  }
  fs::remove(dir / "ff.h5");
  AnalyzeOptions options;
  options.threads = 1;
  const AnalysisResult from_file = analyze_particles(RunFileSource(config.output.path), options);
  const std::vector<double>* analyzed = from_file.observable("energy");
  BOOST_TEST_REQUIRE(analyzed != nullptr);
  BOOST_TEST(*analyzed == recorded, boost::test_tools::tolerance(1e-12) << boost::test_tools::per_element());
  // The dynamics are rebuilt with the stored weights too: the speed comes from the velocity field.
  BOOST_TEST(from_file.angular_speed_method == "velocity");
  // The run in memory reads its weights through its configuration: the file is gone.
  BOOST_CHECK_THROW(analyze_particles(MemorySource::view(memory), options), InputError);
}
