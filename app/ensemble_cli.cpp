#include "ensemble_cli.hpp"

#include <cstdio>

#include "normdyn/errors.hpp"
#include "normdyn/experiment/ensemble.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/sweep.hpp"
#include "progress.hpp"
#include "signals.hpp"

namespace normdyn::app {

struct EnsembleCli::State {
  CLI::App* command = nullptr;
  std::string sweep_file, output;
  int threads = 0;
  bool force = false, quiet = false, no_member_figures = false;
  std::string progress = "auto";
  std::vector<double> quantiles{0.1, 0.5, 0.9};
  std::vector<std::size_t> trajectories;
  std::vector<std::string> set;
};

EnsembleCli::EnsembleCli(CLI::App& cli) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.command = cli.add_subcommand(
      "ensemble",
      "Integrate every point of a sweep file in this process (members in parallel over threads, no run file per "
      "member) and write the ensemble statistics per group of the [ensemble] `over` axis into one HDF5 file");
  s.command->add_option("sweep", s.sweep_file, "sweep file (TOML): base = \"FILE\", [set], [axes], [ensemble]")
      ->required();
  s.command->add_option("-o,--output", s.output,
                        "the ensemble file (default: the sweep file's stem + .ensemble.h5); an existing one holding "
                        "this ensemble is left as it is, one holding a part of it (fewer seeds or axis values) is "
                        "extended, its members read back, not integrated again");
  s.command->add_option("--threads", s.threads, "members integrated at once (default 0: every core)")
      ->check(CLI::Range(0, 4096));
  s.command->add_option("--set", s.set,
                        "override a key at every point: KEY=VALUE, or KEY:=VALUE to also drop the keys of the base "
                        "that conflict with it (repeatable; after the file's [set]; stored in the file)");
  s.command->add_flag("--force", s.force,
                      "replace an existing output file (also one holding members this ensemble lacks) and start over");
  s.command->add_option("--quantiles", s.quantiles,
                        "quantile levels of 1 - mean cosine and mean radius (default 0.1 0.5 0.9)");
  s.command->add_flag("--no-member-figures", s.no_member_figures,
                      "leave out each member's figures per frame (the file is much smaller on large ensembles, but a "
                      "later call cannot return or extend it)");
  s.command->add_option("--trajectories", s.trajectories,
                        "point indices (sweep order, the last axis fastest) whose full trajectories are kept");
  s.command->add_flag("-q,--quiet", s.quiet, "no progress line and no summary line on success");
  s.command
      ->add_option("--progress", s.progress,
                   "auto: a progress line on a terminal only; plain: a line every few seconds (also when stderr is "
                   "not a terminal); none")
      ->check(CLI::IsMember({"auto", "plain", "none"}));
}

EnsembleCli::~EnsembleCli() = default;

bool EnsembleCli::parsed() const { return state_->command->parsed(); }

int EnsembleCli::run(Team& team, const std::string& command_line) {
  State& s = *state_;
  SweepSpec spec = load_sweep(s.sweep_file);
  add_overrides(spec, s.set);
  EnsembleOptions o;
  o.output = s.output.empty() ? std::filesystem::path(s.sweep_file).stem().string() + ".ensemble.h5" : s.output;
  o.force = s.force;
  o.inputs = {s.sweep_file};
  o.threads = s.threads;
  o.quantiles = s.quantiles;
  o.trajectories = s.trajectories;
  o.member_figures = !s.no_member_figures;
  o.command_line = command_line;
  o.set = s.set;
  o.team = &team;
  const bool root = team.is_root();
  o.output_name = "-o";
  o.force_name = "--force";
  install_interrupt_handlers();
  o.stop_requested = [] { return interrupt_requested() ? interrupt_signal() : 0; };
  ProgressLine::Style style = ProgressLine::Style::none;
  if (s.progress == "plain")
    style = ProgressLine::Style::plain;
  else if (s.progress == "auto" && !s.quiet && ProgressLine::stderr_is_terminal())
    style = ProgressLine::Style::line;
  if (!root) style = ProgressLine::Style::none;
  bool drawn = false;
  if (style != ProgressLine::Style::none) {
    o.progress_interval = style == ProgressLine::Style::line ? 0.2 : 5.0;
    o.progress = [style, &drawn](const EnsembleProgress& e) {
      if (e.finished && style == ProgressLine::Style::line) return;
      const std::size_t new_done = e.done - e.resumed;
      const double rate = e.seconds > 0.0 ? static_cast<double>(new_done) / e.seconds : 0.0;
      char eta[32] = "--";
      if (rate > 0.0 && new_done >= 4)
        std::snprintf(eta, sizeof eta, "%.0fs", static_cast<double>(e.total - e.done) / rate);
      std::fprintf(stderr,
                   style == ProgressLine::Style::line
                       ? "\r\033[Knormdyn: %zu / %zu members (%3.0f%%)  %.3g members/s  ETA %s"
                       : "normdyn: %zu / %zu members (%.1f%%), %.3g members/s, ETA %s\n",
                   e.done, e.total, 100.0 * static_cast<double>(e.done) / static_cast<double>(e.total), rate, eta);
      std::fflush(stderr);
      drawn = style == ProgressLine::Style::line;
    };
  }
  const EnsembleOutcome out = run_ensemble(spec, o);
  if (drawn) std::fprintf(stderr, "\r\033[K");
  const int code = static_cast<int>(exit_code(out.status));
  if (root && (!s.quiet || code != 0))
    std::fprintf(stderr, "normdyn: %s: %s, %zu integrated in %.3g s -> %s\n",
                 std::string(to_string(out.status)).c_str(), out.message.c_str(), out.integrated, out.seconds,
                 out.status == RunStatus::interrupted ? "(not written yet)" : o.output.c_str());
  return code;
}

}  // namespace normdyn::app
