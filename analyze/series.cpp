// The per-frame series of an analysis, for normdyn.observables and the observables file.
#include <algorithm>
#include <limits>

#include "normdyn/analyze/analyze.hpp"
#include "normdyn/observable_registry.hpp"

namespace normdyn {
namespace {

// Cluster centres are kept when they take at most this many values (frames × clusters × d).
constexpr std::uint64_t kMaxCentreValues = 20'000'000;

ObservableSeriesOut from_registry(const ObservableInfo& info, std::vector<double> values) {
  ObservableSeriesOut s;
  s.name = info.name;
  s.unit = info.unit;
  s.description = info.description;
  s.integer = info.integer;
  s.values = std::move(values);
  return s;
}

void particle_series(const AnalysisResult& r, bool all, std::vector<ObservableSeriesOut>& out) {
  for (std::size_t k = 0; k < r.observable_names.size(); ++k) {
    out.push_back(from_registry(*find_observable(r.observable_names[k]), r.observable_values[k]));
    if (r.observable_names[k] == "mean_angular_speed")
      out.back().attributes.emplace_back("method", r.angular_speed_method);
  }
  const std::size_t frames = r.clusters.size();
  {
    ObservableSeriesOut s;
    s.name = "cluster_count";
    s.unit = "1";
    s.description = "number of clusters (cosine > 1 - epsilon, single linkage)";
    s.integer = true;
    for (const auto& c : r.clusters) s.values.push_back(static_cast<double>(c.count()));
    out.push_back(std::move(s));
  }
  if (!all || frames == 0) return;
  const auto n = static_cast<std::uint64_t>(r.clusters.front().label.size());
  std::size_t kmax = 0;
  ObservableSeriesOut labels{
      "cluster_label", "1", "id of each token's cluster: the smallest token index in it", true, {n}, {"token"}, {}, {}};
  for (const auto& c : r.clusters) {
    labels.values.insert(labels.values.end(), c.label.begin(), c.label.end());
    kmax = std::max(kmax, c.count());
  }
  out.push_back(std::move(labels));
  ObservableSeriesOut ids{
      "cluster_id", "1", "cluster ids in increasing order, padded with -1", true, {kmax}, {"cluster"}, {}, {}};
  ObservableSeriesOut sizes{"cluster_size",
                            "1",
                            "cluster sizes in the order of cluster_id, padded with 0",
                            true,
                            {kmax},
                            {"cluster"},
                            {},
                            {}};
  ids.values.assign(frames * kmax, -1.0);
  sizes.values.assign(frames * kmax, 0.0);
  for (std::size_t i = 0; i < frames; ++i)
    for (std::size_t k = 0; k < r.clusters[i].count(); ++k) {
      ids.values[i * kmax + k] = static_cast<double>(r.clusters[i].ids[k]);
      sizes.values[i * kmax + k] = static_cast<double>(r.clusters[i].sizes[k]);
    }
  out.push_back(std::move(ids));
  out.push_back(std::move(sizes));
  const auto d = static_cast<std::uint64_t>(r.clusters.front().centres.cols());
  if (frames * kmax * d > kMaxCentreValues) return;
  ObservableSeriesOut centres{"cluster_centre",
                              "1",
                              "normalized mean direction of each cluster, in the order of cluster_id, padded with NaN",
                              false,
                              {kmax, d},
                              {"cluster", "component"},
                              {},
                              {}};
  centres.values.assign(frames * kmax * d, kNaN);
  for (std::size_t i = 0; i < frames; ++i)
    for (std::size_t k = 0; k < r.clusters[i].count(); ++k)
      for (std::uint64_t c = 0; c < d; ++c)
        centres.values[(i * kmax + k) * d + c] = r.clusters[i].centres(static_cast<Index>(k), static_cast<Index>(c));
  out.push_back(std::move(centres));
}

void meanfield_series(const MeanFieldAnalysis& a, std::vector<ObservableSeriesOut>& out) {
  const std::size_t modes = a.frames.empty() ? 0 : a.frames.front().mode_amplitude.size();
  for (const auto& o : kDensityObservables) {
    std::vector<double> values;
    for (const auto& f : a.frames) {
      if (o.name == "mode_amplitude")
        values.insert(values.end(), f.mode_amplitude.begin(), f.mode_amplitude.end());
      else if (o.name == "density_cluster_count")
        values.push_back(f.cluster_count);
      else if (o.name == "w1_to_uniform")
        values.push_back(f.w1_to_uniform);
      else if (o.name == "max_density")
        values.push_back(f.max_density);
      else
        throw std::logic_error("density observable without a value: " + std::string(o.name));
    }
    ObservableSeriesOut s = from_registry(o, std::move(values));
    if (o.name == "mode_amplitude") {
      s.inner = {static_cast<std::uint64_t>(modes)};
      s.inner_names = {"mode"};
    }
    out.push_back(std::move(s));
  }
  ObservableSeriesOut width{"narrowest_cluster_cells",
                            "1",
                            "second-moment width, in grid cells, of the narrowest density cluster (+inf without "
                            "clusters); below 1 the clusters are under-resolved",
                            false,
                            {},
                            {},
                            {},
                            {}};
  for (const auto& f : a.frames) width.values.push_back(f.narrowest_cluster_cells);
  out.push_back(std::move(width));
}

}  // namespace

std::vector<ObservableSeriesOut> observable_series(const RunAnalysis& a, bool all) {
  std::vector<ObservableSeriesOut> out;
  if (a.particles) particle_series(*a.particles, all, out);
  if (a.meanfield) meanfield_series(*a.meanfield, out);
  return out;
}

}  // namespace normdyn
