// The theorem checks as a list: every entry names its theorem, a check whose hypotheses fail is
// skipped with the first unmet one as the reason (also for traits of the attention), the context of
// a run comes from its configuration, and the asymptotic verdict cannot pass a rate 9 % off.
#define BOOST_TEST_MODULE analysis_theorem_checks
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <set>

#include "normdyn/analysis/theorems.hpp"

using namespace normdyn;
using namespace normdyn::analysis;

namespace {

const SkippedCheck* find_skipped(const Checks& checks, const std::string& name) {
  for (const auto& s : checks.skipped)
    if (s.name == name) return &s;
  return nullptr;
}

const Check* find(const Checks& checks, const std::string& name) {
  for (const auto& c : checks.checks)
    if (c.name == name) return &c;
  return nullptr;
}

// A symmetric-start series of Post-LN in closed form: 1 − γ = e^{−2 λ t} (λ = 1: the theorem's rate).
CheckSeries symmetric_series(double lambda, double t_end, int frames, double n, double beta) {
  CheckSeries s;
  for (int i = 0; i < frames; ++i) {
    const double t = t_end * i / (frames - 1);
    s.t.push_back(t);
    // Near t = 0 the exact start has 1 − γ = 1; the decay check only reads the late frames.
    const double u = std::exp(-2.0 * lambda * t);
    s.one_minus_mean_cosine.push_back(u);
    s.one_minus_min_cosine.push_back(u);
    s.variance.push_back(u * (n - 1.0) / n);
    s.normalized_energy.push_back(std::exp(beta * (1.0 - u)));
  }
  s.initial_slope_velocity = initial_slope_theory(PostLN{}, n, beta, 1.0);
  return s;
}

CheckContext symmetric_context_of(double n, double beta) {
  CheckContext c;
  c.scheme = PostLN{};
  c.n = n;
  c.d = n;
  c.beta = beta;
  c.init = InitKind::orthonormal;
  c.horizon = 10.0;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_entry_is_named_and_has_hypotheses_and_a_verdict) {
  std::set<std::string> names;
  for (const TheoremCheck& c : theorem_check_list()) {
    BOOST_TEST_INFO(c.name);
    BOOST_TEST(!c.name.empty());
    BOOST_TEST(!c.theorem.empty());
    BOOST_TEST(!c.hypotheses.empty());
    BOOST_TEST(static_cast<bool>(c.verdict));
    BOOST_TEST(names.insert(c.name).second);
  }
  BOOST_TEST(names.size() == 8u);
}

BOOST_AUTO_TEST_CASE(each_check_is_reported_once_checked_or_skipped) {
  const CheckSeries s = symmetric_series(1.0, 10.0, 201, 8.0, 1.0);
  for (const CheckContext& c : {symmetric_context_of(8.0, 1.0), CheckContext{}}) {
    const Checks checks = theorem_checks(c, s);
    BOOST_TEST(checks.checks.size() + checks.skipped.size() == theorem_check_list().size());
    for (const Check& k : checks.checks) BOOST_TEST(!k.theorem.empty());
  }
}

BOOST_AUTO_TEST_CASE(a_trait_the_attention_lacks_skips_the_checks_that_need_it) {
  const CheckSeries s = symmetric_series(1.0, 10.0, 201, 8.0, 1.0);
  CheckContext c = symmetric_context_of(8.0, 1.0);
  const Checks with = theorem_checks(c, s);
  BOOST_REQUIRE(find(with, "theorem_4_1_symmetry") != nullptr);
  BOOST_REQUIRE(find(with, "energy_monotonicity") != nullptr);
  c.traits.exchangeable = false;
  c.traits.energy_gradient = false;
  const Checks without = theorem_checks(c, s);
  for (const char* name : {"theorem_4_1_initial_slope", "theorem_4_1_symmetry", "theorem_4_1_decay_rate"}) {
    const SkippedCheck* k = find_skipped(without, name);
    BOOST_REQUIRE(k != nullptr);
    BOOST_TEST(k->reason.find("exchangeable") != std::string::npos, k->reason);
  }
  const SkippedCheck* e = find_skipped(without, "energy_monotonicity");
  BOOST_REQUIRE(e != nullptr);
  BOOST_TEST(e->reason.find("gradient flow") != std::string::npos, e->reason);
}

BOOST_AUTO_TEST_CASE(the_first_unmet_hypothesis_is_the_reason) {
  const CheckSeries s = symmetric_series(1.0, 10.0, 201, 8.0, 1.0);
  CheckContext c = symmetric_context_of(8.0, 1.0);
  c.init = InitKind::uniform;
  c.d = 4.0;  // also d < n: the start is named first
  const SkippedCheck* k = find_skipped(theorem_checks(c, s), "theorem_4_1_initial_slope");
  BOOST_REQUIRE(k != nullptr);
  BOOST_TEST(k->reason.find("orthonormal") != std::string::npos, k->reason);
  c.init = InitKind::orthonormal;
  k = find_skipped(theorem_checks(c, s), "theorem_4_1_initial_slope");
  BOOST_REQUIRE(k != nullptr);
  BOOST_TEST(k->reason.find("d >= n") != std::string::npos, k->reason);
}

BOOST_AUTO_TEST_CASE(the_context_of_a_run_comes_from_its_configuration) {
  RunConfig config;
  config.model.scheme = NGPT{0.5, 0.0};
  config.model.n = 12;
  config.model.d = 16;
  config.model.beta = 2.5;
  config.init.kind = InitKind::orthonormal;
  config.init.r0 = 2.0;
  config.solver.t_end = 30.0;
  AttentionNorms norms;
  norms.max_qk_norm = 0.5;
  const CheckContext c = check_context(config, norms);
  BOOST_TEST(std::get<NGPT>(c.scheme).alpha == 0.5);
  BOOST_TEST(c.n == 12.0);
  BOOST_TEST(c.d == 16.0);
  BOOST_TEST(c.beta == 2.5);
  BOOST_TEST(c.r0 == 2.0);
  BOOST_TEST(c.horizon == 30.0);
  BOOST_TEST(c.attention.max_qk_norm == 0.5);
  BOOST_TEST((c.init == InitKind::orthonormal));
  BOOST_TEST(!c.discrete);
}

BOOST_AUTO_TEST_CASE(a_decay_at_the_wrong_rate_fails_and_the_right_one_passes) {
  const double n = 8.0, beta = 1.0;
  const CheckContext c = symmetric_context_of(n, beta);
  // Frames where the closed form is the law itself: the clock of Post-LN is T = t.
  const Check* right = find(theorem_checks(c, symmetric_series(1.0, 10.0, 201, n, beta)), "theorem_4_1_decay_rate");
  BOOST_REQUIRE(right != nullptr);
  BOOST_TEST((right->outcome == Outcome::ok), right->measured);
  const Check* wrong = find(theorem_checks(c, symmetric_series(1.09, 10.0, 201, n, beta)), "theorem_4_1_decay_rate");
  BOOST_REQUIRE(wrong != nullptr);
  BOOST_TEST((wrong->outcome == Outcome::fail), wrong->measured);
  BOOST_TEST(std::abs(wrong->measured - 1.09) < 1e-6);
}

BOOST_AUTO_TEST_CASE(the_asymptotic_verdict_needs_the_resolution_to_pass) {
  // Settled at the claim: ok.
  BOOST_TEST((asymptotic_verdict(2.0, 2.0, 2.0, 0.03, 0.06).outcome == Outcome::ok));
  // Settled 9 % off: fail.
  BOOST_TEST((asymptotic_verdict(2.0, 2.18, 2.18, 0.03, 0.06).outcome == Outcome::fail));
  // Within the tolerance but still moving by 5 %: it could not tell a 6 % change, so not ok.
  const AsymptoticVerdict moving = asymptotic_verdict(2.0, 1.88, 1.98, 0.03, 0.06);
  BOOST_TEST((moving.outcome == Outcome::not_asymptotic));
  BOOST_TEST(std::abs(moving.detectable - 0.08) < 1e-12);
  // Off by more than the tolerance and the drift together: fail even though it moves.
  BOOST_TEST((asymptotic_verdict(2.0, 1.5, 1.6, 0.03, 0.06).outcome == Outcome::fail));
  // Off, but moving toward the claim by more than the gap: not asymptotic.
  BOOST_TEST((asymptotic_verdict(2.0, 1.7, 1.9, 0.03, 0.06).outcome == Outcome::not_asymptotic));
  // A claim of 0 is compared absolutely.
  BOOST_TEST((asymptotic_verdict(0.0, 0.01, 0.02, 0.1, 0.2).outcome == Outcome::ok));
  BOOST_TEST((asymptotic_verdict(0.0, -0.5, -0.5, 0.1, 0.2).outcome == Outcome::fail));
  // NaN never passes.
  BOOST_TEST((asymptotic_verdict(2.0, NAN, NAN, 0.03, 0.06).outcome == Outcome::fail));
}
