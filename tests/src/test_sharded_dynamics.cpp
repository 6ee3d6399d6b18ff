// One system sharded across MPI processes. An MPI program: CTest runs it through mpirun
// with 2 processes (tests/CMakeLists.txt); every process runs every test case.
//
// The sharded right-hand side equals the single-process one to round-off for every scheme and kind
// of attention matrices, also when the rows do not divide evenly or a process owns none; integrated
// with the adaptive step loop, every process takes the same steps as one process alone and the
// trajectories agree to 1e-12; the processes hold identical states.
#define BOOST_TEST_MODULE sharded_dynamics
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>

#include "normdyn/experiment/team.hpp"
#include "normdyn/sharded_dynamics.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

Team* g_team = nullptr;

struct MpiSession {
  MpiSession() {
    auto& suite = boost::unit_test::framework::master_test_suite();
    static int argc = suite.argc;
    static char** argv = suite.argv;
    g_team = new Team(argc, argv);
    BOOST_TEST_MESSAGE("rank " << g_team->rank() << " of " << g_team->size());
  }
  ~MpiSession() { delete g_team; }
};
BOOST_TEST_GLOBAL_FIXTURE(MpiSession);

std::vector<double> state_of(const Tokens& t) {
  const StateLayout layout{t.n(), t.d()};
  std::vector<double> x(layout.size());
  layout.pack(t, x.data());
  return x;
}

QkvSource qkv_of(int kind, Index d) {
  switch (kind) {
    case 0: return QkvSource::identity();
    case 1: return QkvSource::gaussian(d, 5);
    default: return QkvSource::gaussian_per_layer(d, 5);
  }
}

// Largest |a − b| / max(1, |b|).
double max_relative(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
  return m;
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
}

BOOST_AUTO_TEST_CASE(sharded_right_hand_side_equals_the_whole_one) {
  Team& team = *g_team;
  double worst = 0.0;
  for (Index n : {1, 7, 64}) {
    const Index d = 5;
    Tokens tokens = test::random_tokens(n, d, 17 + static_cast<std::uint64_t>(n));
    const std::vector<double> x = state_of(tokens);
    for (int qkv = 0; qkv < 3; ++qkv) {
      for (const std::string_view key : scheme_keys()) {
        DynamicsSpec spec;
        spec.scheme = *make_scheme(key);
        spec.beta = 3.0;
        spec.kernel.threads = 1;
        AttentionDynamics whole(spec, qkv_of(qkv, d), n, d);
        AttentionDynamics part(spec, qkv_of(qkv, d), n, d);
        ShardedDynamics sharded(part, team);
        for (double t : {0.25, 6.5}) {  // 6.5: after Mix-LN's switch, and another layer of matrices
          std::vector<double> a(x.size()), b(x.size(), std::nan(""));
          whole.rhs(x.data(), a.data(), t);
          sharded.rhs(x.data(), b.data(), t);
          BOOST_TEST_INFO("n = " << n << ", qkv " << qkv << ", scheme " << key << ", t = " << t);
          BOOST_TEST(max_relative(b, a) <= test::kRoundoff);
          worst = std::max(worst, max_relative(b, a));
          BOOST_TEST(team.same(hash_of(b)));  // every process holds the same derivative
        }
      }
    }
  }
  BOOST_TEST_MESSAGE("largest relative difference of the sharded right-hand side: " << worst);
}

BOOST_AUTO_TEST_CASE(sharded_trajectory_takes_the_same_steps_and_agrees_to_1e_12) {
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
    double worst = 0.0;
    for (std::size_t i = 0; i < a.x.size(); ++i) worst = std::max(worst, max_relative(b.x[i], a.x[i]));
    BOOST_TEST(worst <= test::kShardAgreement);
    BOOST_TEST_MESSAGE(key << ": " << rb.counters.accepted_steps << " steps, largest difference " << worst);
    BOOST_TEST(team.same(hash_of(b.x.back())));
  }
}

// With noise each process draws the increments of its own rows from (noise.seed, step, token): the
// sharded run takes the same noise as the whole one and agrees with it as the deterministic one does.
BOOST_AUTO_TEST_CASE(sharded_noisy_trajectory_draws_the_same_noise) {
  Team& team = *g_team;
  for (const NoiseKind& kind : {NoiseKind{IndependentNoise{0.3}}, NoiseKind{ValueNoise{0.3}}}) {
    const Index n = 41, d = 4;
    DynamicsSpec spec;
    spec.scheme = PreLN{};
    spec.beta = 4.0;
    spec.kernel.threads = 1;
    spec.noise = NoiseSpec{kind, 12};
    const std::vector<double> x0 = state_of(test::random_tokens(n, d, 3));
    std::vector<double> samples;
    for (int i = 0; i <= 10; ++i) samples.push_back(0.1 * i);
    IntegratorOptions options;
    options.method = Method::stratonovich_heun;
    options.dt = 0.01;
    AttentionDynamics whole(spec, qkv_of(1, d), n, d);
    AttentionDynamics part(spec, qkv_of(1, d), n, d);
    ShardedDynamics sharded(part, team);
    Samples a, b;
    BOOST_TEST_REQUIRE(integrate(whole, x0, 0.0, samples, options, a).status == RunStatus::ok);
    BOOST_TEST_REQUIRE(integrate(sharded, x0, 0.0, samples, options, b).status == RunStatus::ok);
    double worst = 0.0;
    for (std::size_t i = 0; i < a.x.size(); ++i) worst = std::max(worst, max_relative(b.x[i], a.x[i]));
    BOOST_TEST_INFO("noise " << alternative_key(kind));
    BOOST_TEST(worst <= test::kShardAgreement);
    BOOST_TEST(team.same(hash_of(b.x.back())));
  }
}
