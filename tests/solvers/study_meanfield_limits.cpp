// The continuum-limit studies (label "slow"; run with
//   ctest --test-dir build -R study_meanfield -V
// or build/tests/solvers_study_meanfield_limits --run_test=<case>). Each case prints the table it
// measured and checks the observed rate, so that it can fail:
//   many_tokens   W1 on the circle between n particles and the PDE at t = 3, for grid-weighted
//                 particles, n = 2^6 .. 2^14 (rate 1), and i.i.d. samples, n = 2^6 .. 2^12 (rate 1/2)
//   depth         the discrete L-layer maps against the ODE at depth T = 2, error against h (rate 1),
//                 every scheme, weighted particles in d = 3
//   grid          observed order of the PDE solver in M (post, and pre on the (phi, r) grid)
//   speed         cost of one right-hand side against M, and M = 4096, beta = 10 to t = 10
//   noisy_order_parameter
//                 independent noise below the threshold: the order parameter |∫ θ dμ| at t = 4 of
//                 n noisy particles (stratonovich_heun, 16 noise seeds) against the Fokker-Planck
//                 equation's (split step), n = 2^6 .. 2^11: root mean square over seeds ~ n^-1/2
#define BOOST_TEST_MODULE study_meanfield_limits
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <numbers>

#include "meanfield_support.hpp"
#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/density.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using test::l1_restricted;
using test::spec_for;

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kTwoPi = 2.0 * std::numbers::pi;

Density bumps() { return Density::von_mises({0.3, 2.0, 4.1}, {8.0, 20.0, 5.0}, {0.5, 0.3, 0.2}); }

// Least-squares slope of log(error) against log(size): the observed rate (positive when decreasing).
double fitted_rate(const std::vector<double>& sizes, const std::vector<double>& errors) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double x = std::log(sizes[i]), y = std::log(errors[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return -(n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace

// Line-buffered output, so that a long study shows its progress in a log file.
struct LineBuffered {
  LineBuffered() { std::setvbuf(stdout, nullptr, _IOLBF, 0); }
};
BOOST_TEST_GLOBAL_FIXTURE(LineBuffered);

BOOST_AUTO_TEST_CASE(many_tokens) {
  constexpr double kBeta = 4.0, kTime = 3.0;
  MeanFieldCircle pde(spec_for(PostLN{}, kBeta, 8192));
  const auto end = test::solve(pde, pde.initial_state(cell_averages(bumps(), 8192), 1.0, 0.0), {0.0, kTime},
                               test::tight_options(1e-10))
                       .back();
  const analysis::CircleMeasure continuum{{}, {}, pde.angular_density(end.data())};
  std::printf("many tokens: post, beta = %g, three von Mises bumps, t = %g; PDE M = 8192\n", kBeta, kTime);
  for (Sampling sampling : {Sampling::grid, Sampling::sampled}) {
    std::vector<double> sizes, distances;
    // i.i.d. samples stop at 2^12: their W1 (~ n^-1/2) is already far above the PDE's error, and n = 2^14
    // costs ~15 min per series on 2 cores.
    const int top = sampling == Sampling::grid ? 14 : 12;
    for (int p = 6; p <= top; ++p) {
      const Index n = Index{1} << p;
      const WeightedTokens start = density_tokens(bumps(), n, 2, sampling, 1.0, 0.0, 7);
      DynamicsSpec ds;
      ds.beta = kBeta;
      if (sampling != Sampling::sampled) ds.masses = start.masses;
      AttentionDynamics particles(ds, QkvSource::identity(), n, 2);
      std::vector<double> x0(particles.layout().size());
      particles.layout().pack(start.tokens, x0.data());
      test::KeepStates keep;
      const std::vector<double> times{kTime};
      const auto t0 = Clock::now();
      const auto result = integrate(particles, x0, 0.0, times, test::tight_options(1e-7), keep);
      BOOST_REQUIRE(result.status == RunStatus::ok);
      const Tokens x = particles.layout().unpack(keep.states.back().data());
      analysis::CircleMeasure empirical;
      for (Index j = 0; j < n; ++j) {
        empirical.atoms.push_back(std::atan2(x.theta(j, 1), x.theta(j, 0)));
        empirical.masses.push_back(start.masses(j));
      }
      sizes.push_back(static_cast<double>(n));
      distances.push_back(analysis::wasserstein1_circle(empirical, continuum));
      std::printf("  %-8s n = 2^%-2d W1 = %.4e  (%.1f s)\n", std::string(to_string(sampling)).c_str(), p,
                  distances.back(), std::chrono::duration<double>(Clock::now() - t0).count());
      std::fflush(stdout);
    }
    const double rate = fitted_rate(sizes, distances);
    const double expected = sampling == Sampling::grid ? 1.0 : 0.5;
    std::printf("  %-8s observed rate (least squares over n = 2^6..2^%d): W1 ~ n^-%.3f (expected %.1f)\n",
                std::string(to_string(sampling)).c_str(), top, rate, expected);
    BOOST_TEST(std::abs(rate - expected) < test::kOrderSlack);
  }
}

BOOST_AUTO_TEST_CASE(depth) {
  constexpr Index kN = 256, kD = 3;
  constexpr double kBeta = 2.0, kDepth = 2.0;
  const WeightedTokens start = density_tokens(bumps(), kN, kD, Sampling::weighted, 1.0, 0.2, 5);
  std::printf(
      "depth: weighted particles (n = %lld, d = %lld, three von Mises bumps, beta = %g), L layers of "
      "step h = %g / L against the ODE (dopri5, rtol 1e-12) at depth %g\n",
      static_cast<long long>(kN), static_cast<long long>(kD), kBeta, kDepth, kDepth);
  for_each_scheme([&](auto s) {
    using S = decltype(s);
    Scheme scheme = s;
    if (auto* mix = std::get_if<MixLN>(&scheme)) mix->tau = 1.0;
    DynamicsSpec ds;
    ds.scheme = scheme;
    ds.beta = kBeta;
    ds.masses = start.masses;
    AttentionDynamics dyn(ds, QkvSource::identity(), kN, kD);
    std::vector<double> x0(dyn.layout().size());
    dyn.layout().pack(start.tokens, x0.data());
    const std::vector<double> times{kDepth};
    test::KeepStates exact;
    integrate(dyn, x0, 0.0, times, test::tight_options(1e-12), exact);
    const Tokens ode = dyn.layout().unpack(exact.states.back().data());
    std::vector<double> steps, errors;
    for (int layers : {10, 20, 40, 80, 160, 320}) {
      const double h = kDepth / layers;
      test::KeepStates discrete;
      run_layers(dyn, x0, 0.0, h, times, 0, discrete);
      const Tokens net = dyn.layout().unpack(discrete.states.back().data());
      double err = 0.0;
      for (Index j = 0; j < kN; ++j)
        err = std::max(err, (net.r(j) * net.theta.row(j) - ode.r(j) * ode.theta.row(j)).norm());
      steps.push_back(h);
      errors.push_back(err);
    }
    const double order = -fitted_rate(steps, errors);
    std::printf("  %-5s", std::string(S::key).c_str());
    for (std::size_t i = 0; i < steps.size(); ++i) std::printf("  h=%-7g %.3e", steps[i], errors[i]);
    std::printf("   observed order %.3f\n", order);
    BOOST_TEST_INFO(S::key);
    BOOST_TEST(std::abs(order - 1.0) < test::kOrderSlack);
  });
}

BOOST_AUTO_TEST_CASE(grid) {
  const Density start = Density::perturbed_uniform(2, 0.5);
  {
    constexpr std::int64_t kReference = 16384;
    MeanFieldCircle ref(spec_for(PostLN{}, 4.0, kReference));
    const auto fine = test::solve(ref, ref.initial_state(cell_averages(start, kReference), 1.0, 0.0), {0.0, 2.0},
                                  test::tight_options(1e-11))
                          .back();
    std::printf("grid: post, beta = 4, (1 + 0.5 cos 2 phi) / 2 pi, t = 2, L1 error against M = %lld\n",
                static_cast<long long>(kReference));
    std::vector<double> sizes, errors;
    for (std::int64_t m = 64; m <= 2048; m *= 2) {
      MeanFieldCircle s(spec_for(PostLN{}, 4.0, m));
      const auto x =
          test::solve(s, s.initial_state(cell_averages(start, m), 1.0, 0.0), {0.0, 2.0}, test::tight_options(1e-11))
              .back();
      sizes.push_back(static_cast<double>(m));
      errors.push_back(l1_restricted(fine, x));
      std::printf("  M = %5lld  L1 = %.4e%s\n", static_cast<long long>(m), errors.back(),
                  errors.size() > 1
                      ? ("  order " + std::to_string(std::log2(errors[errors.size() - 2] / errors.back()))).c_str()
                      : "");
    }
    const double order = fitted_rate(sizes, errors);
    std::printf("  observed order (least squares) %.3f\n", order);
    BOOST_TEST(std::abs(order - 2.0) < test::kOrderSlack);
  }
  {
    // Pre-LN on the (phi, r) grid, both directions refined together; angular marginal in L1.
    MeanFieldCircle ref(spec_for(PreLN{}, 4.0, 1024, 128));
    const auto fine = ref.angular_density(
        test::solve(ref, ref.initial_state(cell_averages(start, 1024), 1.0, 0.2), {0.0, 2.0}, test::tight_options(1e-7))
            .back()
            .data());
    std::printf("grid: pre, beta = 4, radii uniform on [0.9, 1.1], t = 2, angular marginal, L1 against 1024 x 128\n");
    std::vector<double> sizes, errors;
    for (std::int64_t m = 64; m <= 256; m *= 2) {
      MeanFieldCircle s(spec_for(PreLN{}, 4.0, m, m / 8));
      const auto x =
          test::solve(s, s.initial_state(cell_averages(start, m), 1.0, 0.2), {0.0, 2.0}, test::tight_options(1e-7))
              .back();
      sizes.push_back(static_cast<double>(m));
      errors.push_back(l1_restricted(fine, s.angular_density(x.data())));
      std::printf("  M x M_r = %4lld x %3lld  L1 = %.4e\n", static_cast<long long>(m), static_cast<long long>(m / 8),
                  errors.back());
    }
    const double order = fitted_rate(sizes, errors);
    std::printf("  observed order (least squares) %.3f\n", order);
    BOOST_TEST(order > 1.0);
  }
}

BOOST_AUTO_TEST_CASE(speed) {
  std::printf("speed: one right-hand side (post, beta = 10), mean of 200 calls\n");
  std::vector<double> sizes, costs;
  for (std::int64_t m = 256; m <= 65536; m *= 4) {
    MeanFieldCircle s(spec_for(PostLN{}, 10.0, m));
    const auto x = s.initial_state(cell_averages(bumps(), m), 1.0, 0.0);
    std::vector<double> dx(x.size());
    s.rhs(x.data(), dx.data(), 0.0);
    const auto t0 = Clock::now();
    for (int i = 0; i < 200; ++i) s.rhs(x.data(), dx.data(), 0.0);
    const double us = std::chrono::duration<double>(Clock::now() - t0).count() / 200 * 1e6;
    std::printf("  M = %6lld  %9.1f us per rhs  %.3f ns per M log2 M\n", static_cast<long long>(m), us,
                us * 1e3 / (static_cast<double>(m) * std::log2(static_cast<double>(m))));
  }
  // The run of the issue: M = 4096, beta = 10, to t = 10, from (1 + 0.05 cos 5 phi) / 2 pi (five clusters).
  MeanFieldCircle s(spec_for(PostLN{}, 10.0, 4096));
  IntegrationResult result;
  const auto states =
      test::solve(s, s.initial_state(cell_averages(Density::perturbed_uniform(5, 0.05), 4096), 1.0, 0.0), {0.0, 10.0},
                  test::tight_options(1e-8), &result);
  const auto rho = s.density(states.back().data());
  std::printf("  M = 4096, beta = 10, t = 0..10 (dopri5, rtol 1e-8): %.3f s, %lld steps, %lld rhs, peak density %.1f\n",
              result.wall_seconds, static_cast<long long>(result.counters.accepted_steps),
              static_cast<long long>(result.counters.rhs_evaluations), *std::max_element(rho.begin(), rho.end()));
  BOOST_TEST((result.status == RunStatus::ok));
  BOOST_TEST(result.wall_seconds < 10.0);
}

BOOST_AUTO_TEST_CASE(noisy_order_parameter) {
  constexpr double kBeta = 1.0, kSigma = 0.67, kTime = 4.0, kDt = 0.01;  // σ² = 0.45 < σ_c² = 0.893
  constexpr int kSeeds = 16;
  const Density start = Density::perturbed_uniform(1, 0.5);
  MeanFieldSpec spec = spec_for(PostLN{}, kBeta, 512);
  spec.sigma = kSigma;
  MeanFieldCircle pde(spec);
  IntegratorOptions split;
  split.method = Method::split;
  split.dt = kDt;
  const auto end = test::solve(pde, pde.initial_state(cell_averages(start, 512), 1.0, 0.0), {0.0, kTime}, split);
  const double continuum =
      std::abs(test::fourier_mode(pde.angular_density(end.back().data()), pde.phi(), 1)) * kTwoPi / 512.0;
  std::printf("noisy order parameter: post, beta = %g, sigma = %g (sigma_c^2 = %.4f), t = %g; PDE M = 512: %.6f\n",
              kBeta, kSigma, 2.0 * std::cyl_bessel_i(1.0, kBeta) / (kBeta * std::cyl_bessel_i(0.0, kBeta)), kTime,
              continuum);
  std::vector<double> sizes, rms;
  for (int p = 6; p <= 11; ++p) {
    const Index n = Index{1} << p;
    const WeightedTokens tokens = density_tokens(start, n, 2, Sampling::grid, 1.0, 0.0, 7);
    double sum = 0.0, sum_squares = 0.0;
    const auto t0 = Clock::now();
    for (int seed = 1; seed <= kSeeds; ++seed) {
      DynamicsSpec ds;
      ds.beta = kBeta;
      ds.masses = tokens.masses;
      ds.noise = NoiseSpec{IndependentNoise{kSigma}, static_cast<std::uint64_t>(seed)};
      AttentionDynamics particles(ds, QkvSource::identity(), n, 2);
      std::vector<double> x0(particles.layout().size());
      particles.layout().pack(tokens.tokens, x0.data());
      IntegratorOptions heun;
      heun.method = Method::stratonovich_heun;
      heun.dt = kDt;
      test::KeepStates keep;
      const std::vector<double> times{kTime};
      BOOST_REQUIRE(integrate(particles, x0, 0.0, times, heun, keep).status == RunStatus::ok);
      const Tokens x = particles.layout().unpack(keep.states.back().data());
      double c = 0.0, s = 0.0;
      for (Index j = 0; j < n; ++j) {
        c += tokens.masses(j) * x.theta(j, 0);
        s += tokens.masses(j) * x.theta(j, 1);
      }
      const double r = std::hypot(c, s);
      sum += r - continuum;
      sum_squares += (r - continuum) * (r - continuum);
    }
    sizes.push_back(static_cast<double>(n));
    rms.push_back(std::sqrt(sum_squares / kSeeds));
    std::printf("  n = 2^%-2d mean r - r_PDE = %+.4e, rms = %.4e  (%.1f s)\n", p, sum / kSeeds, rms.back(),
                std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const double rate = fitted_rate(sizes, rms);
  std::printf("  observed rate: rms ~ n^-%.3f (expected 0.5)\n", rate);
  BOOST_TEST(std::abs(rate - 0.5) < 0.2);
}
