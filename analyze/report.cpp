// The analysis report as JSON with stable keys (documented in docs/guide/analysis.md): schema
// normdyn.analysis/2 for particle runs, normdyn.analysis.meanfield/1 for mean-field runs.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "normdyn/analyze/report.hpp"
#include "normdyn/schemes.hpp"

namespace normdyn {
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
  return {{"t_before", number(e.t_before)}, {"t", number(e.t)}, {"parts", e.parts},
          {"part_sizes", e.part_sizes},     {"whole", e.whole}, {"whole_size", e.whole_size}};
}

const analysis::FrameObservables* last_frame(const AnalysisResult& r) {
  return r.frames.empty() ? nullptr : &r.frames.back();
}

json file_json(const ReportContext& context) {
  return context.run_file ? json(context.run_file->string()) : json(nullptr);
}

json warnings_json(const std::vector<AnalysisWarning>& warnings) {
  json out = json::array();
  for (const auto& w : warnings)
    out.push_back({{"code", w.code}, {"message", w.message}, {"frames", w.frames}, {"times", w.times}});
  return out;
}

json growth_json(const analysis::GrowthExponent& g) {
  return {{"exponent", number(g.exponent)},
          {"stderr", number(g.exponent_stderr)},
          {"late_exponent", number(g.late_exponent)},
          {"window", std::isfinite(g.t_start) ? json::array({number(g.t_start), number(g.t_end)}) : json(nullptr)},
          {"points", g.points},
          {"problem", g.problem.empty() ? json(nullptr) : json(g.problem)}};
}

// First, last, and (for discrete runs) mean over frames of a registry series; null where absent.
json series_summary(const AnalysisResult& r, std::string_view name) {
  const auto* s = r.observable(name);
  if (!s || s->empty()) return nullptr;
  double sum = 0.0;
  std::size_t count = 0;
  for (double v : *s)
    if (std::isfinite(v)) sum += v, ++count;
  return {{"first", number(s->front())},
          {"last", number(s->back())},
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

std::string particle_report(const AnalysisResult& r, const ReportContext& context) {
  const AnalyzeOptions& o = *context.options;
  const ObservablesDestination& where = context.observables;
  json j;
  j["schema"] = "normdyn.analysis/2";
  json run = {{"file", file_json(context)},
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
  for (const auto& e : r.events)
    (e.kind == analysis::ClusterEvent::Kind::merge ? merges : splits).push_back(event_json(e));
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
  j["warnings"] = warnings_json(r.warnings);
  return j.dump(2);
}

std::string meanfield_report(const MeanFieldAnalysis& a, const ReportContext& context) {
  const analysis::DensityOptions& density = context.options->density;
  const std::string observables_file = context.observables.file.string();
  json j;
  j["schema"] = "normdyn.analysis.meanfield/1";
  j["run"] = {{"file", file_json(context)},
              {"kind", "meanfield"},
              {"scheme", std::string(scheme_key(a.config.model.scheme))},
              {"beta", a.config.model.beta},
              {"grid", a.config.meanfield.grid},
              {"field", "/fields/" + a.field + "/value"},
              {"frames", a.t.size()},
              {"t_first", a.t.empty() ? json(nullptr) : number(a.t.front())},
              {"t_last", a.t.empty() ? json(nullptr) : number(a.t.back())},
              {"status", a.summary ? json(std::string(to_string(a.summary->status))) : json(nullptr)},
              {"revision", a.revision}};
  j["observables"] = {{"file", observables_file.empty() ? json(nullptr) : json(observables_file)}};
  if (!a.frames.empty()) {
    const auto& f = a.frames.back();
    j["final"] = {{"t", number(a.t.back())},
                  {"cluster_count", f.cluster_count},
                  {"cluster_mass", f.cluster_mass},
                  {"cluster_centre", f.cluster_centre},
                  {"cluster_width", f.cluster_width},
                  {"narrowest_cluster_cells", number(f.narrowest_cluster_cells)},
                  {"w1_to_uniform", number(f.w1_to_uniform)},
                  {"max_density", number(f.max_density)},
                  {"mode_amplitude", f.mode_amplitude}};
  } else {
    j["final"] = nullptr;
  }
  json modes = json::array();
  for (std::size_t k = 0; k < a.measured.size(); ++k) {
    const auto& m = a.measured[k];
    modes.push_back({{"k", k + 1},
                     {"theory_rate", number(a.theory[k])},
                     {"measured_rate", number(m.rate)},
                     {"points", m.points},
                     {"problem", a.problems[k].empty() ? json(nullptr) : json(a.problems[k])},
                     {"window", m.points ? json::array({number(m.t_start), number(m.t_end)}) : json(nullptr)},
                     {"amplitude_first", a.frames.empty() ? json(nullptr) : number(a.frames.front().mode_amplitude[k])},
                     {"amplitude_last", a.frames.empty() ? json(nullptr) : number(a.frames.back().mode_amplitude[k])}});
  }
  j["modes"] = modes;
  json clusters = json::array();
  for (std::size_t i = 0; i < a.frames.size(); ++i)
    clusters.push_back({{"t", number(a.t[i])},
                        {"count", a.frames[i].cluster_count},
                        {"narrowest_cells", number(a.frames[i].narrowest_cluster_cells)}});
  j["clusters"] = clusters;
  j["options"] = {{"cluster_level", density.cluster_level},
                  {"cluster_min_mass", density.cluster_min_mass},
                  {"modes", density.max_mode},
                  {"linear_limit", 0.05},
                  {"resolved_cluster_cells", analysis::kResolvedClusterCells}};
  j["notes"] = a.notes;
  j["warnings"] = warnings_json(a.warnings);
  return j.dump(2);
}

}  // namespace

std::string report_json(const RunAnalysis& a, const ReportContext& context) {
  return a.particles ? particle_report(*a.particles, context) : meanfield_report(*a.meanfield, context);
}

bool is_analysis_report(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  // Reports are kilobytes to a few megabytes; a larger file is not one and is not read whole.
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > (std::uintmax_t{64} << 20) || ec) return false;
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto schema = j.find("schema");
  return schema != j.end() && schema->is_string() && schema->get<std::string>().rfind("normdyn.analysis", 0) == 0;
}

}  // namespace normdyn
