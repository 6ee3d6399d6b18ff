// `normdyn analyze`, `plot` and `study` end to end, through the binary: the staircase of the
// large-beta circle example (data/configs/staircase_circle.toml) in the report, the observables and
// the figures; the rate law of a symmetric Pre-LN run; replacing observables; the sibling file when
// the run file cannot be written; errors naming their flag.
#define BOOST_TEST_MODULE app_analyze_cli
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "io/h5.hpp"
#include "normdyn/io/observables_file.hpp"

using namespace normdyn;
namespace fs = std::filesystem;
using nlohmann::json;
using test::Scratch;
using Result = test::CommandResult;

namespace {

const fs::path kSource = NORMDYN_SOURCE_DIR;

json read_json(const fs::path& p) { return json::parse(Scratch::slurp(p)); }

void require_ok(const Result& r) {
  BOOST_TEST_INFO("stderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
}

bool is_png(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  return in && std::string(sig + 1, 3) == "PNG" && fs::file_size(p) > 10000;
}

}  // namespace

BOOST_AUTO_TEST_CASE(staircase_of_the_circle_example) {
  Scratch dir;
  const fs::path run = dir.dir() / "staircase.h5";
  require_ok(dir.normdyn("run " + (kSource / "data/configs/staircase_circle.toml").string() + " -o " + run.string() +
                         " --threads 1 -q"));
  const fs::path report = dir.dir() / "report.json";
  const Result analyzed = dir.normdyn("analyze " + run.string() + " --json " + report.string());
  require_ok(analyzed);
  BOOST_TEST_MESSAGE(analyzed.out);
  const json j = read_json(report);

  // The documented keys.
  BOOST_TEST(j.at("schema") == "normdyn.analysis/2");
  for (const char* key : {"quantity", "law", "parameter", "stderr", "window"})
    BOOST_TEST(j.at("rate_fit").contains(key));
  const std::size_t frames = j.at("run").at("frames");
  BOOST_TEST(frames == 202u);
  BOOST_REQUIRE_EQUAL(j.at("clusters").size(), frames);
  for (const auto& c : j.at("clusters")) {
    BOOST_TEST(c.contains("t"));
    BOOST_TEST(c.at("count").get<std::size_t>() == c.at("sizes").size());
  }
  for (const auto& c : j.at("checks"))
    for (const char* key : {"name", "theory", "measured", "ok"}) BOOST_TEST(c.contains(key));

  // The staircase: after the initial phase (t > 1), at least 3 plateaus (each lasting ln 2 in log-time) with strictly decreasing
  // counts, the last lasting to the end of the run; every merge lowers the count.
  std::vector<std::int64_t> counts;
  for (const auto& p : j.at("plateaus")) {
    BOOST_TEST(p.at("t_end").get<double>() > p.at("t_start").get<double>());
    if (p.at("t_start").get<double>() > 1.0) counts.push_back(p.at("count"));
  }
  BOOST_TEST_MESSAGE("staircase: " << j.at("staircase").get<std::string>());
  BOOST_TEST(counts.size() >= 3u);
  for (std::size_t i = 1; i < counts.size(); ++i) BOOST_TEST(counts[i] < counts[i - 1]);
  BOOST_TEST(j.at("plateaus").back().at("t_end").get<double>() == 1e4);
  BOOST_TEST(j.at("merges").size() >= counts.front() - counts.back());
  BOOST_TEST(j.at("final").at("cluster_count").get<std::int64_t>() == counts.back());
  const json* energy = nullptr;
  for (const auto& c : j.at("checks"))
    if (c.at("name") == "energy_monotonicity") energy = &c;
  BOOST_REQUIRE(energy != nullptr);
  BOOST_TEST(energy->at("ok").get<bool>());

  // The observables, in the sibling file (analyze never writes the run file), in the H5MD layout.
  BOOST_TEST(!j.at("observables").at("in_run_file").get<bool>());
  {
    const h5::File f = h5::File::open(ObservablesFile::sibling_path(run), h5::OpenMode::read_only);
    BOOST_TEST(f.open_dataset("observables/cluster_count/value").shape() == (std::vector<std::uint64_t>{frames}),
               boost::test_tools::per_element());
    BOOST_TEST(f.open_dataset("observables/cluster_label/value").shape() == (std::vector<std::uint64_t>{frames, 32}),
               boost::test_tools::per_element());
    BOOST_TEST(f.open_dataset("observables/energy/time").read_doubles().back() == 1e4);
    BOOST_TEST(f.open_group("analysis").attribute_string("report_json").has_value());
  }

  // The figures.
  const fs::path plots = dir.dir() / "plots";
  const Result plotted = dir.normdyn("plot " + run.string() + " -o " + plots.string());
  require_ok(plotted);
  for (const char* name : {"staircase_overview.png", "staircase_decay.png", "staircase_heatmap.png",
                           "staircase_tokens.png", "staircase_trajectory.png"}) {
    BOOST_TEST_INFO(name);
    BOOST_TEST(is_png(plots / name));
  }
  BOOST_TEST(!fs::exists(plots / "compare.png"));  // one run: nothing to compare
}

BOOST_AUTO_TEST_CASE(symmetric_pre_ln_run_decays_like_t_to_the_minus_2) {
  Scratch dir;
  const fs::path run = dir.dir() / "pre.h5";
  require_ok(dir.normdyn("run " + (kSource / "data/configs/default.toml").string() + " -o " + run.string() +
                         " -q --threads 1 --set model.scheme=pre --set model.n=8 --set model.d=8"
                         " --set init.kind=orthonormal --set solver.t_end=400 --set output.samples=401"));
  const fs::path report = dir.dir() / "r.json";
  require_ok(dir.normdyn("analyze " + run.string() + " -q --fail-on-check --json " + report.string()));
  json j = read_json(report);
  BOOST_TEST(j.at("rate_fit").at("law") == "power");
  BOOST_TEST(std::abs(j.at("rate_fit").at("parameter").get<double>() - 2.0) < 0.05);
  BOOST_TEST(j.at("rate_fit").at("window").at(1).get<double>() == 400.0);
  for (const auto& c : j.at("checks")) BOOST_TEST(c.at("ok").get<bool>());

  // Law, window and quantity given; analyzing again replaces the observables.
  require_ok(dir.normdyn("analyze " + run.string() +
                         " -q --law exponential --fit-window 100:200 --quantity variance "
                         "--cluster-epsilon 0.5 --json " +
                         report.string()));
  j = read_json(report);
  BOOST_TEST(j.at("rate_fit").at("law") == "exponential");
  BOOST_TEST(j.at("rate_fit").at("quantity") == "variance");
  BOOST_TEST(j.at("rate_fit").at("window").at(0).get<double>() == 100.0);
  BOOST_TEST(j.at("rate_fit").at("window").at(1).get<double>() == 200.0);
  BOOST_TEST(!j.at("rate_fit").at("law_automatic").get<bool>());
  BOOST_TEST(j.at("options").at("cluster_epsilon").get<double>() == 0.5);
  BOOST_TEST(j.at("clusters").at(0).at("count").get<int>() == 8);
  BOOST_TEST(j.at("final").at("cluster_count").get<int>() == 1);
}

BOOST_AUTO_TEST_CASE(sibling_file_when_the_run_file_is_in_use) {
  Scratch dir;
  const fs::path run = dir.dir() / "r.h5";
  require_ok(dir.normdyn("run " + (kSource / "data/configs/default.toml").string() + " -o " + run.string() +
                         " -q --threads 1 --set solver.t_end=2 --set output.samples=21"));
  const fs::path report = dir.dir() / "r.json";
  {
    // Another process holds the run file open for reading; the observables go to r.observables.h5
    // as always.
    const h5::File holder = h5::File::open(run, h5::OpenMode::read_only);
    require_ok(dir.normdyn("analyze " + run.string() + " -q --json " + report.string()));
  }
  const json j = read_json(report);
  BOOST_TEST(!j.at("observables").at("in_run_file").get<bool>());
  BOOST_TEST(fs::path(j.at("observables").at("file").get<std::string>()) == dir.dir() / "r.observables.h5");
  BOOST_TEST(*ObservablesFile::locate(run) == dir.dir() / "r.observables.h5");
  {
    // The run file keeps only the run's own observables; the analysis went to the sibling.
    const h5::File f = h5::File::open(run, h5::OpenMode::read_only);
    BOOST_TEST(!f.contains("analysis"));
    BOOST_TEST(!f.contains("observables/cluster_count"));
  }
  // The plots find the sibling file.
  require_ok(dir.normdyn("plot " + run.string() + " --kind overview -o " + (dir.dir() / "p").string()));
  BOOST_TEST(is_png(dir.dir() / "p" / "r_overview.png"));
  // --no-write writes nowhere.
  fs::remove(dir.dir() / "r.observables.h5");
  require_ok(dir.normdyn("analyze " + run.string() + " -q --no-write"));
  BOOST_TEST(!ObservablesFile::locate(run).has_value());
}

BOOST_AUTO_TEST_CASE(bad_input_names_the_flag) {
  Scratch dir;
  const fs::path run = dir.dir() / "r.h5";
  require_ok(dir.normdyn("run " + (kSource / "data/configs/default.toml").string() + " -o " + run.string() +
                         " -q --threads 1 --set solver.t_end=1 --set output.samples=11"));
  Result r = dir.normdyn("analyze " + run.string() + " --fit-window 5");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("--fit-window") != std::string::npos);
  r = dir.normdyn("analyze " + run.string() + " --fit-window 5:1");
  BOOST_TEST(r.exit_code == 2);
  r = dir.normdyn("analyze " + run.string() + " --law linear");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("--law") != std::string::npos);
  r = dir.normdyn("analyze " + (dir.dir() / "missing.h5").string());
  BOOST_TEST(r.exit_code == 2);
  r = dir.normdyn("analyze " + (kSource / "data/configs/default.toml").string());
  BOOST_TEST(r.exit_code == 2);  // not an HDF5 file: the wrong input, as for run --resume
  BOOST_TEST(r.err.find("not an HDF5 file") != std::string::npos);
  r = dir.normdyn("plot " + run.string() + " -o " + (dir.dir() / "p").string());
  BOOST_TEST(r.exit_code == 2);  // not analyzed yet
  BOOST_TEST(r.err.find("normdyn analyze") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(theorem_4_2_study) {
  Scratch dir;
  const fs::path out = dir.dir() / "study.json";
  const Result r = dir.normdyn("study theorem-4.2 --n 32,128 --d 8,64 --seeds 2 --threads 1 --json " + out.string());
  BOOST_TEST_MESSAGE(r.out);
  require_ok(r);
  const json j = read_json(out);
  BOOST_REQUIRE_EQUAL(j.at("rows").size(), 4u);
  for (const auto& row : j.at("rows")) {
    BOOST_TEST(row.at("ratio").get<double>() < 1.0);
    BOOST_TEST(row.at("ratio").get<double>() > 0.05);
    // Theorem 4.2's consequence: Post-LN moves as slowly as |A|; in the theorem's range Peri-LN and
    // nGPT move at speed of order 1.
    const auto& speed = row.at("mean_angular_speed");
    BOOST_TEST(speed.at("post").get<double>() < row.at("max_attention_max").get<double>());
    if (row.at("hypotheses").get<bool>()) {
      BOOST_TEST(speed.at("peri").get<double>() > 0.5);
      BOOST_TEST(speed.at("ngpt").get<double>() > 0.5);
      BOOST_TEST(speed.at("peri").get<double>() > 4.0 * speed.at("post").get<double>());
    }
  }
  BOOST_TEST(j.at("checks").at(0).at("ok").get<bool>());
  BOOST_TEST(j.at("qkv").get<std::string>() == "identity");

  // Gaussian Q, K, V scaled to |Q^T K| = |V| = 1: the theorem's other hypothesis; a different answer.
  const fs::path unit = dir.dir() / "unit.json";
  require_ok(dir.normdyn(
      "study theorem-4.2 --n 32,128 --d 8,64 --seeds 2 --threads 1 --qkv gaussian_unit_norm --json " + unit.string()));
  const json u = read_json(unit);
  BOOST_TEST(u.at("qkv").get<std::string>() == "gaussian_unit_norm");
  BOOST_REQUIRE_EQUAL(u.at("rows").size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST(u.at("rows").at(i).at("ratio").get<double>() < 1.0);
    BOOST_TEST(u.at("rows").at(i).at("max_attention_max").get<double>() !=
               j.at("rows").at(i).at("max_attention_max").get<double>());
  }
  const Result bad = dir.normdyn("study theorem-4.2 --n 32 --d 8 --qkv random");
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.err.find("--qkv") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(several_runs_one_report_each_and_a_table) {
  Scratch dir;
  fs::create_directories(dir.dir() / "runs");
  for (const char* name : {"a", "b"})
    require_ok(dir.normdyn("run " + (kSource / "data/configs/default.toml").string() + " -o " +
                           (dir.dir() / "runs" / (std::string(name) + ".h5")).string() +
                           " -q --threads 1 --set solver.t_end=2 --set output.samples=21"));
  // A quoted glob is expanded by normdyn; --json then names a folder.
  Result r = dir.normdyn("analyze '" + (dir.dir() / "runs").string() + "/*.h5' --no-write --json " +
                         (dir.dir() / "reports").string());
  require_ok(r);
  BOOST_TEST(fs::exists(dir.dir() / "reports" / "a.json"));
  BOOST_TEST(fs::exists(dir.dir() / "reports" / "b.json"));
  BOOST_TEST(r.out.find("==> ") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("file") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("a.h5     0  ok") != std::string::npos, r.out);
  // The exit code is the worst of the files': a file that is no run file is bad input (2), and the
  // other file is still analyzed.
  r = dir.normdyn("analyze " + (dir.dir() / "runs" / "a.h5").string() + " " +
                  (kSource / "data/configs/default.toml").string() + " --no-write -q");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.out.find("a.h5") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("default.toml") != std::string::npos, r.out);
  // --observables-file names one file: refused with several runs.
  r = dir.normdyn("analyze " + (dir.dir() / "runs" / "a.h5").string() + " " + (dir.dir() / "runs" / "b.h5").string() +
                  " --observables-file x.h5");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("--observables-file") != std::string::npos, r.err);
}
