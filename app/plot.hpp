#pragma once
// `normdyn plot`: runs scripts/plot_run.py (Python + matplotlib, Agg backend) on run files and their
// observables. The interpreter is /usr/bin/python3 (override: NORMDYN_PYTHON), the script the one of
// the source tree (override: NORMDYN_PLOT_SCRIPT).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace normdyn::app {

struct PlotRequest {
  std::vector<std::filesystem::path> runs;
  std::optional<std::filesystem::path> output_dir;
  std::vector<std::string>
      kinds;  // overview, decay, heatmap, tokens, trajectory, compare, meanfield, phase (empty: all)
  std::vector<long long> frames;    // frames of the heatmaps and snapshots (negative: from the end)
  std::vector<std::string> labels;  // legend labels of the runs (default: scheme and file name)
  bool log_time = false;
  bool log_cos = false;              // heatmaps of log(1 − cos)
  std::vector<std::string> formats;  // png, pdf, svg (empty: png)
  std::string width;                 // column, page or inches (empty: each figure's default)
};

// `normdyn animate`: scripts/animate_run.py (override: NORMDYN_ANIMATE_SCRIPT) renders a run as an
// MP4 (ffmpeg) or GIF (Pillow) through normdyn.plots.animate.
struct AnimateRequest {
  std::filesystem::path run;
  std::filesystem::path output;
  double fps = 20;
  int max_frames = 300;
  std::string width = "column";  // column, page or inches
  double dpi = 150;
  bool force = false;
  bool quiet = false;  // no progress bar
};

std::filesystem::path plot_script();
// The interpreter of the figures: NORMDYN_PYTHON (a path, or a name looked up on PATH), else
// /usr/bin/python3. Throws when it does not exist.
std::filesystem::path plot_python();
// After a plot script failed: throws, naming the interpreter and the fix, when it cannot import
// numpy, h5py and matplotlib; returns otherwise (the script's own error stands).
void explain_python_failure(const std::filesystem::path& python);
std::vector<std::string> plot_arguments(const PlotRequest& request);
// Returns the script's exit code.
int plot_command(const PlotRequest& request);
std::vector<std::string> animate_arguments(const AnimateRequest& request);
int animate_command(const AnimateRequest& request);

}  // namespace normdyn::app
