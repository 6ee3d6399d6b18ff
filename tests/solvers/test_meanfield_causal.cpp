// The causal mean field (the kinetic equation over the cursor σ): the cursor averages against their
// direct sum; the first slice stationary; every slice's mass to round-off for each step; and the
// particles with the strictly causal mask, ALiBi and the uniform normalizer converging to it as n grows
// (the observed rate printed and checked).
#define BOOST_TEST_MODULE meanfield_causal
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "meanfield_support.hpp"
#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/density.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/meanfield_causal.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

Density causal_bumps() { return Density::von_mises({0.4, 2.3, 4.4}, {4.0, 6.0, 3.0}, {0.4, 0.35, 0.25}); }

MeanFieldSpec causal_slice(std::int64_t m, double beta, MeanFieldMethod method, bool uniform, double sigma = 0.0) {
  MeanFieldSpec spec = test::spec_for(PostLN{}, beta, m);
  spec.uniform_normalizer = uniform;
  spec.method = method;
  spec.sigma = sigma;
  return spec;
}

IntegratorOptions split_options(double dt) {
  IntegratorOptions o;
  o.method = Method::split;
  o.dt = dt;
  return o;
}

std::vector<std::vector<double>> solve_causal(MeanFieldCausal& pde, const std::vector<double>& x0,
                                              const std::vector<double>& times, const IntegratorOptions& options) {
  test::KeepStates keep;
  const IntegrationResult r = integrate(pde, x0, 0.0, times, options, keep);
  BOOST_REQUIRE(r.status == RunStatus::ok);
  return keep.states;
}

// Angles of n tokens whose index carries no information about the angle: the inverse distribution
// function of the density at the golden-ratio sequence u_i = frac((i + 1) φ_g), so that every run of
// consecutive tokens (a cursor interval) samples the density evenly.
std::vector<double> golden_angles(const Density& density, Index n) {
  constexpr std::int64_t kFine = 1 << 14;
  const std::vector<double> rho = cell_averages(density, kFine);
  const double h = kTwoPi / static_cast<double>(kFine);
  std::vector<double> cdf(static_cast<std::size_t>(kFine) + 1, 0.0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(kFine); ++i) cdf[i + 1] = cdf[i] + rho[i] * h;
  const double golden = 0.5 * (std::sqrt(5.0) - 1.0);
  std::vector<double> out(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const double u = std::fmod(static_cast<double>(i + 1) * golden, 1.0) * cdf.back();
    const auto above = std::upper_bound(cdf.begin(), cdf.end(), u);
    const auto cell = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(above - cdf.begin() - 1, 0, kFine - 1));
    const double within = rho[cell] > 0.0 ? (u - cdf[cell]) / (rho[cell] * h) : 0.5;
    out[static_cast<std::size_t>(i)] = (static_cast<double>(cell) + std::clamp(within, 0.0, 1.0)) * h;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cursor_averages_are_the_alibi_kernel_sums) {
  constexpr std::int64_t kM = 16, kSlices = 9;
  constexpr double kLambda = 2.5;
  MeanFieldCausal pde(causal_slice(kM, 1.0, MeanFieldMethod::finite_volume, true), CursorSpec{kSlices, kLambda});
  std::vector<double> x(static_cast<std::size_t>(kM * kSlices));
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = 1.0 + 0.5 * std::sin(0.37 * static_cast<double>(k * k));
  const std::vector<double> g = pde.cursor_averages(x.data());
  for (std::int64_t j = 0; j < kSlices; ++j)
    for (std::int64_t i = 0; i < kM; ++i) {
      // Σ_{j' < j} e^{−λ (σ_j − σ_j')} f_j' / Σ_{j' < j} e^{−λ (σ_j − σ_j')}, directly.
      double num = 0.0, den = 0.0;
      for (std::int64_t k = 0; k < j; ++k) {
        const double w = std::exp(-kLambda * static_cast<double>(j - k) / kSlices);
        num += w * x[static_cast<std::size_t>(k * kM + i)];
        den += w;
      }
      const double expected = j == 0 ? 0.0 : num / den;
      BOOST_TEST(std::abs(g[static_cast<std::size_t>(j * kM + i)] - expected) < 1e-14);
    }
}

BOOST_AUTO_TEST_CASE(first_slice_is_stationary_and_each_slice_keeps_its_mass) {
  constexpr std::int64_t kM = 128, kSlices = 12;
  const std::vector<double> rho = cell_averages(causal_bumps(), kM);
  struct Case {
    const char* name;
    MeanFieldMethod method;
    bool uniform, split;
    double sigma;
  };
  for (const Case& c :
       {Case{"dopri5, uniform", MeanFieldMethod::finite_volume, true, false, 0.0},
        Case{"dopri5, softmax", MeanFieldMethod::finite_volume, false, false, 0.0},
        Case{"split finite volume, uniform", MeanFieldMethod::finite_volume, true, true, 0.0},
        Case{"split semi-Lagrangian, uniform", MeanFieldMethod::semi_lagrangian, true, true, 0.0},
        Case{"split semi-Lagrangian, softmax, noise", MeanFieldMethod::semi_lagrangian, false, true, 0.4}}) {
    BOOST_TEST_CONTEXT(c.name) {
      MeanFieldCausal pde(causal_slice(kM, 2.0, c.method, c.uniform, c.sigma), CursorSpec{kSlices, 1.0});
      const std::vector<double> x0 = pde.initial_state(rho);
      const auto states = solve_causal(pde, x0, {0.0, 3.0}, c.split ? split_options(0.02) : test::tight_options(1e-8));
      const double* end = states.back().data();
      const std::vector<double> masses = pde.slice_masses(end);
      for (double mass : masses) BOOST_TEST(std::abs(mass - 1.0) < 1e-12);
      // The first slice attends to nothing: unchanged without noise, only diffused with it.
      double first = 0.0, last = 0.0;
      for (std::int64_t i = 0; i < kM; ++i) {
        first = std::max(first, std::abs(end[i] - x0[static_cast<std::size_t>(i)]));
        last = std::max(last, std::abs(end[(kSlices - 1) * kM + i] - x0[static_cast<std::size_t>(i)]));
      }
      if (c.sigma == 0.0) BOOST_TEST(first == 0.0);
      BOOST_TEST(last > 0.05);  // the later slices do move
      for (double v : states.back()) BOOST_TEST(v >= 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(noise_alone_diffuses_the_first_slice_exactly) {
  // With σ > 0 the first slice solves the heat equation: its mode k decays as e^{−k² σ² t / 2}.
  constexpr std::int64_t kM = 64;
  constexpr double kSigma = 0.5, kTime = 1.0;
  MeanFieldCausal pde(causal_slice(kM, 1.0, MeanFieldMethod::semi_lagrangian, true, kSigma), CursorSpec{4, 0.0});
  const std::vector<double> rho = cell_averages(Density::perturbed_uniform(2, 0.5), kM);
  const auto states = solve_causal(pde, pde.initial_state(rho), {0.0, kTime}, split_options(0.05));
  const auto mode = [&](const std::vector<double>& v) { return std::abs(test::fourier_mode(v, pde.phi(), 2)); };
  const double ratio = mode(pde.slice(states.back().data(), 0)) / mode(rho);
  BOOST_TEST(std::abs(ratio - std::exp(-4.0 * kSigma * kSigma * kTime / 2.0)) < 1e-12);
}

BOOST_AUTO_TEST_CASE(particles_converge_to_the_causal_mean_field) {
  // Strictly causal attention with ALiBi and the uniform normalizer, Post-LN, Q = K = V = I. Distance:
  // the mean over 4 cursor bins of W1 on the circle between the bin's tokens and the PDE's density
  // averaged over the bin, at t = 2.
  constexpr double kBeta = 1.0, kLambda = 1.0, kTime = 2.0;
  constexpr std::int64_t kM = 128, kSlices = 128, kBins = 4;
  const Density start = causal_bumps();
  MeanFieldCausal pde(causal_slice(kM, kBeta, MeanFieldMethod::finite_volume, true), CursorSpec{kSlices, kLambda});
  const auto states =
      solve_causal(pde, pde.initial_state(cell_averages(start, kM)), {kTime}, test::tight_options(1e-8));
  std::vector<std::vector<double>> bins(kBins, std::vector<double>(kM, 0.0));
  for (std::int64_t j = 0; j < kSlices; ++j)
    for (std::int64_t i = 0; i < kM; ++i)
      bins[static_cast<std::size_t>(j * kBins / kSlices)][static_cast<std::size_t>(i)] +=
          states.back()[static_cast<std::size_t>(j * kM + i)];
  std::vector<double> sizes, distances;
  for (Index n : {64, 256, 1024}) {
    DynamicsSpec ds;
    ds.beta = kBeta;
    ds.attention.mask = StrictlyCausalMask{};
    ds.attention.bias = Alibi{kLambda};
    ds.attention.normalizer = Uniform{};
    AttentionDynamics particles(ds, QkvSource::identity(), n, 2);
    const std::vector<double> angles = golden_angles(start, n);
    Tokens tokens{RowMatrix(n, 2), Vector::Ones(n)};
    for (Index i = 0; i < n; ++i) {
      tokens.theta(i, 0) = std::cos(angles[static_cast<std::size_t>(i)]);
      tokens.theta(i, 1) = std::sin(angles[static_cast<std::size_t>(i)]);
    }
    std::vector<double> x0(particles.layout().size());
    particles.layout().pack(tokens, x0.data());
    test::KeepStates keep;
    const std::vector<double> times{kTime};
    BOOST_REQUIRE(integrate(particles, x0, 0.0, times, test::tight_options(1e-8), keep).status == RunStatus::ok);
    const Tokens end = particles.layout().unpack(keep.states.back().data());
    double sum = 0.0, start_sum = 0.0;
    for (std::int64_t b = 0; b < kBins; ++b) {
      analysis::CircleMeasure initial, density;
      for (Index i = b * n / kBins; i < (b + 1) * n / kBins; ++i)
        initial.atoms.push_back(angles[static_cast<std::size_t>(i)]);
      density.cells = cell_averages(start, kM);
      start_sum += analysis::wasserstein1_circle(initial, density);
    }
    for (std::int64_t b = 0; b < kBins; ++b) {
      analysis::CircleMeasure atoms, cells;
      for (Index i = b * n / kBins; i < (b + 1) * n / kBins; ++i)
        atoms.atoms.push_back(std::atan2(end.theta(i, 1), end.theta(i, 0)));
      cells.cells = bins[static_cast<std::size_t>(b)];
      sum += analysis::wasserstein1_circle(atoms, cells);
    }
    sizes.push_back(static_cast<double>(n));
    distances.push_back(sum / kBins);
    std::printf("causal mean field: n = %5lld, mean W1 over %lld cursor bins at t = 0: %.4e, at t = %g: %.4e\n",
                static_cast<long long>(n), static_cast<long long>(kBins), start_sum / kBins, kTime, distances.back());
  }
  const double rate = std::log(distances.front() / distances.back()) / std::log(sizes.back() / sizes.front());
  std::printf("  observed rate: W1 ~ n^-%.3f\n", rate);
  BOOST_TEST(distances.back() < distances.front());
  BOOST_TEST(rate > 0.4);
}
