// Observed order of every stepper on the particle system (Post-LN and Pre-LN, n = 8, d = 3).
// Fixed-step methods: error against the step. Adaptive methods: error against work (right-hand-side
// evaluations) over a range of tolerances, whose slope is minus the order, and tolerance
// proportionality (error decreasing with the tolerance).
#define BOOST_TEST_MODULE stepper_order
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

constexpr double kTEnd = 10.0;

// Every sample, concatenated: interior samples exercise dopri5's dense output.
struct AllSamples final : SampleObserver {
  std::vector<double> x;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> s,
                                     const CheckpointView&) override {
    x.insert(x.end(), s.begin(), s.end());
    return std::nullopt;
  }
};

// Steppers that land on sample times get only the end point (interior samples would shorten
// their steps); those with dense output get interior samples, which come from it.
std::vector<double> sample_times(Method k) {
  if (!method_info(k).dense_output) return {0.0, kTEnd};
  std::vector<double> t;
  for (double v = 0.0; v < kTEnd; v += 0.37) t.push_back(v);
  t.push_back(kTEnd);
  return t;
}

struct Outcome {
  std::vector<double> x;
  double work;
};

Outcome solve(const Scheme& scheme, IntegratorOptions o, const std::vector<double>& times) {
  DynamicsSpec spec;
  spec.scheme = scheme;
  spec.beta = 2.0;
  spec.kernel.threads = 1;
  AttentionDynamics dyn(spec, QkvSource::identity(), 8, 3);
  std::vector<double> x0(dyn.layout().size());
  dyn.layout().pack(uniform_tokens(8, 3, 1.0, 17), x0.data());
  AllSamples samples;
  const auto r = integrate(dyn, x0, 0.0, times, o, samples);
  BOOST_REQUIRE(r.status == RunStatus::ok);
  return {samples.x, double(r.counters.rhs_evaluations)};
}

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// Least-squares slope of log(y) against log(x).
double log_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::vector<double> reference(const Scheme& scheme, const std::vector<double>& times) {
  IntegratorOptions o;
  o.method = Method::fehlberg78;
  o.rtol = 1e-14;
  o.atol = 1e-15;
  return solve(scheme, o, times).x;
}

const std::vector<Scheme> kSchemes{PostLN{}, PreLN{}};

}  // namespace

// The steps of the order study of a fixed-step method, by its order (from the method table).
std::vector<double> order_study_steps(int order) {
  switch (order) {
    case 1:
      return {0.02, 0.01, 0.005, 0.0025};
    case 4:
      return {0.2, 0.1, 0.05, 0.025};
    default:
      return {};
  }
}

BOOST_AUTO_TEST_CASE(fixed_step_methods_have_their_nominal_order) {
  for (const Scheme& scheme : kSchemes) {
    const auto ref = reference(scheme, {0.0, kTEnd});
    for (const MethodInfo& m : kMethods) {
      // "split" is the mean field's own step (its orders: test_meanfield_linear.cpp).
      if (m.control != StepControl::fixed || m.method == Method::split) continue;
      const auto steps = order_study_steps(m.order);
      BOOST_TEST_INFO("method " << m.name);
      BOOST_REQUIRE_MESSAGE(!steps.empty(), "no order study for a fixed-step method of order " << m.order);
      std::vector<double> errors;
      for (double dt : steps) {
        IntegratorOptions o;
        o.method = m.method;
        o.dt = dt;
        errors.push_back(distance(solve(scheme, o, {0.0, kTEnd}).x, ref));
      }
      const double observed = log_slope(steps, errors);
      std::printf("order %-4s %-5s observed %.3f (nominal %d), errors %.2e .. %.2e\n", std::string(m.name).c_str(),
                  std::string(scheme_key(scheme)).c_str(), observed, m.order, errors.front(), errors.back());
      BOOST_TEST(std::abs(observed - m.order) < test::kOrderSlack);
    }
  }
}

BOOST_AUTO_TEST_CASE(adaptive_methods_converge_at_their_order_in_work) {
  const std::vector<double> tolerances{1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12};
  struct Expect {
    Method kind;
    double order_low, order_high;
  };
  // Work-precision slopes approach the order from above at coarse tolerances (a high-order pair
  // gains more than its order while few steps resolve the solution), so the meaningful check is
  // a lower bound one below the nominal order: a loop that spoiled the method (e.g. samples by
  // linear interpolation between steps, or steps over a breakpoint) falls to order 2 or less.
  // Bulirsch–Stoer adapts its order.
  // Lower bounds by method; every adaptive row of the method table must have one.
  const std::vector<Expect> expectations{{Method::dopri5, 4.0, 16.0},
                                         {Method::cash_karp54, 4.0, 16.0},
                                         {Method::fehlberg78, 6.5, 16.0},
                                         {Method::bulirsch_stoer, 6.0, 16.0}};
  for (const MethodInfo& m : kMethods) {
    if (m.control != StepControl::adaptive) continue;
    const auto it =
        std::find_if(expectations.begin(), expectations.end(), [&](const Expect& e) { return e.kind == m.method; });
    BOOST_REQUIRE_MESSAGE(it != expectations.end(), "no order expectation for the adaptive method " << m.name);
    const Expect e = *it;
    for (const Scheme& scheme : kSchemes) {
      const auto times = sample_times(e.kind);
      const auto ref = reference(scheme, times);
      std::vector<double> errors, work;
      for (double tol : tolerances) {
        IntegratorOptions o;
        o.method = e.kind;
        o.rtol = tol;
        o.atol = tol * 1e-2;
        const Outcome out = solve(scheme, o, times);
        errors.push_back(std::max(distance(out.x, ref), 1e-15));
        work.push_back(out.work);
      }
      const double observed = -log_slope(work, errors);
      const double proportionality = log_slope(tolerances, errors);
      std::printf("order %-14s %-5s observed %.2f in work, error ~ tol^%.2f, errors %.2e .. %.2e, work %g .. %g\n",
                  std::string(m.name).c_str(), std::string(scheme_key(scheme)).c_str(), observed, proportionality,
                  errors.front(), errors.back(), work.front(), work.back());
      BOOST_TEST(observed > e.order_low);
      BOOST_TEST(observed < e.order_high);
      BOOST_TEST(proportionality > 0.75);
      BOOST_TEST(proportionality < 1.25);
      BOOST_TEST(errors.back() < 1e-8);
    }
  }
}
