// The mean-field solver on the circle: mass to round-off and non-negative densities for every scheme
// through cluster formation; observed order of the finite volumes in M; and agreement between many
// weighted particles (the particle code with masses) and the PDE, with the observed rate in n.
#define BOOST_TEST_MODULE meanfield_circle
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <numbers>

#include "meanfield_support.hpp"
#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/density.hpp"
#include "normdyn/dynamics.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using test::l1_restricted;
using test::spec_for;
using normdyn::test::AllSchemes;

namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Three bumps of different weights and widths: clusters form, sharpen and (at large β) persist.
Density bumps() { return Density::von_mises({0.3, 2.0, 4.1}, {8.0, 20.0, 5.0}, {0.5, 0.3, 0.2}); }

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(mass_is_conserved_and_density_stays_nonnegative, S, AllSchemes) {
  Scheme scheme = S{};
  if (auto* mix = std::get_if<MixLN>(&scheme)) mix->tau = 3.0;
  for (bool project : {true, false}) {
    MeanFieldCircle system(spec_for(scheme, 9.0, 256));
    const auto x0 = system.initial_state(cell_averages(bumps(), 256), 1.0, 0.1);
    std::vector<double> times;
    for (int i = 0; i <= 12; ++i) times.push_back(i);
    IntegratorOptions options = test::tight_options(1e-8);
    options.retract = project;
    IntegrationResult result;
    const auto states = test::solve(system, x0, times, options, &result);
    BOOST_REQUIRE(result.status == RunStatus::ok);
    BOOST_REQUIRE_EQUAL(states.size(), times.size());
    double mass_error = 0.0, min_density = 1e300, peak = 0.0;
    for (const auto& x : states) {
      mass_error = std::max(mass_error, std::abs(system.mass(x.data()) - 1.0));
      const auto rho = system.density(x.data());
      min_density = std::min(min_density, *std::min_element(rho.begin(), rho.end()));
      peak = std::max(peak, *std::max_element(rho.begin(), rho.end()));
    }
    std::printf("%-5s project = %d: |mass - 1| <= %.1e, min density %.3e, peak %.3g, negative clipped %.1e, "
                "%lld steps\n",
                std::string(S::key).c_str(), project, mass_error, min_density, peak,
                result.counters.max_constraint_drift, static_cast<long long>(result.counters.accepted_steps));
    BOOST_TEST(mass_error < test::kMassRoundoff);
    if (project) BOOST_TEST(min_density >= 0.0);
    BOOST_TEST(peak > 1.0);  // clusters did form (the start peaks at 1.2 per radian)
  }
}

// Observed order in M of the finite volumes, in L1 against a fine reference (van Leer: 2; upwind: 1).
BOOST_AUTO_TEST_CASE(observed_order_in_the_grid) {
  const Density start = Density::perturbed_uniform(2, 0.5);
  for (Limiter limiter : {Limiter::van_leer, Limiter::upwind}) {
    const std::vector<std::int64_t> grids{64, 128, 256, 512};
    constexpr std::int64_t kReference = 4096;
    std::vector<std::vector<double>> finals;
    for (std::int64_t m : grids) {
      MeanFieldCircle system(spec_for(PostLN{}, 4.0, m, 16, limiter));
      finals.push_back(test::solve(system, system.initial_state(cell_averages(start, m), 1.0, 0.0), {0.0, 2.0},
                                   test::tight_options(1e-10))
                           .back());
    }
    MeanFieldCircle reference(spec_for(PostLN{}, 4.0, kReference, 16, limiter));
    const auto ref = test::solve(reference, reference.initial_state(cell_averages(start, kReference), 1.0, 0.0),
                                 {0.0, 2.0}, test::tight_options(1e-10))
                         .back();
    std::vector<double> errors;
    for (const auto& x : finals) errors.push_back(l1_restricted(ref, x));
    const double nominal = limiter == Limiter::upwind ? 1.0 : 2.0;
    for (std::size_t i = 0; i < errors.size(); ++i) {
      const double order = i == 0 ? 0.0 : std::log2(errors[i - 1] / errors[i]);
      std::printf("limiter %-8s M = %4lld: L1 error %.3e, observed order %.2f\n",
                  std::string(to_string(limiter)).c_str(), static_cast<long long>(grids[i]), errors[i], order);
    }
    const double last_order = std::log2(errors[errors.size() - 2] / errors.back());
    BOOST_TEST(std::abs(last_order - nominal) < test::kOrderSlack);
  }
}

// Weighted particles (equally spaced angles, exact cell masses) follow the PDE: the W1 distance at
// t = 3 decreases like 1/n (the rate of the initial quadrature, which the flow preserves). The study
// tests/solvers/study_meanfield_limits.cpp goes to n = 2^14 and i.i.d. samples.
BOOST_AUTO_TEST_CASE(weighted_particles_converge_to_the_pde) {
  constexpr double kBeta = 4.0, kTime = 3.0;
  for (const Scheme& scheme : {Scheme{PostLN{}}, Scheme{PreLN{}}}) {
    const bool radius = scheme_has_radius(scheme);
    const double width = radius ? 0.1 : 0.0;
    MeanFieldSpec spec = spec_for(scheme, kBeta, radius ? 512 : 1024);
    spec.radial_grid = 32;
    MeanFieldCircle pde(spec);
    const auto pde_end =
        test::solve(pde, pde.initial_state(cell_averages(bumps(), spec.grid), 1.0, width), {0.0, kTime},
                    test::tight_options(1e-8))
            .back();
    const analysis::CircleMeasure continuum{{}, {}, pde.angular_density(pde_end.data())};
    std::vector<double> distances;
    const std::vector<Index> sizes{64, 128, 256, 512};
    for (Index n : sizes) {
      const WeightedTokens start = density_tokens(bumps(), n, 2, Sampling::grid, 1.0, width, 1);
      DynamicsSpec ds;
      ds.scheme = scheme;
      ds.beta = kBeta;
      ds.masses = start.masses;
      AttentionDynamics particles(ds, QkvSource::identity(), n, 2);
      std::vector<double> x0(particles.layout().size());
      particles.layout().pack(start.tokens, x0.data());
      test::KeepStates keep;
      const std::vector<double> times{kTime};
      const auto result = integrate(particles, x0, 0.0, times, test::tight_options(1e-9), keep);
      BOOST_REQUIRE(result.status == RunStatus::ok);
      const Tokens end = particles.layout().unpack(keep.states.back().data());
      analysis::CircleMeasure empirical;
      for (Index j = 0; j < n; ++j) {
        empirical.atoms.push_back(std::atan2(end.theta(j, 1), end.theta(j, 0)));
        empirical.masses.push_back(start.masses(j));
      }
      distances.push_back(analysis::wasserstein1_circle(empirical, continuum));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i)
      std::printf("%-4s n = %5lld: W1(particles, PDE) at t = %g: %.3e%s%.2f\n", std::string(scheme_key(scheme)).c_str(),
                  static_cast<long long>(sizes[i]), kTime, distances[i], i ? ", observed rate " : ", rate ",
                  i ? std::log2(distances[i - 1] / distances[i]) : 0.0);
    const double rate = std::log2(distances.front() / distances.back()) / std::log2(double(sizes.back() / sizes.front()));
    BOOST_TEST_INFO(scheme_key(scheme));
    BOOST_TEST(std::abs(rate - 1.0) < test::kOrderSlack);
    BOOST_TEST(distances.back() < (radius ? 4e-3 : 1e-3));
  }
}
