// The analysis of a mean-field run (model.kind = "meanfield"): per frame the angular density's
// Fourier modes, its clusters (peaks, with their width in grid cells) and its W1 distance to the
// uniform density; the growth rate of each mode in its linear regime beside the closed-form rate of
// the uniform state (solvers/meanfield_circle); and a warning where the clusters are under-resolved.
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <limits>
#include <span>

#include "normdyn/analysis/density_modes.hpp"
#include "normdyn/analyze/analyze.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"

namespace normdyn {
namespace {

// The frames whose narrowest cluster is thinner than analysis::kResolvedClusterCells.
std::optional<AnalysisWarning> under_resolved(const MeanFieldAnalysis& a) {
  AnalysisWarning w;
  w.code = "under_resolved";
  double narrowest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    const double cells = a.frames[i].narrowest_cluster_cells;
    if (!(cells < analysis::kResolvedClusterCells)) continue;
    w.frames.push_back(i);
    w.times.push_back(a.t[i]);
    narrowest = std::min(narrowest, cells);
  }
  if (w.frames.empty()) return std::nullopt;
  char buffer[600];
  std::snprintf(buffer, sizeof buffer,
                "from t = %g (%zu of %zu frames) a cluster is narrower than %g grid cell (second-moment width, "
                "narrowest %.2f cells, meanfield.grid = %lld): below this width the density stops converging at the "
                "scheme's second order and the grid slows the drift of clusters, so merges and cluster counts after "
                "it may be grid artifacts; compare with a run at meanfield.grid = %lld or with weighted particles "
                "(model.kind = \"particles\", init.sampling = \"grid\")",
                w.times.front(), w.frames.size(), a.frames.size(), analysis::kResolvedClusterCells, narrowest,
                static_cast<long long>(a.config.meanfield.grid), static_cast<long long>(2 * a.config.meanfield.grid));
  w.message = buffer;
  return w;
}

// The causal mean field: the narrowest cluster of any cursor slice (slice-major, `cells` per slice);
// the angular density of all tokens averages slices whose clusters may sit apart, and is wider.
double narrowest_over_slices(const std::vector<double>& density, std::size_t cells) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (std::size_t start = 0; cells > 0 && start + cells <= density.size(); start += cells) {
    const std::span<const double> slice(density.data() + start, cells);
    narrowest = std::min(narrowest, analysis::narrowest_cluster_cells(analysis::density_clusters(slice), cells));
  }
  return narrowest;
}

}  // namespace

MeanFieldAnalysis analyze_meanfield(const FrameSource& source, const AnalyzeOptions& options) {
  MeanFieldAnalysis a;
  a.config = source.config();
  a.revision = source.revision();
  a.summary = source.summary();
  a.t = source.times();
  a.step = source.steps();
  if (source.has_particles()) throw InputError("run", "a particle run has no density (analyze_particles reads it)");
  if (a.config.model.d == 3)
    throw InputError("run", (source.file() ? source.file()->string() + ": " : std::string()) +
                                "the density analysis is on the circle; a mean-field run on the sphere (model.d = 3) "
                                "is read with normdyn.load and drawn with normdyn.plots.sphere_figure");
  const analysis::DensityOptions& density = options.density;
  // The causal mean field stores the density per cursor slice beside the angular density of all tokens.
  const bool causal = !std::holds_alternative<NoMask>(a.config.attention.mask);
  a.field = scheme_has_radius(a.config.model.scheme) || causal ? "angular_density" : "density";
  const std::size_t frames = std::min({source.frames(), a.t.size(), a.step.size()});
  a.t.resize(frames);
  a.step.resize(frames);
  const std::string where = source.file() ? source.file()->string() + ": " : std::string();
  for (std::size_t i = 0; i < frames; ++i) {
    const std::vector<double> cells = source.field_frame(a.field, i);
    double mass = 0.0;
    for (double v : cells) {
      if (!std::isfinite(v))
        throw InputError(
            "run", where + "frame " + std::to_string(i) + " of " + a.field + " is not a density (non-finite values)");
      mass += v;
    }
    if (!(mass > 0.0))
      throw InputError("run", where + "frame " + std::to_string(i) + " of " + a.field + " is not a density (no mass)");
    a.frames.push_back(analysis::density_figures(cells, density));
    if (causal)
      a.frames.back().narrowest_cluster_cells = narrowest_over_slices(source.field_frame("density", i), cells.size());
  }
  const int modes = density.max_mode;
  std::vector<std::vector<double>> amplitudes;
  for (const auto& f : a.frames) amplitudes.push_back(f.mode_amplitude);
  const analysis::ModeRates rates = analysis::linear_mode_rates(a.t, amplitudes);
  a.measured = rates.rates;
  a.problems = rates.problems;
  for (int k = 1; k <= modes; ++k) {
    double theory = std::numeric_limits<double>::quiet_NaN();
    if (a.config.model.qkv == QkvKind::identity && !causal) {
      try {
        const RadialLaw law{a.config.init.r0, a.config.init.radius_width};
        const auto* noise = std::get_if<IndependentNoise>(&a.config.noise.kind);
        theory = uniform_state_rate(a.config.model.scheme, a.config.model.beta, CircleAttention{}, k,
                                    a.t.empty() ? 0.0 : a.t.front(), law, noise ? noise->sigma : 0.0,
                                    std::holds_alternative<Uniform>(a.config.attention.normalizer))
                     .real();
      } catch (const std::domain_error&) {}
    }
    a.theory.push_back(theory);
  }
  if (a.config.model.qkv != QkvKind::identity)
    a.notes.push_back("the closed-form rates of the uniform state are given for Q = K = V = I only");
  if (causal)
    a.notes.push_back(
        "causal mean field: the modes and clusters are those of the angular density of all tokens; "
        "the closed-form rates of the uniform state (full attention) do not apply; the resolution is "
        "that of the narrowest cluster of any cursor slice");
  if (scheme_has_radius(a.config.model.scheme))
    a.notes.push_back(
        "schemes with a radius: the rate of the uniform state changes with t (the value at the first "
        "frame is listed); the measured rate is an average over its window");
  if (auto w = under_resolved(a)) a.warnings.push_back(std::move(*w));
  return a;
}

RunAnalysis analyze_run(const FrameSource& source, const AnalyzeOptions& options) {
  RunAnalysis a;
  if (source.has_particles())
    a.particles = analyze_particles(source, options);
  else
    a.meanfield = analyze_meanfield(source, options);
  return a;
}

}  // namespace normdyn
