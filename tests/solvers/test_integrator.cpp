// The step loop: exact sample times, breakpoints, statuses (diverged, step_underflow, max_steps,
// observer stop), counters, and resume from a checkpoint repeating the same steps.
#define BOOST_TEST_MODULE integrator
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "oscillator.hpp"

using namespace normdyn;

namespace {

// Every row of the method table that integrates an ODE (the layer maps have their own tests; "split" is
// the step of a system that has one, tested with the mean field in test_meanfield_linear.cpp).
const std::vector<Method> kAll = [] {
  std::vector<Method> out;
  for (const MethodInfo& m : kMethods)
    if (m.control != StepControl::layers && m.method != Method::split) out.push_back(m.method);
  return out;
}();

// The step of a fixed-step method on the oscillator below and its error bound at t <= 7.25.
struct FixedStepExpectation {
  double dt, tolerance;
};
FixedStepExpectation fixed_step_expectation(Method k) {
  switch (method_info(k).order) {
    case 1:
      return {1e-4, 2e-3};
    case 4:
      return {1e-2, 1e-8};
    default:
      BOOST_FAIL("no expectation for a fixed-step method of order " << method_info(k).order);
      return {};
  }
}

using test::Oscillator;

// dx/dt = +1 before t = 1 and −2 after: piecewise linear, exact for every Runge–Kutta method
// provided no step straddles t = 1.
struct Switching final : OdeSystem {
  double regime_time = 0.0;
  std::size_t size() const override { return 1; }
  void rhs(const double*, double* dxdt, double) override { dxdt[0] = regime_time < 1.0 ? 1.0 : -2.0; }
  std::vector<double> breakpoints(double t0, double t1) const override {
    return (t0 < 1.0 && 1.0 < t1) ? std::vector<double>{1.0} : std::vector<double>{};
  }
  void enter_piece(double a, double b) override { regime_time = 0.5 * (a + b); }
};

// Blows up at t = 1: dx/dt = x².
struct Blowup final : OdeSystem {
  std::size_t size() const override { return 1; }
  void rhs(const double* x, double* dxdt, double) override { dxdt[0] = x[0] * x[0]; }
};

// Returns NaN once t > 0.5.
struct Poisoned final : OdeSystem {
  std::size_t size() const override { return 1; }
  void rhs(const double* x, double* dxdt, double t) override { dxdt[0] = t > 0.5 ? std::nan("") : -x[0]; }
};

struct Recorder final : SampleObserver {
  std::vector<double> times;
  std::vector<std::vector<double>> states;
  std::vector<Checkpoint> checkpoints;
  std::optional<std::size_t> stop_after;
  std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t, std::span<const double> x,
                                     const CheckpointView& c) override {
    times.push_back(t);
    states.emplace_back(x.begin(), x.end());
    checkpoints.push_back(
        Checkpoint{c.t, c.dt, std::vector<double>(c.x.begin(), c.x.end()), c.counters, c.next_sample});
    if (stop_after && index >= *stop_after) return RunStatus::synchronized;
    return std::nullopt;
  }
};

IntegratorOptions options_for(Method k) {
  IntegratorOptions o;
  o.method = k;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.dt = is_adaptive(k) ? 1e-2 : fixed_step_expectation(k).dt;
  o.retract = false;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(samples_are_at_exactly_the_requested_times) {
  const std::vector<double> times{0.0, 0.1, 0.35, 1.0 / 3.0 + 1.0, 2.0, 7.25};
  for (Method k : kAll) {
    Oscillator sys;
    Recorder rec;
    const std::vector<double> x0{1.0, 0.0};
    const auto result = integrate(sys, x0, 0.0, times, options_for(k), rec);
    BOOST_TEST_INFO("method " << to_string(k));
    BOOST_TEST(result.status == RunStatus::ok);
    BOOST_TEST(rec.times == times);
    const double tol = is_adaptive(k) ? 1e-7 : fixed_step_expectation(k).tolerance;
    for (std::size_t i = 0; i < times.size(); ++i) {
      BOOST_TEST(std::abs(rec.states[i][0] - std::cos(times[i])) < tol);
      BOOST_TEST(std::abs(rec.states[i][1] + std::sin(times[i])) < tol);
    }
    BOOST_TEST(result.counters.accepted_steps > 0);
    BOOST_TEST(result.counters.rhs_evaluations >= result.counters.accepted_steps);
    BOOST_TEST(result.t_reached == 7.25);
  }
}

BOOST_AUTO_TEST_CASE(dense_output_does_not_depend_on_the_number_of_samples) {
  // The steps of a method with dense output are chosen by the error control alone; samples are
  // interpolated. Without dense output, steps land on the samples.
  for (Method k : kAll) {
    Oscillator sys;
    Recorder few, many;
    std::vector<double> dense;
    for (int i = 0; i <= 1000; ++i) dense.push_back(0.01 * i);
    const std::vector<double> x0{1.0, 0.0};
    const auto a = integrate(sys, x0, 0.0, std::vector<double>{0.0, 10.0}, options_for(k), few);
    const auto b = integrate(sys, x0, 0.0, dense, options_for(k), many);
    BOOST_TEST_INFO("method " << to_string(k));
    if (method_info(k).dense_output) {
      BOOST_TEST(a.counters.accepted_steps == b.counters.accepted_steps);
      BOOST_TEST(few.states.back() == many.states.back());
    } else if (is_adaptive(k)) {
      BOOST_TEST(b.counters.accepted_steps >= 1000);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_method_table_is_consistent) {
  for (std::size_t i = 0; i < kMethods.size(); ++i) {
    BOOST_TEST(static_cast<std::size_t>(kMethods[i].method) == i);
    BOOST_TEST(to_string(kMethods[i].method) == kMethods[i].name);
    BOOST_TEST(kMethods[i].order >= 0);
    if (kMethods[i].dense_output) BOOST_TEST(is_adaptive(kMethods[i].method));
  }
  // Layer maps are not an ODE integrator.
  Oscillator sys;
  Recorder rec;
  const std::vector<double> x0{1.0, 0.0};
  for (const MethodInfo& m : kMethods) {
    if (m.control != StepControl::layers) continue;
    IntegratorOptions o;
    o.method = m.method;
    BOOST_CHECK_THROW(integrate(sys, x0, 0.0, std::vector<double>{0.0, 1.0}, o, rec), std::invalid_argument);
  }
}

BOOST_AUTO_TEST_CASE(steps_never_straddle_a_breakpoint) {
  for (Method k : kAll) {
    Switching sys;
    Recorder rec;
    const std::vector<double> x0{0.0};
    auto o = options_for(k);
    o.dt = 0.3;  // the first steps would cross t = 1 without the breakpoint
    const auto result = integrate(sys, x0, 0.0, std::vector<double>{0.0, 0.5, 2.5}, o, rec);
    BOOST_TEST(result.status == RunStatus::ok);
    BOOST_TEST_INFO("method " << to_string(k));
    BOOST_TEST(std::abs(rec.states[1][0] - 0.5) < 1e-14);
    BOOST_TEST(std::abs(rec.states[2][0] - (1.0 - 2.0 * 1.5)) < 1e-13);
  }
}

BOOST_AUTO_TEST_CASE(non_finite_state_ends_the_run_as_diverged_keeping_earlier_samples) {
  for (Method k : kAll) {
    Poisoned sys;
    Recorder rec;
    const std::vector<double> x0{1.0};
    const auto result = integrate(sys, x0, 0.0, std::vector<double>{0.0, 0.25, 0.5, 1.0, 2.0}, options_for(k), rec);
    BOOST_TEST_INFO("method " << to_string(k));
    BOOST_TEST((result.status == RunStatus::diverged || result.status == RunStatus::step_underflow));
    BOOST_TEST(rec.times.size() >= 2u);
    BOOST_TEST(rec.times.size() <= 3u);
    for (const auto& s : rec.states) BOOST_TEST(std::isfinite(s[0]));
    BOOST_TEST(result.t_reached <= 1.0);
  }
}

BOOST_AUTO_TEST_CASE(finite_time_blowup_is_a_step_underflow_or_divergence) {
  Blowup sys;
  Recorder rec;
  auto o = options_for(Method::dopri5);
  o.dt_min = 1e-10;
  const std::vector<double> x0{1.0};
  const auto result = integrate(sys, x0, 0.0, std::vector<double>{0.0, 0.5, 2.0}, o, rec);
  BOOST_TEST((result.status == RunStatus::step_underflow || result.status == RunStatus::diverged));
  BOOST_TEST(rec.times.size() == 2u);
  BOOST_TEST(std::abs(rec.states[1][0] - 2.0) < 1e-8);  // x = 1/(1 − t)
  BOOST_TEST(result.t_reached < 1.0);
  BOOST_TEST(result.t_reached > 0.99);
}

BOOST_AUTO_TEST_CASE(max_steps_and_observer_stops_are_statuses) {
  Oscillator sys;
  const std::vector<double> x0{1.0, 0.0};
  Recorder rec;
  auto o = options_for(Method::rk4);
  o.max_steps = 10;
  const auto capped = integrate(sys, x0, 0.0, std::vector<double>{0.0, 1.0}, o, rec);
  BOOST_TEST(capped.status == RunStatus::max_steps);
  BOOST_TEST(capped.counters.accepted_steps == 10);

  Recorder stopper;
  stopper.stop_after = 2;
  const auto stopped =
      integrate(sys, x0, 0.0, std::vector<double>{0.0, 1.0, 2.0, 3.0, 4.0}, options_for(Method::dopri5), stopper);
  BOOST_TEST(stopped.status == RunStatus::synchronized);
  BOOST_TEST(stopper.times.size() == 3u);
  BOOST_TEST(stopped.t_reached == 2.0);
}

// A run resumed from the checkpoint of any sample repeats the same steps: bitwise-identical
// samples for every method whose controller has no hidden state.
BOOST_AUTO_TEST_CASE(resume_from_a_checkpoint_repeats_the_run) {
  DynamicsSpec spec;
  spec.scheme = MixLN{};  // with a breakpoint at tau = 4
  spec.beta = 3.0;
  spec.kernel.threads = 1;
  const Tokens start = uniform_tokens(12, 3, 1.0, 4);
  std::vector<double> times;
  for (int i = 0; i <= 16; ++i) times.push_back(0.5 * i);
  for (Method k : kAll) {
    AttentionDynamics full_sys(spec, QkvSource::identity(), 12, 3);
    std::vector<double> x0(full_sys.layout().size());
    full_sys.layout().pack(start, x0.data());
    auto o = options_for(k);
    o.retract = true;
    o.dt = method_info(k).order == 1 ? 1e-3 : 1e-2;
    o.rtol = 1e-7;
    o.atol = 1e-9;
    Recorder full;
    const auto a = integrate(full_sys, x0, 0.0, times, o, full);
    BOOST_REQUIRE(a.status == RunStatus::ok);
    for (std::size_t from : {std::size_t{3}, std::size_t{9}}) {
      AttentionDynamics sys(spec, QkvSource::identity(), 12, 3);
      Recorder rest;
      const auto b = integrate(sys, x0, 0.0, times, o, rest, &full.checkpoints[from]);
      BOOST_TEST_INFO("method " << to_string(k) << " resumed after sample " << from);
      BOOST_REQUIRE(b.status == RunStatus::ok);
      BOOST_REQUIRE_EQUAL(rest.times.size(), times.size() - from - 1);
      double max_diff = 0.0;
      for (std::size_t i = 0; i < rest.states.size(); ++i)
        for (std::size_t c = 0; c < rest.states[i].size(); ++c)
          max_diff = std::max(max_diff, std::abs(rest.states[i][c] - full.states[from + 1 + i][c]));
      if (k == Method::bulirsch_stoer) {
        BOOST_TEST(max_diff < 1e-6);  // restarts its order control; equal to the tolerance
      } else {
        BOOST_TEST(max_diff == 0.0);
        BOOST_TEST(b.counters.accepted_steps == a.counters.accepted_steps);
      }
    }
  }
}

// Steps below the resolution of time cannot advance t: every row of the table ends with status
// step_underflow at its start, never "ok" with the samples after it unwritten. At dt = 1e-300 the
// count of fixed steps t_end / dt overflows an int64; at 1e-18 it is 5e18 steps that do not move.
BOOST_AUTO_TEST_CASE(steps_below_the_resolution_of_time_are_a_step_underflow) {
  for (Method k : kAll) {
    for (double dt : {1e-300, 1e-18}) {
      Oscillator sys;
      Recorder rec;
      auto o = options_for(k);
      o.dt = dt;
      o.dt_min = 1e-320;  // the adaptive methods' steps are not limited by dt_min here
      const std::vector<double> x0{1.0, 0.0};
      // For the adaptive methods, a t_end at which the first trial step cannot be resolved
      // either; their steps may grow past it, so only the fixed-step rows must stop.
      const double t_end = 5.0;
      const auto result = integrate(sys, x0, 0.0, std::vector<double>{0.0, 2.5, t_end}, o, rec);
      BOOST_TEST_INFO("method " << to_string(k) << ", dt " << dt);
      if (is_adaptive(k)) {
        BOOST_TEST((result.status == RunStatus::ok || result.status == RunStatus::step_underflow));
        if (result.status == RunStatus::ok) BOOST_TEST(result.t_reached == t_end);
        continue;
      }
      BOOST_TEST(result.status == RunStatus::step_underflow);
      BOOST_TEST(result.message.find("resolution of time") != std::string::npos);
      BOOST_TEST(result.t_reached == 0.0);
      BOOST_TEST(rec.times.size() == 1u);
      BOOST_TEST(result.counters.accepted_steps == 0);
    }
  }
}

// An adaptive step that rounds back to t (the controller's step below the spacing of doubles at t)
// ends the run as a step_underflow instead of looping there.
struct Stiff final : OdeSystem {
  std::size_t size() const override { return 1; }
  void rhs(const double* x, double* dxdt, double t) override {
    dxdt[0] = t > 1.0 ? 1e300 * std::sin(1e300 * t) : -x[0];
  }
};
BOOST_AUTO_TEST_CASE(adaptive_steps_that_do_not_advance_t_are_a_step_underflow) {
  for (Method k : kAll) {
    if (!is_adaptive(k)) continue;
    Stiff sys;
    Recorder rec;
    auto o = options_for(k);
    o.dt_min = 1e-320;
    o.max_steps = 1000000;  // before the fix: max_steps at t = 1, after a million steps that did not move
    const std::vector<double> x0{1.0};
    const auto result = integrate(sys, x0, 0.0, std::vector<double>{0.0, 1.0, 2.0}, o, rec);
    BOOST_TEST_INFO("method " << to_string(k) << ": " << result.message);
    // Where the controller's steps shrink below the spacing of doubles at t: step_underflow (or, past
    // it, diverged). Some builds' arithmetic (the sanitized one: -O1, no -march) lets fehlberg78 step
    // over t = 1 instead, which is fine; what must never happen is a million steps that do not move.
    BOOST_TEST(result.status != RunStatus::max_steps);
    if (result.status != RunStatus::ok)
      BOOST_TEST((result.status == RunStatus::step_underflow || result.status == RunStatus::diverged));
    BOOST_TEST(result.counters.accepted_steps < 1000000);
  }
}
