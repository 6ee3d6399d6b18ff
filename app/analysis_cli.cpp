#include "analysis_cli.hpp"

#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "analyze.hpp"
#include "normdyn/errors.hpp"
#include "plot.hpp"
#include "reproduce.hpp"
#include "study.hpp"

namespace normdyn::app {
namespace {

// "T0:T1" → window; either side may be empty (open).
analysis::TimeWindow parse_window(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw InputError("--fit-window", "expected T0:T1, got \"" + text + "\"");
  auto parse = [&](const std::string& part, double fallback) {
    if (part.empty()) return fallback;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(part.c_str(), &end);
    if (errno != 0 || end != part.c_str() + part.size() || !std::isfinite(v))
      throw InputError("--fit-window", "\"" + part + "\" is not a number");
    return v;
  };
  analysis::TimeWindow w{parse(text.substr(0, colon), 0.0),
                         parse(text.substr(colon + 1), std::numeric_limits<double>::infinity())};
  if (!(w.t_end > w.t_start)) throw InputError("--fit-window", "needs T0 < T1, got \"" + text + "\"");
  return w;
}

// The run files named on the command line, with quoted glob patterns expanded (for shells and
// job scripts that pass them through).
std::vector<std::filesystem::path> expand_runs(const std::vector<std::string>& words) {
  std::vector<std::filesystem::path> out;
  for (const std::string& w : words) {
    if (w.find_first_of("*?[") == std::string::npos) {
      std::error_code ec;
      if (!std::filesystem::exists(w, ec)) throw InputError("analyze", w + ": no such run file");
      if (!std::filesystem::is_regular_file(w, ec)) throw InputError("analyze", w + ": not a regular file");
      out.emplace_back(w);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(w.c_str(), 0, nullptr, &g);
    if (rc == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    globfree(&g);
    if (rc != 0) throw InputError("analyze", "no run file matches " + w);
  }
  return out;
}

}  // namespace

struct AnalysisCli::State {
  CLI::App* analyze = nullptr;
  CLI::App* plot = nullptr;
  CLI::App* study = nullptr;
  CLI::App* study_attention = nullptr;
  CLI::App* study_symmetric = nullptr;
  CLI::App* reproduce = nullptr;
  ReproduceRequest reproduce_request;
  std::string reproduce_dir;

  AnalyzeRequest analyze_request;
  std::vector<std::string> runs;
  std::string json, observables_file, quantity = "one_minus_mean_cosine", law = "auto", window;
  bool no_write = false, no_correction = false, no_velocity = false;
  int threads = -1;

  PlotRequest plot_request;
  std::string plot_output;

  AttentionStudyRequest study_request;
  std::string study_json;

  studies::SymmetricStudyRequest symmetric_request;
  std::string symmetric_json;
  bool symmetric_force = false;
};

AnalysisCli::AnalysisCli(CLI::App& cli) : state_(std::make_unique<State>()) {
  State& s = *state_;
  AnalyzeRequest& a = s.analyze_request;
  AnalyzeOptions& o = a.options;

  s.analyze = cli.add_subcommand("analyze", "Observables, clusters, plateaus, decay rate and theorem checks of a run");
  s.analyze->add_option("runs", s.runs, "HDF5 run files (quoted glob patterns are expanded)")->required();
  s.analyze->add_option("--json", s.json,
                        "write the report as JSON to this file (with several runs: into this folder, one RUN.json each)");
  s.analyze->add_option("--observables-file", s.observables_file,
                        "write the observables into this file (default: RUN.observables.h5 beside the run; "
                        "never the run file or another run)");
  s.analyze->add_flag("--no-write", s.no_write, "do not write observables anywhere");
  s.analyze->add_option("--cluster-epsilon", o.clusters.epsilon,
                        "join two tokens into a cluster when their cosine exceeds 1 - epsilon")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 2.0));
  s.analyze->add_option("--rank-threshold", o.rank_threshold,
                        "effective rank: count eigenvalues of the second-moment matrix above this fraction of its trace")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  s.analyze->add_option("--plateau-energy-tolerance", o.plateaus.energy_tolerance,
                        "plateau: max E / min E <= 1 + tolerance")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s.analyze->add_option("--plateau-min-frames", o.plateaus.min_frames, "plateau: at least this many frames")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  s.analyze->add_option("--plateau-min-duration", o.plateaus.min_duration, "plateau: at least this long in t")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  s.analyze->add_option("--plateau-min-log-duration", o.plateaus.min_log_duration,
                        "plateau: ln(t_end / t_start) at least this (metastable states live on geometric times)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  s.analyze->add_option("--quantity", s.quantity, "series whose decay is fitted")
      ->capture_default_str()
      ->check(CLI::IsMember(rate_quantity_names()));
  s.analyze->add_option("--law", s.law, "decay law: auto (steadiest local exponent), exponential, power, stretched_exponential")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "exponential", "power", "stretched_exponential"}));
  s.analyze->add_option("--fit-window", s.window, "fit window T0:T1 (either side may be empty; default: automatic)");
  s.analyze->add_option("--fit-fraction", o.rate.late_fraction,
                        "with a given law that has no steady stretch: this later fraction of the usable time range")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  s.analyze->add_option("--fit-floor", o.rate.floor, "values at or below this are not fitted (round-off)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  s.analyze->add_flag("--no-correction", s.no_correction, "report the plain fit, without fitting a shift of the time origin");
  s.analyze->add_option("--energy-tolerance", o.checks.energy_tolerance,
                        "energy check: largest allowed relative decrease between frames")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  s.analyze->add_flag("--no-velocity", s.no_velocity,
                      "do not rebuild the run's dynamics: angular speed from finite differences, no <theta_j, A_j>");
  s.analyze->add_option("--threads", s.threads,
                        "threads of the attention kernel (0: all cores; default: 1 for small runs, else the run's)")
      ->check(CLI::Range(0, 4096));
  s.analyze->add_option("--modes", o.density.max_mode, "mean-field runs: Fourier modes k = 1..K of the density")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  s.analyze->add_option("--density-cluster-level", o.density.cluster_level,
                        "mean-field runs: a cluster is an arc where the density exceeds this x uniform")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e12));
  s.analyze->add_flag("--fail-on-check", a.fail_on_check, "exit with code 1 if a theorem check fails");
  s.analyze->add_flag("-q,--quiet", a.quiet, "no report on stdout");

  PlotRequest& p = s.plot_request;
  s.plot = cli.add_subcommand("plot", "Figures (PNG, PDF, SVG) of run files and their observables (runs `normdyn analyze` output)");
  s.plot->add_option("runs", p.runs, "HDF5 run files (analyze them first)")->required()->check(CLI::ExistingFile);
  s.plot->add_option("-o,--output-dir", s.plot_output, "directory of the figures (default: RUN_plots beside the first run)");
  s.plot->add_option("--kind", p.kinds,
                     "overview | decay | heatmap | tokens | trajectory | compare (repeatable; default: all)")
      ->check(CLI::IsMember({"overview", "decay", "heatmap", "tokens", "trajectory", "compare", "all"}));
  s.plot->add_option("--format", p.formats, "png | pdf | svg (repeatable; default: png)")
      ->check(CLI::IsMember({"png", "pdf", "svg"}));
  s.plot->add_flag("--log-cos", p.log_cos, "heatmaps of log(1 - cos) instead of cos");
  s.plot->add_option("--frames", p.frames, "frames of the heatmaps and token snapshots (negative: from the end)")
      ->delimiter(',');
  s.plot->add_option("--labels", p.labels, "legend labels of the runs, in order")->delimiter(',');
  s.plot->add_flag("--log-time", p.log_time, "logarithmic time axis");

  AttentionStudyRequest& st = s.study_request;
  s.study = cli.add_subcommand("study", "Studies over many configurations");
  s.study->require_subcommand(1);
  s.study_attention = s.study->add_subcommand(
      "theorem-4.2", "max_j |A_j(0)| over a grid of (n, d) from uniform starts against sqrt(log n/n) + log n/d");
  s.study_attention->add_option("--n", st.n, "token counts")->delimiter(',')->capture_default_str()->check(CLI::Range(2, 1 << 20));
  s.study_attention->add_option("--d", st.d, "dimensions")->delimiter(',')->capture_default_str()->check(CLI::Range(2, 1 << 20));
  s.study_attention->add_option("--seeds", st.seeds, "uniform starts per (n, d)")->capture_default_str()->check(CLI::Range(1, 10000));
  s.study_attention->add_option("--seed", st.first_seed, "first seed")->capture_default_str();
  s.study_attention->add_option("--beta", st.beta, "inverse temperature (the theorem: 1)")->capture_default_str()->check(CLI::PositiveNumber);
  s.study_attention->add_option("--constant", st.constant, "the C of the check")->capture_default_str()->check(CLI::PositiveNumber);
  s.study_attention
      ->add_option_function<std::string>(
          "--qkv", [&st](const std::string& v) { st.unit_norm_qkv = v == "gaussian_unit_norm"; },
          "attention matrices: identity | gaussian_unit_norm (Gaussian, scaled to |Q^T K| = |V| = 1, from each seed)")
      ->check(CLI::IsMember({"identity", "gaussian_unit_norm"}));
  s.study_attention->add_option("--threads", st.threads, "threads of the attention kernel (0: all)")->check(CLI::Range(0, 4096));
  s.study_attention->add_option("--json", s.study_json, "write the table as JSON to this file");

  studies::SymmetricStudyRequest& sy = s.symmetric_request;
  s.study_symmetric = s.study->add_subcommand(
      "symmetric", "Theorem 4.1: the reduced scalar ODE of the orthonormal start (gamma, dgamma/dt, r) for every scheme");
  s.study_symmetric->add_option("--n", sy.n, "number of tokens (d >= n is implied)")->required();
  s.study_symmetric->add_option("--beta", sy.beta, "inverse temperature")->required();
  s.study_symmetric->add_option("--t-end", sy.t_end, "horizon")->required();
  CLI::Option* linear = s.study_symmetric->add_option("--samples", sy.samples, "output intervals (times 0, T/K, ..., T)")->capture_default_str();
  s.study_symmetric
      ->add_option_function<std::vector<double>>(
          "--log-times",
          [&sy](const std::vector<double>& v) {
            sy.log_t0 = v[0];
            sy.log_samples = v[1] >= 2 && v[1] <= 1e7 && v[1] == std::floor(v[1]) ? int(v[1]) : 1;
          },
          "T0 K: output times 0, then K log-spaced times from T0 to --t-end (instead of --samples)")
      ->expected(2)
      ->excludes(linear);
  s.study_symmetric->add_option("--r0", sy.r0, "initial radius")->capture_default_str();
  s.study_symmetric->add_option("--alpha", sy.alpha, "nGPT's alpha (constant)")->capture_default_str();
  s.study_symmetric->add_option("--tau", sy.tau, "Mix-LN's switch time")->capture_default_str();
  s.study_symmetric->add_option("--step", sy.step, "largest RK4 step")->capture_default_str()->check(CLI::PositiveNumber);
  s.study_symmetric->add_option("--json", s.symmetric_json, "write the trajectories as JSON to this file");
  s.study_symmetric->add_flag("--force", s.symmetric_force, "replace an existing JSON file");

  ReproduceRequest& rp = s.reproduce_request;
  s.reproduce = cli.add_subcommand(
      "reproduce", "The paper's statements measured against theory: DIR/reproduction.md, reproduction.json and figures");
  s.reproduce->add_flag("--quick", rp.quick, "reduced sizes (about a minute)");
  s.reproduce->add_option("-o,--output-dir", s.reproduce_dir, "folder of the report (default: reproduction)");
  s.reproduce->add_flag("--force", rp.force, "replace an existing report in the folder");
  s.reproduce->add_option("--threads", rp.threads, "threads of the attention kernel (0: all)")->check(CLI::Range(0, 4096));
}

AnalysisCli::~AnalysisCli() = default;

bool AnalysisCli::parsed() const {
  return state_->analyze->parsed() || state_->plot->parsed() || state_->study->parsed() || state_->reproduce->parsed();
}

// Several runs: one report per file, then a table; the exit code is the worst of the files'. A
// file that fails (bad or damaged) is reported and the others are still analyzed.
int AnalysisCli::analyze_many(AnalyzeRequest request, const std::vector<std::filesystem::path>& runs) {
  if (request.observables_file)
    throw InputError("--observables-file", "names one file; with several runs each gets its own (leave it out)");
  std::optional<std::filesystem::path> json_dir = request.json;
  if (json_dir) {
    if (std::filesystem::exists(*json_dir) && !std::filesystem::is_directory(*json_dir))
      throw InputError("--json", json_dir->string() + " is not a folder (with several runs --json names a folder)");
    std::filesystem::create_directories(*json_dir);
  }
  struct Row {
    std::string file;
    int code = 0;
    std::string outcome;
  };
  std::vector<Row> rows;
  int worst = 0;
  for (const auto& run : runs) {
    request.run_file = run;
    if (json_dir) request.json = *json_dir / (run.stem().string() + ".json");
    if (!request.quiet) std::printf("==> %s <==\n", run.string().c_str());
    std::fflush(stdout);
    Row row{run.string(), 0, "ok"};
    try {
      row.code = analyze_command(request);
      if (row.code != 0) row.outcome = "a theorem check failed";
    } catch (const InputError& e) {
      row = {run.string(), static_cast<int>(ExitCode::bad_input), std::string("error: ") + e.what()};
    } catch (const IoError& e) {
      row = {run.string(), static_cast<int>(ExitCode::io_failure), std::string("error: ") + e.what()};
    }
    if (row.code == static_cast<int>(ExitCode::bad_input) || row.code == static_cast<int>(ExitCode::io_failure))
      std::fprintf(stderr, "normdyn: %s\n", row.outcome.c_str());
    worst = std::max(worst, row.code);
    rows.push_back(std::move(row));
    if (!request.quiet) std::printf("\n");
  }
  std::size_t width = 4;
  for (const Row& r : rows) width = std::max(width, r.file.size());
  std::printf("%-*s  exit  result\n", static_cast<int>(width), "file");
  for (const Row& r : rows) std::printf("%-*s  %4d  %s\n", static_cast<int>(width), r.file.c_str(), r.code, r.outcome.c_str());
  return worst;
}

int AnalysisCli::run() {
  State& s = *state_;
  if (s.analyze->parsed()) {
    AnalyzeRequest request = s.analyze_request;
    if (!s.json.empty()) request.json = s.json;
    if (!s.observables_file.empty()) request.observables_file = s.observables_file;
    request.write_observables = !s.no_write;
    request.options.quantity = *rate_quantity_from_string(s.quantity);
    if (s.law != "auto") request.options.rate.law = analysis::decay_law_from_string(s.law);
    if (!s.window.empty()) request.options.rate.window = parse_window(s.window);
    request.options.rate.correction = !s.no_correction;
    request.options.use_velocity = !s.no_velocity;
    if (s.threads >= 0) request.options.threads = s.threads;
    const std::vector<std::filesystem::path> runs = expand_runs(s.runs);
    if (runs.size() == 1) {
      request.run_file = runs.front();
      return analyze_command(request);
    }
    return analyze_many(request, runs);
  }
  if (s.plot->parsed()) {
    PlotRequest request = s.plot_request;
    if (!s.plot_output.empty()) request.output_dir = s.plot_output;
    return plot_command(request);
  }
  if (s.study_attention->parsed()) {
    AttentionStudyRequest request = s.study_request;
    if (!s.study_json.empty()) request.json = s.study_json;
    return attention_study_command(request);
  }
  if (s.reproduce->parsed()) {
    ReproduceRequest request = s.reproduce_request;
    if (!s.reproduce_dir.empty()) request.output_dir = s.reproduce_dir;
    return reproduce_command(request);
  }
  if (s.study_symmetric->parsed()) {
    std::optional<std::filesystem::path> json;
    if (!s.symmetric_json.empty()) json = s.symmetric_json;
    return symmetric_study_command(s.symmetric_request, json, s.symmetric_force);
  }
  return 0;
}

}  // namespace normdyn::app
