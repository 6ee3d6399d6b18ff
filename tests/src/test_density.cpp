// Initial densities: exact cell averages, conservative remap, normalized von Mises–Fisher
// densities in any d, and the three discretizations by (weighted) particles.
#define BOOST_TEST_MODULE density
#include <boost/test/unit_test.hpp>
#include <numbers>

#include "normdyn/density.hpp"
#include "normdyn/init.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {
constexpr double kTwoPi = 2.0 * std::numbers::pi;

double total_mass(const std::vector<double>& rho) {
  double s = 0.0;
  for (double v : rho) s += v;
  return s * kTwoPi / static_cast<double>(rho.size());
}

// (1/h) ∫_cell f by the composite midpoint rule with many points.
template <class F>
double fine_average(F f, double a, double b) {
  constexpr int kPoints = 20000;
  double s = 0.0;
  for (int i = 0; i < kPoints; ++i) s += f(a + (i + 0.5) * (b - a) / kPoints);
  return s / kPoints;
}
}  // namespace

BOOST_AUTO_TEST_CASE(cell_averages_are_exact_and_normalized) {
  const Density perturbed = Density::perturbed_uniform(3, 0.7);
  const Density bumps = Density::von_mises({0.5, 3.0}, {4.0, 60.0}, {2.0, 1.0});
  for (std::int64_t m : {8, 37, 256}) {
    const double h = kTwoPi / static_cast<double>(m);
    const auto p = cell_averages(perturbed, m);
    const auto b = cell_averages(bumps, m);
    BOOST_TEST(std::abs(total_mass(p) - 1.0) < test::kRoundoff);
    BOOST_TEST(std::abs(total_mass(b) - 1.0) < test::kRoundoff);
    for (std::int64_t i = 0; i < m; i += std::max<std::int64_t>(1, m / 7)) {
      const double a = static_cast<double>(i) * h;
      const double exact_p = fine_average([](double x) { return (1.0 + 0.7 * std::cos(3.0 * x)) / kTwoPi; }, a, a + h);
      const double exact_b = fine_average(
          [](double x) {
            return (2.0 / 3.0) * std::exp(4.0 * std::cos(x - 0.5)) / (kTwoPi * std::cyl_bessel_i(0.0, 4.0)) +
                   (1.0 / 3.0) * std::exp(60.0 * std::cos(x - 3.0)) / (kTwoPi * std::cyl_bessel_i(0.0, 60.0));
          },
          a, a + h);
      BOOST_TEST(std::abs(p[static_cast<std::size_t>(i)] - exact_p) < 1e-8);
      BOOST_TEST(std::abs(b[static_cast<std::size_t>(i)] - exact_b) < 1e-8 * std::max(1.0, exact_b));
    }
  }
  // Conservative remap of a piecewise-constant density: 3 cells onto 6 and onto 4.
  const Density cells = Density::from_cells({1.0, 2.0, 3.0});
  const auto six = cell_averages(cells, 6);
  const double unit = 1.0 / (kTwoPi * 2.0);  // normalized: mean value 2 → 1/(2π)
  const std::vector<double> expected6{unit, unit, 2 * unit, 2 * unit, 3 * unit, 3 * unit};
  for (std::size_t i = 0; i < 6; ++i) BOOST_TEST(std::abs(six[i] - expected6[i]) < test::kRoundoff);
  const auto four = cell_averages(cells, 4);
  BOOST_TEST(std::abs(total_mass(four) - 1.0) < test::kRoundoff);
  BOOST_TEST(std::abs(four[0] - unit) < test::kRoundoff);
  BOOST_TEST(std::abs(four[1] - (1.0 / 3.0 * 1.0 + 2.0 / 3.0 * 2.0) * unit) < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(von_mises_normalizer_in_any_dimension) {
  // Z_2(κ) = I_0(κ); Z_3(κ) = sinh(κ)/κ; large κ and d without overflow.
  BOOST_TEST(std::abs(log_von_mises_normalizer(2.5, 2) - std::log(std::cyl_bessel_i(0.0, 2.5))) < 1e-13);
  BOOST_TEST(std::abs(log_von_mises_normalizer(2.5, 3) - std::log(std::sinh(2.5) / 2.5)) < 1e-13);
  BOOST_TEST(std::isfinite(log_von_mises_normalizer(700.0, 3)));
  BOOST_TEST(std::isfinite(log_von_mises_normalizer(0.01, 200)));
  BOOST_TEST(std::abs(log_von_mises_normalizer(1e-3, 200)) < 1e-6);  // κ → 0: the uniform density
}

BOOST_AUTO_TEST_CASE(particles_discretize_the_density) {
  const Density perturbed = Density::perturbed_uniform(2, 0.6);
  constexpr Index kN = 40000;
  for (Sampling sampling : {Sampling::sampled, Sampling::weighted, Sampling::grid}) {
    const WeightedTokens w = density_tokens(perturbed, kN, 2, sampling, 1.0, 0.0, 11);
    BOOST_TEST(std::abs(w.masses.sum() - 1.0) < test::kRoundoff);
    double moment = 0.0;  // E[cos 2φ] = a/2 under (1 + a cos 2φ)/2π
    for (Index j = 0; j < kN; ++j)
      moment += w.masses(j) * std::cos(2.0 * std::atan2(w.tokens.theta(j, 1), w.tokens.theta(j, 0)));
    const double tolerance = sampling == Sampling::grid ? 1e-6 : 4.0 / std::sqrt(double(kN));
    BOOST_TEST_INFO("sampling " << to_string(sampling));
    BOOST_TEST(std::abs(moment - 0.3) < tolerance);
  }
  // von Mises–Fisher in d = 3: E[<c, θ>] = coth κ − 1/κ, sampled and weighted.
  const Density bump = Density::von_mises({1.0}, {5.0}, {1.0});
  const Eigen::RowVector3d c(std::cos(1.0), std::sin(1.0), 0.0);
  for (Sampling sampling : {Sampling::sampled, Sampling::weighted}) {
    const WeightedTokens w = density_tokens(bump, kN, 3, sampling, 1.0, 0.0, 5);
    double mean = 0.0;
    for (Index j = 0; j < kN; ++j) mean += w.masses(j) * w.tokens.theta.row(j).dot(c);
    BOOST_TEST_INFO("sampling " << to_string(sampling));
    BOOST_TEST(std::abs(mean - (1.0 / std::tanh(5.0) - 0.2)) < 8.0 / std::sqrt(double(kN)));
  }
  // Radii uniform on [r0 - w/2, r0 + w/2]; unit directions.
  const WeightedTokens w = density_tokens(bump, 1000, 3, Sampling::weighted, 2.0, 0.5, 5);
  BOOST_TEST(w.tokens.r.minCoeff() >= 1.75);
  BOOST_TEST(w.tokens.r.maxCoeff() <= 2.25);
  BOOST_TEST(std::abs(w.tokens.r.mean() - 2.0) < 0.05);
  BOOST_TEST((w.tokens.theta.rowwise().norm().array() - 1.0).abs().maxCoeff() < 1e-14);
  // Uniform and sampled: the draws of init.kind = "uniform".
  const WeightedTokens u = density_tokens(Density::uniform(), 50, 4, Sampling::sampled, 1.0, 0.0, 3);
  BOOST_TEST((u.tokens.theta - uniform_tokens(50, 4, 1.0, 3).theta).cwiseAbs().maxCoeff() == 0.0);
}
