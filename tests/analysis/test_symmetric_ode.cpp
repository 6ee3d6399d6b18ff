// The reduced scalar ODE of the symmetric start (Theorem 4.1) against the n-particle code at a
// small size (n = d = 12, β = 2, t up to 3, every scheme; Mix-LN switches inside the horizon):
// γ, 1 − γ, r and dγ/dt (from the particle velocity) at every sample.
#define BOOST_TEST_MODULE symmetric_ode
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "frame_recorder.hpp"
#include "normdyn/analysis/symmetric_ode.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/studies/symmetric.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

constexpr Index kN = 12;
constexpr double kBeta = 2.0;
constexpr double kR0 = 1.3;

Scheme with_switch_inside(Scheme s) {
  if (auto* mix = std::get_if<MixLN>(&s)) mix->tau = 1.25;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(reduced_ode_follows_the_particles, S, test::AllSchemes) {
  DynamicsSpec spec;
  spec.scheme = with_switch_inside(S{});
  spec.beta = kBeta;
  AttentionDynamics dyn(spec, QkvSource::identity(), kN, kN);
  const Tokens start = orthonormal_tokens(kN, kN, kR0, 5);
  std::vector<double> x0(dyn.layout().size());
  dyn.layout().pack(start, x0.data());
  const std::vector<double> times = analysis::linear_times(3.0, 6);
  IntegratorOptions options;
  options.rtol = 1e-11;
  options.atol = 1e-13;
  test::FrameRecorder frames;
  frames.layout = dyn.layout();
  BOOST_REQUIRE(integrate(dyn, x0, 0.0, times, options, frames).status == RunStatus::ok);
  BOOST_REQUIRE_EQUAL(frames.frames.size(), times.size());

  const analysis::SymmetricTrajectory reduced =
      analysis::symmetric_trajectory(spec.scheme, {double(kN), kBeta, kR0, 1e-3}, times);
  BOOST_REQUIRE_EQUAL(reduced.t.size(), times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    const auto& f = frames.frames[i];
    const double gamma = (f.theta.row(0).dot(f.theta.row(1)) + f.theta.row(2).dot(f.theta.row(7))) / 2.0;
    RowMatrix dtheta(kN, kN);
    Vector dr(kN);
    // The velocity on the piece that follows the sample (as the reduced ODE's record does).
    dyn.velocity(f.theta, f.r, times[i], times[i], dtheta, dr);
    const double dgamma = dtheta.row(0).dot(f.theta.row(1)) + f.theta.row(0).dot(dtheta.row(1));
    BOOST_TEST_INFO("scheme " << S::key << ", t = " << times[i]);
    BOOST_TEST(std::abs(reduced.gamma[i] - gamma) < test::kSymmetricRelative);
    BOOST_TEST(std::abs(reduced.one_minus_gamma[i] - (1.0 - gamma)) < test::kSymmetricRelative);
    BOOST_TEST(std::abs(reduced.r[i] - f.r.mean()) < test::kSymmetricRelative * f.r.mean());
    BOOST_TEST(std::abs(reduced.dgamma_dt[i] - dgamma) < test::kSymmetricRelative);
  }
  // Theorem 4.1's initial slope, in closed form.
  BOOST_TEST(std::abs(reduced.dgamma_dt[0] - analysis::initial_slope_theory(spec.scheme, double(kN), kBeta, kR0)) <
             1e-14);
}

BOOST_AUTO_TEST_CASE(study_json_has_the_documented_layout) {
  studies::SymmetricStudyRequest request;
  request.n = 8;
  request.beta = 1.0;
  request.t_end = 1.0;
  request.samples = 4;
  const nlohmann::json j = studies::to_json(studies::symmetric_study(request));
  BOOST_TEST(j["parameters"]["n"].get<double>() == 8.0);
  BOOST_TEST(j["schemes"].size() == std::variant_size_v<Scheme>);
  for (const auto& key : {"post", "pre", "mix", "peri", "ngpt", "cod"})
    for (const auto& field : {"t", "gamma", "dgamma_dt", "r"}) {
      BOOST_TEST_INFO(key << "." << field);
      BOOST_TEST(j["schemes"][key][field].size() == 5u);
    }
  request.t_end = -1.0;
  BOOST_CHECK_THROW(studies::symmetric_study(request), InputError);
}
