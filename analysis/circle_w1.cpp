#include "normdyn/analysis/circle_w1.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

namespace normdyn::analysis {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

double wrap(double phi) {
  double x = std::fmod(phi, kTwoPi);
  if (x < 0.0) x += kTwoPi;
  return x >= kTwoPi ? 0.0 : x;
}

struct Normalized {
  std::vector<std::pair<double, double>> atoms;  // (angle in [0, 2π), mass)
  std::vector<double> cells;                     // density per radian
};

// Total mass 1; atoms carry `sign`.
Normalized normalize(const CircleMeasure& m, double sign) {
  assert(m.masses.empty() || m.masses.size() == m.atoms.size());
  double atom_mass = 0.0;
  for (std::size_t i = 0; i < m.atoms.size(); ++i) atom_mass += m.masses.empty() ? 1.0 : m.masses[i];
  if (m.masses.empty() && !m.atoms.empty()) atom_mass = static_cast<double>(m.atoms.size());
  const double h = m.cells.empty() ? 0.0 : kTwoPi / static_cast<double>(m.cells.size());
  const double cell_mass = std::accumulate(m.cells.begin(), m.cells.end(), 0.0) * h;
  const double total = atom_mass + cell_mass;
  Normalized out;
  for (std::size_t i = 0; i < m.atoms.size(); ++i)
    out.atoms.emplace_back(wrap(m.atoms[i]), sign * (m.masses.empty() ? 1.0 : m.masses[i]) / total);
  out.cells = m.cells;
  for (double& c : out.cells) c /= total;
  return out;
}

double density_at(const std::vector<double>& cells, double x) {
  if (cells.empty()) return 0.0;
  const auto m = cells.size();
  const auto i = std::min(m - 1, static_cast<std::size_t>(x / kTwoPi * static_cast<double>(m)));
  return cells[i];
}

struct Segment {
  double length, from, to;  // D goes linearly from `from` to `to`
};

double length_below(const std::vector<Segment>& segments, double c) {
  double total = 0.0;
  for (const Segment& s : segments) {
    const double lo = std::min(s.from, s.to), hi = std::max(s.from, s.to);
    if (hi <= c)
      total += s.length;
    else if (lo < c)
      total += s.length * (c - lo) / (hi - lo);
  }
  return total;
}

double integral_abs(const std::vector<Segment>& segments, double c) {
  double total = 0.0;
  for (const Segment& s : segments) {
    const double u = s.from - c, v = s.to - c;
    if (u * v >= 0.0)
      total += s.length * std::abs(u + v) * 0.5;
    else
      total += s.length * (u * u + v * v) / (2.0 * std::abs(v - u));
  }
  return total;
}

}  // namespace

double wasserstein1_circle(const CircleMeasure& a, const CircleMeasure& b) {
  const Normalized na = normalize(a, 1.0), nb = normalize(b, -1.0);
  std::vector<std::pair<double, double>> events = na.atoms;
  events.insert(events.end(), nb.atoms.begin(), nb.atoms.end());
  for (const auto* cells : {&na.cells, &nb.cells})
    for (std::size_t i = 0; i < cells->size(); ++i)
      events.emplace_back(kTwoPi * static_cast<double>(i) / static_cast<double>(cells->size()), 0.0);
  events.emplace_back(0.0, 0.0);
  std::sort(events.begin(), events.end());

  std::vector<Segment> segments;
  double d = 0.0;
  for (std::size_t k = 0; k < events.size(); ++k) {
    d += events[k].second;
    const double x0 = events[k].first;
    const double x1 = k + 1 < events.size() ? events[k + 1].first : kTwoPi;
    if (x1 <= x0) continue;
    const double mid = 0.5 * (x0 + x1);
    const double slope = density_at(na.cells, mid) - density_at(nb.cells, mid);
    segments.push_back({x1 - x0, d, d + slope * (x1 - x0)});
    d += slope * (x1 - x0);
  }
  // The median of D under dφ: bisection on the length where D < c.
  double lo = 0.0, hi = 0.0;
  for (const Segment& s : segments) {
    lo = std::min({lo, s.from, s.to});
    hi = std::max({hi, s.from, s.to});
  }
  for (int it = 0; it < 200 && hi - lo > 1e-17; ++it) {
    const double c = 0.5 * (lo + hi);
    (length_below(segments, c) < std::numbers::pi ? lo : hi) = c;
  }
  return integral_abs(segments, 0.5 * (lo + hi));
}

}  // namespace normdyn::analysis
