// One system sharded across MPI processes. An MPI program: CTest runs it through mpirun
// with 2 processes (tests/CMakeLists.txt); every process runs every test case.
//
// The sharded right-hand side has the bits of the single-process one for every scheme, kind of
// attention matrices, attention specification and feed-forward term, also when the rows do not
// divide evenly or a process owns none; integrated with the adaptive step loop or a stochastic
// stepper, every process takes the same steps as one process alone and the trajectories are the
// same bit for bit; the processes hold identical states.
#define BOOST_TEST_MODULE sharded_dynamics
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>

#include "mpi_session.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/sharded_dynamics.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

using test::g_team;
using test::MpiSession;
BOOST_TEST_GLOBAL_FIXTURE(MpiSession);

std::vector<double> state_of(const Tokens& t) {
  const StateLayout layout{t.n(), t.d()};
  std::vector<double> x(layout.size());
  layout.pack(t, x.data());
  return x;
}

QkvSource qkv_of(int kind, Index d) {
  switch (kind) {
    case 0:
      return QkvSource::identity();
    case 1:
      return QkvSource::gaussian(d, 5);
    default:
      return QkvSource::gaussian_per_layer(d, 5);
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && test::same_bits(a.data(), b.data(), a.size());
}

// A feed-forward term of m neurons with fixed pseudo-random weights.
BlockTerms feedforward_terms(Index m, Index d) {
  FeedForward f;
  f.a = test::random_tokens(m, d, 31).theta;
  f.omega = Vector::LinSpaced(m, -1.0, 1.0);
  f.activation = Tanh{};
  BlockTerms terms;
  terms.terms.emplace_back(std::move(f));
  return terms;
}

std::uint64_t hash_of(const std::vector<double>& x) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(x.data());
  for (std::size_t i = 0; i < x.size() * sizeof(double); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Keeps every sample.
struct Samples final : SampleObserver {
  std::vector<std::vector<double>> x;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> s,
                                     const CheckpointView&) override {
    x.emplace_back(s.begin(), s.end());
    return std::nullopt;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(row_shares_cover_every_row_once) {
  for (Index n : {0, 1, 2, 7, 64, 1001})
    for (int ranks : {1, 2, 3, 8}) {
      Index next = 0;
      for (int r = 0; r < ranks; ++r) {
        const RowRange s = row_share(n, ranks, r);
        BOOST_TEST(s.begin == next);
        BOOST_TEST(s.size() >= n / ranks);
        BOOST_TEST(s.size() <= n / ranks + 1);
        next = s.end;
      }
      BOOST_TEST(next == n);
    }
  // Whole units of the kernel's blocks, as long as every process gets one.
  for (const auto& [n, ranks, unit] :
       std::vector<std::tuple<Index, int, Index>>{{1000, 2, 250}, {1000, 3, 250}, {301, 2, 76}, {64, 2, 64}}) {
    Index next = 0;
    for (int r = 0; r < ranks; ++r) {
      const RowRange s = row_share(n, ranks, r, unit);
      BOOST_TEST(s.begin == next);
      if ((n + unit - 1) / unit >= ranks) BOOST_TEST((s.begin % unit == 0 && (s.end % unit == 0 || s.end == n)));
      BOOST_TEST(s.size() > 0);
      next = s.end;
    }
    BOOST_TEST(next == n);
  }
}

BOOST_AUTO_TEST_CASE(sharded_right_hand_side_has_the_bits_of_the_whole_one) {
  Team& team = *g_team;
  for (Index n : {1, 7, 64, 300}) {
    const Index d = 6;
    Tokens tokens = test::random_tokens(n, d, 17 + static_cast<std::uint64_t>(n));
    const std::vector<double> x = state_of(tokens);
    for (int qkv = 0; qkv < 3; ++qkv) {
      for (const std::string_view key : scheme_keys()) {
        DynamicsSpec spec;
        spec.scheme = *make_scheme(key);
        spec.beta = 3.0;
        spec.kernel.threads = 1;
        if (key == "post") spec.terms = feedforward_terms(5, d);
        AttentionDynamics whole(spec, qkv_of(qkv, d), n, d);
        AttentionDynamics part(spec, qkv_of(qkv, d), n, d);
        ShardedDynamics sharded(part, team);
        for (double t : {0.25, 6.5}) {  // 6.5: after Mix-LN's switch, and another layer of matrices
          std::vector<double> a(x.size()), b(x.size(), std::nan(""));
          whole.rhs(x.data(), a.data(), t);
          sharded.rhs(x.data(), b.data(), t);
          BOOST_TEST(same_bits(b, a), "n = " << n << ", qkv " << qkv << ", scheme " << key << ", t = " << t);
          BOOST_TEST(team.same(hash_of(b)));  // every process holds the same derivative
        }
      }
    }
  }
}

// A mask, a score bias, a positional encoding, another normalizer and several heads: the general
// path's blocks, split between the processes, give the same bits.
BOOST_AUTO_TEST_CASE(sharded_composed_attention_has_the_bits_of_the_whole_one) {
  Team& team = *g_team;
  const Index n = 300, d = 6;
  const std::vector<double> x = state_of(test::random_tokens(n, d, 19));
  AttentionSpec causal;
  causal.mask = CausalMask{};
  causal.bias = Alibi{2.0};
  causal.normalizer = Uniform{};
  AttentionSpec rope;
  rope.positions = Rope{100.0};
  for (const AttentionSpec& attention : {causal, rope}) {
    DynamicsSpec spec;
    spec.scheme = PreLN{};
    spec.beta = 2.0;
    spec.kernel.threads = 1;
    spec.attention = attention;
    AttentionDynamics whole(spec, QkvSource::gaussian(d, 5, 2), n, d);
    AttentionDynamics part(spec, QkvSource::gaussian(d, 5, 2), n, d);
    ShardedDynamics sharded(part, team);
    std::vector<double> a(x.size()), b(x.size(), std::nan(""));
    whole.rhs(x.data(), a.data(), 0.5);
    sharded.rhs(x.data(), b.data(), 0.5);
    BOOST_TEST(same_bits(b, a), describe(attention));
  }
}

BOOST_AUTO_TEST_CASE(sharded_trajectory_takes_the_same_steps_bit_for_bit) {
  Team& team = *g_team;
  for (const std::string_view key : {"post", "pre", "mix"}) {
    const Index n = 41, d = 4;
    DynamicsSpec spec;
    spec.scheme = *make_scheme(key);
    spec.beta = 4.0;
    spec.kernel.threads = 1;
    const std::vector<double> x0 = state_of(test::random_tokens(n, d, 3));
    std::vector<double> samples;
    for (int i = 0; i <= 20; ++i) samples.push_back(0.5 * i);
    IntegratorOptions options;
    AttentionDynamics whole(spec, QkvSource::identity(), n, d);
    AttentionDynamics part(spec, QkvSource::identity(), n, d);
    ShardedDynamics sharded(part, team);
    Samples a, b;
    const IntegrationResult ra = integrate(whole, x0, 0.0, samples, options, a);
    const IntegrationResult rb = integrate(sharded, x0, 0.0, samples, options, b);
    BOOST_TEST_INFO("scheme " << key);
    BOOST_TEST(rb.status == RunStatus::ok);
    BOOST_TEST(rb.counters.accepted_steps == ra.counters.accepted_steps);
    BOOST_TEST(rb.counters.rejected_steps == ra.counters.rejected_steps);
    BOOST_TEST(rb.counters.rhs_evaluations == ra.counters.rhs_evaluations);
    BOOST_REQUIRE_EQUAL(a.x.size(), b.x.size());
    for (std::size_t i = 0; i < a.x.size(); ++i) BOOST_TEST(same_bits(b.x[i], a.x[i]), "sample " << i);
    BOOST_TEST(team.same(hash_of(b.x.back())));
  }
}

// With noise each process draws the increments of its own rows from (noise.seed, step, token): the
// sharded run takes the same noise as the whole one and is the same run bit for bit, on the
// symmetric path (Q = K = V = I, several tiles) and the general one (random Q, K, V: value noise
// then forms A = M Vᵀ), with a feed-forward term.
BOOST_AUTO_TEST_CASE(sharded_noisy_trajectory_is_the_whole_one_bit_for_bit) {
  Team& team = *g_team;
  for (const auto& [kind, qkv] :
       {std::pair{NoiseKind{IndependentNoise{0.3}}, 0}, std::pair{NoiseKind{ValueNoise{0.3}}, 1},
        std::pair{NoiseKind{ValueNoise{0.3}}, 0}, std::pair{NoiseKind{IndependentNoise{0.3}}, 1}}) {
    const Index n = 300, d = 4;
    DynamicsSpec spec;
    spec.scheme = PreLN{};
    spec.beta = 4.0;
    spec.kernel.threads = 1;
    spec.noise = NoiseSpec{kind, 12};
    spec.terms = feedforward_terms(3, d);
    const std::vector<double> x0 = state_of(test::random_tokens(n, d, 3));
    std::vector<double> samples;
    for (int i = 0; i <= 5; ++i) samples.push_back(0.04 * i);
    IntegratorOptions options;
    options.method = Method::stratonovich_heun;
    options.dt = 0.01;
    AttentionDynamics whole(spec, qkv_of(qkv, d), n, d);
    AttentionDynamics part(spec, qkv_of(qkv, d), n, d);
    ShardedDynamics sharded(part, team);
    Samples a, b;
    BOOST_TEST_REQUIRE(integrate(whole, x0, 0.0, samples, options, a).status == RunStatus::ok);
    BOOST_TEST_REQUIRE(integrate(sharded, x0, 0.0, samples, options, b).status == RunStatus::ok);
    BOOST_REQUIRE_EQUAL(a.x.size(), b.x.size());
    for (std::size_t i = 0; i < a.x.size(); ++i)
      BOOST_TEST(same_bits(b.x[i], a.x[i]), "noise " << alternative_key(kind) << ", qkv " << qkv << ", sample " << i);
    BOOST_TEST(team.same(hash_of(b.x.back())));
  }
}
