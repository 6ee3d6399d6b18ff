#include "normdyn/studies/reproduce.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "normdyn/analysis/symmetric_ode.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/studies/attention.hpp"
#include "normdyn/studies/symmetric.hpp"
#include "normdyn/version.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {

// ---- Theorem 4.2 over a grid of (n, d): Q = K = V = I, and Gaussian Q, K, V scaled to |Q^T K| = |V| = 1.
void theorem_4_2(Builder& b) {
  Reproduction& r = b.report();
  const ReproduceOptions& o = b.options();
  for (const bool unit_norm : {false, true}) {
    AttentionStudyRequest request;
    if (o.quick) {
      request.n = {64, 256};
      request.d = {16, 64};
      request.seeds = 2;
    }
    request.threads = o.threads;
    request.unit_norm_qkv = unit_norm;
    std::vector<AttentionStudyRow> rows;
    b.study(unit_norm ? "theorem 4.2: attention at a uniform start, random Q, K, V of norm 1"
                      : "theorem 4.2: attention at a uniform start",
            [&] { rows = attention_study(request); });
    double hi = 0.0, lo = std::numeric_limits<double>::infinity();
    int with_hyp = 0;
    // Scaling: the log-log slope of max|A| against the bound over the grid.
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    nlohmann::json grid = nlohmann::json::array();
    for (const auto& row : rows) {
      const double ratio = row.max_attention_max / row.bound;
      grid.push_back({{"n", row.n},
                      {"d", row.d},
                      {"hypotheses", row.hypotheses},
                      {"max_attention", row.max_attention_max},
                      {"bound", row.bound},
                      {"ratio", ratio}});
      if (!row.hypotheses) continue;
      ++with_hyp;
      hi = std::max(hi, ratio);
      lo = std::min(lo, ratio);
      const double lx = std::log(row.bound), ly = std::log(row.max_attention_max);
      sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m += 1;
    }
    if (!unit_norm) r.attention = grid;  // the figure's grid
    const double slope = m >= 2 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : std::numeric_limits<double>::quiet_NaN();
    std::string ns, ds;
    for (auto v : request.n) ns += (ns.empty() ? "" : ",") + std::to_string(v);
    for (auto v : request.d) ds += (ds.empty() ? "" : ",") + std::to_string(v);
    b.row({unit_norm ? "4.2-random-unit-norm" : "4.2-identity",
           std::string("Theorem 4.2 (beta = 1, ") +
               (unit_norm ? "Gaussian Q, K, V scaled to |Q^T K| = |V| = 1" : "Q = K = V = I") +
               ", uniform start, e^sqrt(d) >= n log n >= d): max_j |A_j(0)| <= C (sqrt(log n/n) + log n/d)",
           "normdyn study theorem-4.2 --n " + ns + " --d " + ds + " --seeds " + std::to_string(request.seeds) +
               (unit_norm ? " --qkv gaussian_unit_norm" : ""),
           with_hyp
               ? "ratio max|A|/bound in [" + num(lo, 4) + ", " + num(hi, 4) + "] over the " + std::to_string(with_hyp) +
                     " grid points meeting the hypotheses; log-log slope of max|A| against the bound " + num(slope, 3)
               : "no grid point meets the hypotheses",
           "C not given by the theorem; C = 1 is the check the analysis declares; slope 1 if the bound is tight",
           "largest ratio <= 1", with_hyp == 0 ? "inconclusive" : (hi <= 1.0 ? "holds" : "fails")});
  }
}

std::vector<ReproductionGroup> reproduction_groups() {
  std::vector<ReproductionGroup> out;
  for (const auto& g : kReproductionStudies) out.push_back({std::string(g.key), g.uses_engine});
  return out;
}

void require_groups(const std::vector<std::string>& names, const std::string& key) {
  for (const std::string& name : names)
    if (std::none_of(std::begin(kReproductionStudies), std::end(kReproductionStudies),
                     [&](const auto& g) { return g.key == name; })) {
      std::string known;
      for (const auto& g : kReproductionStudies) known += (known.empty() ? "" : ", ") + std::string(g.key);
      throw InputError(key, "no group '" + name + "' (groups: " + known + ")");
    }
}

Reproduction reproduce(const ReproduceOptions& options) {
  require_groups(options.only, "only");
  Reproduction r;
  r.quick = options.quick;
  r.only = options.only;
  r.engine = options.engine.name;
  Builder b(r, options);
  for (const auto& g : kReproductionStudies)
    if (options.only.empty() || std::find(options.only.begin(), options.only.end(), g.key) != options.only.end())
      g.run(b);
  const std::vector<std::string> not_measured = {
      "Continuum limits: the mean-field grid order is measured for Post-LN only; the (phi, r) grid of the radius "
      "schemes is checked by the test suite (tests/solvers/study_meanfield_limits.cpp), not here.",
  };
  r.not_measured.insert(r.not_measured.end(), not_measured.begin(), not_measured.end());
  return r;
}

bool any_failed(const Reproduction& r) {
  return std::any_of(r.rows.begin(), r.rows.end(), [](const ReproductionRow& row) { return row.verdict == "fails"; });
}

std::string command_line(const Reproduction& r) {
  std::string s = r.quick ? "normdyn reproduce --quick" : "normdyn reproduce";
  for (const std::string& g : r.only) s += " --only " + g;
  return s;
}

nlohmann::json to_json(const Reproduction& r) {
  nlohmann::json j;
  j["normdyn"] = {{"version", std::string(version())},
                  {"revision", std::string(revision())},
                  {"compiler", std::string(compiler())},
                  {"build_type", std::string(build_type())}};
  j["quick"] = r.quick;
  j["engine"] = r.engine;
  j["only"] = r.only;
  j["command"] = command_line(r);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"id", row.id},
                    {"statement", row.statement},
                    {"command", row.command},
                    {"measured", row.measured},
                    {"theory", row.theory},
                    {"criterion", row.criterion},
                    {"verdict", row.verdict}});
  j["rows"] = rows;
  nlohmann::json t = nlohmann::json::array();
  for (const auto& s : r.timings) t.push_back({{"study", s.name}, {"wall_seconds", s.seconds}});
  j["timings"] = t;
  j["not_measured"] = r.not_measured;
  j["theorem_4_2_grid"] = r.attention;
  return j;
}

std::string to_markdown(const Reproduction& r, const std::vector<std::string>& figures,
                        const std::string& figure_note) {
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string md = "# Reproduction of \"Normalization in Attention Dynamics\" (arXiv:2510.22026)\n\n";
  md += "Generated by `" + command_line(r) + "`, normdyn " + std::string(version()) + ", revision " +
        std::string(revision()) + " (" + std::string(compiler()) + ", " + std::string(build_type()) + ")" +
        (r.quick ? ". **Quick sizes**: see the commands of each row." : ".") + "\n\n";
  if (!r.only.empty()) {
    md += "**Partial reproduction**: only the groups";
    for (std::size_t i = 0; i < r.only.size(); ++i) md += std::string(i ? ", `" : " `") + r.only[i] + "`";
    md += "; the other statements were not measured.\n\n";
  }
  int counts[4] = {0, 0, 0, 0};
  for (const auto& row : r.rows)
    counts[row.verdict == "holds" ? 0 : row.verdict == "fails" ? 1 : row.verdict == "inconclusive" ? 2 : 3]++;
  md += std::to_string(r.rows.size()) + " rows: " + std::to_string(counts[0]) + " hold, " + std::to_string(counts[1]) +
        " fail, " + std::to_string(counts[2]) + " inconclusive, " + std::to_string(counts[3]) + " differ.\n\n";
  md += "| id | statement | measured | theory | criterion | verdict |\n|---|---|---|---|---|---|\n";
  for (const auto& row : r.rows)
    md += "| " + cell(row.id) + " | " + cell(row.statement) + " | " + cell(row.measured) + " | " + cell(row.theory) +
          " | " + cell(row.criterion) + " | **" + row.verdict + "** |\n";
  md += "\n## Commands of the rows\n\n";
  for (const auto& row : r.rows) md += "* `" + row.id + "`: `" + row.command + "`\n";
  md += "\n## Not measured\n\n";
  for (const auto& s : r.not_measured) md += "* " + s + "\n";
  md += "\n## Wall time of each study\n\n| study | seconds |\n|---|---|\n";
  for (const auto& s : r.timings) md += "| " + cell(s.name) + " | " + num(s.seconds, 3) + " |\n";
  md += "\n## Figures\n\n";
  for (const auto& f : figures) md += "![" + f + "](" + f + ")\n\n";
  if (!figure_note.empty()) md += figure_note + "\n";
  return md;
}

}  // namespace normdyn::studies
