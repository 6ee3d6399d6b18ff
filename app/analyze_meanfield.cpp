// `normdyn analyze` of a mean-field run (model.kind = "meanfield"): per frame the density's Fourier
// modes, its clusters (peaks) and its W1 distance to the uniform density; the growth rate of each
// mode in its linear regime beside the closed-form rate of the uniform state (solvers/meanfield_circle).
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "analyze.hpp"
#include "normdyn/analysis/density_modes.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/io/observables_file.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"

namespace normdyn::app {
namespace {

using nlohmann::json;
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

struct MeanFieldAnalysis {
  RunConfig config;
  std::string revision;
  std::optional<RunSummary> summary;
  std::string field;  // the dataset read
  std::vector<double> t;
  std::vector<std::int64_t> step;
  std::vector<analysis::DensityFigures> frames;
  std::vector<analysis::ModeRate> measured;  // per mode k = 1..K
  std::vector<std::string> problems;         // per mode: empty, or why the rate is not the linear one
  std::vector<double> theory;                // Re λ_k(0) of the uniform state; NaN where not available
  std::vector<std::string> notes;
};

MeanFieldAnalysis analyze_meanfield(const std::filesystem::path& path, const analysis::DensityOptions& options) {
  MeanFieldAnalysis a;
  {
    const RunReader reader(path);  // closed before the fields are read
    a.config = reader.config();
    a.revision = reader.revision();
    a.summary = reader.summary();
    a.t = reader.times();
    a.step = reader.steps();
  }
  a.field = scheme_has_radius(a.config.model.scheme) ? "/fields/angular_density/value" : "/fields/density/value";
  InitConfig source;
  source.file = path;
  source.dataset = a.field;
  for (std::size_t i = 0; i < a.t.size(); ++i) {
    source.frame = static_cast<std::int64_t>(i);
    std::vector<double> cells;
    try {
      cells = read_initial_density(source);
    } catch (const InputError& e) {
      throw InputError("RUN", path.string() + ": frame " + std::to_string(i) + " of " + a.field +
                                  " is not a density (" + e.what() + ")");
    }
    a.frames.push_back(analysis::density_figures(cells, options));
  }
  const int modes = options.max_mode;
  std::vector<std::vector<double>> amplitudes;
  for (const auto& f : a.frames) amplitudes.push_back(f.mode_amplitude);
  const analysis::ModeRates rates = analysis::linear_mode_rates(a.t, amplitudes);
  a.measured = rates.rates;
  a.problems = rates.problems;
  for (int k = 1; k <= modes; ++k) {
    double theory = std::numeric_limits<double>::quiet_NaN();
    if (a.config.model.qkv == QkvKind::identity) {
      try {
        const RadialLaw law{a.config.init.r0, a.config.init.radius_width};
        theory = uniform_state_rate(a.config.model.scheme, a.config.model.beta, CircleAttention{}, k,
                                    a.t.empty() ? 0.0 : a.t.front(), law)
                     .real();
      } catch (const std::domain_error&) {
      }
    }
    a.theory.push_back(theory);
  }
  if (a.config.model.qkv != QkvKind::identity)
    a.notes.push_back("the closed-form rates of the uniform state are given for Q = K = V = I only");
  if (scheme_has_radius(a.config.model.scheme))
    a.notes.push_back("schemes with a radius: the rate of the uniform state changes with t (the value at the first "
                      "frame is listed); the measured rate is an average over its window");
  return a;
}

std::string meanfield_json(const MeanFieldAnalysis& a, const AnalyzeRequest& request, const std::string& observables_file) {
  json j;
  j["schema"] = "normdyn.analysis.meanfield/1";
  j["run"] = {{"file", request.run_file.string()},
              {"kind", "meanfield"},
              {"scheme", std::string(scheme_key(a.config.model.scheme))},
              {"beta", a.config.model.beta},
              {"grid", a.config.meanfield.grid},
              {"field", a.field},
              {"frames", a.t.size()},
              {"t_first", a.t.empty() ? json(nullptr) : number(a.t.front())},
              {"t_last", a.t.empty() ? json(nullptr) : number(a.t.back())},
              {"status", a.summary ? json(std::string(to_string(a.summary->status))) : json(nullptr)},
              {"revision", a.revision}};
  j["observables"] = {{"file", observables_file.empty() ? json(nullptr) : json(observables_file)}};
  if (!a.frames.empty()) {
    const auto& f = a.frames.back();
    std::vector<json> centres;
    j["final"] = {{"t", number(a.t.back())},
                  {"cluster_count", f.cluster_count},
                  {"cluster_mass", f.cluster_mass},
                  {"cluster_centre", f.cluster_centre},
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
    clusters.push_back({{"t", number(a.t[i])}, {"count", a.frames[i].cluster_count}});
  j["clusters"] = clusters;
  j["options"] = {{"cluster_level", request.options.density.cluster_level},
                  {"cluster_min_mass", request.options.density.cluster_min_mass},
                  {"modes", request.options.density.max_mode},
                  {"linear_limit", 0.05}};
  j["notes"] = a.notes;
  return j.dump(2);
}

void write_meanfield_observables(ObservablesFile& file, const MeanFieldAnalysis& a) {
  const std::size_t frames = a.t.size();
  std::vector<double> w1, peak, modes;
  std::vector<std::int64_t> count;
  const std::size_t k = a.frames.empty() ? 0 : a.frames.front().mode_amplitude.size();
  for (const auto& f : a.frames) {
    w1.push_back(f.w1_to_uniform);
    peak.push_back(f.max_density);
    count.push_back(f.cluster_count);
    modes.insert(modes.end(), f.mode_amplitude.begin(), f.mode_amplitude.end());
  }
  for (const auto& o : kDensityObservables) {
    const std::string name(o.name);
    if (name == "density_cluster_count") file.write_series(name, a.t, a.step, count, {}, std::string(o.description));
    else if (name == "w1_to_uniform") file.write_series(name, a.t, a.step, w1, {}, std::string(o.description));
    else if (name == "max_density") file.write_series(name, a.t, a.step, peak, {}, std::string(o.description));
    else if (name == "mode_amplitude")
      file.write_series(name, a.t, a.step, modes, {static_cast<std::uint64_t>(k)}, std::string(o.description));
    else throw std::logic_error("density observable without a writer: " + name);
    file.set_series_attribute(name, "unit", std::string(o.unit));
  }
  (void)frames;
}

void print_meanfield(std::FILE* out, const MeanFieldAnalysis& a, const AnalyzeRequest& request) {
  std::fprintf(out, "normdyn analyze %s: mean field, scheme %s, beta = %g, grid %lld, %zu frames, t = %g..%g\n",
               request.run_file.c_str(), std::string(scheme_key(a.config.model.scheme)).c_str(), a.config.model.beta,
               static_cast<long long>(a.config.meanfield.grid), a.t.size(), a.t.empty() ? 0.0 : a.t.front(),
               a.t.empty() ? 0.0 : a.t.back());
  for (const auto& note : a.notes) std::fprintf(out, "note: %s\n", note.c_str());
  if (a.frames.empty()) return;
  const auto& f = a.frames.back();
  std::fprintf(out, "last frame t = %g: %d clusters (density > %g x uniform), W1 to uniform = %.6g rad, max density = %.6g /rad\n",
               a.t.back(), f.cluster_count, request.options.density.cluster_level, f.w1_to_uniform, f.max_density);
  std::fprintf(out, "cluster count: %d -> %d\n", a.frames.front().cluster_count, f.cluster_count);
  std::fprintf(out, "modes (amplitude |c_k|/c_0; growth rate in the linear regime, while every amplitude <= 0.05):\n");
  for (std::size_t k = 0; k < a.measured.size(); ++k) {
    const auto& m = a.measured[k];
    std::fprintf(out, "  k = %-2zu amplitude %.3e -> %.3e  rate: theory %-11.6g measured %-11.6g", k + 1,
                 a.frames.front().mode_amplitude[k], f.mode_amplitude[k], a.theory[k], m.rate);
    if (m.points) std::fprintf(out, " over [%g, %g] (%zu frames)\n", m.t_start, m.t_end, m.points);
    else std::fprintf(out, " (fewer than 3 frames in the linear regime)\n");
    if (!a.problems[k].empty()) std::fprintf(out, "         warning: not the linear rate: %s\n", a.problems[k].c_str());
  }
}

}  // namespace

int analyze_meanfield_command(const AnalyzeRequest& request) {
  const MeanFieldAnalysis a = analyze_meanfield(request.run_file, request.options.density);
  // analyze_command passes the checked destination (the sibling file or --observables-file).
  const std::filesystem::path observables =
      request.observables_file ? *request.observables_file : ObservablesFile::sibling_path(request.run_file);
  std::string where;
  if (request.write_observables) {
    where = observables.string();
    write_observables_file(observables, request.run_file, [&](ObservablesFile& file) {
      write_meanfield_observables(file, a);
      file.set_text("analysis", "report_json", meanfield_json(a, request, where));
    });
  }
  if (request.json) write_report(*request.json, meanfield_json(a, request, where));
  if (!request.quiet) print_meanfield(stdout, a, request);
  return 0;
}

}  // namespace normdyn::app
