// The analysis report: JSON with stable keys (documented in README.md, section "Analysis") and a
// text summary for people.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analyze.hpp"
#include "normdyn/schemes.hpp"

namespace normdyn::app {
namespace {

using nlohmann::json;

// NaN and ±inf become null (JSON has no such numbers).
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json law_fit_json(const analysis::LawFit& f) {
  return {{"law", std::string(to_string(f.law))},
          {"parameter", number(f.parameter)},
          {"stderr", number(f.parameter_stderr)},
          {"log_c", number(f.log_c)},
          {"rss", number(f.rss)},
          {"r_squared", number(f.r_squared)}};
}

json rate_fit_json(const analysis::RateFit& f, RateQuantity q) {
  json j;
  j["quantity"] = std::string(to_string(q));
  // null only for a fit one can cite; else a token of analysis::kProblemTokens and a sentence.
  j["problem"] = f.problem.empty() ? json(nullptr) : json(f.problem);
  j["problem_detail"] = f.detail.empty() ? json(nullptr) : json(f.detail);
  if (!f.ok) {
    j["law"] = nullptr;
    j["parameter"] = nullptr;
    j["stderr"] = nullptr;
    j["window"] = nullptr;
    return j;
  }
  j["law"] = std::string(to_string(f.law));
  j["parameter"] = number(f.parameter);
  j["stderr"] = number(f.parameter_stderr);
  j["window"] = {number(f.window.t_start), number(f.window.t_end)};
  j["systematic"] = number(f.systematic);
  j["law_automatic"] = f.law_automatic;
  j["window_automatic"] = f.window_automatic;
  j["points"] = f.points;
  j["decay_factor"] = number(f.decay_factor);
  j["usable_until"] = number(f.usable_until);
  j["corrected"] = f.corrected;
  j["origin_shift"] = number(f.origin);  // the law holds in t + origin_shift
  j["correction_term"] = f.corrected ? "origin shift" : "";
  j["correction_coefficient"] = number(f.correction);  // always 0 since schema 2 (kept for readers of 1)
  j["half_window_parameter"] = number(f.half_window_parameter);
  j["steady_decay"] = number(f.steady_decay);
  j["runner_up_decay"] = number(f.runner_up_decay);
  j["log_c"] = number(f.log_c);
  j["uncorrected"] = law_fit_json(f.uncorrected);
  json candidates = json::array();
  for (const auto& c : f.candidates) candidates.push_back(law_fit_json(c));
  j["candidates"] = candidates;
  return j;
}

json event_json(const analysis::ClusterEvent& e) {
  return {{"t_before", number(e.t_before)}, {"t", number(e.t)},       {"parts", e.parts},
          {"part_sizes", e.part_sizes},     {"whole", e.whole},       {"whole_size", e.whole_size}};
}

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

json growth_json(const analysis::GrowthExponent& g) {
  return {{"exponent", number(g.exponent)}, {"stderr", number(g.exponent_stderr)},
          {"late_exponent", number(g.late_exponent)},
          {"window", std::isfinite(g.t_start) ? json::array({number(g.t_start), number(g.t_end)}) : json(nullptr)},
          {"points", g.points},           {"problem", g.problem.empty() ? json(nullptr) : json(g.problem)}};
}

// First, last, and (for discrete runs) mean over frames of a registry series; null where absent.
json series_summary(const AnalysisResult& r, std::string_view name) {
  const auto* s = r.observable(name);
  if (!s || s->empty()) return nullptr;
  double sum = 0.0;
  std::size_t count = 0;
  for (double v : *s)
    if (std::isfinite(v)) sum += v, ++count;
  return {{"first", number(s->front())}, {"last", number(s->back())},
          {"mean", count ? number(sum / double(count)) : json(nullptr)}};
}

// The observables of the paper's figures (README, "Analysis").
json trajectory_json(const AnalysisResult& r) {
  json j;
  j["mean_cosine"] = series_summary(r, "mean_cosine");
  j["mean_cosine_rate"] = series_summary(r, "mean_cosine_rate");
  j["layer_angle"] = series_summary(r, "layer_angle");
  j["mean_cosine_layer_rate"] = series_summary(r, "mean_cosine_layer_rate");
  j["mean_radius"] = series_summary(r, "mean_radius");
  j["radius_growth"] = growth_json(r.radius_growth);
  if (r.clock) {
    const auto& c = *r.clock;
    j["clock"] = {{"t_final", number(c.t_final)},
                  {"clock_min_final", number(c.clock_min_final)},
                  {"clock_median_final", number(c.clock_median_final)},
                  {"min_radial_speed_final", number(c.min_radial_speed_final)},
                  {"min_radial_speed_min", number(c.min_radial_speed_min)},
                  {"clock_growth", growth_json(c.clock_growth)},
                  {"verdict", c.verdict}};
  } else {
    j["clock"] = nullptr;
  }
  return j;
}

}  // namespace

std::string report_json(const AnalysisResult& r, const AnalyzeRequest& request, const ObservablesDestination& where) {
  const AnalyzeOptions& o = request.options;
  json j;
  j["schema"] = "normdyn.analysis/2";
  json run = {{"file", request.run_file.string()},
              {"scheme", std::string(scheme_key(r.config.model.scheme))},
              {"n", r.config.model.n},
              {"d", r.config.model.d},
              {"beta", r.config.model.beta},
              {"qkv", std::string(to_string(r.config.model.qkv))},
              {"init", std::string(to_string(r.config.init.kind))},
              {"method", std::string(to_string(r.config.solver.method))},
              {"frames", r.t.size()},
              {"t_first", r.t.empty() ? json(nullptr) : number(r.t.front())},
              {"t_last", r.t.empty() ? json(nullptr) : number(r.t.back())},
              {"revision", r.revision}};
  run["status"] = r.summary ? json(std::string(to_string(r.summary->status))) : json(nullptr);
  j["run"] = run;
  j["observables"] = {{"file", where.file.empty() ? json(nullptr) : json(where.file.string())},
                      {"in_run_file", where.in_run_file},
                      {"series", where.series},
                      {"angular_speed_method", r.angular_speed_method}};
  j["options"] = {{"cluster_epsilon", o.clusters.epsilon},
                  {"rank_threshold", o.rank_threshold},
                  {"plateau_energy_tolerance", o.plateaus.energy_tolerance},
                  {"plateau_min_frames", o.plateaus.min_frames},
                  {"plateau_min_duration", o.plateaus.min_duration},
                  {"plateau_min_log_duration", o.plateaus.min_log_duration},
                  {"fit_floor", o.rate.floor},
                  {"fit_late_fraction", o.rate.late_fraction},
                  {"fit_correction", o.rate.correction},
                  {"energy_tolerance", o.checks.energy_tolerance}};
  if (const auto* f = last_frame(r)) {
    j["final"] = {{"t", number(r.t.back())},
                  {"one_minus_mean_cosine", number(f->one_minus_mean_cosine)},
                  {"one_minus_min_cosine", number(f->one_minus_min_cosine)},
                  {"variance", number(f->variance)},
                  {"diameter", number(f->diameter)},
                  {"energy", number(f->energy)},
                  {"normalized_energy", number(f->normalized_energy)},
                  {"mean_radius", number(f->mean_radius)},
                  {"mean_angular_speed", number(r.mean_angular_speed.back())},
                  {"effective_rank", f->effective_rank},
                  {"cluster_count", r.clusters.back().count()}};
  } else {
    j["final"] = nullptr;
  }
  j["rate_fit"] = rate_fit_json(r.rate_fit, r.quantity);

  json clusters = json::array();
  for (std::size_t i = 0; i < r.clusters.size(); ++i)
    clusters.push_back({{"t", number(r.t[i])}, {"count", r.clusters[i].count()}, {"sizes", r.clusters[i].sizes}});
  j["clusters"] = clusters;
  json final_clusters = json::array();
  if (!r.clusters.empty()) {
    const auto& c = r.clusters.back();
    for (std::size_t k = 0; k < c.count(); ++k) {
      std::vector<double> centre(c.centres.row(static_cast<Index>(k)).data(),
                                 c.centres.row(static_cast<Index>(k)).data() + c.centres.cols());
      final_clusters.push_back({{"id", c.ids[k]}, {"size", c.sizes[k]}, {"centre", centre}});
    }
  }
  j["final_clusters"] = final_clusters;
  json merges = json::array(), splits = json::array();
  for (const auto& e : r.events) (e.kind == analysis::ClusterEvent::Kind::merge ? merges : splits).push_back(event_json(e));
  j["merges"] = merges;
  j["splits"] = splits;

  json plateaus = json::array();
  for (const auto& p : r.plateaus)
    plateaus.push_back({{"t_start", number(p.t_start)},
                        {"t_end", number(p.t_end)},
                        {"duration", number(p.duration())},
                        {"count", p.count},
                        {"first_frame", p.first_frame},
                        {"last_frame", p.last_frame},
                        {"energy_start", number(p.energy_start)},
                        {"energy_end", number(p.energy_end)}});
  j["plateaus"] = plateaus;
  j["staircase"] = analysis::staircase(r.plateaus);

  json checks = json::array();
  for (const auto& c : r.checks.checks) {
    json details = json::object();
    for (const auto& [k, v] : c.details) details[k] = number(v);
    checks.push_back({{"name", c.name},
                      {"statement", c.statement},
                      {"criterion", c.criterion},
                      {"theory", number(c.theory)},
                      {"measured", number(c.measured)},
                      {"ok", c.outcome == analysis::Outcome::not_asymptotic ? json(nullptr) : json(c.ok)},
                      {"outcome", std::string(to_string(c.outcome))},
                      {"details", details},
                      {"note", c.note}});
  }
  j["checks"] = checks;
  json skipped = json::array();
  for (const auto& s : r.checks.skipped) skipped.push_back({{"name", s.name}, {"reason", s.reason}});
  j["skipped_checks"] = skipped;
  j["trajectory"] = trajectory_json(r);
  j["notes"] = r.notes;
  return j.dump(2);
}

// The observables of the paper's figures, one line each.
static void print_trajectory(std::FILE* out, const AnalysisResult& r) {
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
      std::fprintf(out, "mean radius growth: %s%s\n", std::isfinite(g.exponent) ? "" : "none: ",
                   (std::isfinite(g.exponent) ? ("r - r(0) ~ t^" + std::to_string(g.exponent) + ", flagged " + g.problem)
                                              : g.problem).c_str());
  }
  if (r.clock)
    std::fprintf(out, "Theorem 3.1(b): min_j dr_j/dt = %.4g at the end (lowest %.4g); Post-LN clock min %.6g, median %.6g at t = %g: %s\n",
                 r.clock->min_radial_speed_final, r.clock->min_radial_speed_min, r.clock->clock_min_final,
                 r.clock->clock_median_final, r.clock->t_final, r.clock->verdict.c_str());
}

void print_report(std::FILE* out, const AnalysisResult& r, const AnalyzeRequest& request,
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
                         : fit.law == analysis::DecayLaw::power   ? "p"
                                                                  : "kappa";
    const double uncertainty = std::max(fit.parameter_stderr, std::isfinite(fit.systematic) ? fit.systematic : 0.0);
    std::fprintf(out, "rate fit of %s: %s%s law, %s = %s (stderr %.2g, systematic %.2g), window [%g, %g] (%zu frames, %s%s), "
                 "decays by %.3g\n",
                 std::string(to_string(r.quantity)).c_str(), fit.problem.empty() ? "" : "NOT CITABLE: ",
                 std::string(to_string(fit.law)).c_str(), symbol,
                 with_uncertainty(fit.parameter, uncertainty).c_str(), fit.parameter_stderr, fit.systematic,
                 fit.window.t_start, fit.window.t_end, fit.points,
                 fit.window_automatic ? "automatic window" : "given window",
                 fit.corrected ? (", in t + " + with_uncertainty(fit.origin, 0.0)).c_str() : "", fit.decay_factor);
    std::fprintf(out, "  plain fits:");
    for (const auto& c : fit.candidates)
      std::fprintf(out, " %s %.6g (rss %.2g)", std::string(to_string(c.law)).c_str(), c.parameter, c.rss);
    std::fprintf(out, "%s\n", fit.law_automatic ? "; law chosen by the steadiness of its local exponent" : "; law given");
    if (!fit.problem.empty()) std::fprintf(out, "  problem %s: %s\n", fit.problem.c_str(), fit.detail.c_str());
  } else {
    std::fprintf(out, "rate fit of %s: none: %s: %s\n", std::string(to_string(r.quantity)).c_str(), fit.problem.c_str(),
                 fit.detail.c_str());
  }

  std::size_t merges = 0, splits = 0;
  for (const auto& e : r.events) (e.kind == analysis::ClusterEvent::Kind::merge ? merges : splits)++;
  if (!r.clusters.empty())
    std::fprintf(out, "clusters (cosine > 1 - %g): %zu -> %zu; %zu merge events, %zu split events\n",
                 request.options.clusters.epsilon, r.clusters.front().count(), r.clusters.back().count(), merges, splits);
  std::fprintf(out, "plateaus: %zu; staircase: %s\n", r.plateaus.size(), analysis::staircase(r.plateaus).c_str());
  print_trajectory(out, r);
  std::fprintf(out, "checks:\n");
  for (const auto& c : r.checks.checks)
    std::fprintf(out, "  %-4s %-32s theory %-14.8g measured %-14.8g %s\n",
                 c.outcome == analysis::Outcome::ok ? "ok" : c.outcome == analysis::Outcome::fail ? "FAIL" : "n/a",
                 c.name.c_str(), c.theory, c.measured,
                 c.outcome == analysis::Outcome::not_asymptotic ? ("not asymptotic yet: " + c.note).c_str() : c.note.c_str());
  for (const auto& s : r.checks.skipped) std::fprintf(out, "  --   %-32s skipped: %s\n", s.name.c_str(), s.reason.c_str());
}

}  // namespace normdyn::app
