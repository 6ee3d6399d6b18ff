// The depth continuum limit: L layers of step h against the ODE at the same depth, error O(h),
// for every scheme (Mix-LN switching inside the interval) and with per-layer random matrices.
#define BOOST_TEST_MODULE layer_maps
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using normdyn::test::AllSchemes;

namespace {

constexpr double kTEnd = 2.0;
constexpr Index kN = 10, kD = 4;

struct Last final : SampleObserver {
  std::vector<double> x;
  std::int64_t steps = 0;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t step, std::span<const double> s,
                                     const CheckpointView&) override {
    x.assign(s.begin(), s.end());
    steps = step;
    return std::nullopt;
  }
};

template <class S>
Scheme configured() {
  S s{};
  if constexpr (std::is_same_v<S, MixLN>) s.tau = 1.0;  // the switch happens inside [0, 2]
  return s;
}

double observed_order(const Scheme& scheme, QkvSource qkv, const Tokens& start) {
  DynamicsSpec spec;
  spec.scheme = scheme;
  spec.beta = 1.5;
  spec.kernel.threads = 1;
  const std::vector<double> times{0.0, kTEnd};
  std::vector<double> x0(start.n() * start.d() + start.n());
  StateLayout{start.n(), start.d()}.pack(start, x0.data());

  AttentionDynamics ode(spec, qkv, kN, kD);
  IntegratorOptions o;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  Last exact;
  BOOST_REQUIRE(integrate(ode, x0, 0.0, times, o, exact).status == RunStatus::ok);

  std::vector<double> hs{0.1, 0.05, 0.025, 0.0125}, errors;
  for (double h : hs) {
    AttentionDynamics layers(spec, qkv, kN, kD);
    Last last;
    BOOST_REQUIRE(run_layers(layers, x0, 0.0, h, times, 0, last).status == RunStatus::ok);
    BOOST_TEST(last.steps == std::llround(kTEnd / h));
    double err = 0.0;
    for (std::size_t i = 0; i < x0.size(); ++i) err = std::max(err, std::abs(last.x[i] - exact.x[i]));
    errors.push_back(err);
  }
  const double order = std::log(errors.front() / errors.back()) / std::log(hs.front() / hs.back());
  std::printf("depth limit %-4s: errors %.2e %.2e %.2e %.2e, observed order %.3f\n",
              std::string(scheme_key(scheme)).c_str(), errors[0], errors[1], errors[2], errors[3], order);
  return order;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(layer_maps_converge_to_the_ode_at_first_order, S, AllSchemes) {
  const double order = observed_order(configured<S>(), QkvSource::identity(), gaussian_tokens(kN, kD, 3));
  BOOST_TEST(std::abs(order - 1.0) < test::kOrderSlack);
}

BOOST_AUTO_TEST_CASE(per_layer_random_matrices_switch_with_the_layers) {
  const double order = observed_order(PreLN{}, QkvSource::gaussian_per_layer(kD, 9), gaussian_tokens(kN, kD, 4));
  BOOST_TEST(std::abs(order - 1.0) < test::kOrderSlack);
}

// Layers below the resolution of time at the last sample cannot advance t: the count (t - t0) / h
// overflowed, every sample was emitted at once from the initial state, and the run ended "ok".
BOOST_AUTO_TEST_CASE(layers_below_the_resolution_of_time_are_a_step_underflow) {
  DynamicsSpec spec;
  spec.scheme = PreLN{};
  spec.kernel.threads = 1;
  const Tokens start = gaussian_tokens(kN, kD, 5);
  std::vector<double> x0(start.n() * start.d() + start.n());
  StateLayout{start.n(), start.d()}.pack(start, x0.data());
  std::vector<double> times;
  for (int i = 0; i <= 50; ++i) times.push_back(0.1 * i);
  for (double h : {1e-300, 1e-18}) {
    AttentionDynamics layers(spec, QkvSource::identity(), kN, kD);
    struct Count final : SampleObserver {
      std::size_t samples = 0;
      std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double>,
                                         const CheckpointView&) override {
        ++samples;
        return std::nullopt;
      }
    } count;
    const IntegrationResult r = run_layers(layers, x0, 0.0, h, times, 0, count);
    BOOST_TEST_INFO("h = " << h << ": " << r.message);
    BOOST_TEST(r.status == RunStatus::step_underflow);
    BOOST_TEST(r.message.find("solver.dt") != std::string::npos);
    BOOST_TEST(count.samples == 0u);
    BOOST_TEST(r.counters.accepted_steps == 0);
  }
}
