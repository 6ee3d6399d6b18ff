// The mean-field solver on the circle: mass to round-off and non-negative densities for every scheme
// through cluster formation; observed order of the finite volumes in M; and agreement between many
// weighted particles (the particle code with masses) and the PDE, with the observed rate in n.
#define BOOST_TEST_MODULE meanfield_circle
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <numbers>

#include <algorithm>
#include <map>

#include "meanfield_support.hpp"
#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/analysis/density_modes.hpp"
#include "normdyn/density.hpp"
#include "normdyn/dynamics.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using normdyn::test::AllSchemes;
using test::l1_restricted;
using test::spec_for;

namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Three bumps of different weights and widths: clusters form, sharpen and (at large β) persist.
Density bumps() { return Density::von_mises({0.3, 2.0, 4.1}, {8.0, 20.0, 5.0}, {0.5, 0.3, 0.2}); }

// The example of data/configs/meanfield.toml: Post-LN at β = 16 from five broad bumps. Five clusters
// form by t ≈ 13 and then contract like e^{-t} (their width halves about every 0.9 t): every grid
// stops resolving them a few time units later.
constexpr double kExampleBeta = 16.0;
Density example_density() {
  return Density::von_mises({0.5, 1.6, 2.9, 4.0, 5.3}, {1.0, 1.0, 1.0, 1.0, 1.0}, {1.0, 0.7, 1.3, 0.9, 1.1});
}
// Every 0.5 up to t = 20.
constexpr double kExampleStep = 0.5;
constexpr int kExampleFrames = 41;

// The angular density of the example at every sample, on M cells (computed once per M).
const std::vector<std::vector<double>>& example_pde(std::int64_t m) {
  static std::map<std::int64_t, std::vector<std::vector<double>>> solved;
  auto& out = solved[m];
  if (!out.empty()) return out;
  MeanFieldCircle pde(spec_for(PostLN{}, kExampleBeta, m));
  std::vector<double> times;
  for (int i = 0; i < kExampleFrames; ++i) times.push_back(kExampleStep * i);
  IntegrationResult result;
  const auto states = test::solve(pde, pde.initial_state(cell_averages(example_density(), m), 1.0, 0.0), times,
                                  test::tight_options(1e-9), &result);
  BOOST_REQUIRE(result.status == RunStatus::ok);
  for (const auto& x : states) out.push_back(pde.angular_density(x.data()));
  return out;
}

// n weighted particles of `density` (equally spaced angles carrying the cell masses, d = 2): their
// empirical measure on the circle at each of `times`.
std::vector<analysis::CircleMeasure> weighted_particles(const Scheme& scheme, double beta, const Density& density,
                                                        Index n, double radius_width, const std::vector<double>& times,
                                                        const IntegratorOptions& options) {
  const WeightedTokens start = density_tokens(density, n, 2, Sampling::grid, 1.0, radius_width, 1);
  DynamicsSpec ds;
  ds.scheme = scheme;
  ds.beta = beta;
  ds.masses = start.masses;
  AttentionDynamics system(ds, QkvSource::identity(), n, 2);
  std::vector<double> x0(system.layout().size());
  system.layout().pack(start.tokens, x0.data());
  test::KeepStates keep;
  BOOST_REQUIRE(integrate(system, x0, 0.0, times, options, keep).status == RunStatus::ok);
  std::vector<analysis::CircleMeasure> out;
  for (const auto& x : keep.states) {
    const Tokens end = system.layout().unpack(x.data());
    analysis::CircleMeasure empirical;
    for (Index j = 0; j < n; ++j) {
      empirical.atoms.push_back(std::atan2(end.theta(j, 1), end.theta(j, 0)));
      empirical.masses.push_back(start.masses(j));
    }
    out.push_back(std::move(empirical));
  }
  return out;
}

double w1_cells(const std::vector<double>& a, const std::vector<double>& b) {
  return analysis::wasserstein1_circle({{}, {}, a}, {{}, {}, b});
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

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
    std::printf(
        "%-5s project = %d: |mass - 1| <= %.1e, min density %.3e, peak %.3g, negative clipped %.1e, "
        "%lld steps\n",
        std::string(S::key).c_str(), project, mass_error, min_density, peak, result.counters.max_constraint_drift,
        static_cast<long long>(result.counters.accepted_steps));
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
    const auto pde_end = test::solve(pde, pde.initial_state(cell_averages(bumps(), spec.grid), 1.0, width),
                                     {0.0, kTime}, test::tight_options(1e-8))
                             .back();
    const analysis::CircleMeasure continuum{{}, {}, pde.angular_density(pde_end.data())};
    std::vector<double> distances;
    const std::vector<Index> sizes{64, 128, 256, 512};
    for (Index n : sizes) {
      const analysis::CircleMeasure empirical =
          weighted_particles(scheme, kBeta, bumps(), n, width, {kTime}, test::tight_options(1e-9)).back();
      distances.push_back(analysis::wasserstein1_circle(empirical, continuum));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i)
      std::printf("%-4s n = %5lld: W1(particles, PDE) at t = %g: %.3e%s%.2f\n", std::string(scheme_key(scheme)).c_str(),
                  static_cast<long long>(sizes[i]), kTime, distances[i], i ? ", observed rate " : ", rate ",
                  i ? std::log2(distances[i - 1] / distances[i]) : 0.0);
    const double rate =
        std::log2(distances.front() / distances.back()) / std::log2(double(sizes.back() / sizes.front()));
    BOOST_TEST_INFO(scheme_key(scheme));
    BOOST_TEST(std::abs(rate - 1.0) < test::kOrderSlack);
    BOOST_TEST(distances.back() < (radius ? 4e-3 : 1e-3));
  }
}

// The threshold of analysis::kResolvedClusterCells, measured: the observed order of the grid,
// p = log2(W1(ρ_{M/2}, ρ_M) / W1(ρ_M, ρ_{2M})), against the width of the narrowest cluster on the
// coarser grid M/2, over the frames of the example up to t = 20 (M = 512, 1024, 2048). Where the
// clusters are at least kResolvedClusterCells wide, the limited scheme keeps its second order; below
// it the order falls.
BOOST_AUTO_TEST_CASE(resolution_threshold) {
  const std::vector<std::int64_t> grids{256, 512, 1024, 2048, 4096};
  struct Point {
    double width, order;
  };
  std::vector<Point> points;
  for (std::size_t g = 1; g + 1 < grids.size(); ++g) {
    const auto &coarse = example_pde(grids[g - 1]), &mid = example_pde(grids[g]), &fine = example_pde(grids[g + 1]);
    for (int i = 0; i < kExampleFrames; ++i) {
      const double width = analysis::narrowest_cluster_cells(analysis::density_clusters(coarse[i]),
                                                             static_cast<std::size_t>(grids[g - 1]));
      if (!std::isfinite(width)) continue;  // no cluster yet
      points.push_back({width, std::log2(w1_cells(coarse[i], mid[i]) / w1_cells(mid[i], fine[i]))});
    }
  }
  const std::vector<double> edges{0.0, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0, 8.0, 1e9};
  std::printf("narrowest cluster on M/2 (cells)  frames  observed order p: median  min\n");
  for (std::size_t b = 0; b + 1 < edges.size(); ++b) {
    std::vector<double> orders;
    for (const Point& p : points)
      if (p.width >= edges[b] && p.width < edges[b + 1]) orders.push_back(p.order);
    if (!orders.empty())
      std::printf("  [%5.2f, %5.3g)                    %4zu  %6.2f  %6.2f\n", edges[b], edges[b + 1], orders.size(),
                  median(orders), *std::min_element(orders.begin(), orders.end()));
  }
  std::vector<double> resolved, thin;
  for (const Point& p : points) {
    if (p.width >= analysis::kResolvedClusterCells) resolved.push_back(p.order);
    if (p.width < 0.75) thin.push_back(p.order);
  }
  BOOST_REQUIRE(resolved.size() >= 20u);
  BOOST_REQUIRE(thin.size() >= 20u);
  // Second order wherever resolved (the scheme's order minus the slack of the order tests) ...
  BOOST_TEST(*std::min_element(resolved.begin(), resolved.end()) > 2.0 - test::kOrderSlack);
  // ... and no longer once the clusters are thinner than three quarters of a cell.
  BOOST_TEST(median(thin) < 1.5);
}

// The PDE against weighted particles of the same initial density after the clusters form: at t = 14
// (five clusters, resolved by M = 4096) and at t = 20 (every cluster narrower than a cell of any grid
// used). Both discretize the same mean-field equation (particles with no grid: the empirical measure
// is an exact solution), so their distance must be within their own discretization errors, estimated
// by refinement: W1(particles_2n, PDE_2M) <= 3 (W1(PDE_M, PDE_2M) + W1(particles_n, particles_2n)).
// The factor 3 bounds each error by its refinement difference, d / (1 - 2^-p) with an observed
// order p >= 0.6 in M and n (p = 0.6 after the clusters fall below a cell, in the study of the
// example against particles up to M = 16384; 1 in n for grid-weighted particles).
BOOST_AUTO_TEST_CASE(weighted_particles_follow_the_pde_after_clusters_form) {
  const std::int64_t m = 2048;
  const auto &pde = example_pde(m), &pde_fine = example_pde(2 * m);
  const std::vector<double> times{14.0, 20.0};
  std::map<Index, std::vector<analysis::CircleMeasure>> particles;  // per n, at `times`
  for (Index n : {Index{1024}, Index{2048}}) {
    // rtol 1e-7: the integration error stays far below the quadrature error of n particles (~1/n).
    particles[n] =
        weighted_particles(PostLN{}, kExampleBeta, example_density(), n, 0.0, times, test::tight_options(1e-7));
  }
  for (std::size_t k = 0; k < times.size(); ++k) {
    const auto frame = static_cast<std::size_t>(std::lround(times[k] / kExampleStep));
    const analysis::CircleMeasure continuum{{}, {}, pde_fine[frame]};
    const double distance = analysis::wasserstein1_circle(particles[2048][k], continuum);
    const double grid_error = w1_cells(pde[frame], pde_fine[frame]);
    const double particle_error = analysis::wasserstein1_circle(particles[1024][k], particles[2048][k]);
    const auto clusters = analysis::density_clusters(pde_fine[frame]);
    const double width = analysis::narrowest_cluster_cells(clusters, pde_fine[frame].size());
    std::printf(
        "t = %g: %zu clusters, narrowest %.2f cells at M = %lld; W1(particles n = 2048, PDE M = %lld) = %.3e, "
        "W1(PDE M, 2M) = %.3e, W1(particles n, 2n) = %.3e\n",
        times[k], clusters.size(), width, static_cast<long long>(2 * m), static_cast<long long>(2 * m), distance,
        grid_error, particle_error);
    BOOST_TEST_INFO("t = " << times[k]);
    BOOST_TEST(clusters.size() == 5u);
    BOOST_TEST(distance <= 3.0 * (grid_error + particle_error));
  }
  // The second time is past the resolution of every grid used, the first is not.
  BOOST_TEST(analysis::narrowest_cluster_cells(analysis::density_clusters(pde_fine[28]), 2 * m) >=
             analysis::kResolvedClusterCells);
  BOOST_TEST(analysis::narrowest_cluster_cells(analysis::density_clusters(pde_fine[40]), 2 * m) <
             analysis::kResolvedClusterCells);
}
