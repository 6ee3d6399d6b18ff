// The conformance suite every scheme of the registry must pass (architecture.md): tangency,
// permutation and rotation equivariance, consensus as a fixed point, energy non-decreasing,
// positive speed, and a discrete layer map whose h → 0 limit is the scheme's ODE.
#define BOOST_TEST_MODULE schemes_conformance
#include <boost/test/unit_test.hpp>

#include "normdyn/dynamics.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using normdyn::test::AllSchemes;

namespace {

constexpr Index kN = 9;
constexpr Index kD = 5;
constexpr double kBeta = 2.0;
// Times on both sides of Mix-LN's switch (tau = 4) and of integer layer boundaries.
constexpr double kTimes[] = {0.3, 2.5, 5.7};

template <class S>
AttentionDynamics make(QkvSource qkv = QkvSource::identity(), double beta = kBeta) {
  DynamicsSpec spec;
  spec.scheme = S{};
  spec.beta = beta;
  spec.kernel.threads = 1;
  return AttentionDynamics(spec, std::move(qkv), kN, kD);
}

struct Velocity {
  RowMatrix dtheta;
  Vector dr;
};

Velocity velocity(AttentionDynamics& dyn, const Tokens& x, double t) {
  Velocity v{RowMatrix(x.n(), x.d()), Vector(x.n())};
  dyn.velocity(x.theta, x.r, t, t, v.dtheta, v.dr);
  return v;
}

// dE/dt for E = Σ_{j,k} exp(β θ_jᵀ M θ_k), M symmetric, along the velocity.
double energy_rate(const Tokens& x, const RowMatrix& dtheta, const Eigen::MatrixXd& M, double beta) {
  const Eigen::MatrixXd gram = Eigen::MatrixXd(x.theta) * M * Eigen::MatrixXd(x.theta).transpose();
  const Eigen::MatrixXd cross = Eigen::MatrixXd(dtheta) * M * Eigen::MatrixXd(x.theta).transpose();
  double rate = 0.0;
  for (Index j = 0; j < x.n(); ++j)
    for (Index k = 0; k < x.n(); ++k) rate += beta * std::exp(beta * gram(j, k)) * (cross(j, k) + cross(k, j));
  return rate;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(velocity_is_tangent_to_the_spheres, S, AllSchemes) {
  auto dyn = make<S>();
  const Tokens x = test::random_tokens(kN, kD, 1);
  for (double t : kTimes) {
    const Velocity v = velocity(dyn, x, t);
    for (Index j = 0; j < kN; ++j) BOOST_TEST(std::abs(v.dtheta.row(j).dot(x.theta.row(j))) < test::kRoundoff);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(speed_factor_is_positive, S, AllSchemes) {
  const S scheme{};
  for (double t : kTimes)
    for (double r : {0.1, 1.0, 7.0})
      for (double a_norm : {0.05, 1.0}) {
        const TokenContext c{t, t, r, 0.3 * a_norm, a_norm};
        BOOST_TEST(scheme.speed(c) > 0.0);
      }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(permutation_equivariance, S, AllSchemes) {
  auto dyn = make<S>();
  const Tokens x = test::random_tokens(kN, kD, 2);
  Eigen::PermutationMatrix<Eigen::Dynamic> perm(kN);
  perm.setIdentity();
  std::reverse(perm.indices().data(), perm.indices().data() + kN);
  std::swap(perm.indices()(0), perm.indices()(3));
  const Tokens px{perm * x.theta, perm * x.r};
  for (double t : kTimes) {
    const Velocity v = velocity(dyn, x, t);
    const Velocity pv = velocity(dyn, px, t);
    BOOST_TEST((pv.dtheta - perm * v.dtheta).cwiseAbs().maxCoeff() < test::kRoundoff);
    BOOST_TEST((pv.dr - perm * v.dr).cwiseAbs().maxCoeff() < test::kRoundoff);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(rotation_equivariance_with_identity_attention, S, AllSchemes) {
  auto dyn = make<S>();
  const Tokens x = test::random_tokens(kN, kD, 3);
  const RowMatrix rot = test::random_rotation(kD, 4);
  const Tokens rx{x.theta * rot.transpose(), x.r};
  for (double t : kTimes) {
    const Velocity v = velocity(dyn, x, t);
    const Velocity rv = velocity(dyn, rx, t);
    BOOST_TEST((rv.dtheta - v.dtheta * rot.transpose()).cwiseAbs().maxCoeff() < test::kRoundoff);
    BOOST_TEST((rv.dr - v.dr).cwiseAbs().maxCoeff() < test::kRoundoff);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(consensus_is_a_fixed_point, S, AllSchemes) {
  auto dyn = make<S>();
  Tokens x = test::random_tokens(kN, kD, 5);
  for (Index j = 1; j < kN; ++j) x.theta.row(j) = x.theta.row(0);
  for (double t : kTimes) {
    const Velocity v = velocity(dyn, x, t);
    BOOST_TEST(v.dtheta.cwiseAbs().maxCoeff() < test::kRoundoff);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(energy_is_non_decreasing_with_identity_attention, S, AllSchemes) {
  auto dyn = make<S>();
  const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(kD, kD);
  for (std::uint64_t seed = 10; seed < 20; ++seed) {
    const Tokens x = test::random_tokens(kN, kD, seed);
    for (double t : kTimes) {
      const Velocity v = velocity(dyn, x, t);
      BOOST_TEST(energy_rate(x, v.dtheta, I, kBeta) >= 0.0);
    }
  }
}

// With QᵀK symmetric and V = QᵀK the flow is still a gradient flow of the energy (spec 4.1).
BOOST_AUTO_TEST_CASE_TEMPLATE(energy_is_non_decreasing_with_symmetric_attention, S, AllSchemes) {
  const RowMatrix g = test::random_matrix(kD, kD, 21, 0.5);
  const RowMatrix M = 0.5 * (g + g.transpose());  // symmetric QᵀK with Q = I
  AttentionMatrices m;
  m.identity = false;
  m.Q = RowMatrix::Identity(kD, kD);
  m.K = M;
  m.V = M;
  auto dyn = make<S>(QkvSource::layers({m}));
  for (std::uint64_t seed = 30; seed < 40; ++seed) {
    const Tokens x = test::random_tokens(kN, kD, seed);
    for (double t : kTimes) {
      const Velocity v = velocity(dyn, x, t);
      BOOST_TEST(energy_rate(x, v.dtheta, Eigen::MatrixXd(M), kBeta) >= -test::kRoundoff);
    }
  }
}

// (layer(x, h) − x) / h → velocity(x) with error O(h): the discrete maps have the ODE as limit.
BOOST_AUTO_TEST_CASE_TEMPLATE(layer_map_has_the_ode_as_its_limit, S, AllSchemes) {
  auto dyn = make<S>();
  const Tokens x = test::random_tokens(kN, kD, 6);
  for (double t : kTimes) {
    const Velocity v = velocity(dyn, x, t);
    double previous = 0.0;
    for (double h : {1e-3, 1e-4}) {
      Tokens y = x;
      dyn.layer(y.theta, y.r, t, h);
      const double err = std::max(((y.theta - x.theta) / h - v.dtheta).cwiseAbs().maxCoeff(),
                                  ((y.r - x.r) / h - v.dr).cwiseAbs().maxCoeff());
      BOOST_TEST(err < 50.0 * h);
      if (previous > 0.0) BOOST_TEST(err < 0.2 * previous);  // first order: 10× smaller h, ~10× smaller error
      previous = err;
    }
  }
}

// The table of spec section 2, value by value.
BOOST_AUTO_TEST_CASE(speed_and_radial_rate_follow_the_spec_table) {
  const TokenContext c{3.0, 3.0, 2.5, 0.4, 0.8};
  BOOST_TEST(PostLN{}.speed(c) == 1.0);
  BOOST_TEST(PostLN{}.radial_rate(c) == 0.0);
  BOOST_TEST(PreLN{}.speed(c) == 2.5);
  BOOST_TEST(PreLN{}.radial_rate(c) == 0.4);
  MixLN mix;
  mix.tau = 4.0;
  BOOST_TEST(mix.speed(c) == 1.0);
  BOOST_TEST(mix.radial_rate(c) == 0.0);
  const TokenContext late{5.0, 5.0, 2.5, 0.4, 0.8};
  BOOST_TEST(mix.speed(late) == 2.5);
  BOOST_TEST(mix.radial_rate(late) == 0.4);
  BOOST_TEST(PeriLN{}.speed(c) == 2.5 * 0.8);
  BOOST_TEST(PeriLN{}.radial_rate(c) == 0.4 / 0.8);
  NGPT ngpt;
  ngpt.alpha = 2.0;
  BOOST_TEST(ngpt.speed(c) == 0.8 / 2.0);
  ngpt.alpha_decay = 0.5;
  BOOST_TEST(std::abs(ngpt.speed(c) - 0.8 / (2.0 / std::sqrt(4.0))) < 1e-15);
  BOOST_TEST(ngpt.radial_rate(c) == 0.0);
  BOOST_TEST(LNScaling{}.speed(c) == 2.0);
  BOOST_TEST(LNScaling{}.radial_rate(c) == 0.0);
}

BOOST_AUTO_TEST_CASE(registry_lists_every_scheme_once) {
  const auto keys = scheme_keys();
  BOOST_TEST(keys.size() == std::variant_size_v<Scheme>);
  for (auto k : keys) {
    const auto s = make_scheme(k);
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(scheme_key(*s) == k);
  }
  BOOST_TEST(!make_scheme("nope").has_value());
}
