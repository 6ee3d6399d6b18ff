// The exact 1-Wasserstein distance on the circle against known values and brute force.
#define BOOST_TEST_MODULE circle_w1
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <numbers>
#include <numeric>

#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/random.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using analysis::CircleMeasure;
using analysis::wasserstein1_circle;

namespace {
constexpr double kPi = std::numbers::pi;
double arc(double a, double b) {
  const double d = std::abs(std::remainder(a - b, 2.0 * kPi));
  return d;
}
}  // namespace

BOOST_AUTO_TEST_CASE(known_distances) {
  // Two atoms: the arc length, the short way round.
  BOOST_TEST(std::abs(wasserstein1_circle({{0.1}, {}, {}}, {{6.0}, {}, {}}) - arc(0.1, 6.0)) < 1e-14);
  // Uniform against an atom: ∫ |x| dx / 2π over [−π, π] = π/2.
  const CircleMeasure uniform{{}, {}, std::vector<double>(64, 1.0)};
  BOOST_TEST(std::abs(wasserstein1_circle(uniform, {{2.0}, {}, {}}) - kPi / 2.0) < 1e-13);
  // A measure against itself, and against a rotated uniform grid measure.
  BOOST_TEST(wasserstein1_circle(uniform, uniform) < 1e-15);
  // Half the mass moved from one atom to the antipode: π / 2.
  BOOST_TEST(std::abs(wasserstein1_circle({{0.0, kPi}, {0.5, 0.5}, {}}, {{0.0}, {}, {}}) - kPi / 2.0) < 1e-14);
  // n equally spaced atoms against the uniform density: n × (2 × ∫_0^{π/n} x dx / 2π) = π / (2n).
  std::vector<double> atoms;
  for (int j = 0; j < 16; ++j) atoms.push_back((j + 0.5) * 2.0 * kPi / 16);
  BOOST_TEST(std::abs(wasserstein1_circle({atoms, {}, {}}, uniform) - kPi / 32.0) < 1e-13);
}

BOOST_AUTO_TEST_CASE(equal_atoms_match_the_best_cyclic_assignment) {
  // For n atoms of equal mass on each side, W1 is the optimal assignment, a cyclic shift of the
  // sorted lists: brute force over the shifts.
  Random rng(4, RandomStream::initial_density, 77);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 2 + trial % 7;
    std::vector<double> a(n), b(n);
    for (auto& v : a) v = 2.0 * kPi * rng.uniform();
    for (auto& v : b) v = 2.0 * kPi * rng.uniform();
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    double best = 1e300;
    for (int shift = 0; shift < n; ++shift) {
      double cost = 0.0;
      for (int i = 0; i < n; ++i) cost += arc(a[i], b[(i + shift) % n]) / n;
      best = std::min(best, cost);
    }
    BOOST_TEST(std::abs(wasserstein1_circle({a, {}, {}}, {b, {}, {}}) - best) < 1e-12);
  }
}
