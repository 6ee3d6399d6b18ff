// The analysis report as text for people (the JSON report is the library's, analyze/report.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analyze.hpp"
#include "normdyn/schemes.hpp"

namespace normdyn::app {
namespace {

// The value to the digit its uncertainty allows (two significant digits of the uncertainty).
std::string with_uncertainty(double value, double uncertainty) {
  char buffer[64];
  if (!(uncertainty > 0.0) || !std::isfinite(uncertainty) || !std::isfinite(value)) {
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
  }
  const int unc_exp = static_cast<int>(std::floor(std::log10(uncertainty)));
  const double magnitude = std::abs(value);
  if (magnitude != 0.0 && (magnitude < 1e-3 || magnitude >= 1e6)) {
    const int value_exp = static_cast<int>(std::floor(std::log10(magnitude)));
    std::snprintf(buffer, sizeof buffer, "%.*e", std::clamp(value_exp - unc_exp + 1, 1, 16), value);
    return buffer;
  }
  std::snprintf(buffer, sizeof buffer, "%.*f", std::clamp(1 - unc_exp, 0, 16), value);
  return buffer;
}

const analysis::FrameObservables* last_frame(const AnalysisResult& r) {
  return r.frames.empty() ? nullptr : &r.frames.back();
}

// The observables of the paper's figures, one line each.
void print_trajectory(std::FILE* out, const AnalysisResult& r) {
  if (const auto* g = r.observable("mean_cosine"); g && !g->empty())
    std::fprintf(out, "gamma (mean cosine): %.6g -> %.6g", g->front(), g->back());
  if (const auto* s = r.observable("mean_cosine_rate"); s && !s->empty())
    std::fprintf(out, "; d gamma/dt at t = %g: %.6g (velocity field)", r.t.front(), s->front());
  std::fprintf(out, "\n");
  if (const auto* a = r.observable("layer_angle"); a && a->size() > 1) {
    double sum = 0.0;
    for (std::size_t i = 1; i < a->size(); ++i) sum += (*a)[i];
    std::fprintf(out, "layer-to-layer angle: %.6g rad/layer after the first frame, mean %.6g, last %.6g\n", (*a)[1],
                 sum / double(a->size() - 1), a->back());
  }
  if (scheme_has_radius(r.config.model.scheme)) {
    const auto& g = r.radius_growth;
    if (g.problem.empty())
      std::fprintf(out, "mean radius growth: r - r(0) ~ t^%.4g (stderr %.2g) over [%g, %g]\n", g.exponent,
                   g.exponent_stderr, g.t_start, g.t_end);
    else
      std::fprintf(
          out, "mean radius growth: %s%s\n", std::isfinite(g.exponent) ? "" : "none: ",
          (std::isfinite(g.exponent) ? ("r - r(0) ~ t^" + std::to_string(g.exponent) + ", flagged " + g.problem)
                                     : g.problem)
              .c_str());
  }
  if (r.clock)
    std::fprintf(out,
                 "Theorem 3.1(b): min_j dr_j/dt = %.4g at the end (lowest %.4g); Post-LN clock min %.6g, median %.6g "
                 "at t = %g: %s\n",
                 r.clock->min_radial_speed_final, r.clock->min_radial_speed_min, r.clock->clock_min_final,
                 r.clock->clock_median_final, r.clock->t_final, r.clock->verdict.c_str());
}

void print_particles(std::FILE* out, const AnalysisResult& r, const AnalyzeRequest& request,
                     const ObservablesDestination& where) {
  const auto& m = r.config.model;
  std::fprintf(out, "normdyn analyze %s: scheme %s, n = %lld, d = %lld, beta = %g, %zu frames, t = %g..%g\n",
               request.run_file.c_str(), std::string(scheme_key(m.scheme)).c_str(), static_cast<long long>(m.n),
               static_cast<long long>(m.d), m.beta, r.t.size(), r.t.empty() ? 0.0 : r.t.front(),
               r.t.empty() ? 0.0 : r.t.back());
  if (!where.file.empty())
    std::fprintf(out, "observables: %zu series -> %s:/observables\n", where.series.size(), where.file.c_str());
  for (const auto& note : r.notes) std::fprintf(out, "note: %s\n", note.c_str());
  if (const auto* f = last_frame(r))
    std::fprintf(out,
                 "last frame t = %g: 1 - mean cos = %.6e, 1 - min cos = %.6e, Var = %.6e, diameter = %.4g rad, "
                 "E/(n^2 e^beta) = %.6g, mean r = %.6g, mean angular speed = %.4e (%s), rank = %d, clusters = %zu\n",
                 r.t.back(), f->one_minus_mean_cosine, f->one_minus_min_cosine, f->variance, f->diameter,
                 f->normalized_energy, f->mean_radius, r.mean_angular_speed.back(), r.angular_speed_method.c_str(),
                 f->effective_rank, r.clusters.back().count());

  const auto& fit = r.rate_fit;
  if (fit.ok) {
    const char* symbol = fit.law == analysis::DecayLaw::exponential ? "lambda"
                         : fit.law == analysis::DecayLaw::power     ? "p"
                                                                    : "kappa";
    const double uncertainty = std::max(fit.parameter_stderr, std::isfinite(fit.systematic) ? fit.systematic : 0.0);
    std::fprintf(
        out,
        "rate fit of %s: %s%s law, %s = %s (stderr %.2g, systematic %.2g), window [%g, %g] (%zu frames, %s%s), "
        "decays by %.3g\n",
        std::string(to_string(r.quantity)).c_str(),
        fit.problem.empty() ? "" : "NOT CITABLE: ", std::string(to_string(fit.law)).c_str(), symbol,
        with_uncertainty(fit.parameter, uncertainty).c_str(), fit.parameter_stderr, fit.systematic, fit.window.t_start,
        fit.window.t_end, fit.points, fit.window_automatic ? "automatic window" : "given window",
        fit.corrected ? (", in t + " + with_uncertainty(fit.origin, 0.0)).c_str() : "", fit.decay_factor);
    std::fprintf(out, "  plain fits:");
    for (const auto& c : fit.candidates)
      std::fprintf(out, " %s %.6g (rss %.2g)", std::string(to_string(c.law)).c_str(), c.parameter, c.rss);
    std::fprintf(out, "%s\n",
                 fit.law_automatic ? "; law chosen by the steadiness of its local exponent" : "; law given");
    if (!fit.problem.empty()) std::fprintf(out, "  problem %s: %s\n", fit.problem.c_str(), fit.detail.c_str());
  } else {
    std::fprintf(out, "rate fit of %s: none: %s: %s\n", std::string(to_string(r.quantity)).c_str(), fit.problem.c_str(),
                 fit.detail.c_str());
  }

  std::size_t merges = 0, splits = 0;
  for (const auto& e : r.events) (e.kind == analysis::ClusterEvent::Kind::merge ? merges : splits)++;
  if (!r.clusters.empty())
    std::fprintf(out, "clusters (cosine > 1 - %g): %zu -> %zu; %zu merge events, %zu split events\n",
                 request.options.clusters.epsilon, r.clusters.front().count(), r.clusters.back().count(), merges,
                 splits);
  std::fprintf(out, "plateaus: %zu; staircase: %s\n", r.plateaus.size(), analysis::staircase(r.plateaus).c_str());
  print_trajectory(out, r);
  std::fprintf(out, "checks:\n");
  for (const auto& c : r.checks.checks)
    std::fprintf(
        out, "  %-4s %-32s theory %-14.8g measured %-14.8g %s\n",
        c.outcome == analysis::Outcome::ok     ? "ok"
        : c.outcome == analysis::Outcome::fail ? "FAIL"
                                               : "n/a",
        c.name.c_str(), c.theory, c.measured,
        c.outcome == analysis::Outcome::not_asymptotic ? ("not asymptotic yet: " + c.note).c_str() : c.note.c_str());
  for (const auto& s : r.checks.skipped)
    std::fprintf(out, "  --   %-32s skipped: %s\n", s.name.c_str(), s.reason.c_str());
}

void print_meanfield(std::FILE* out, const MeanFieldAnalysis& a, const AnalyzeRequest& request) {
  std::fprintf(out, "normdyn analyze %s: mean field, scheme %s, beta = %g, grid %lld, %zu frames, t = %g..%g\n",
               request.run_file.c_str(), std::string(scheme_key(a.config.model.scheme)).c_str(), a.config.model.beta,
               static_cast<long long>(a.config.meanfield.grid), a.t.size(), a.t.empty() ? 0.0 : a.t.front(),
               a.t.empty() ? 0.0 : a.t.back());
  for (const auto& note : a.notes) std::fprintf(out, "note: %s\n", note.c_str());
  if (a.frames.empty()) return;
  const auto& f = a.frames.back();
  std::fprintf(
      out,
      "last frame t = %g: %d clusters (density > %g x uniform), W1 to uniform = %.6g rad, max density = %.6g /rad\n",
      a.t.back(), f.cluster_count, request.options.density.cluster_level, f.w1_to_uniform, f.max_density);
  if (f.cluster_count > 0)
    std::fprintf(out, "narrowest cluster: %.3g grid cells (second-moment width; under-resolved below %g)\n",
                 f.narrowest_cluster_cells, analysis::kResolvedClusterCells);
  std::fprintf(out, "cluster count: %d -> %d\n", a.frames.front().cluster_count, f.cluster_count);
  std::fprintf(out, "modes (amplitude |c_k|/c_0; growth rate in the linear regime, while every amplitude <= 0.05):\n");
  for (std::size_t k = 0; k < a.measured.size(); ++k) {
    const auto& m = a.measured[k];
    std::fprintf(out, "  k = %-2zu amplitude %.3e -> %.3e  rate: theory %-11.6g measured %-11.6g", k + 1,
                 a.frames.front().mode_amplitude[k], f.mode_amplitude[k], a.theory[k], m.rate);
    if (m.points)
      std::fprintf(out, " over [%g, %g] (%zu frames)\n", m.t_start, m.t_end, m.points);
    else
      std::fprintf(out, " (fewer than 3 frames in the linear regime)\n");
    if (!a.problems[k].empty()) std::fprintf(out, "         warning: not the linear rate: %s\n", a.problems[k].c_str());
  }
}

void print_warnings(std::FILE* out, const std::vector<AnalysisWarning>& warnings) {
  for (const auto& w : warnings) std::fprintf(out, "warning %s: %s\n", w.code.c_str(), w.message.c_str());
}

}  // namespace

void print_report(std::FILE* out, const AnalysisOutcome& outcome, const AnalyzeRequest& request) {
  if (outcome.analysis.particles)
    print_particles(out, *outcome.analysis.particles, request, outcome.observables);
  else
    print_meanfield(out, *outcome.analysis.meanfield, request);
  print_warnings(out, outcome.analysis.warnings());
}

}  // namespace normdyn::app
