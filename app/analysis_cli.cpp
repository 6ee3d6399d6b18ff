#include "analysis_cli.hpp"

#include <glob.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>

#include "analyze.hpp"
#include "normdyn/errors.hpp"
#include "plot.hpp"
#include "reproduce.hpp"
#include "study.hpp"

namespace normdyn::app {
namespace {

std::string flag_type_name(OptionType type) {
  switch (type) {
    case OptionType::real:
      return "FLOAT";
    case OptionType::integer:
      return "INT";
    case OptionType::choice:
      return "NAME";
    case OptionType::window:
      return "T0:T1";
    case OptionType::path:
      return "PATH";
    case OptionType::flag:
      return "";
  }
  return "TEXT";
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
  CLI::App* animate = nullptr;
  AnimateRequest animate_request;
  CLI::App* study = nullptr;
  CLI::App* study_attention = nullptr;
  CLI::App* study_symmetric = nullptr;
  CLI::App* study_equiangular = nullptr;
  CLI::App* reproduce = nullptr;
  ReproduceRequest reproduce_request;
  std::string reproduce_dir;

  // One entry per row of analyze_options(): what the command line gave.
  struct AnalyzeFlag {
    const AnalyzeOption* option = nullptr;
    CLI::Option* cli = nullptr;
    std::string text;
    bool on = false;
  };
  std::deque<AnalyzeFlag> analyze_flags;
  std::vector<std::string> runs;

  PlotRequest plot_request;
  std::string plot_output;

  AttentionStudyRequest study_request;
  std::string study_json;

  studies::SymmetricStudyRequest symmetric_request;
  std::string symmetric_json;
  bool symmetric_force = false;
  studies::EquiangularStudyRequest equiangular_request;
  std::string equiangular_json;
  bool equiangular_force = false;
};

AnalysisCli::AnalysisCli(CLI::App& cli) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.analyze = cli.add_subcommand("analyze", "Observables, clusters, plateaus, decay rate and theorem checks of a run");
  s.analyze->add_option("runs", s.runs, "HDF5 run files (quoted glob patterns are expanded)")->required();
  // The flags are the rows of the option table (analyze/options.hpp), as normdyn.analyze's keywords.
  for (const AnalyzeOption& o : analyze_options()) {
    State::AnalyzeFlag& f = s.analyze_flags.emplace_back();
    f.option = &o;
    const std::string names = (o.short_flag.empty() ? "" : std::string(o.short_flag) + ",") + option_flag(o);
    if (o.type == OptionType::flag)
      f.cli = s.analyze->add_flag(names, f.on, option_help(o));
    else
      f.cli = s.analyze->add_option(names, f.text, option_help(o))->type_name(flag_type_name(o.type));
  }

  PlotRequest& p = s.plot_request;
  s.plot = cli.add_subcommand(
      "plot", "Figures (PNG, PDF, SVG) of run files and their observables (runs `normdyn analyze` output)");
  s.plot->add_option("runs", p.runs, "HDF5 run files (analyze them first)")->required()->check(CLI::ExistingFile);
  s.plot->add_option("-o,--output-dir", s.plot_output,
                     "directory of the figures (default: RUN_plots beside the first run)");
  s.plot
      ->add_option("--kind", p.kinds,
                   "overview | decay | heatmap | tokens | trajectory | compare | meanfield | phase (repeatable; "
                   "default: all that apply to the files)")
      ->check(CLI::IsMember(
          {"overview", "decay", "heatmap", "tokens", "trajectory", "compare", "meanfield", "phase", "all"}));
  s.plot->add_option("--width", p.width, "column (3.4 in), page (7.0 in) or inches (default: each figure's own)");
  s.plot->add_option("--format", p.formats, "png | pdf | svg (repeatable; default: png)")
      ->check(CLI::IsMember({"png", "pdf", "svg"}));
  s.plot->add_flag("--log-cos", p.log_cos, "heatmaps of log(1 - cos) instead of cos");
  s.plot->add_option("--frames", p.frames, "frames of the heatmaps and token snapshots (negative: from the end)")
      ->delimiter(',');
  s.plot->add_option("--labels", p.labels, "legend labels of the runs, in order")->delimiter(',');
  s.plot->add_flag("--log-time", p.log_time, "logarithmic time axis");

  AnimateRequest& an = s.animate_request;
  s.animate = cli.add_subcommand(
      "animate",
      "Animation of a run over time (MP4 through ffmpeg, GIF through Pillow): tokens on the circle or "
      "the sphere, or a mean-field density");
  s.animate->add_option("run", an.run, "HDF5 run file (particles or mean field)")->required()->check(CLI::ExistingFile);
  s.animate->add_option("-o,--output", an.output, "the animation: OUT.mp4 or OUT.gif")->required();
  s.animate->add_option("--fps", an.fps, "frames per second")->capture_default_str()->check(CLI::Range(0.1, 120.0));
  s.animate->add_option("--max-frames", an.max_frames, "at most this many frames of the run, evenly spread")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  s.animate->add_option("--width", an.width, "column (3.4 in), page (7.0 in) or inches")->capture_default_str();
  s.animate->add_option("--dpi", an.dpi, "pixels per inch")->capture_default_str()->check(CLI::Range(20.0, 600.0));
  s.animate->add_flag("--force", an.force, "replace an existing output file");
  s.animate->add_flag("-q,--quiet", an.quiet, "no progress bar");

  add_study_commands(cli);

  ReproduceRequest& rp = s.reproduce_request;
  s.reproduce = cli.add_subcommand(
      "reproduce",
      "The paper's statements measured against theory: DIR/reproduction.md, reproduction.json and figures");
  s.reproduce->add_flag("--quick", rp.quick, "reduced sizes (about a minute)");
  s.reproduce->add_option("-o,--output-dir", s.reproduce_dir, "folder of the report (default: reproduction)");
  s.reproduce->add_flag("--force", rp.force, "replace an existing report in the folder");
  s.reproduce->add_option("--threads", rp.threads, "threads of the attention kernel (0: all)")
      ->check(CLI::Range(0, 4096));
  s.reproduce
      ->add_option("--only", rp.only,
                   "run these groups of rows only (repeat or separate by commas: renyi, noise-pitchfork, "
                   "theorem-4.1-slopes, ...; an unknown name lists them all)")
      ->delimiter(',');
}

// `normdyn study`: the studies over many configurations.
void AnalysisCli::add_study_commands(CLI::App& cli) {
  State& s = *state_;
  AttentionStudyRequest& st = s.study_request;
  s.study = cli.add_subcommand("study", "Studies over many configurations");
  s.study->require_subcommand(1);
  s.study_attention = s.study->add_subcommand(
      "theorem-4.2", "max_j |A_j(0)| over a grid of (n, d) from uniform starts against sqrt(log n/n) + log n/d");
  s.study_attention->add_option("--n", st.n, "token counts")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  s.study_attention->add_option("--d", st.d, "dimensions")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  s.study_attention->add_option("--seeds", st.seeds, "uniform starts per (n, d)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  s.study_attention->add_option("--seed", st.first_seed, "first seed")->capture_default_str();
  s.study_attention->add_option("--beta", st.beta, "inverse temperature (the theorem: 1)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s.study_attention->add_option("--constant", st.constant, "the C of the check")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s.study_attention
      ->add_option_function<std::string>(
          "--qkv", [&st](const std::string& v) { st.unit_norm_qkv = v == "gaussian_unit_norm"; },
          "attention matrices: identity | gaussian_unit_norm (Gaussian, scaled to |Q^T K| = |V| = 1, from each seed)")
      ->check(CLI::IsMember({"identity", "gaussian_unit_norm"}));
  s.study_attention->add_option("--threads", st.threads, "threads of the attention kernel (0: all)")
      ->check(CLI::Range(0, 4096));
  s.study_attention->add_option("--json", s.study_json, "write the table as JSON to this file");

  studies::SymmetricStudyRequest& sy = s.symmetric_request;
  s.study_symmetric = s.study->add_subcommand(
      "symmetric",
      "Theorem 4.1: the reduced scalar ODE of the orthonormal start (gamma, dgamma/dt, r) for every scheme");
  s.study_symmetric->add_option("--n", sy.n, "number of tokens (d >= n is implied)")->required();
  s.study_symmetric->add_option("--beta", sy.beta, "inverse temperature")->required();
  s.study_symmetric->add_option("--t-end", sy.t_end, "horizon")->required();
  CLI::Option* linear =
      s.study_symmetric->add_option("--samples", sy.samples, "output intervals (times 0, T/K, ..., T)")
          ->capture_default_str();
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
  s.study_symmetric->add_option("--step", sy.step, "largest RK4 step")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s.study_symmetric->add_option("--json", s.symmetric_json, "write the trajectories as JSON to this file");
  s.study_symmetric->add_flag("--force", s.symmetric_force, "replace an existing JSON file");

  studies::EquiangularStudyRequest& eq = s.equiangular_request;
  s.study_equiangular = s.study->add_subcommand(
      "equiangular",
      "The equiangular model: Post-LN particles from every pairwise cosine rho0 against rho' of the "
      "closed form (softmax or the uniform normalizer), and the rates 2 and 2 e^beta");
  s.study_equiangular->add_option("--n", eq.n, "number of tokens")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 16));
  s.study_equiangular->add_option("--d", eq.d, "dimension of the particles (0: n)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 16));
  s.study_equiangular->add_option("--beta", eq.beta, "inverse temperature >= 0")->capture_default_str();
  s.study_equiangular->add_option("--rho0", eq.rho0, "initial pairwise cosine, -1/(n-1) <= rho0 < 1")
      ->capture_default_str();
  s.study_equiangular->add_option("--normalizer", eq.normalizer, "softmax | uniform")
      ->capture_default_str()
      ->check(CLI::IsMember({"softmax", "uniform"}));
  s.study_equiangular->add_option("--t-end", eq.t_end, "horizon")->capture_default_str();
  s.study_equiangular->add_option("--samples", eq.samples, "output intervals (times 0, T/K, ..., T)")
      ->capture_default_str();
  s.study_equiangular->add_option("--threads", eq.threads, "threads of the attention kernel (0: all)")
      ->check(CLI::Range(0, 4096));
  s.study_equiangular->add_option("--json", s.equiangular_json, "write the trajectories as JSON to this file");
  s.study_equiangular->add_flag("--force", s.equiangular_force, "replace an existing JSON file");
}

AnalysisCli::~AnalysisCli() = default;

bool AnalysisCli::parsed() const {
  return state_->analyze->parsed() || state_->plot->parsed() || state_->animate->parsed() || state_->study->parsed() ||
         state_->reproduce->parsed();
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
  for (const Row& r : rows)
    std::printf("%-*s  %4d  %s\n", static_cast<int>(width), r.file.c_str(), r.code, r.outcome.c_str());
  return worst;
}

int AnalysisCli::run() {
  State& s = *state_;
  if (s.analyze->parsed()) {
    AnalyzeRequest request = AnalyzeRequest::command_line();
    // In the order of the table, whatever the order on the command line.
    for (const State::AnalyzeFlag& f : s.analyze_flags) {
      if (f.cli->count() == 0) continue;
      const std::string flag = option_flag(*f.option);
      const OptionValue value =
          f.option->type == OptionType::flag ? OptionValue(f.on) : parse_option_text(*f.option, f.text, flag);
      apply_option(request, *f.option, value, flag);
    }
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
  if (s.animate->parsed()) return animate_command(s.animate_request);
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
  if (s.study_equiangular->parsed()) {
    std::optional<std::filesystem::path> json;
    if (!s.equiangular_json.empty()) json = s.equiangular_json;
    return equiangular_study_command(s.equiangular_request, json, s.equiangular_force);
  }
  if (s.study_symmetric->parsed()) {
    std::optional<std::filesystem::path> json;
    if (!s.symmetric_json.empty()) json = s.symmetric_json;
    return symmetric_study_command(s.symmetric_request, json, s.symmetric_force);
  }
  return 0;
}

}  // namespace normdyn::app
