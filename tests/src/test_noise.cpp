// The noise list and its counter-based draws: every draw a pure function of (seed, stream, step,
// index), equal whichever rows are asked for together; standard normal moments; the list's registry.
#define BOOST_TEST_MODULE noise
#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "normdyn/counter_random.hpp"
#include "normdyn/noise.hpp"
#include "normdyn/qkv.hpp"
#include "tolerances.hpp"

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

// Rows drawn together equal each row drawn alone, whatever the block: shards, threads' blocks and
// the whole request give the same bits, across the SIMD transform's chunks (300 rows of d = 2 fill
// more than one) and for every width (a block of four normals used in part, odd widths).
BOOST_AUTO_TEST_CASE(counter_normals_rows_equal_each_row_drawn_alone) {
  for (const std::size_t cols : {1, 2, 3, 4, 5, 7, 64}) {
    const std::size_t rows = 300;
    std::vector<double> whole(rows * cols);
    counter_normals_rows(9, CounterStream::independent_noise, 23, 40, rows, cols, whole);
    BOOST_TEST_INFO("cols = " << cols);
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<double> alone(cols);
      counter_normals(9, CounterStream::independent_noise, 23, 40 + r, alone);
      for (std::size_t c = 0; c < cols; ++c) BOOST_TEST(alone[c] == whole[r * cols + c]);
    }
    // Shards of the request, each on its own: rows [begin, end) of the whole.
    for (const auto& [begin, end] : {std::pair<std::size_t, std::size_t>{0, 1}, {1, 38}, {38, 299}, {123, 300}}) {
      std::vector<double> shard((end - begin) * cols);
      counter_normals_rows(9, CounterStream::independent_noise, 23, 40 + begin, end - begin, cols, shard);
      for (std::size_t i = 0; i < shard.size(); ++i) BOOST_TEST(shard[i] == whole[begin * cols + i]);
    }
  }
  std::vector<double> wrong(5);
  BOOST_CHECK_THROW(counter_normals_rows(9, CounterStream::independent_noise, 23, 40, 2, 3, wrong),
                    std::invalid_argument);
}

// The same numbers as r123's scalar Box-Muller transform of the same Philox words (the mapping
// (seed, stream, step, index, k) -> normal is unchanged), to a few ulps of the pair's radius.
BOOST_AUTO_TEST_CASE(counter_normals_are_the_box_muller_transform_of_philox_to_a_few_ulps) {
  const std::size_t rows = 4096, cols = 6;
  std::vector<double> z(rows * cols);
  counter_normals_rows(3, CounterStream::value_noise, 8, 0, rows, cols, z);
  const r123::Philox4x64::key_type key{{3, static_cast<std::uint64_t>(CounterStream::value_noise)}};
  double worst = 0.0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < cols; k += 4) {
      const r123::Philox4x64::ctr_type words = r123::Philox4x64()({{8, r, k / 4, 0}}, key);
      for (std::size_t pair = 0; pair < 2 && k + 2 * pair < cols; ++pair) {
        const r123::double2 reference = r123::boxmuller(words[2 * pair], words[2 * pair + 1]);
        const double radius = std::sqrt(-2.0 * std::log(r123::u01<double>(words[2 * pair + 1])));
        const double ulp = std::numeric_limits<double>::epsilon() * std::max(radius, 1e-300);
        worst = std::max(worst, std::abs(z[r * cols + k + 2 * pair] - reference.x) / ulp);
        worst = std::max(worst, std::abs(z[r * cols + k + 2 * pair + 1] - reference.y) / ulp);
      }
    }
  BOOST_TEST_MESSAGE("largest difference from the scalar transform: " << worst << " ulps of the radius");
  BOOST_TEST(worst <= test::kBoxMullerUlps);
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
    // Rows that are not contiguous (a block of a wider matrix) get the same numbers.
    RowMatrix wider(4, d + 3);
    noise.increments(NoiseDraw{42, 17, 0.01, 3}, means.middleRows(3, 4), wider.leftCols(d));
    BOOST_TEST((wider.leftCols(d).array() == block.array()).all());
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

// ---- Tree increments (noise.increments = "tree"): one Brownian path per key, whose increments over
// adjacent intervals add up to the increment over their union, with the law of Brownian motion.

BOOST_AUTO_TEST_CASE(tree_increments_are_a_pure_function_of_key_and_interval) {
  std::vector<double> a(7), b(7), prefix(3), other_index(7), other_seed(7), other_stream(7);
  tree_increments(5, CounterStream::independent_noise_tree, 3, 0.3, 0.7, a);
  tree_increments(5, CounterStream::independent_noise_tree, 3, 0.3, 0.7, b);
  tree_increments(5, CounterStream::independent_noise_tree, 3, 0.3, 0.7, prefix);
  tree_increments(5, CounterStream::independent_noise_tree, 4, 0.3, 0.7, other_index);
  tree_increments(6, CounterStream::independent_noise_tree, 3, 0.3, 0.7, other_seed);
  tree_increments(5, CounterStream::value_noise_tree, 3, 0.3, 0.7, other_stream);
  BOOST_TEST(a == b);
  for (std::size_t i = 0; i < prefix.size(); ++i) BOOST_TEST(prefix[i] == a[i]);
  BOOST_TEST(a != other_index);
  BOOST_TEST(a != other_seed);
  BOOST_TEST(a != other_stream);
  std::vector<double> empty(7, 1.0);
  tree_increments(5, CounterStream::independent_noise_tree, 3, 0.4, 0.4, empty);
  BOOST_TEST((empty == std::vector<double>(7, 0.0)));
}

// Refining the steps keeps the path: the increment over a coarse step is the sum of those over its
// fine steps, for dyadic steps, for steps of a third and for uneven ones, across cell boundaries.
BOOST_AUTO_TEST_CASE(tree_increments_over_a_coarse_step_are_the_sum_of_the_fine_ones) {
  const std::size_t m = 6;
  for (const auto& [t0, t1] : {std::pair{0.0, 1.0}, std::pair{0.3, 0.7}, std::pair{0.9, 3.2}, std::pair{-1.25, 0.5}}) {
    std::vector<double> coarse(m);
    tree_increments(11, CounterStream::independent_noise_tree, 2, t0, t1, coarse);
    for (const int parts : {2, 3, 64, 1000}) {
      std::vector<double> sum(m, 0.0), piece(m);
      double begin = t0;
      for (int k = 1; k <= parts; ++k) {
        // Uneven parts for 1000: the k-th ends at t0 + (t1 - t0) (k/parts)^2.
        const double f = parts == 1000 ? double(k) * k / (double(parts) * parts) : double(k) / parts;
        const double end = k == parts ? t1 : t0 + (t1 - t0) * f;
        tree_increments(11, CounterStream::independent_noise_tree, 2, begin, end, piece);
        for (std::size_t c = 0; c < m; ++c) sum[c] += piece[c];
        begin = end;
      }
      for (std::size_t c = 0; c < m; ++c) {
        BOOST_TEST_INFO("[" << t0 << ", " << t1 << "] in " << parts << " parts, component " << c);
        BOOST_TEST(std::abs(sum[c] - coarse[c]) <= 1e-12);
      }
    }
  }
}

// Mean 0 and variance t1 - t0 over many independent paths (the indices), for intervals on the
// dyadic grid, off it, within a cell and across cells, down to 1e-5; no correlation between
// disjoint intervals of one path, between components, or between a step and the next. Five
// standard errors each (a bridge spread 10 % too wide fails the variances).
BOOST_AUTO_TEST_CASE(tree_increments_have_the_law_of_brownian_motion) {
  const std::uint64_t paths = 16000;
  const std::vector<std::pair<double, double>> intervals{
      {0.0, 0.25}, {0.25, 0.6}, {0.6, 1.35}, {1.35, 1.35 + 1e-5}, {2.1, 2.1 + 3e-3}, {-0.75, -0.5}, {3.0, 7.0}};
  const std::size_t k = intervals.size();
  std::vector<double> sum(k, 0.0), sum2(k, 0.0), cross(k, 0.0), components(k, 0.0);
  std::vector<double> w(2);
  std::vector<double> prev(2);
  for (std::uint64_t p = 0; p < paths; ++p)
    for (std::size_t i = 0; i < k; ++i) {
      const auto [t0, t1] = intervals[i];
      tree_increments(3, CounterStream::independent_noise_tree, p, t0, t1, w);
      const double z = w[0] / std::sqrt(t1 - t0), z1 = w[1] / std::sqrt(t1 - t0);
      sum[i] += z;
      sum2[i] += z * z;
      components[i] += z * z1;
      if (i > 0) cross[i] += z * prev[0];
      prev[0] = z;
    }
  const double n = static_cast<double>(paths);
  for (std::size_t i = 0; i < k; ++i) {
    BOOST_TEST_INFO("[" << intervals[i].first << ", " << intervals[i].second << "]");
    BOOST_TEST(std::abs(sum[i] / n) < 5.0 / std::sqrt(n));
    BOOST_TEST(std::abs(sum2[i] / n - 1.0) < 5.0 * std::sqrt(2.0 / n));
    BOOST_TEST(std::abs(components[i] / n) < 5.0 / std::sqrt(n));
    if (i > 0) BOOST_TEST(std::abs(cross[i] / n) < 5.0 / std::sqrt(n));
  }
}

// The noises draw the tree of (seed, token) or (seed) over the step's interval, scaled by sigma
// alone, and blocks of rows get the rows of the whole.
BOOST_AUTO_TEST_CASE(noises_with_tree_increments_draw_the_interval) {
  const Index n = 9, d = 5;
  RowMatrix means = RowMatrix::Random(n, d);
  for (const NoiseKind& kind : {NoiseKind{IndependentNoise{0.7}}, NoiseKind{ValueNoise{0.7}}}) {
    NoiseSpec noise{kind, 42};
    noise.increment_draws = NoiseIncrements::tree;
    const NoiseDraw all{42, 17, 0.25, 0, NoiseIncrements::tree, 0.5, 0.75};
    NoiseDraw rows = all;
    rows.begin = 3;
    RowMatrix whole(n, d), block(4, d);
    noise.increments(all, means, whole);
    noise.increments(rows, means.middleRows(3, 4), block);
    BOOST_TEST_INFO("noise " << alternative_key(kind));
    BOOST_TEST((block.array() == whole.middleRows(3, 4).array()).all());
    // The step's number does not enter; its interval does.
    NoiseDraw renumbered = all, later = all;
    renumbered.step = 3;
    later.t0 += 0.25, later.t1 += 0.25;
    RowMatrix again(n, d), moved(n, d);
    noise.increments(renumbered, means, again);
    noise.increments(later, means, moved);
    BOOST_TEST((again.array() == whole.array()).all());
    BOOST_TEST((moved.array() != whole.array()).all());
  }
  std::vector<double> w(static_cast<std::size_t>(d));
  RowMatrix dn(n, d);
  IndependentNoise{0.7}.increments(NoiseDraw{42, 0, 0.25, 0, NoiseIncrements::tree, 0.5, 0.75}, means, dn);
  tree_increments(42, CounterStream::independent_noise_tree, 4, 0.5, 0.75, w);
  for (Index c = 0; c < d; ++c) BOOST_TEST(dn(4, c) == 0.7 * w[static_cast<std::size_t>(c)]);
}
