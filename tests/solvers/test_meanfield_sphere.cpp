// The mean field on S^2 (solvers/meanfield_sphere.cpp): the transforms against closed forms, the
// Funk–Hecke coefficients against quadrature, the growth rates of the uniform state per degree l
// against Funk–Hecke (linearized right-hand side and integration in time), and the mass.
#define BOOST_TEST_MODULE meanfield_sphere
#include <boost/test/unit_test.hpp>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "normdyn/density.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/meanfield_sphere.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

constexpr double kPi = std::numbers::pi;

// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n).
void gauss_legendre_nodes(int n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(static_cast<std::size_t>(n), 0.0);
  w.assign(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), dp = 0.0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1.0, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1.0);
      const double dz = p1 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    x[static_cast<std::size_t>(i)] = z;
    w[static_cast<std::size_t>(i)] = 2.0 / ((1.0 - z * z) * dp * dp);
  }
}

double legendre_p(int l, double t) {
  double p0 = 1.0, p1 = t;
  if (l == 0) return 1.0;
  for (int k = 2; k <= l; ++k) {
    const double p2 = ((2.0 * k - 1.0) * t * p1 - (k - 1.0) * p0) / k;
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

// The state of uniform + ε Re(Y_lm) (m > 0: the real part of the packed pair, times 1/2 per the
// real-field convention f = Σ_{m>=0} (2 − δ_m0) Re(f_lm Y_lm)).
std::vector<double> perturbed_uniform_state(const MeanFieldSphere& s, int l, int m, double eps, bool imaginary) {
  std::vector<double> x(s.size(), 0.0);
  x[0] = 1.0 / std::sqrt(4.0 * kPi);
  x[s.transform().index(l, m) + (imaginary ? 1 : 0)] = eps;
  return x;
}

}  // namespace

BOOST_AUTO_TEST_CASE(transform_round_trip_gradient_and_divergence) {
  const int L = 12;
  SphereTransform t(L, 19, 38);
  // Σ_l 4π (2l+1)-weighted areas: the weights sum to 4π.
  double area = 0.0;
  for (double a : t.point_areas()) area += a * t.longitudes();
  BOOST_TEST(std::abs(area - 4.0 * kPi) < test::kSphereTransform);
  std::vector<double> c(t.coefficients());
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = std::sin(1.0 + 0.37 * static_cast<double>(k));
  for (int l = 0; l <= L; ++l) c[t.index(l, 0)] = std::cos(0.5 * l);  // m = 0: real
  std::vector<double> grid(t.points()), back(t.coefficients());
  t.synthesize(c.data(), grid.data());
  t.analyze(grid.data(), back.data());
  double err = 0.0;
  for (std::size_t k = 0; k < c.size(); ++k) err = std::max(err, std::abs(back[k] - c[k]));
  BOOST_TEST(err < test::kSphereTransform);
  // Y_10 = sqrt(3/(4π)) cos ϑ: ∂_ϑ = −sqrt(3/(4π)) sin ϑ, no e_φ part.
  std::vector<double> y10(t.coefficients(), 0.0), gt(t.points()), gp(t.points());
  y10[t.index(1, 0)] = 1.0;
  t.gradient(y10.data(), gt.data(), gp.data());
  for (int i = 0; i < t.latitudes(); ++i) {
    const double expected = -std::sqrt(3.0 / (4.0 * kPi)) * std::sin(t.colatitudes()[static_cast<std::size_t>(i)]);
    BOOST_TEST(std::abs(gt[static_cast<std::size_t>(i * t.longitudes() + 3)] - expected) < test::kSphereTransform);
    BOOST_TEST(std::abs(gp[static_cast<std::size_t>(i * t.longitudes() + 3)]) < test::kSphereTransform);
  }
  // div ∇f = −l(l+1) f_lm for every coefficient.
  t.gradient(c.data(), gt.data(), gp.data());
  std::vector<double> div(t.coefficients());
  t.divergence(gt.data(), gp.data(), div.data());
  err = 0.0;
  for (int m = 0; m <= L; ++m)
    for (int l = m; l <= L; ++l)
      for (int part = 0; part < (m > 0 ? 2 : 1); ++part) {
        const std::size_t k = t.index(l, m) + static_cast<std::size_t>(part);
        err = std::max(err, std::abs(div[k] + l * (l + 1.0) * c[k]));
      }
  BOOST_TEST(err < 1e-10);
  // A rotation about the axis (sin ϑ e_φ) has no divergence.
  for (int i = 0; i < t.latitudes(); ++i)
    for (int j = 0; j < t.longitudes(); ++j) {
      const auto p = static_cast<std::size_t>(i * t.longitudes() + j);
      gt[p] = 0.0;
      gp[p] = std::sin(t.colatitudes()[static_cast<std::size_t>(i)]);
    }
  t.divergence(gt.data(), gp.data(), div.data());
  for (double v : div) BOOST_TEST(std::abs(v) < test::kSphereTransform);
}

BOOST_AUTO_TEST_CASE(funk_hecke_coefficients_match_quadrature) {
  // λ_l = 2π ∫ e^{κ t} P_l(t) dt against 200-point Gauss–Legendre quadrature, for κ of both signs.
  std::vector<double> x, w;
  gauss_legendre_nodes(200, x, w);
  for (const double kappa : {-3.0, 0.25, 1.0, 4.0, 25.0}) {
    const std::vector<double> lambda = funk_hecke_exponential(kappa, 30);
    for (int l = 0; l <= 30; ++l) {
      double q = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) q += w[i] * std::exp(kappa * x[i]) * legendre_p(l, x[i]);
      q *= 2.0 * kPi;
      // Relative where the coefficient is above the quadrature's cancellation floor (e^{|κ|} 1e-16).
      const double floor = 1e-13 * 4.0 * kPi * std::exp(std::abs(kappa));
      BOOST_TEST(std::abs(lambda[static_cast<std::size_t>(l)] - q) <= 1e-12 * std::abs(q) + floor,
                 "kappa " << kappa << " l " << l << ": " << lambda[static_cast<std::size_t>(l)] << " vs " << q);
    }
  }
  // κ = 0: i_l(0)/0 is 1/3 at l = 1 and 0 above.
  const ScaledSphericalBessel b = scaled_spherical_bessel(0.0, 3);
  BOOST_TEST(std::abs(b.i_over_x[1] - 1.0 / 3.0) < test::kRoundoff);
  BOOST_TEST(b.i_over_x[2] == 0.0);
  // Small κ: i_1(κ)/κ = 1/3 + κ²/30 + O(κ⁴).
  const ScaledSphericalBessel s = scaled_spherical_bessel(1e-3, 1);
  BOOST_TEST(std::abs(s.i_over_x[1] * std::exp(1e-3) - (1.0 / 3.0 + 1e-6 / 30.0)) < 1e-13);
}

BOOST_AUTO_TEST_CASE(linearized_rates_per_degree_match_funk_hecke) {
  // (rhs(u + ε e) − rhs(u − ε e)) / (2ε) along the coefficient e of Y_lm is γ_l e to O(ε²).
  const double eps = 1e-4;
  for (const bool uniform : {false, true})
    for (const auto& [beta, att] :
         {std::pair{1.0, SphereAttention{}}, std::pair{4.0, SphereAttention{}},
          std::pair{2.0, SphereAttention{-0.5, 1.5}}, std::pair{9.0, SphereAttention{1.0, 1.0}}}) {
      SphereMeanFieldSpec spec;
      spec.beta = beta;
      spec.degree = 16;
      spec.layers = {att};
      spec.uniform_normalizer = uniform;
      MeanFieldSphere s(spec);
      std::vector<double> up(s.size()), down(s.size());
      for (int l = 1; l <= spec.degree; ++l)
        for (const auto& [m, imaginary] : {std::pair{0, false}, std::pair{l / 2, l / 2 > 0}, std::pair{l, true}}) {
          const std::vector<double> xp = perturbed_uniform_state(s, l, m, eps, imaginary);
          const std::vector<double> xm = perturbed_uniform_state(s, l, m, -eps, imaginary);
          s.rhs(xp.data(), up.data(), 0.0);
          s.rhs(xm.data(), down.data(), 0.0);
          const std::size_t k = s.transform().index(l, m) + (imaginary ? 1 : 0);
          const double measured = (up[k] - down[k]) / (2.0 * eps);
          const double exact = sphere_uniform_state_rate(beta, att, l, uniform);
          // Rates below 1e-3 of the largest (high l at small β, i_l(κ) ~ κ^l / (2l + 1)!!) are checked
          // to 1e-9 of the largest: round-off of the field over ε.
          const double largest = sphere_uniform_state_rate(beta, att, 1, uniform);
          BOOST_TEST(
              std::abs(measured - exact) <= test::kSphereRate * std::max(std::abs(exact), 1e-3 * std::abs(largest)),
              "beta " << beta << " a " << att.a << " uniform " << uniform << " l " << l << " m " << m << ": "
                      << measured << " vs " << exact);
          // No other coefficient moves at first order (rotation invariance).
          double leak = 0.0;
          for (std::size_t j = 1; j < s.size(); ++j)
            if (j != k) leak = std::max(leak, std::abs(up[j] - down[j]) / (2.0 * eps));
          BOOST_TEST(leak <= test::kSphereRate * std::abs(largest));
        }
    }
}

BOOST_AUTO_TEST_CASE(integrated_growth_matches_the_rate_and_mass_is_conserved) {
  SphereMeanFieldSpec spec;
  spec.beta = 3.0;
  spec.degree = 12;
  MeanFieldSphere s(spec);
  IntegratorOptions o;
  o.rtol = 1e-12;
  o.atol = 1e-16;
  o.dt = 1e-3;
  for (const int l : {1, 2, 5}) {
    const double eps = 1e-8;
    const std::vector<double> x0 = perturbed_uniform_state(s, l, l > 1 ? 1 : 0, eps, false);
    const double t1 = 2.0;
    StateRecorder keep;
    const IntegrationResult r = integrate(s, x0, 0.0, std::vector<double>{0.0, t1}, o, keep);
    BOOST_REQUIRE(r.status == RunStatus::ok);
    const std::size_t k = s.transform().index(l, l > 1 ? 1 : 0);
    const double rate = std::log(keep.states[1][k] / keep.states[0][k]) / t1;
    const double exact = sphere_uniform_state_rate(spec.beta, SphereAttention{}, l, false);
    BOOST_TEST(std::abs(rate - exact) <= test::kSphereRate * exact, "l " << l << ": " << rate << " vs " << exact);
  }
  // Mass of a strongly non-uniform density through clustering: round-off.
  const SphereTransform& tr = s.transform();
  std::vector<double> grid(tr.points());
  for (int i = 0; i < tr.latitudes(); ++i)
    for (int j = 0; j < tr.longitudes(); ++j) {
      const double th = tr.colatitudes()[static_cast<std::size_t>(i)], ph = 2.0 * kPi * j / tr.longitudes();
      grid[static_cast<std::size_t>(i * tr.longitudes() + j)] =
          std::exp(2.0 * std::sin(th) * std::cos(ph)) + 0.5 * std::exp(2.0 * std::cos(th));
    }
  const std::vector<double> x0 = s.initial_state(grid);
  BOOST_TEST(std::abs(s.mass(x0.data()) - 1.0) < test::kMassRoundoff);
  o.rtol = 1e-8;
  o.atol = 1e-10;
  StateRecorder keep;
  const IntegrationResult r = integrate(s, x0, 0.0, std::vector<double>{0.0, 1.0, 3.0}, o, keep);
  BOOST_REQUIRE(r.status == RunStatus::ok);
  for (const auto& x : keep.states) BOOST_TEST(std::abs(s.mass(x.data()) - 1.0) < test::kMassRoundoff);
  // The density moved (the test would pass vacuously if the flow were zero).
  BOOST_TEST(std::abs(keep.states.back()[tr.index(1, 1)] - x0[tr.index(1, 1)]) > 1e-3);
}

BOOST_AUTO_TEST_CASE(sphere_attention_accepts_multiples_of_the_identity_only) {
  AttentionMatrices m;
  m.identity = false;
  m.Q = RowMatrix::Identity(3, 3) * 2.0;
  m.K = RowMatrix::Identity(3, 3) * 0.5;
  m.V = RowMatrix::Identity(3, 3) * -1.5;
  const auto a = sphere_attention(m);
  BOOST_REQUIRE(a.has_value());
  BOOST_TEST(std::abs(a->a - 1.0) < test::kRoundoff);
  BOOST_TEST(std::abs(a->c + 1.5) < test::kRoundoff);
  m.V(0, 1) = 0.1;
  BOOST_TEST(!sphere_attention(m).has_value());
  m.V(0, 1) = 0.0;
  m.K(2, 2) = 0.7;
  BOOST_TEST(!sphere_attention(m).has_value());
}

namespace {

// The squared kernel distance (maximum mean discrepancy) with the kernel e^{<x, y>} between weighted
// atoms (rows of x, masses w) and a density on the solver's grid:
//   D² = ∫∫ e^{<x,y>} d(ν − μ)(x) d(ν − μ)(y).
// The kernel is positive definite on S^2 (its Funk–Hecke coefficients 4π i_l(1) are all > 0), so D is
// a metric on measures; the cross term is a Gauss–Legendre quadrature on the grid (exact to round-off
// for this kernel, whose coefficients are below 1e-40 at the grid's degree), the μ⊗μ term is spectral.
double sphere_kernel_distance(const RowMatrix& x, const Vector& w, const MeanFieldSphere& pde, const double* state) {
  const SphereTransform& t = pde.transform();
  const std::vector<double> mu = pde.density(state);
  const auto lon = static_cast<std::size_t>(t.longitudes());
  std::vector<std::array<double, 3>> points(t.points());
  std::vector<double> mass(t.points());
  for (std::size_t i = 0; i < t.colatitudes().size(); ++i)
    for (std::size_t j = 0; j < lon; ++j) {
      const double th = t.colatitudes()[i], ph = 2.0 * kPi * static_cast<double>(j) / static_cast<double>(lon);
      points[i * lon + j] = {std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
      mass[i * lon + j] = t.point_areas()[i] * mu[i * lon + j];
    }
  const auto dot = [](const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  double nn = 0.0, nm = 0.0, mm = 0.0;
  for (Index a = 0; a < x.rows(); ++a) {
    for (Index b = 0; b < x.rows(); ++b) nn += w(a) * w(b) * std::exp(dot(x.row(a).data(), x.row(b).data()));
    for (std::size_t p = 0; p < points.size(); ++p)
      nm += w(a) * mass[p] * std::exp(dot(x.row(a).data(), points[p].data()));
  }
  // ∫∫ e^{<x,y>} dμ dμ = Σ_l 4π i_l(1) Σ_m |μ_lm|² (Funk–Hecke; m > 0 counts m and −m).
  const std::vector<double> lambda = funk_hecke_exponential(1.0, t.lmax());
  for (int m = 0; m <= t.lmax(); ++m)
    for (int l = m; l <= t.lmax(); ++l) {
      const std::size_t k = t.index(l, m);
      mm += lambda[static_cast<std::size_t>(l)] *
            (m == 0 ? state[k] * state[k] : 2.0 * (state[k] * state[k] + state[k + 1] * state[k + 1]));
    }
  return std::sqrt(std::max(0.0, nn - 2.0 * nm + mm));
}

double sphere_fitted_rate(const std::vector<double>& sizes, const std::vector<double>& errors) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double lx = std::log(sizes[i]), ly = std::log(errors[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return -(n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace

BOOST_AUTO_TEST_CASE(weighted_particles_converge_to_the_density) {
  // Two von Mises bumps on S^2, Post-LN, Q = K = V = I, β = 1, to t = 1 (the bumps sharpen and move;
  // the density stays resolved at L = 32). Weighted particles (i.i.d. uniform directions, masses ∝ the density) from the same density:
  // the kernel distance at t = 1, root mean square over seeds, must fall as n^{-1/2}.
  constexpr double kBeta = 1.0, kTime = 1.0;
  const Density start = Density::von_mises({0.0, 2.0}, {2.0, 3.0}, {0.6, 0.4});
  SphereMeanFieldSpec spec;
  spec.beta = kBeta;
  spec.degree = 32;
  MeanFieldSphere pde(spec);
  const SphereTransform& t = pde.transform();
  std::vector<double> grid(t.points());
  const auto lon = static_cast<std::size_t>(t.longitudes());
  for (std::size_t i = 0; i < t.colatitudes().size(); ++i)
    for (std::size_t j = 0; j < lon; ++j) {
      const double th = t.colatitudes()[i], ph = 2.0 * kPi * static_cast<double>(j) / static_cast<double>(lon);
      const double x[3] = {std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
      grid[i * lon + j] = relative_density(start, x, 3);
    }
  IntegratorOptions o;
  o.rtol = 1e-9;
  o.atol = 1e-11;
  o.dt = 1e-3;
  StateRecorder pde_states;
  BOOST_REQUIRE(integrate(pde, pde.initial_state(grid), 0.0, std::vector<double>{0.0, kTime}, o, pde_states).status ==
                RunStatus::ok);
  BOOST_TEST(pde.spectral_tail(pde_states.states.back().data()) < 1e-6,
             pde.spectral_tail(pde_states.states.back().data()));  // resolved
  std::vector<double> sizes, distances;
  double to_the_start = 0.0;  // the largest n against the density at t = 0
  for (int p = 6; p <= 11; ++p) {
    const Index n = Index{1} << p;
    double sum = 0.0;
    constexpr int kSeeds = 8;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const WeightedTokens tokens =
          density_tokens(start, n, 3, Sampling::weighted, 1.0, 0.0, static_cast<std::uint64_t>(seed));
      DynamicsSpec ds;
      ds.beta = kBeta;
      ds.masses = tokens.masses;
      AttentionDynamics particles(ds, QkvSource::identity(), n, 3);
      std::vector<double> x0(particles.layout().size());
      particles.layout().pack(tokens.tokens, x0.data());
      StateRecorder keep;
      IntegratorOptions po;
      po.rtol = 1e-8;
      po.atol = 1e-10;
      po.dt = 1e-3;
      BOOST_REQUIRE(integrate(particles, x0, 0.0, std::vector<double>{kTime}, po, keep).status == RunStatus::ok);
      const Tokens end = particles.layout().unpack(keep.states.back().data());
      const double d = sphere_kernel_distance(end.theta, tokens.masses, pde, pde_states.states.back().data());
      sum += d * d;
      if (p == 11 && seed == 1)
        to_the_start = sphere_kernel_distance(end.theta, tokens.masses, pde, pde_states.states.front().data());
    }
    sizes.push_back(static_cast<double>(n));
    distances.push_back(std::sqrt(sum / kSeeds));
    std::printf("sphere mean field vs weighted particles: n = 2^%d, kernel distance (rms over %d seeds) %.4e\n", p,
                kSeeds, distances.back());
  }
  const double rate = sphere_fitted_rate(sizes, distances);
  std::printf("sphere mean field vs weighted particles: distance ~ n^-%.3f (expected 1/2)\n", rate);
  BOOST_TEST(std::abs(rate - 0.5) < test::kOrderSlack);
  // The distance sees the dynamics: the particles at t = 1 are far from the density at t = 0.
  std::printf("sphere mean field vs weighted particles: n = 2^11 against the density at t = 0: %.4e\n", to_the_start);
  BOOST_TEST(distances.back() < 0.5 * to_the_start);
}
