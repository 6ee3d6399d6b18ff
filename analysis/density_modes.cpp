#include "normdyn/analysis/density_modes.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <cstdio>
#include <numbers>

#include "normdyn/analysis/circle_w1.hpp"

namespace normdyn::analysis {

std::vector<DensityCluster> density_clusters(std::span<const double> cells, const DensityOptions& options) {
  std::vector<DensityCluster> out;
  const std::size_t m = cells.size();
  if (m == 0) return out;
  const double two_pi = 2.0 * std::numbers::pi;
  const double width = two_pi / static_cast<double>(m);
  double mass = 0.0;
  for (double v : cells) mass += v * width;
  if (!(mass > 0.0)) return out;
  // Cyclic arcs above the level; an arc crossing φ = 0 is joined with its other end.
  const double level = options.cluster_level * mass / two_pi;
  std::vector<char> above(m);
  for (std::size_t i = 0; i < m; ++i) above[i] = cells[i] > level;
  // The whole circle above the level is impossible for a normalized density with level ≥ 1/(2π).
  if (std::all_of(above.begin(), above.end(), [](char a) { return a; })) return out;
  // Start the sweep just after a cell below the level, so that no arc is split.
  std::size_t start = 0;
  while (above[start]) ++start;
  std::size_t i = 0;
  while (i < m) {
    if (!above[(start + i) % m]) {
      ++i;
      continue;
    }
    // Moments about the arc's first cell, in cells (the arc never wraps onto itself).
    double arc_mass = 0.0, first = 0.0, second = 0.0, arc_peak = -1.0, arc_centre = 0.0;
    for (double offset = 0.0; i < m && above[(start + i) % m]; ++i, offset += 1.0) {
      const std::size_t j = (start + i) % m;
      const double cell_mass = cells[j] * width;
      arc_mass += cell_mass;
      first += cell_mass * offset;
      second += cell_mass * offset * offset;
      if (cells[j] > arc_peak) arc_peak = cells[j], arc_centre = (static_cast<double>(j) + 0.5) * width;
    }
    if (arc_mass / mass < options.cluster_min_mass) continue;
    const double mean = first / arc_mass;
    const double variance_cells = std::max(0.0, second / arc_mass - mean * mean) + 1.0 / 12.0;
    out.push_back({arc_mass / mass, arc_centre, std::sqrt(variance_cells) * width});
  }
  return out;
}

double narrowest_cluster_cells(std::span<const DensityCluster> clusters, std::size_t cells) {
  double narrowest = std::numeric_limits<double>::infinity();
  if (clusters.empty() || cells == 0) return narrowest;
  for (const DensityCluster& c : clusters) narrowest = std::min(narrowest, c.width);
  return narrowest * static_cast<double>(cells) / (2.0 * std::numbers::pi);
}

DensityFigures density_figures(std::span<const double> cells, const DensityOptions& options) {
  DensityFigures f;
  const std::size_t m = cells.size();
  if (m == 0) return f;
  const double two_pi = 2.0 * std::numbers::pi;
  const double width = two_pi / static_cast<double>(m);
  double mass = 0.0, peak = 0.0;
  for (double v : cells) mass += v * width, peak = std::max(peak, v);
  f.max_density = mass > 0.0 ? peak / mass : 0.0;
  // Modes: ∫_cell e^{−ikφ} dφ = e^{−ikφ_c} · 2 sin(kw/2)/k.
  for (int k = 1; k <= options.max_mode; ++k) {
    std::complex<double> sum = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      const double centre = (static_cast<double>(i) + 0.5) * width;
      sum += cells[i] * std::polar(1.0, -k * centre);
    }
    const double cell_factor = 2.0 * std::sin(0.5 * k * width) / k;
    f.mode_amplitude.push_back(mass > 0.0 ? std::abs(sum) * cell_factor / mass : 0.0);
  }
  const std::vector<DensityCluster> clusters = density_clusters(cells, options);
  for (const DensityCluster& c : clusters) {
    f.cluster_mass.push_back(c.mass);
    f.cluster_centre.push_back(c.centre);
    f.cluster_width.push_back(c.width);
  }
  f.narrowest_cluster_cells = narrowest_cluster_cells(clusters, m);
  f.cluster_count = static_cast<int>(f.cluster_mass.size());
  CircleMeasure rho, uniform;
  rho.cells.assign(cells.begin(), cells.end());
  uniform.cells.assign(1, 1.0);
  f.w1_to_uniform = mass > 0.0 ? wasserstein1_circle(rho, uniform) : std::numeric_limits<double>::quiet_NaN();
  return f;
}

ModeRate linear_mode_rate(std::span<const double> t, std::span<const double> amplitude, double linear_limit,
                          double floor) {
  ModeRate r;
  r.rate = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x, y;
  for (std::size_t i = 0; i < std::min(t.size(), amplitude.size()); ++i) {
    if (!(amplitude[i] <= linear_limit)) break;
    if (amplitude[i] > floor) x.push_back(t[i]), y.push_back(std::log(amplitude[i]));
  }
  if (x.size() < 3) return r;
  const double k = static_cast<double>(x.size());
  double sx = 0, sy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i];
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    sxx += (x[i] - sx / k) * (x[i] - sx / k), sxy += (x[i] - sx / k) * (y[i] - sy / k);
  if (!(sxx > 0)) return r;
  r.rate = sxy / sxx;
  r.points = x.size();
  r.t_start = x.front();
  r.t_end = x.back();
  return r;
}

ModeRates linear_mode_rates(std::span<const double> t, const std::vector<std::vector<double>>& amplitude,
                            double linear_limit, double floor) {
  ModeRates out;
  const std::size_t frames = std::min(t.size(), amplitude.size());
  const std::size_t modes = frames ? amplitude.front().size() : 0;
  std::size_t end = 0;  // the common linear regime: frames [0, end)
  while (end < frames && *std::max_element(amplitude[end].begin(), amplitude[end].end()) <= linear_limit) ++end;
  for (std::size_t k = 1; k <= modes; ++k) {
    std::vector<double> a;
    std::string problem;
    for (std::size_t f = 0; f < end; ++f) {
      const auto& m = amplitude[f];
      a.push_back(m[k - 1]);
      double forcing = 0.0;
      for (std::size_t i = 1; i < k; ++i) forcing += m[i - 1] * m[k - i - 1];
      for (std::size_t i = 1; i + k <= modes; ++i) forcing += m[i - 1] * m[i + k - 1];
      if (problem.empty() && forcing > m[k - 1]) {
        char buffer[160];
        std::snprintf(buffer, sizeof buffer,
                      "driven: at t = %.4g the quadratic coupling of the other modes (%.3g) exceeds this mode (%.3g)",
                      t[f], forcing, m[k - 1]);
        problem = buffer;
      }
    }
    out.rates.push_back(linear_mode_rate(t.first(end), a, linear_limit, floor));
    out.problems.push_back(problem);
  }
  return out;
}

}  // namespace normdyn::analysis
