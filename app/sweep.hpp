#pragma once
// `normdyn sweep SWEEP.toml -o DIR`: every point of a sweep (sweep.hpp) run as its own `normdyn run`
// into DIR/runs/<name>.h5, several at once (--jobs) and, under mpirun, over the processes of the
// launch with dynamic load balancing (rank 0 hands out the points as slots free up); then the index
// (sweep_index.hpp) with every run's status and figures and the ensemble statistics.
//
// Fault tolerance. A run that fails (numerical failure, bad input, crash) is recorded with its
// status and the sweep goes on. The same command again reuses every finished run whose file is
// unchanged, resumes the interrupted and killed ones (normdyn run --resume) and starts the rest.
#include <filesystem>
#include <string>
#include <vector>

namespace normdyn {
class Team;
}

namespace normdyn::app {

struct SweepRequest {
  std::filesystem::path sweep_file;
  std::filesystem::path output_dir;
  int jobs = 0;                  // runs at once per process; 0: its cores (Team::cores) / threads
  int threads = 1;               // attention-kernel threads of every run
  bool force = false;            // run every point again, replacing its file
  bool list = false;             // print the points and what would be done with each; run nothing
  bool quiet = false;            // no line per finished run
  bool plot = false;             // draw the ensemble figures afterwards (scripts/plot_sweep.py)
  std::vector<std::string> set;  // --set KEY=VALUE / KEY:=VALUE, after the file's [set]
  std::string command_line;
  Team* team = nullptr;  // the processes of an MPI launch (nullptr or one process: this one alone)
};

// Returns the exit code: 0 when every point ended ok or synchronized, 1 when some point ended
// otherwise (its status is in the index), 130 when interrupted; errors before any run are
// InputError / IoError.
int sweep_command(const SweepRequest& request);

}  // namespace normdyn::app
