// Fourier modes, clusters and W1 of densities on the circle with known answers.
#define BOOST_TEST_MODULE analysis_density_modes
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include "normdyn/analysis/density_modes.hpp"
#include "tolerances.hpp"

using namespace normdyn::analysis;
constexpr double kPi = std::numbers::pi;

namespace {
// Cell averages of f on M cells (midpoint rule is enough for these smooth tests, except where stated).
template <class F>
std::vector<double> cells(int m, F f) {
  std::vector<double> v;
  for (int i = 0; i < m; ++i) v.push_back(f((i + 0.5) * 2 * kPi / m));
  return v;
}
}  // namespace

BOOST_AUTO_TEST_CASE(uniform_density_has_no_modes_no_clusters_and_w1_zero) {
  const DensityFigures f = density_figures(std::vector<double>(256, 1.0 / (2 * kPi)));
  for (double a : f.mode_amplitude) BOOST_TEST(std::abs(a) < 1e-14);
  BOOST_TEST(f.cluster_count == 0);
  BOOST_TEST(f.w1_to_uniform < 1e-14);
  BOOST_TEST(f.max_density == 1.0 / (2 * kPi), boost::test_tools::tolerance(normdyn::test::kRoundoff));
}

BOOST_AUTO_TEST_CASE(cosine_perturbation_has_the_planted_amplitude) {
  // (1 + ε cos 3φ)/2π on cells: |c_3|/c_0 = ε/2 · sinc(3w/2) exactly for cell averages of the
  // sampled function (the sampling at the centre gives cell values, whose mode picks up the sinc).
  const int m = 512;
  const double eps = 0.02;
  const DensityFigures f = density_figures(cells(m, [&](double p) { return (1 + eps * std::cos(3 * p)) / (2 * kPi); }));
  const double w = 2 * kPi / m;
  BOOST_TEST(f.mode_amplitude[2] == 0.5 * eps * std::sin(1.5 * w) / (1.5 * w), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(std::abs(f.mode_amplitude[0]) < 1e-14);
  BOOST_TEST(f.cluster_count == 0);
}

BOOST_AUTO_TEST_CASE(two_bumps_are_two_clusters_and_a_point_mass_has_unit_modes) {
  const int m = 1024;
  auto bump = [](double p, double c) { return std::exp(400.0 * (std::cos(p - c) - 1.0)); };
  const DensityFigures f = density_figures(cells(m, [&](double p) { return bump(p, 1.0) + 0.5 * bump(p, 4.0); }));
  BOOST_TEST(f.cluster_count == 2);
  BOOST_TEST(f.cluster_mass[0] + f.cluster_mass[1] > 0.95);
  BOOST_TEST(f.cluster_mass[0] == 2.0 * f.cluster_mass[1], boost::test_tools::tolerance(0.02));
  BOOST_TEST(f.cluster_centre[0] == 1.0, boost::test_tools::tolerance(0.01));
  // A bump across φ = 0 is one cluster, not two.
  BOOST_TEST(density_figures(cells(m, [&](double p) { return bump(p, 0.0); })).cluster_count == 1);
  // All mass in one cell: |c_k|/c_0 = sinc(kw/2) → 1; W1 to uniform = π/2 for a point mass.
  std::vector<double> point(m, 0.0);
  point[7] = 1.0;
  const DensityFigures p = density_figures(point);
  BOOST_TEST(p.mode_amplitude[0] > 0.9999);
  BOOST_TEST(p.w1_to_uniform == kPi / 2, boost::test_tools::tolerance(1e-3));
}

BOOST_AUTO_TEST_CASE(cluster_widths_are_second_moments_in_cells) {
  // A block of L equal cells above the level has the width of the uniform law on L h: L h/sqrt(12)
  // (the piecewise-constant density, exactly); one cell: h/sqrt(12). Blocks across φ = 0 count whole.
  const int m = 360;
  const double h = 2 * kPi / m;
  std::vector<double> rho(m, 0.0);
  for (int i = 100; i < 130; ++i) rho[i] = 1.0;  // 30 cells
  rho[200] = 2.0;                                // one cell, more mass than the level allows to miss
  for (int i : {355, 356, 357, 358, 359, 0, 1, 2, 3, 4}) rho[i] = 0.5;  // 10 cells across φ = 0
  const std::vector<DensityCluster> c = density_clusters(rho);
  BOOST_REQUIRE(c.size() == 3u);
  // Arcs in the order of the sweep, which starts after the first cell below the level (cell 5).
  BOOST_TEST(c[0].width == 30 * h / std::sqrt(12.0), boost::test_tools::tolerance(normdyn::test::kRoundoff));
  BOOST_TEST(c[1].width == h / std::sqrt(12.0), boost::test_tools::tolerance(normdyn::test::kRoundoff));
  BOOST_TEST(c[2].width == 10 * h / std::sqrt(12.0), boost::test_tools::tolerance(normdyn::test::kRoundoff));
  BOOST_TEST(narrowest_cluster_cells(c, m) == 1 / std::sqrt(12.0),
             boost::test_tools::tolerance(normdyn::test::kRoundoff));
  const DensityFigures f = density_figures(rho);
  BOOST_TEST(f.narrowest_cluster_cells == 1 / std::sqrt(12.0), boost::test_tools::tolerance(normdyn::test::kRoundoff));
  BOOST_TEST(f.cluster_width.size() == 3u);
  // A smooth bump of standard deviation σ = 8 cells: the width within the arc above twice the
  // uniform density (|φ − c| < 3.1σ here) is σ up to the truncated tails (−1 %).
  const int fine = 4096;
  const double sigma = 8 * 2 * kPi / fine;
  const DensityFigures g =
      density_figures(cells(fine, [&](double p) { return std::exp(-0.5 * std::pow((p - 2.0) / sigma, 2)); }));
  BOOST_REQUIRE(g.cluster_count == 1);
  BOOST_TEST(g.narrowest_cluster_cells == 8.0, boost::test_tools::tolerance(0.02));
  // No cluster: +inf, the minimum over no cluster.
  BOOST_TEST(std::isinf(density_figures(std::vector<double>(64, 1.0)).narrowest_cluster_cells));
}

BOOST_AUTO_TEST_CASE(linear_rate_of_an_exponential_mode) {
  std::vector<double> t, a;
  for (int i = 0; i < 100; ++i) t.push_back(0.1 * i), a.push_back(1e-6 * std::exp(1.7 * 0.1 * i));
  const ModeRate r = linear_mode_rate(t, a);
  BOOST_TEST(r.rate == 1.7, boost::test_tools::tolerance(normdyn::test::kExactFit));
  BOOST_TEST(r.t_end < 9.9);  // stops where the amplitude leaves the linear regime (0.05)
  BOOST_TEST(std::isnan(linear_mode_rate(std::vector<double>{0, 1}, std::vector<double>{1e-3, 2e-3}).rate));
}

BOOST_AUTO_TEST_CASE(a_harmonic_driven_by_coupling_is_flagged) {
  // Mode 1 grows at rate 1 from 1e-3, mode 2 is its square (driven), mode 3 grows alone at rate 0.5
  // from 1e-2 (1e-2 > a_1 a_2 = 1e-9 e^{3t} throughout the window).
  std::vector<double> t;
  std::vector<std::vector<double>> a;
  for (int i = 0; i < 40; ++i) {
    const double s = 0.1 * i;
    t.push_back(s);
    const double a1 = 1e-3 * std::exp(s);
    a.push_back({a1, 0.5 * a1 * a1, 1e-2 * std::exp(0.5 * s)});
  }
  const ModeRates r = linear_mode_rates(t, a);
  BOOST_TEST(r.rates[0].rate == 1.0, boost::test_tools::tolerance(normdyn::test::kExactFit));
  BOOST_TEST(r.problems[0].empty());
  BOOST_TEST(r.problems[1].rfind("driven", 0) == 0);
  BOOST_TEST(r.problems[2].empty());
  BOOST_TEST(r.rates[2].rate == 0.5, boost::test_tools::tolerance(normdyn::test::kExactFit));
  // The common window ends when mode 1 passes 0.05 (t = ln 50 ≈ 3.9).
  BOOST_TEST(r.rates[2].t_end < 3.95);
}
