// The noise list and its counter-based draws: every draw a pure function of (seed, stream, step,
// index), equal whichever rows are asked for together; standard normal moments; the list's registry.
#define BOOST_TEST_MODULE noise
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "normdyn/counter_random.hpp"
#include "normdyn/noise.hpp"
#include "normdyn/qkv.hpp"

using namespace normdyn;

BOOST_AUTO_TEST_CASE(counter_normals_are_a_pure_function_of_their_key) {
  std::vector<double> a(7), b(7), prefix(3), other_step(7), other_index(7), other_seed(7);
  counter_normals(5, CounterStream::independent_noise, 11, 3, a);
  counter_normals(5, CounterStream::independent_noise, 11, 3, b);
  counter_normals(5, CounterStream::independent_noise, 11, 3, prefix);
  counter_normals(5, CounterStream::independent_noise, 12, 3, other_step);
  counter_normals(5, CounterStream::independent_noise, 11, 4, other_index);
  counter_normals(6, CounterStream::independent_noise, 11, 3, other_seed);
  BOOST_TEST(a == b);
  for (std::size_t i = 0; i < prefix.size(); ++i) BOOST_TEST(prefix[i] == a[i]);
  BOOST_TEST(a != other_step);
  BOOST_TEST(a != other_index);
  BOOST_TEST(a != other_seed);
  std::vector<double> value(7);
  counter_normals(5, CounterStream::value_noise, 11, 3, value);
  BOOST_TEST(a != value);
}

BOOST_AUTO_TEST_CASE(counter_normals_have_standard_normal_moments) {
  const std::size_t count = 1 << 18;
  std::vector<double> z(count);
  double sum = 0.0, sum2 = 0.0, sum4 = 0.0, correlation = 0.0;
  for (std::uint64_t step = 0; step < 64; ++step) {
    counter_normals(1, CounterStream::independent_noise, step, 0, std::span<double>(z.data(), count / 64));
    for (std::size_t i = 0; i < count / 64; ++i) {
      sum += z[i];
      sum2 += z[i] * z[i];
      sum4 += z[i] * z[i] * z[i] * z[i];
      if (i > 0) correlation += z[i] * z[i - 1];
    }
  }
  const double n = static_cast<double>(count);
  // Five standard errors of each estimate.
  BOOST_TEST(std::abs(sum / n) < 5.0 / std::sqrt(n));
  BOOST_TEST(std::abs(sum2 / n - 1.0) < 5.0 * std::sqrt(2.0 / n));
  BOOST_TEST(std::abs(sum4 / n - 3.0) < 5.0 * std::sqrt(96.0 / n));
  BOOST_TEST(std::abs(correlation / n) < 5.0 / std::sqrt(n));
}

BOOST_AUTO_TEST_CASE(increments_of_a_block_of_rows_equal_those_of_the_whole) {
  const Index n = 9, d = 5;
  RowMatrix means = RowMatrix::Random(n, d);
  for (const NoiseKind& kind : {NoiseKind{IndependentNoise{0.7}}, NoiseKind{ValueNoise{0.7}}}) {
    NoiseSpec noise{kind, 42};
    RowMatrix whole(n, d), block(4, d);
    noise.increments(NoiseDraw{42, 17, 0.01, 0}, means, whole);
    noise.increments(NoiseDraw{42, 17, 0.01, 3}, means.middleRows(3, 4), block);
    BOOST_TEST_INFO("noise " << alternative_key(kind));
    BOOST_TEST((block.array() == whole.middleRows(3, 4).array()).all());
    // σ √h scaling: a second draw at 4h is exactly twice the first.
    RowMatrix longer(n, d);
    noise.increments(NoiseDraw{42, 17, 0.04, 0}, means, longer);
    BOOST_TEST(((longer - 2.0 * whole).array().abs() <= 1e-15 * whole.array().abs().maxCoeff()).all());
  }
}

BOOST_AUTO_TEST_CASE(value_noise_is_one_matrix_applied_to_the_means) {
  const Index d = 4;
  RowMatrix means = RowMatrix::Identity(d, d);
  RowMatrix dn(d, d);
  ValueNoise{1.0}.increments(NoiseDraw{3, 5, 1.0, 0}, means, dn);
  // Row i is ΔB e_i: the columns of ΔB, i.e. dn = ΔB^T; ΔB row-major from the draw of (seed, step).
  std::vector<double> z(static_cast<std::size_t>(d * d));
  counter_normals(3, CounterStream::value_noise, 5, 0, z);
  for (Index i = 0; i < d; ++i)
    for (Index j = 0; j < d; ++j) BOOST_TEST(dn(i, j) == z[static_cast<std::size_t>(j * d + i)]);
}

BOOST_AUTO_TEST_CASE(the_noise_list_has_keys_traits_and_a_description) {
  BOOST_TEST((alternative_keys<NoiseKind>() == std::vector<std::string_view>{"none", "independent", "value"}));
  BOOST_TEST(NoiseSpec{}.traits().deterministic);
  BOOST_TEST(!NoiseSpec{}.active());
  BOOST_TEST(describe(NoiseSpec{}).empty());
  const NoiseSpec independent{IndependentNoise{0.5}, 1};
  BOOST_TEST(!independent.traits().deterministic);
  BOOST_TEST(independent.traits().meanfield);  // the mean field's Fokker-Planck equation
  const NoiseSpec value_noise{ValueNoise{}, 1};
  BOOST_TEST(!value_noise.traits().meanfield);
  BOOST_TEST(independent.traits().shardable);
  BOOST_TEST(describe(independent) == "noise.kind = \"independent\", noise.sigma = 0.5");
  const NoiseSpec value{ValueNoise{}, 1};
  BOOST_TEST(value.needs_means());
  BOOST_TEST(!independent.needs_means());
}

// The discrete model of value noise: Q = K = I and V = I + (σ/√h) G_k on layer k of step h from t0,
// G_k the normals of (seed, k); the layers' boundaries are breakpoints.
BOOST_AUTO_TEST_CASE(fresh_values_per_map_layer_are_keyed_by_the_layer) {
  const Index d = 3;
  const double h = 0.25, t0 = 1.0, sigma = 0.5;
  QkvSource s = QkvSource::gaussian_per_map_layer(d, 7, sigma, h, t0);
  const RowMatrix v2 = s.at(t0 + 2.5 * h).V, v0 = s.at(t0 + 0.1 * h).V, again = s.at(t0 + 2.9 * h).V;
  std::vector<double> z(static_cast<std::size_t>(d * d));
  counter_normals(7, CounterStream::map_layer_values, 2, 0, z);
  for (Index i = 0; i < d; ++i)
    for (Index j = 0; j < d; ++j)
      BOOST_TEST(v2(i, j) == (i == j ? 1.0 : 0.0) + sigma / std::sqrt(h) * z[static_cast<std::size_t>(i * d + j)]);
  BOOST_TEST((again.array() == v2.array()).all());
  BOOST_TEST((v0.array() != v2.array()).any());
  BOOST_TEST((s.at(t0 + 0.5 * h).Q.array() == RowMatrix::Identity(d, d).array()).all());
  BOOST_TEST((s.breakpoints(t0, t0 + 3.5 * h) == std::vector<double>{t0 + h, t0 + 2 * h, t0 + 3 * h}));
}
