// `normdyn plot` and `normdyn analyze` of the new observables end to end, through the binary, on
// small runs: PNG, PDF and SVG files that exist and are valid; no comparison from a single run; a
// warning when --labels contradicts a file's scheme; the paper's observables of a discrete Pre-LN
// run in the report; a mean-field run analyzed (modes, clusters, W1) and plotted; and the Python
// plot functions (python/normdyn/plots.py) checked by tests/app/check_plots.py.
#define BOOST_TEST_MODULE app_plots_cli
#include <boost/test/unit_test.hpp>

#include "cli_harness.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace std::string_literals;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kBinary = NORMDYN_BINARY;
const fs::path kSource = NORMDYN_SOURCE_DIR;

// The scratch folder and the command runner of cli_harness.hpp, under the names these tests use.
struct TempDir {
  normdyn::test::Scratch scratch;
  const fs::path& path = scratch.dir();
};

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) { return normdyn::test::Scratch::slurp(p); }

Result shell(const TempDir& dir, const std::string& command) {
  const normdyn::test::CommandResult c = dir.scratch.shell(command);
  return Result{c.exit_code, c.out, c.err};
}
Result run_normdyn(const TempDir& dir, const std::string& args) { return shell(dir, kBinary.string() + " " + args); }

void require_ok(const Result& r) {
  BOOST_TEST_INFO("stdout: " << r.out << "\nstderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.code, 0);
}

// The file exists and starts as its format says.
bool valid(const fs::path& p) {
  if (!fs::exists(p) || fs::file_size(p) < 1000) return false;
  const std::string head = slurp(p).substr(0, 400);
  const std::string ext = p.extension().string();
  if (ext == ".png") return head.substr(1, 3) == "PNG";
  if (ext == ".pdf") return head.rfind("%PDF", 0) == 0;
  if (ext == ".svg") return head.find("<svg") != std::string::npos || head.find("<?xml") == 0;
  return false;
}

const std::string kParticles = " --set model.n=12 --set model.d=3 --set model.beta=2 --set solver.t_end=8"
                               " --set output.samples=41 -q --threads 1";

}  // namespace

BOOST_AUTO_TEST_CASE(formats_single_run_and_label_warning) {
  TempDir dir;
  const fs::path a = dir.path / "a.h5", b = dir.path / "b.h5";
  const std::string config = (kSource / "data/configs/default.toml").string();
  require_ok(run_normdyn(dir, "run " + config + " -o " + a.string() + kParticles));
  require_ok(run_normdyn(dir, "run " + config + " -o " + b.string() + kParticles + " --set model.scheme=peri"));
  require_ok(run_normdyn(dir, "analyze -q " + a.string()));
  require_ok(run_normdyn(dir, "analyze -q " + b.string()));

  const fs::path one = dir.path / "one";
  require_ok(run_normdyn(dir, "plot " + a.string() + " -o " + one.string() + " --format png --format pdf --format svg --log-cos"));
  for (const char* kind : {"overview", "decay", "heatmap", "tokens", "trajectory"})
    for (const char* ext : {".png", ".pdf", ".svg"}) {
      const fs::path p = one / ("a_"s + kind + ext);
      BOOST_TEST_INFO(p);
      BOOST_TEST(valid(p));
    }
  BOOST_TEST(!fs::exists(one / "compare.png"));

  // Two runs: a comparison; a label naming the wrong scheme is warned about.
  const fs::path two = dir.path / "two";
  const Result r = run_normdyn(dir, "plot " + a.string() + " " + b.string() + " --kind compare --labels post,post -o " +
                                        two.string());
  require_ok(r);
  BOOST_TEST(valid(two / "compare.png"));
  BOOST_TEST(r.err.find("warning: label \"post\" names post but " + b.string() + " is a peri run") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(discrete_pre_ln_report_has_the_paper_observables) {
  TempDir dir;
  const fs::path run = dir.path / "pre.h5", report = dir.path / "pre.json", config = dir.path / "discrete.toml";
  std::ofstream(config) << "[model]\nscheme = \"pre\"\nn = 12\nd = 3\nbeta = 2.0\n[init]\nkind = \"gaussian\"\nseed = 1\n"
                           "[solver]\nmethod = \"discrete\"\ndt = 0.5\nt_end = 40.0\n[output]\nsamples = 41\n";
  require_ok(run_normdyn(dir, "run " + config.string() + " -o " + run.string() + " -q --threads 1"));
  require_ok(run_normdyn(dir, "analyze -q " + run.string() + " --json " + report.string()));
  const json j = json::parse(slurp(report));
  const json& t = j.at("trajectory");
  // 40 frames of 2 layers each: the angle per layer is positive and below π.
  BOOST_TEST(t.at("layer_angle").at("last").get<double>() > 0.0);
  BOOST_TEST(t.at("layer_angle").at("mean").get<double>() < 3.2);
  BOOST_TEST(t.at("mean_cosine").at("last").get<double>() > t.at("mean_cosine").at("first").get<double>());
  // Pre-LN radii grow like t: exponent within 10 % of 1 unless the fit names its problem.
  const json& g = t.at("radius_growth");
  if (g.at("problem").is_null()) BOOST_TEST(std::abs(g.at("exponent").get<double>() - 1.0) < 0.1);
  BOOST_TEST(t.at("clock").at("clock_median_final").get<double>() > 0.0);
  BOOST_TEST(t.at("clock").at("clock_median_final").get<double>() < 40.0);  // slower than Post-LN's clock
  BOOST_TEST(!t.at("clock").at("verdict").get<std::string>().empty());
}

BOOST_AUTO_TEST_CASE(meanfield_run_is_analyzed_and_plotted) {
  TempDir dir;
  const fs::path run = dir.path / "mf.h5", report = dir.path / "mf.json";
  require_ok(run_normdyn(dir, "run " + (kSource / "data/configs/meanfield.toml").string() + " -o " + run.string() +
                                  " -q --set meanfield.grid=256 --set solver.t_end=30 --set output.samples=61"));
  const Result r = run_normdyn(dir, "analyze " + run.string() + " --json " + report.string());
  require_ok(r);
  BOOST_TEST(r.out.find("clusters") != std::string::npos);
  const json j = json::parse(slurp(report));
  BOOST_TEST(j.at("schema") == "normdyn.analysis.meanfield/1");
  // Five bumps on a nearly uniform density: clusters form (the README's figure shows five).
  const int clusters = j.at("final").at("cluster_count").get<int>();
  BOOST_TEST(clusters >= 3);
  BOOST_TEST(clusters <= 6);
  BOOST_TEST(j.at("final").at("w1_to_uniform").get<double>() > 0.0);
  BOOST_TEST(j.at("modes").size() == 8u);
  BOOST_TEST(j.at("modes").at(0).at("theory_rate").is_number());
  const fs::path plots = dir.path / "p";
  require_ok(run_normdyn(dir, "plot " + run.string() + " -o " + plots.string()));
  BOOST_TEST(valid(plots / "mf_meanfield.png"));
  require_ok(shell(dir, "/usr/bin/python3 " + (kSource / "scripts/plot_meanfield.py").string() + " " + run.string() + " " +
                            (dir.path / "mf.svg").string()));
  BOOST_TEST(valid(dir.path / "mf.svg"));
}

BOOST_AUTO_TEST_CASE(python_plot_functions) {
  TempDir dir;
  const fs::path run = dir.path / "c.h5";
  require_ok(run_normdyn(dir, "run " + (kSource / "data/configs/default.toml").string() + " -o " + run.string() + kParticles));
  require_ok(run_normdyn(dir, "analyze -q " + run.string()));
  const Result r = shell(dir, "/usr/bin/python3 " + (kSource / "tests/app/check_plots.py").string() + " " + run.string());
  BOOST_TEST_INFO(r.out << r.err);
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out.find("check_plots: ok") != std::string::npos);
}
