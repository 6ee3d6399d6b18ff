// `normdyn plot` and `normdyn analyze` of the new observables end to end, through the binary, on
// small runs: PNG, PDF and SVG files that exist and are valid; no comparison from a single run; a
// warning when --labels contradicts a file's scheme; the paper's observables of a discrete Pre-LN
// run in the report; a mean-field run analyzed (modes, clusters, W1) and plotted; and the Python
// plot functions (python/normdyn/plots.py) checked by tests/app/check_plots.py; `normdyn animate` (GIF
// and MP4 of particles on the circle and the sphere and of a mean-field density); the phase diagram
// of an ensemble file; the warnings a -q run and a -q analysis still print; `normdyn help` of every
// command, wrapped to 80 columns with an example.
#define BOOST_TEST_MODULE app_plots_cli
#include <boost/test/unit_test.hpp>

#include "cli_harness.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
  if (ext == ".gif") return head.rfind("GIF8", 0) == 0;
  if (ext == ".mp4") return head.substr(4, 4) == "ftyp";
  return false;
}

const std::string kParticles =
    " --set model.n=12 --set model.d=3 --set model.beta=2 --set solver.t_end=8"
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
  require_ok(run_normdyn(
      dir, "plot " + a.string() + " -o " + one.string() + " --format png --format pdf --format svg --log-cos"));
  for (const char* kind : {"overview", "decay", "heatmap", "tokens", "trajectory"})
    for (const char* ext : {".png", ".pdf", ".svg"}) {
      const fs::path p = one / ("a_"s + kind + ext);
      BOOST_TEST_INFO(p);
      BOOST_TEST(valid(p));
    }
  BOOST_TEST(!fs::exists(one / "compare.png"));

  // Two runs: a comparison; a label naming the wrong scheme is warned about.
  const fs::path two = dir.path / "two";
  const Result r = run_normdyn(
      dir, "plot " + a.string() + " " + b.string() + " --kind compare --labels post,post -o " + two.string());
  require_ok(r);
  BOOST_TEST(valid(two / "compare.png"));
  BOOST_TEST(r.err.find("warning: label \"post\" names post but " + b.string() + " is a peri run") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(discrete_pre_ln_report_has_the_paper_observables) {
  TempDir dir;
  const fs::path run = dir.path / "pre.h5", report = dir.path / "pre.json", config = dir.path / "discrete.toml";
  std::ofstream(config)
      << "[model]\nscheme = \"pre\"\nn = 12\nd = 3\nbeta = 2.0\n[init]\nkind = \"gaussian\"\nseed = 1\n"
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
  const Result quiet_run =
      run_normdyn(dir, "run " + (kSource / "data/configs/meanfield.toml").string() + " -o " + run.string() +
                           " -q --set meanfield.grid=256 --set solver.t_end=30 --set output.samples=61");
  require_ok(quiet_run);
  // M = 256 is too coarse for these clusters: -q still names the doubt, and the file lists it.
  BOOST_TEST(quiet_run.err.find("normdyn: warning under_resolved: clusters narrower than") != std::string::npos,
             quiet_run.err);
  BOOST_TEST(std::count(quiet_run.err.begin(), quiet_run.err.end(), '\n') == 1);
  const Result attribute = shell(
      dir, "/usr/bin/python3 -c \"import h5py,sys; print(h5py.File(sys.argv[1])['summary'].attrs['warnings'])\" " +
               run.string());
  require_ok(attribute);
  BOOST_TEST(attribute.out.rfind("under_resolved: clusters narrower than", 0) == 0, attribute.out);
  const Result quiet_analysis = run_normdyn(dir, "analyze -q --no-write " + run.string());
  require_ok(quiet_analysis);
  BOOST_TEST(quiet_analysis.out.empty());
  BOOST_TEST(quiet_analysis.err.find("normdyn: warning under_resolved (" + run.string() + "): ") != std::string::npos,
             quiet_analysis.err);
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
  // The kind the plot page lists for mean-field runs.
  require_ok(
      run_normdyn(dir, "plot " + run.string() + " --kind meanfield --format pdf -o " + (dir.path / "k").string()));
  BOOST_TEST(valid(dir.path / "k" / "mf_meanfield.pdf"));
  // A mean-field density animated; a particle kind asked of it draws nothing and says so.
  require_ok(
      run_normdyn(dir, "animate " + run.string() + " -o " + (dir.path / "mf.gif").string() + " --max-frames 8 -q"));
  BOOST_TEST(valid(dir.path / "mf.gif"));
  const Result none = run_normdyn(dir, "plot " + run.string() + " --kind decay -o " + (dir.path / "none").string());
  require_ok(none);
  BOOST_TEST(none.err.find("nothing to draw for mean-field runs") != std::string::npos, none.err);
  require_ok(shell(dir, "/usr/bin/python3 " + (kSource / "scripts/plot_meanfield.py").string() + " " + run.string() +
                            " " + (dir.path / "mf.svg").string()));
  BOOST_TEST(valid(dir.path / "mf.svg"));
}

BOOST_AUTO_TEST_CASE(python_plot_functions) {
  TempDir dir;
  const fs::path run = dir.path / "c.h5";
  require_ok(
      run_normdyn(dir, "run " + (kSource / "data/configs/default.toml").string() + " -o " + run.string() + kParticles));
  require_ok(run_normdyn(dir, "analyze -q " + run.string()));
  const Result r =
      shell(dir, "/usr/bin/python3 " + (kSource / "tests/app/check_plots.py").string() + " " + run.string());
  BOOST_TEST_INFO(r.out << r.err);
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out.find("check_plots: ok") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(animations_of_tokens) {
  TempDir dir;
  const std::string config = (kSource / "data/configs/default.toml").string();
  const fs::path circle = dir.path / "circle.h5", sphere = dir.path / "sphere.h5";
  require_ok(run_normdyn(dir, "run " + config + " -o " + circle.string() + kParticles + " --set model.d=2"));
  require_ok(run_normdyn(dir, "run " + config + " -o " + sphere.string() + kParticles));
  const fs::path gif = dir.path / "circle.gif", mp4 = dir.path / "sphere.mp4";
  require_ok(run_normdyn(dir, "animate " + circle.string() + " -o " + gif.string() + " --max-frames 12 --fps 6 -q"));
  BOOST_TEST(valid(gif));
  require_ok(run_normdyn(
      dir, "animate " + sphere.string() + " -o " + mp4.string() + " --max-frames 12 --width 2 --dpi 80 -q"));
  BOOST_TEST(valid(mp4));
  // An existing output is refused (untouched) without --force; a wrong extension names the flag.
  const std::string before = slurp(gif);
  const Result again = run_normdyn(dir, "animate " + circle.string() + " -o " + gif.string() + " -q");
  BOOST_TEST(again.code == 2);
  BOOST_TEST(again.err.find("--output") != std::string::npos, again.err);
  BOOST_TEST(slurp(gif) == before);
  require_ok(run_normdyn(dir, "animate " + circle.string() + " -o " + gif.string() + " --max-frames 5 --force -q"));
  BOOST_TEST(slurp(gif) != before);
  const Result avi = run_normdyn(dir, "animate " + circle.string() + " -o " + (dir.path / "x.avi").string());
  BOOST_TEST(avi.code == 2);
  BOOST_TEST(avi.err.find("--output") != std::string::npos, avi.err);
  const Result width =
      run_normdyn(dir, "animate " + circle.string() + " -o " + (dir.path / "w.gif").string() + " --width half");
  BOOST_TEST(width.code == 2);
  BOOST_TEST(width.err.find("width") != std::string::npos, width.err);
  BOOST_TEST(!fs::exists(dir.path / "w.gif"));
  for (const auto& entry : fs::directory_iterator(dir.path))  // no half-written staging file left
    BOOST_TEST(entry.path().filename().string().find(".partial") == std::string::npos, entry.path());
}

BOOST_AUTO_TEST_CASE(phase_diagram_of_an_ensemble_file) {
  TempDir dir;
  const fs::path sweep = dir.path / "beta.toml", base = dir.path / "base.toml", ensemble = dir.path / "beta.h5";
  std::ofstream(base) << "[model]\nn = 8\nd = 2\n[solver]\nt_end = 10.0\n[output]\nsamples = 21\n";
  std::ofstream(sweep) << "base = \"base.toml\"\n[axes]\n\"model.beta\" = [1.0, 4.0]\n\"init.seed\" = [1, 2, 3]\n"
                          "[ensemble]\nover = \"init.seed\"\n";
  require_ok(run_normdyn(dir, "ensemble " + sweep.string() + " -o " + ensemble.string() + " -q --threads 1"));
  require_ok(run_normdyn(dir, "plot " + ensemble.string() + " --kind phase -o " + (dir.path / "p").string()));
  BOOST_TEST(valid(dir.path / "p" / "beta_phase.png"));
  const Result sweep_plots =
      shell(dir, "/usr/bin/python3 " + (kSource / "scripts/plot_sweep.py").string() + " " + ensemble.string());
  require_ok(sweep_plots);
  for (const char* name : {"clusters", "sync_probability", "phase_diagram"})
    BOOST_TEST(valid(dir.path / "beta_plots" / (name + ".png"s)));
}

BOOST_AUTO_TEST_CASE(help_of_every_command) {
  TempDir dir;
  const std::vector<std::string> commands{"run",
                                          "list-schemes",
                                          "list-attention",
                                          "config-reference",
                                          "verify",
                                          "analyze",
                                          "plot",
                                          "animate",
                                          "study",
                                          "study theorem-4.2",
                                          "study symmetric",
                                          "study equiangular",
                                          "reproduce",
                                          "sweep",
                                          "ensemble",
                                          "help"};
  const Result top = run_normdyn(dir, "help");
  require_ok(top);
  for (const std::string& c : commands) {
    const Result r = run_normdyn(dir, "help " + c);
    BOOST_TEST_INFO("normdyn help " << c);
    require_ok(r);
    BOOST_TEST(r.out.find("Usage: ") != std::string::npos);
    BOOST_TEST(r.out.find("Example:\n  normdyn " + c) != std::string::npos, r.out);
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) BOOST_TEST(line.size() <= 80u, line);
    if (c.find(' ') == std::string::npos) BOOST_TEST(top.out.find("  " + c) != std::string::npos);
  }
  // The same text as --help; an unknown subcommand is named with the closest one.
  BOOST_TEST(run_normdyn(dir, "help study symmetric").out == run_normdyn(dir, "study symmetric --help").out);
  const Result bad = run_normdyn(dir, "help study symetric");
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err.find("unknown command 'study symetric'; did you mean 'symmetric'?") != std::string::npos, bad.err);
}
