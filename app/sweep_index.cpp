#include "sweep_index.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <stdexcept>

#include "normdyn/errors.hpp"
#include "normdyn/observable_registry.hpp"
#include "normdyn/stopwatch.hpp"
#include "normdyn/version.hpp"

namespace normdyn::app {
namespace {

// The column of one key, typed as the configuration key is; points where the key does not apply
// hold NaN, -1 or "".
TableValues axis_column(const std::vector<IndexedPoint>& points, std::size_t column) {
  const ConfigScalar* first = nullptr;
  for (const auto& p : points) {
    const ConfigScalar& v = p.columns[column];
    if (const auto* s = std::get_if<std::string>(&v); s && s->empty()) continue;
    first = &v;
    break;
  }
  if (first && std::holds_alternative<double>(*first)) {
    std::vector<double> v;
    for (const auto& p : points) {
      const auto* x = std::get_if<double>(&p.columns[column]);
      v.push_back(x ? *x : kNaN);
    }
    return v;
  }
  if (first && (std::holds_alternative<std::int64_t>(*first) || std::holds_alternative<bool>(*first))) {
    std::vector<std::int64_t> v;
    for (const auto& p : points) {
      const ConfigScalar& x = p.columns[column];
      v.push_back(std::holds_alternative<bool>(x)           ? (std::get<bool>(x) ? 1 : 0)
                  : std::holds_alternative<std::int64_t>(x) ? std::get<std::int64_t>(x)
                                                            : -1);
    }
    return v;
  }
  std::vector<std::string> v;
  for (const auto& p : points) v.push_back(value_label(p.columns[column]));
  return v;
}

TableValues subset(const TableValues& column, const std::vector<std::size_t>& rows) {
  return std::visit(
      [&](const auto& values) -> TableValues {
        std::decay_t<decltype(values)> out;
        for (std::size_t r : rows) out.push_back(values[r]);
        return out;
      },
      column);
}

// Rows of equal length padded with NaN into a [rows, cols] matrix.
TableMatrix padded(const std::string& name, const std::vector<const std::vector<double>*>& rows) {
  std::size_t cols = 0;
  for (const auto* r : rows) cols = std::max(cols, r->size());
  TableMatrix m{name, rows.size(), cols, std::vector<double>(rows.size() * cols, kNaN)};
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i]->begin(), rows[i]->end(), m.values.begin() + static_cast<std::ptrdiff_t>(i * cols));
  return m;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "" : (v > 0 ? "inf" : "-inf");
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

void write_csv(const std::filesystem::path& path, const std::vector<TableColumn>& columns) {
  std::string text;
  for (std::size_t c = 0; c < columns.size(); ++c) text += (c ? "," : "") + csv_field(columns[c].name);
  text += "\n";
  const std::size_t rows = std::visit([](const auto& v) { return v.size(); }, columns.front().values);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c) text += ",";
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::vector<double>>)
              text += csv_number(v[r]);
            else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
              text += std::to_string(v[r]);
            else
              text += csv_field(v[r]);
          },
          columns[c].values);
    }
    text += "\n";
  }
  write_atomically(path, text);
}

using SeriesMember = std::vector<double> analysis::RunSeries::*;
using StatMember = std::vector<double> analysis::EnsembleSeries::*;

// Where each entry of kEnsembleSeries lives in the analysis' structures.
SeriesMember run_series_member(std::string_view name) {
  if (name == "cluster_count") return &analysis::RunSeries::cluster_count;
  if (name == "pair_fraction") return &analysis::RunSeries::pair_fraction;
  if (name == "variance") return &analysis::RunSeries::variance;
  if (name == "one_minus_mean_cosine") return &analysis::RunSeries::one_minus_mean_cosine;
  throw std::logic_error("sweep index: no per-run series for " + std::string(name));
}

struct EnsembleColumns {
  StatMember mean, std, min, max;
};

const EnsembleColumns* ensemble_members(std::string_view name) {
  using E = analysis::EnsembleSeries;
  static const EnsembleColumns clusters{&E::cluster_mean, &E::cluster_std, &E::cluster_min, &E::cluster_max};
  static const EnsembleColumns pairs{&E::pair_fraction_mean, &E::pair_fraction_std, nullptr, nullptr};
  static const EnsembleColumns sync{&E::sync_probability, nullptr, nullptr, nullptr};
  if (name == "cluster_count") return &clusters;
  if (name == "pair_fraction") return &pairs;
  if (name == "sync_probability") return &sync;
  return nullptr;
}

}  // namespace

std::vector<std::int64_t> ensemble_groups(const SweepSpec& spec, const std::vector<IndexedPoint>& points) {
  std::size_t over = spec.axes.size();
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (spec.axes[a].key == spec.ensemble.over && spec.axes[a].kind != SweepAxisKind::points) over = a;
  std::map<std::vector<std::size_t>, std::int64_t> ids;
  std::vector<std::int64_t> group;
  for (const auto& p : points) {
    std::vector<std::size_t> key = p.coordinates;
    if (over < key.size()) key.erase(key.begin() + static_cast<std::ptrdiff_t>(over));
    const auto [it, fresh] = ids.emplace(key, static_cast<std::int64_t>(ids.size()));
    group.push_back(it->second);
  }
  return group;
}

// Every override on top of the base, one a line, in the order applied: [set], [replace], then the
// command line's --set (which sweep_toml alone does not hold).
static std::string overrides_text(const SweepSpec& spec) {
  std::string text;
  for (const auto& o : spec.set) text += o + '\n';
  return text;
}

// /axes: one row per axis of the sweep.
static TableGroup sweep_axes_group(const SweepSpec& spec) {
  TableGroup axes;
  axes.name = "/axes";
  axes.row_dimension = "axis";
  std::vector<std::string> keys, kinds, dimensions, axis_keys;
  std::vector<std::int64_t> sizes;
  std::vector<std::string> values;
  for (const auto& a : spec.axes) {
    keys.push_back(a.key);
    kinds.push_back(a.kind == SweepAxisKind::product ? "product" : a.kind == SweepAxisKind::zip ? "zip" : "points");
    dimensions.push_back(a.dimension);
    std::string joined_keys;
    for (std::size_t k = 0; k < a.keys.size(); ++k) joined_keys += (k ? "," : "") + a.keys[k];
    axis_keys.push_back(joined_keys);
    sizes.push_back(static_cast<std::int64_t>(a.values.size()));
    std::string joined;
    for (std::size_t i = 0; i < a.values.size(); ++i) joined += (i ? ", " : "") + a.values[i];
    values.push_back("[" + joined + "]");
  }
  axes.columns = {{"key", keys},   {"size", sizes},           {"values", values},
                  {"kind", kinds}, {"dimension", dimensions}, {"keys", axis_keys}};
  return axes;
}

// /ensemble: the statistics of the runs of each group (the values of /runs/group) over the frames.
static TableGroup sweep_ensemble_group(const SweepSpec& spec, const std::vector<IndexedPoint>& points,
                                       const std::vector<JobResult>& results, const std::vector<std::int64_t>& group,
                                       const std::vector<std::pair<std::string, std::size_t>>& columns) {
  const std::size_t n = points.size();
  TableGroup ensemble;
  ensemble.name = "/ensemble";
  ensemble.attributes = {{"over", spec.ensemble.over}, {"phase_axis", spec.ensemble.phase_axis}};
  ensemble.row_dimension = "group";  // the values of /runs/group
  ensemble.column_dimension = "frame";
  ensemble.matrix_coordinates = "time";
  const std::size_t groups =
      group.empty() ? 0 : static_cast<std::size_t>(*std::max_element(group.begin(), group.end()) + 1);
  std::vector<std::size_t> first_row(groups, n);
  std::vector<std::vector<analysis::EnsembleMember>> members(groups);
  std::vector<std::int64_t> group_runs(groups, 0), group_used(groups, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto g = static_cast<std::size_t>(group[i]);
    if (first_row[g] == n) first_row[g] = i;
    ++group_runs[g];
    if (!is_success_status(results[i].status) || results[i].series.size() == 0) continue;
    ++group_used[g];
    members[g].push_back({&results[i].series, results[i].status == "synchronized"});
  }
  std::vector<analysis::EnsembleSeries> stats(groups);
  std::vector<std::string> problems(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    try {
      stats[g] = analysis::ensemble_series(members[g]);
    } catch (const std::invalid_argument& e) {
      problems[g] = e.what();
    }
    if (members[g].empty()) problems[g] = "no successful run";
  }
  for (std::size_t k = 0; k < columns.size(); ++k)
    if (spec.axes[columns[k].second].key != spec.ensemble.over)
      ensemble.columns.push_back({columns[k].first, subset(axis_column(points, k), first_row)});
  ensemble.columns.push_back({"runs", group_runs});
  ensemble.columns.push_back({"runs_used", group_used});
  ensemble.columns.push_back({"problem", problems});
  auto stat_rows = [&](auto member) {
    std::vector<const std::vector<double>*> rows;
    for (const auto& s : stats) rows.push_back(&(s.*member));
    return rows;
  };
  std::vector<std::vector<double>> runs_at(groups);
  for (std::size_t g = 0; g < groups; ++g) runs_at[g].assign(stats[g].runs.begin(), stats[g].runs.end());
  std::vector<const std::vector<double>*> runs_at_rows;
  for (const auto& r : runs_at) runs_at_rows.push_back(&r);
  ensemble.matrices.push_back(padded("time", stat_rows(&analysis::EnsembleSeries::t)));
  ensemble.matrices.push_back(padded("runs_at", runs_at_rows));
  for (const auto& o : kEnsembleSeries) {
    const std::string name(o.name);
    const EnsembleColumns* m = ensemble_members(o.name);
    if (!m) continue;  // a series of each run only
    ensemble.matrices.push_back(padded(name, stat_rows(m->mean)));
    if (m->std) ensemble.matrices.push_back(padded(name + "_std", stat_rows(m->std)));
    if (m->min) ensemble.matrices.push_back(padded(name + "_min", stat_rows(m->min)));
    if (m->max) ensemble.matrices.push_back(padded(name + "_max", stat_rows(m->max)));
  }
  return ensemble;
}

TableFile index_table(const IndexContent& c) {
  const SweepSpec& spec = *c.spec;
  const auto& points = *c.points;
  const auto& results = *c.results;
  const std::size_t n = points.size();
  TableFile file;
  file.attributes = {
      {"schema", std::string(kSweepIndexSchema)},
      {"complete", static_cast<std::int64_t>(c.complete)},
      {"sweep_file", spec.file.string()},
      {"sweep_toml", spec.text},
      {"base_file", spec.base.string()},
      {"base_toml", spec.base_text},
      {"overrides", overrides_text(spec)},
      {"points", static_cast<std::int64_t>(n)},
      {"ensemble_over", spec.ensemble.over},
      {"phase_axis", spec.ensemble.phase_axis},
      {"cluster_epsilon", spec.ensemble.cluster_epsilon},
      {"pair_cosine", spec.ensemble.pair_cosine},
      {"ranks", static_cast<std::int64_t>(c.ranks)},
      {"jobs_per_rank", static_cast<std::int64_t>(c.jobs_per_rank)},
      {"wall_seconds", c.wall_seconds},
      {"command_line", c.command_line},
      {"normdyn_version", std::string(version())},
      {"normdyn_revision", std::string(revision())},
      {"written_utc", utc_now()},
  };

  TableGroup axes = sweep_axes_group(spec);
  const auto columns = sweep_columns(spec);

  // /runs
  const std::vector<std::int64_t> group = ensemble_groups(spec, points);
  std::vector<TableColumn> runs;
  auto ints = [&](auto get) {
    std::vector<std::int64_t> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<std::int64_t>(get(i)));
    return v;
  };
  auto doubles = [&](auto get) {
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<double>(get(i)));
    return v;
  };
  auto strings = [&](auto get) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(get(i));
    return v;
  };
  runs.push_back({"index", ints([&](std::size_t i) { return points[i].index; })});
  runs.push_back({"name", strings([&](std::size_t i) { return points[i].name; })});
  runs.push_back({"file", strings([&](std::size_t i) { return "runs/" + points[i].name + ".h5"; })});
  for (std::size_t k = 0; k < columns.size(); ++k) runs.push_back({columns[k].first, axis_column(points, k)});
  runs.push_back({"group", group});
  runs.push_back({"status", strings([&](std::size_t i) { return results[i].status; })});
  runs.push_back({"action", strings([&](std::size_t i) { return results[i].action; })});
  runs.push_back({"message", strings([&](std::size_t i) { return results[i].message; })});
  runs.push_back({"exit_code", ints([&](std::size_t i) { return results[i].exit_code; })});
  runs.push_back({"rank", ints([&](std::size_t i) { return results[i].rank; })});
  runs.push_back({"started", doubles([&](std::size_t i) { return results[i].started; })});
  runs.push_back({"finished", doubles([&](std::size_t i) { return results[i].finished; })});
  runs.push_back({"elapsed_seconds", doubles([&](std::size_t i) { return results[i].elapsed_seconds; })});
  runs.push_back({"run_seconds", doubles([&](std::size_t i) { return results[i].run_seconds; })});
  runs.push_back({"t_reached", doubles([&](std::size_t i) { return results[i].t_reached; })});
  runs.push_back({"frames", ints([&](std::size_t i) { return results[i].frames; })});
  runs.push_back({"accepted_steps", ints([&](std::size_t i) { return results[i].accepted_steps; })});
  runs.push_back({"rhs_evaluations", ints([&](std::size_t i) { return results[i].rhs_evaluations; })});
  runs.push_back({"final_variance", doubles([&](std::size_t i) { return results[i].figures.final_variance; })});
  runs.push_back({"final_one_minus_mean_cosine",
                  doubles([&](std::size_t i) { return results[i].figures.final_one_minus_mean_cosine; })});
  runs.push_back({"final_cluster_count", ints([&](std::size_t i) { return results[i].figures.final_cluster_count; })});
  runs.push_back(
      {"final_pair_fraction", doubles([&](std::size_t i) { return results[i].figures.final_pair_fraction; })});
  runs.push_back({"t_sync", doubles([&](std::size_t i) { return results[i].figures.t_sync; })});
  runs.push_back({"rate_law", strings([&](std::size_t i) {
                    const auto& f = results[i].figures.rate;
                    return f.ok ? std::string(analysis::to_string(f.law)) : std::string();
                  })});
  runs.push_back({"rate_parameter", doubles([&](std::size_t i) {
                    const auto& f = results[i].figures.rate;
                    return f.ok ? f.parameter : kNaN;
                  })});
  runs.push_back({"rate_stderr", doubles([&](std::size_t i) {
                    const auto& f = results[i].figures.rate;
                    return f.ok ? f.parameter_stderr : kNaN;
                  })});
  // Empty only for a citable fit; else a token of analysis::kProblemTokens (README, "Analysis").
  runs.push_back({"rate_problem", strings([&](std::size_t i) { return results[i].figures.rate.problem; })});
  runs.push_back({"rate_problem_detail", strings([&](std::size_t i) { return results[i].figures.rate.detail; })});
  runs.push_back({"decay_factor", doubles([&](std::size_t i) {
                    const auto& f = results[i].figures.rate;
                    return f.ok ? f.decay_factor : kNaN;
                  })});
  runs.push_back({"systematic", doubles([&](std::size_t i) {
                    const auto& f = results[i].figures.rate;
                    return f.ok ? f.systematic : kNaN;
                  })});

  // /series
  // Dimensions (run, frame): each run's sample times are its row of `time`, a coordinate.
  TableGroup series;
  series.name = "/series";
  series.row_dimension = "run";
  series.column_dimension = "frame";
  series.matrix_coordinates = "time";
  auto series_rows = [&](auto member) {
    std::vector<const std::vector<double>*> rows;
    for (const auto& r : results) rows.push_back(&(r.series.*member));
    return rows;
  };
  series.matrices.push_back(padded("time", series_rows(&analysis::RunSeries::t)));
  for (const auto& o : kEnsembleSeries)
    if (o.per_run) series.matrices.push_back(padded(std::string(o.name), series_rows(run_series_member(o.name))));

  TableGroup ensemble = sweep_ensemble_group(spec, points, results, group, columns);

  file.groups.push_back(std::move(axes));
  TableGroup runs_group;
  runs_group.name = "/runs";
  runs_group.columns = std::move(runs);
  runs_group.row_dimension = "run";
  file.groups.push_back(std::move(runs_group));
  file.groups.push_back(std::move(series));
  file.groups.push_back(std::move(ensemble));
  return file;
}

void write_index(const std::filesystem::path& dir, const IndexContent& content) {
  const TableFile table = index_table(content);
  write_table_file(dir / "index.h5", table);
  for (const auto& g : table.groups)
    if (g.name == "/runs") write_csv(dir / "index.csv", g.columns);
}

}  // namespace normdyn::app
