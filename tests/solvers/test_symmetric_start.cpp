// Spec 4.4 / Theorem 4.1: from orthonormal tokens the n-particle code must follow the scalar ODE of
// the library's reduced ODE (analysis/symmetric_ode.hpp) for every scheme (n = d = 256, β = 5, t = 1, 2, 4, 8, relative 1e-7), and
// start with the slopes of Theorem 4.1 in closed form.
#define BOOST_TEST_MODULE symmetric_start
#include <boost/test/unit_test.hpp>
#include <cstdio>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/analysis/symmetric_ode.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using normdyn::test::AllSchemes;

namespace {

constexpr Index kN = 256;
constexpr double kBeta = 5.0;
constexpr double kR0 = 1.0;
const std::vector<double> kTimes{0.0, 1.0, 2.0, 4.0, 8.0};

// Off-diagonal cosines: their mean and spread.
std::pair<double, double> cosine_stats(const RowMatrix& theta) {
  const RowMatrix g = theta * theta.transpose();
  double sum = 0.0, lo = 2.0, hi = -2.0;
  for (Index j = 0; j < g.rows(); ++j)
    for (Index k = 0; k < g.cols(); ++k) {
      if (j == k) continue;
      sum += g(j, k);
      lo = std::min(lo, g(j, k));
      hi = std::max(hi, g(j, k));
    }
  return {sum / double(g.rows() * (g.rows() - 1)), hi - lo};
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(particles_follow_the_scalar_reduction, S, AllSchemes) {
  DynamicsSpec spec;
  spec.scheme = S{};
  spec.beta = kBeta;
  AttentionDynamics dyn(spec, QkvSource::identity(), kN, kN);
  const Tokens start = orthonormal_tokens(kN, kN, kR0, 3);
  std::vector<double> x0(dyn.layout().size());
  dyn.layout().pack(start, x0.data());

  IntegratorOptions options;
  options.rtol = 1e-11;
  options.atol = 1e-13;
  test::FrameRecorder frames;
  frames.layout = dyn.layout();
  const IntegrationResult result = integrate(dyn, x0, 0.0, kTimes, options, frames);
  BOOST_REQUIRE(result.status == RunStatus::ok);
  BOOST_REQUIRE_EQUAL(frames.frames.size(), kTimes.size());

  const analysis::SymmetricTrajectory reduced =
      analysis::symmetric_trajectory(spec.scheme, {double(kN), kBeta, kR0, 1e-4}, kTimes);
  for (std::size_t i = 1; i < kTimes.size(); ++i) {
    const double t = kTimes[i];
    const struct { double gamma, r; } s{reduced.gamma[i], reduced.r[i]};
    const auto [gamma, spread] = cosine_stats(frames.frames[i].theta);
    const double r_mean = frames.frames[i].r.mean();
    const double gamma_error = std::abs(gamma - s.gamma) / std::abs(s.gamma);
    const double one_minus_error = std::abs((1.0 - gamma) - (1.0 - s.gamma)) / (1.0 - s.gamma);
    const double r_error = std::abs(r_mean - s.r) / s.r;
    std::printf(
        "symmetric %-5s t = %g: gamma = %.15f (scalar %.15f), rel. error %.2e; 1 - gamma rel. error %.2e; "
        "r rel. error %.2e; cosine spread %.1e\n",
        std::string(S::key).c_str(), t, gamma, s.gamma, gamma_error, one_minus_error, r_error, spread);
    BOOST_TEST(gamma_error < test::kSymmetricRelative);
    BOOST_TEST(r_error < test::kSymmetricRelative);
    BOOST_TEST(spread < 1e-9);
  }
}

// Theorem 4.1: dγ/dt(0) = (1/s_j + 1/s_k) / (e^β + n − 1), in closed form per scheme.
BOOST_AUTO_TEST_CASE(initial_slopes_of_theorem_4_1) {
  const double n = 64.0, beta = 2.0, r0 = 1.7, alpha = 0.6;
  const double e = std::exp(beta);
  const double post = 2.0 / (e + n - 1.0);
  const double pre = 2.0 / (r0 * (e + n - 1.0));
  const double peri = 2.0 / (r0 * std::sqrt(e * e + n - 1.0));
  const double ngpt = 2.0 * alpha / std::sqrt(e * e + n - 1.0);
  MixLN mix;
  mix.tau = 1.0;
  NGPT ng;
  ng.alpha = alpha;
  const std::vector<std::pair<Scheme, double>> expected{{PostLN{}, post}, {PreLN{}, pre}, {mix, post},
                                                        {PeriLN{}, peri}, {ng, ngpt},     {LNScaling{}, post}};
  for (const auto& [scheme, slope] : expected) {
    // The particle code itself, at t = 0, through the public velocity.
    DynamicsSpec spec;
    spec.scheme = scheme;
    spec.beta = beta;
    AttentionDynamics dyn(spec, QkvSource::identity(), Index(n), Index(n));
    const Tokens x = orthonormal_tokens(Index(n), Index(n), r0, 9);
    RowMatrix dtheta(x.n(), x.d());
    Vector dr(x.n());
    dyn.velocity(x.theta, x.r, 0.0, 0.0, dtheta, dr);
    const RowMatrix dgram = dtheta * x.theta.transpose() + x.theta * dtheta.transpose();
    const double measured = dgram(0, 1);
    BOOST_TEST_INFO("scheme " << scheme_key(scheme));
    BOOST_TEST(std::abs(measured - slope) < 1e-14 * std::max(1.0, slope) + 1e-15);
    const double spread = (dgram - Eigen::MatrixXd(dgram.diagonal().asDiagonal())).maxCoeff() -
                          (dgram + 1e9 * RowMatrix::Identity(x.n(), x.n())).minCoeff();
    BOOST_TEST(spread < 1e-14);
  }
}
