// The stochastic methods: without noise, Heun's second order and Euler's first; with noise, a run
// resumed from any sample repeats the uninterrupted one bit for bit, so does a run on any number of
// threads, the increment without noise is the drift times h, and an ODE method is
// refused for a noisy system.
#define BOOST_TEST_MODULE stochastic
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "../test_support.hpp"
#include "../tolerances.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "oscillator.hpp"

using namespace normdyn;

namespace {

using test::Oscillator;

struct Recorder final : SampleObserver {
  std::vector<std::vector<double>> states;
  std::vector<Checkpoint> checkpoints;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> x,
                                     const CheckpointView& c) override {
    states.emplace_back(x.begin(), x.end());
    checkpoints.push_back(Checkpoint::from(c));
    return std::nullopt;
  }
};

// Pre-LN (a radius) with random Q, K, V, so that the value noise's means differ from the attention.
DynamicsSpec noisy_spec(const NoiseKind& kind, int threads, NoiseIncrements increments = NoiseIncrements::counter) {
  DynamicsSpec spec;
  spec.scheme = PreLN{};
  spec.beta = 2.0;
  spec.kernel.threads = threads;
  spec.noise = NoiseSpec{kind, 9};
  spec.noise.increment_draws = increments;
  return spec;
}
const std::vector<NoiseIncrements> kIncrements{NoiseIncrements::counter, NoiseIncrements::tree};

AttentionMatrices random_qkv(Index d) {
  AttentionMatrices m;
  m.identity = false;
  m.Q = test::random_matrix(d, d, 1, 0.5);
  m.K = test::random_matrix(d, d, 2, 0.5);
  m.V = test::random_matrix(d, d, 3, 0.5);
  return m;
}

const std::vector<NoiseKind> kNoises{IndependentNoise{0.4}, ValueNoise{0.4}};

}  // namespace

BOOST_AUTO_TEST_CASE(without_noise_heun_has_order_two_and_euler_maruyama_order_one) {
  for (const auto& [method, order] :
       {std::pair{Method::stratonovich_heun, 2.0}, std::pair{Method::euler_maruyama, 1.0}}) {
    std::vector<double> errors;
    const std::vector<double> steps{0.02, 0.01, 0.005};
    for (const double dt : steps) {
      Oscillator sys;
      Recorder rec;
      IntegratorOptions o;
      o.method = method;
      o.dt = dt;
      o.retract = false;
      BOOST_REQUIRE(integrate(sys, std::vector<double>{1.0, 0.0}, 0.0, std::vector<double>{0.0, 2.0}, o, rec).status ==
                    RunStatus::ok);
      errors.push_back(std::hypot(rec.states.back()[0] - std::cos(2.0), rec.states.back()[1] + std::sin(2.0)));
    }
    const double observed = std::log(errors.front() / errors.back()) / std::log(steps.front() / steps.back());
    BOOST_TEST_INFO("method " << to_string(method) << ", errors " << errors.front() << " .. " << errors.back());
    BOOST_TEST(std::abs(observed - order) < test::kOrderSlack);
  }
}

BOOST_AUTO_TEST_CASE(an_ode_method_is_refused_for_a_noisy_system) {
  const Index n = 5, d = 3;
  AttentionDynamics sys(noisy_spec(IndependentNoise{0.1}, 1), QkvSource::identity(), n, d);
  std::vector<double> x0(sys.layout().size());
  sys.layout().pack(uniform_tokens(n, d, 1.0, 1), x0.data());
  Recorder rec;
  for (const Method m : {Method::dopri5, Method::rk4, Method::euler}) {
    IntegratorOptions o;
    o.method = m;
    BOOST_CHECK_THROW(integrate(sys, x0, 0.0, std::vector<double>{0.0, 1.0}, o, rec), std::invalid_argument);
  }
}

BOOST_AUTO_TEST_CASE(the_increment_without_noise_is_the_drift_times_h) {
  const Index n = 7, d = 4;
  const Tokens x = test::random_tokens(n, d, 5);
  for (const NoiseKind& kind : {NoiseKind{IndependentNoise{0.0}}, NoiseKind{ValueNoise{0.0}}}) {
    AttentionDynamics sys(noisy_spec(kind, 1), QkvSource::layers({random_qkv(d)}), n, d);
    std::vector<double> state(sys.layout().size()), rate(state.size()), step(state.size());
    sys.layout().pack(x, state.data());
    sys.rhs(state.data(), rate.data(), 0.3);
    sys.increment(state.data(), 0.3, 0.01, NoiseStep{4, 0.3, 0.31}, step.data());
    for (std::size_t i = 0; i < state.size(); ++i)
      BOOST_TEST(step[i] == 0.01 * rate[i], boost::test_tools::tolerance(test::kRoundoff));
  }
}

// Value noise with V != I: the step is P_θ(h A_i + σ ΔB m_i) with A_i = Σ_j w_ij V x_j and the means
// m_i = Σ_j w_ij x_j, both from softmax weights computed here (Post-LN: speed 1).
BOOST_AUTO_TEST_CASE(value_noise_draws_from_the_means_not_from_the_attention) {
  const Index n = 6, d = 3;
  const double beta = 1.5, h = 0.02, sigma = 0.4;
  const Tokens x = test::random_tokens(n, d, 8);
  const AttentionMatrices qkv = random_qkv(d);
  DynamicsSpec spec = noisy_spec(ValueNoise{sigma}, 1);
  spec.scheme = PostLN{};
  spec.beta = beta;
  AttentionDynamics sys(spec, QkvSource::layers({qkv}), n, d);
  std::vector<double> state(sys.layout().size()), step(state.size());
  sys.layout().pack(x, state.data());
  sys.increment(state.data(), 0.0, h, NoiseStep{11, 0.0, h}, step.data());

  RowMatrix weights(n, n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j)
      weights(i, j) = std::exp(beta * (qkv.Q * x.theta.row(i).transpose()).dot(qkv.K * x.theta.row(j).transpose()));
    weights.row(i) /= weights.row(i).sum();
  }
  const RowMatrix means = weights * x.theta;
  const RowMatrix attention = means * qkv.V.transpose();
  RowMatrix dn(n, d);
  ValueNoise{sigma}.increments(NoiseDraw{spec.noise.seed, 11, h, 0}, means, dn);
  for (Index i = 0; i < n; ++i) {
    Eigen::RowVectorXd u = h * attention.row(i) + dn.row(i);
    u -= u.dot(x.theta.row(i)) * x.theta.row(i);
    for (Index k = 0; k < d; ++k)
      BOOST_TEST(std::abs(step[static_cast<std::size_t>(i * d + k)] - u(k)) <= test::kRoundoff);
  }
}

BOOST_AUTO_TEST_CASE(a_noisy_run_resumed_from_a_sample_repeats_it_bit_for_bit) {
  const Index n = 10, d = 4;
  std::vector<double> times;
  for (int i = 0; i <= 10; ++i) times.push_back(0.1 * i);
  for (const NoiseIncrements increments : kIncrements)
    for (const NoiseKind& kind : kNoises)
      for (const Method method : {Method::stratonovich_heun, Method::euler_maruyama}) {
        if (method == Method::euler_maruyama && std::holds_alternative<ValueNoise>(kind))
          continue;  // refused by the configuration
        IntegratorOptions o;
        o.method = method;
        o.dt = 0.013;  // not a divisor of the sample interval: uneven pieces
        AttentionDynamics whole(noisy_spec(kind, 1, increments), QkvSource::layers({random_qkv(d)}), n, d);
        std::vector<double> x0(whole.layout().size());
        whole.layout().pack(test::random_tokens(n, d, 2), x0.data());
        Recorder full;
        const IntegrationResult a = integrate(whole, x0, 0.0, times, o, full);
        BOOST_REQUIRE(a.status == RunStatus::ok);
        // The noise moved the tokens: the run is not the deterministic one.
        AttentionDynamics quiet(noisy_spec(NoNoise{}, 1), QkvSource::layers({random_qkv(d)}), n, d);
        Recorder deterministic;
        integrate(quiet, x0, 0.0, times, o, deterministic);
        BOOST_TEST(std::abs(deterministic.states.back()[0] - full.states.back()[0]) > 1e-3);
        for (const std::size_t from : {std::size_t{3}, std::size_t{7}}) {
          AttentionDynamics sys(noisy_spec(kind, 1, increments), QkvSource::layers({random_qkv(d)}), n, d);
          Recorder rest;
          const IntegrationResult b = integrate(sys, x0, 0.0, times, o, rest, &full.checkpoints[from]);
          BOOST_TEST_INFO("noise " << alternative_key(kind) << ", " << to_string(method) << ", from sample " << from
                                   << (increments == NoiseIncrements::tree ? ", tree increments" : ""));
          BOOST_REQUIRE(b.status == RunStatus::ok);
          BOOST_REQUIRE_EQUAL(rest.states.size(), times.size() - from - 1);
          for (std::size_t i = 0; i < rest.states.size(); ++i) BOOST_TEST(rest.states[i] == full.states[from + 1 + i]);
          BOOST_TEST(b.counters.accepted_steps == a.counters.accepted_steps);
        }
      }
}

BOOST_AUTO_TEST_CASE(the_thread_count_does_not_change_a_noisy_run) {
  const Index n = 300, d = 8;
  const std::vector<double> times{0.0, 0.5, 1.0};
  for (const NoiseIncrements increments : kIncrements)
    for (const NoiseKind& kind : kNoises) {
      std::vector<std::vector<double>> ends;
      for (const int threads : {1, 2, 3}) {
        AttentionDynamics sys(noisy_spec(kind, threads, increments), QkvSource::layers({random_qkv(d)}), n, d);
        std::vector<double> x0(sys.layout().size());
        sys.layout().pack(test::random_tokens(n, d, 8), x0.data());
        IntegratorOptions o;
        o.method = Method::stratonovich_heun;
        o.dt = 0.01;
        Recorder rec;
        BOOST_REQUIRE(integrate(sys, x0, 0.0, times, o, rec).status == RunStatus::ok);
        ends.push_back(rec.states.back());
      }
      BOOST_TEST_INFO("noise " << alternative_key(kind)
                               << (increments == NoiseIncrements::tree ? ", tree increments" : ""));
      BOOST_TEST(test::same_bits(ends[0].data(), ends[1].data(), ends[0].size()));
      BOOST_TEST(test::same_bits(ends[0].data(), ends[2].data(), ends[0].size()));
    }
}
