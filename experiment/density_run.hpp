#pragma once
// What the runs of a density share (the mean field on the circle, over the cursor and on the sphere
// S^2): the mass and positivity they track, a warning in their summary, their run file's contents,
// and the start or resumption of their integration. Private to experiment/.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "normdyn/errors.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/io/run_file.hpp"
#include "session.hpp"

namespace normdyn {

// Over the frames of a session: the largest change of each conserved mass since its first frame, and
// the smallest value of the density (negative: the scheme lost positivity).
class DensityBalance {
 public:
  void add(std::span<const double> masses, std::span<const double> density) {
    if (initial_.empty()) initial_.assign(masses.begin(), masses.end());
    for (std::size_t j = 0; j < masses.size(); ++j)
      mass_drift_ = std::max(mass_drift_, std::abs(masses[j] - initial_[j]));
    min_density_ = std::min(min_density_, *std::min_element(density.begin(), density.end()));
  }
  double mass_drift() const { return mass_drift_; }
  double min_density() const { return min_density_; }

 private:
  std::vector<double> initial_;
  double mass_drift_ = 0.0;
  double min_density_ = std::numeric_limits<double>::infinity();
};

// A result the run flags as doubtful: appended to the summary's message and, one "code: text" a line,
// to /summary@warnings.
inline void add_summary_warning(RunSummary& summary, const std::string& code, const std::string& text) {
  summary.message += "; warning " + code + ": " + text;
  summary.warnings += (summary.warnings.empty() ? "" : "\n") + code + ": " + text;
}

// The run file of a density: its fields and the solver state of the checkpoints, no particles.
// The angle axis of a density on the circle (the circle and the cursor solvers share its cells).
inline FieldAxis circle_phi_axis(std::size_t cells, std::vector<double> centres) {
  return {"phi",
          "rad",
          "cell centres (i + 1/2) 2 pi / M of the angle phi = atan2(theta_2, theta_1); cell i is [i, i + 1) 2 pi / M",
          cells,
          std::move(centres),
          false};
}

inline RunFileOptions density_contents(std::vector<FieldSpec> fields, std::size_t state_size) {
  RunFileOptions contents;
  contents.particles = false;
  contents.fields = std::move(fields);
  contents.state_size = state_size;
  return contents;
}

inline RunLayout density_layout(const RunConfig& config, const ExperimentOptions& options, RunFileOptions contents) {
  return RunLayout{&config, Provenance{options.command_line, 1}, std::move(contents),
                   config.output.sample_times(config.solver.t_end, config.solver.t_start)};
}

// A fresh run: the run file (when written) and the caller's recorders begin with the layout, then
// `integrate(recorder, x0, checkpoint = nullptr, earlier_wall_seconds = 0)` runs into them. Everything
// that can fail on bad input happens before: the system and x0 exist when this is called.
template <class Integrate>
RunSummary start_density_run(const RunConfig& config, const ExperimentOptions& options,
                             const std::vector<Recorder*>& recorders, RunFileOptions contents,
                             const std::vector<double>& x0, Integrate&& integrate) {
  Recorders out(fresh_file(config, options), recorders);
  if (Recorder* r = out.get()) r->begin(density_layout(config, options, std::move(contents)));
  return integrate(out.get(), x0, nullptr, 0.0);
}

// A resumed run's file, reopened (recovered where a crash left it), its checkpoint checked against the
// size of the solver state, and begun again with the layout.
struct ReopenedDensityRun {
  std::unique_ptr<RunFileRecorder> file;
  ResumeState state;

  // Where the integration starts again: the checkpoint, or x0 when the earlier session was killed
  // before its first flush.
  const std::vector<double>& x(const std::vector<double>& x0) const {
    return state.checkpoint ? state.checkpoint->x : x0;
  }
  const Checkpoint* checkpoint() const { return state.checkpoint ? &*state.checkpoint : nullptr; }
  double earlier_wall_seconds() const { return state.checkpoint ? state.wall_seconds : 0.0; }
};

inline ReopenedDensityRun reopen_density_run(const std::filesystem::path& path, const RunConfig& config,
                                             const ExperimentOptions& options, RunFileOptions contents) {
  ReopenedDensityRun run;
  run.file = RunFileRecorder::reopen(path, Provenance{options.command_line, 1}, run.state);
  if (run.state.checkpoint && run.state.checkpoint->x.size() != contents.state_size)
    throw IoError(path.string() + ": checkpoint state has the wrong size");
  run.file->begin(density_layout(config, options, std::move(contents)));
  return run;
}

}  // namespace normdyn
