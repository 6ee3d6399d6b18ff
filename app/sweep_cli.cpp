#include "sweep_cli.hpp"

#include "normdyn/errors.hpp"
#include "sweep.hpp"

namespace normdyn::app {

struct SweepCli::State {
  CLI::App* command = nullptr;
  SweepRequest request;
  std::string sweep_file, output_dir;
};

SweepCli::SweepCli(CLI::App& cli) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.command = cli.add_subcommand(
      "sweep",
      "Run every point of a sweep (a base configuration and axes over its keys) into a directory, several at once, "
      "and index and aggregate the results; under mpirun the runs are spread over the processes");
  s.command->add_option("sweep", s.sweep_file, "sweep file (TOML): base = \"FILE\", [set], [axes], [ensemble]")
      ->required();
  s.command->add_option("-o,--output", s.output_dir, "directory of the runs and the index (created if needed)")
      ->required();
  s.command
      ->add_option("-j,--jobs", s.request.jobs,
                   "runs at once on each process (default: the cores it may use / --threads; under mpirun "
                   "its binding and its share of the machine)")
      ->check(CLI::Range(1, 4096));
  s.command->add_option("--threads", s.request.threads, "attention-kernel threads of each run (default 1)")
      ->check(CLI::Range(1, 4096));
  s.command->add_option("--set", s.request.set,
                        "override a key at every point: KEY=VALUE, or KEY:=VALUE to also drop the keys of the base "
                        "that conflict with it (repeatable; after the file's [set])");
  s.command->add_flag("--force", s.request.force, "run every point again, replacing the files in the directory");
  s.command->add_flag("--list", s.request.list, "print the points and what would be done with each; run nothing");
  s.command->add_flag("--plot", s.request.plot,
                      "draw the ensemble figures afterwards (scripts/plot_sweep.py, PNGs in DIR/plots)");
  s.command->add_flag("-q,--quiet", s.request.quiet, "no line per finished run, no summary when all went well");
}

SweepCli::~SweepCli() = default;

bool SweepCli::parsed() const { return state_->command->parsed(); }

int SweepCli::run(Team& team, const std::string& command_line) {
  State& s = *state_;
  s.request.sweep_file = s.sweep_file;
  s.request.output_dir = s.output_dir;
  s.request.command_line = command_line;
  s.request.team = &team;
  return sweep_command(s.request);
}

}  // namespace normdyn::app
