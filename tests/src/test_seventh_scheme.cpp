// A scheme defined only in the test (seventh_scheme.hpp) goes through the registry, the
// configuration, the dynamics and the analysis checks like the six of the list: the recipe of
// docs/ARCHITECTURE.md, "Adding a scheme". Built against the library compiled with the extra schemes.
#define BOOST_TEST_MODULE seventh_scheme
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using namespace normdyn::analysis;

namespace {

// RK4 of the n-particle ODE from the symmetric start (orthonormal tokens), frames every `every` steps.
CheckSeries symmetric_run(const Scheme& scheme, Index n, double beta, double t_end, int frames, int steps_per_frame) {
  DynamicsSpec spec;
  spec.scheme = scheme;
  spec.beta = beta;
  spec.kernel.threads = 1;
  AttentionDynamics dyn(spec, QkvSource::identity(), n, n);
  Tokens x = orthonormal_tokens(n, n, 1.0, 3);
  CheckSeries s;
  const double h = t_end / (frames - 1) / steps_per_frame;
  RowMatrix k1(n, n), k2(n, n), k3(n, n), k4(n, n);
  Vector r1(n), r2(n), r3(n), r4(n);
  double t = 0.0;
  for (int f = 0; f < frames; ++f) {
    if (f > 0)
      for (int k = 0; k < steps_per_frame; ++k) {
        dyn.velocity(x.theta, x.r, t, t, k1, r1);
        dyn.velocity(x.theta + 0.5 * h * k1, x.r, t + 0.5 * h, t + 0.5 * h, k2, r2);
        dyn.velocity(x.theta + 0.5 * h * k2, x.r, t + 0.5 * h, t + 0.5 * h, k3, r3);
        dyn.velocity(x.theta + h * k3, x.r, t + h, t + h, k4, r4);
        x.theta += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        x.theta.rowwise().normalize();
        t += h;
      }
    const RowMatrix hc = half_squared_chords(x.theta);
    const FrameObservables o = frame_observables(x, hc, {beta, 1e-3});
    s.t.push_back(f == 0 ? 0.0 : t);
    s.one_minus_mean_cosine.push_back(o.one_minus_mean_cosine);
    s.one_minus_min_cosine.push_back(o.one_minus_min_cosine);
    s.variance.push_back(o.variance);
    s.normalized_energy.push_back(o.normalized_energy);
    s.min_radius_growth.push_back(0.0);
    s.mean_radius.push_back(o.mean_radius);
    if (f == 0) {
      dyn.velocity(x.theta, x.r, 0.0, 0.0, k1, r1);
      s.initial_slope_velocity = 2.0 * double(n) / double(n - 1) * x.theta.colwise().mean().dot(k1.colwise().mean());
    }
  }
  return s;
}

RunConfig symmetric_config(const Scheme& scheme, Index n, double beta) {
  RunConfig c;
  c.model.scheme = scheme;
  c.model.n = n;
  c.model.d = n;
  c.model.beta = beta;
  c.init.kind = InitKind::orthonormal;
  return c;
}

const Check* find(const Checks& checks, const std::string& name) {
  for (const auto& c : checks.checks)
    if (c.name == name) return &c;
  return nullptr;
}

const SkippedCheck* find_skipped(const Checks& checks, const std::string& name) {
  for (const auto& c : checks.skipped)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_registry_and_the_configuration_know_it) {
  const auto s = make_scheme("post_half");
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(std::holds_alternative<PostLNHalfSpeed>(*s));
  BOOST_TEST(scheme_keys().size() == 8u);
  const RunConfig c = parse_config("[model]\nscheme = \"post_half\"\nn = 4\nd = 4\n", "test");
  BOOST_TEST(std::holds_alternative<PostLNHalfSpeed>(c.model.scheme));
}

BOOST_AUTO_TEST_CASE(the_analysis_checks_it_from_its_header) {
  const Index n = 6;
  const double beta = 1.0;
  const Scheme scheme = PostLNHalfSpeed{};
  // Speed 2: half the Post-LN slope at the start, 1 − γ ~ e^{−t}.
  BOOST_TEST(std::abs(initial_slope_theory(scheme, n, beta, 1.0) - 1.0 / (std::exp(beta) + n - 1.0)) < test::kRoundoff);
  const CheckSeries s = symmetric_run(scheme, n, beta, 24.0, 241, 20);
  const Checks checks = theorem_checks(symmetric_config(scheme, n, beta), s);
  for (const char* name :
       {"theorem_4_1_initial_slope", "theorem_4_1_symmetry", "theorem_4_1_decay_rate", "energy_monotonicity"}) {
    const Check* c = find(checks, name);
    BOOST_TEST_INFO(name);
    BOOST_REQUIRE(c != nullptr);
    BOOST_TEST(c->ok);
    BOOST_TEST((c->outcome == Outcome::ok));
  }
  // The named law of its header, with λ = 1, against the automatic rate fit.
  const RateFit fit = fit_decay(s.t, s.one_minus_mean_cosine);
  BOOST_TEST(fit.ok);
  BOOST_TEST((fit.law == DecayLaw::exponential));
  BOOST_TEST(std::abs(fit.parameter - 1.0) < test::kRateRelative);
  BOOST_TEST(fit.problem.empty(), "problem " << fit.problem << ": " << fit.detail);
}

BOOST_AUTO_TEST_CASE(a_scheme_without_theory_is_skipped_with_the_reason) {
  const Index n = 6;
  const Scheme scheme = PostLNNoTheory{};
  const CheckSeries s = symmetric_run(scheme, n, 1.0, 4.0, 41, 10);
  const Checks checks = theorem_checks(symmetric_config(scheme, n, 1.0), s);
  const SkippedCheck* decay = find_skipped(checks, "theorem_4_1_decay_rate");
  BOOST_REQUIRE(decay != nullptr);
  BOOST_TEST(decay->reason.find("declares no theory") != std::string::npos);
  // What follows from speed() alone is still checked.
  BOOST_TEST(find(checks, "theorem_4_1_initial_slope")->ok);
}
