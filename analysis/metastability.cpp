#include "normdyn/analysis/metastability.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cmath>
#include <deque>

namespace normdyn::analysis {
namespace {

struct Stretch {
  std::size_t first = 0, last = 0;
  bool found = false;
};

// The longest stretch [i, j] ⊆ [a, b] with max E / min E ≤ 1 + tol (sliding window with monotone
// deques of the maximum and minimum); ties go to the earliest.
Stretch longest_flat(std::span<const double> e, std::size_t a, std::size_t b, double tol) {
  std::deque<std::size_t> hi, lo;  // indices with decreasing / increasing energies
  Stretch best;
  std::size_t i = a;
  for (std::size_t j = a; j <= b; ++j) {
    while (!hi.empty() && e[hi.back()] <= e[j]) hi.pop_back();
    hi.push_back(j);
    while (!lo.empty() && e[lo.back()] >= e[j]) lo.pop_back();
    lo.push_back(j);
    while (e[hi.front()] > (1.0 + tol) * e[lo.front()]) {
      ++i;
      if (hi.front() < i) hi.pop_front();
      if (lo.front() < i) lo.pop_front();
    }
    if (!best.found || j - i > best.last - best.first) best = {i, j, true};
  }
  return best;
}

void collect(std::span<const double> t, std::span<const double> e, std::int64_t count, std::size_t a, std::size_t b,
             const PlateauOptions& options, std::vector<Plateau>& out) {
  const Stretch s = longest_flat(e, a, b, options.energy_tolerance);
  if (!s.found) return;
  if (s.last - s.first + 1 < std::max<std::size_t>(options.min_frames, 1)) return;
  if (t[s.last] - t[s.first] < options.min_duration) return;
  // ln(t_end / t_start); a stretch from t = 0 has unbounded log-duration.
  if (options.min_log_duration > 0.0 && t[s.first] > 0.0 && std::log(t[s.last] / t[s.first]) < options.min_log_duration)
    return;
  out.push_back({s.first, s.last, t[s.first], t[s.last], count, e[s.first], e[s.last]});
}

}  // namespace

std::vector<Plateau> find_plateaus(std::span<const double> t, std::span<const std::int64_t> counts,
                                   std::span<const double> energy, const PlateauOptions& options) {
  assert(t.size() == counts.size() && t.size() == energy.size());
  std::vector<Plateau> plateaus;
  std::size_t a = 0;
  while (a < t.size()) {
    std::size_t b = a;
    while (b + 1 < t.size() && counts[b + 1] == counts[a]) ++b;
    if (!(options.skip_start && a == 0)) collect(t, energy, counts[a], a, b, options, plateaus);
    a = b + 1;
  }
  std::sort(plateaus.begin(), plateaus.end(),
            [](const Plateau& x, const Plateau& y) { return x.first_frame < y.first_frame; });
  return plateaus;
}

std::string staircase(const std::vector<Plateau>& plateaus) {
  std::string out;
  char buffer[96];
  for (const Plateau& p : plateaus) {
    if (!out.empty()) out += " -> ";
    std::snprintf(buffer, sizeof buffer, "%lld [%.4g, %.4g]", static_cast<long long>(p.count), p.t_start, p.t_end);
    out += buffer;
  }
  return out;
}

}  // namespace normdyn::analysis
