// The recipe of docs/ARCHITECTURE.md ("Adding an attention alternative"), kept true: a mask with an
// integer width defined only in tests/src/window_mask.hpp and a top-k normalizer with an integer k
// defined only in tests/src/top_k.hpp, appended to their lists by the build, reach the configuration
// (their keys among the choices, their integer parameters read, a real refused, the mean-field refusal
// from their traits), the kernel (against plain loops written here, and its rows under sharding), the
// traits that turn off what depends on them, and describe() with their parameters.
#define BOOST_TEST_MODULE attention_recipe
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "normdyn/attention.hpp"
#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "t.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

// A_i = sum_{j in keep(i)} e^{beta <x_i, x_j>} x_j / sum_{j in keep(i)} e^{beta <x_i, x_j>}: the softmax over
// the keys that keep(i) lists, written out.
template <class Keep>
double worst_against_loop(const RowMatrix& x, const RowMatrix& a, double beta, Keep&& keep) {
  double worst = 0.0;
  for (Index i = 0; i < x.rows(); ++i) {
    Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(x.cols());
    double z = 0.0;
    for (Index j : keep(i)) {
      const double w = std::exp(beta * x.row(i).dot(x.row(j)));
      sum += w * x.row(j);
      z += w;
    }
    worst = std::max(worst, (a.row(i) - sum / z).cwiseAbs().maxCoeff());
  }
  return worst;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_new_mask_is_a_choice_of_the_configuration) {
  const RunConfig c = parse_config("[attention]\nmask = \"window\"\nwindow = 5\n", "t.toml");
  BOOST_TEST(std::get<WindowMask>(c.attention.mask).width == 5);
  BOOST_TEST(describe(c.attention) == "attention.mask = \"window\", attention.window = 5");
  BOOST_TEST(describe(parse_config(to_toml(c), "resolved").attention) == describe(c.attention));
  BOOST_TEST(error_of("[attention]\nmask = \"window\"\nwindow = 2.5\n") ==
             "attention.window: expected an integer, got a float");
  BOOST_TEST(error_of("[attention]\nmask = \"window\"\nwindow = 0\n") == "attention.window: must be >= 1, got 0");
  BOOST_TEST(
      error_of("[attention]\nwindow = 4\n").rfind("attention.window: applies only to attention.mask = \"window\"", 0) ==
      0);
  const std::string meanfield =
      error_of("[model]\nkind = \"meanfield\"\n[init]\nkind = \"uniform\"\n[attention]\nmask = \"window\"\n");
  BOOST_TEST(meanfield.rfind("attention.mask: \"window\" does not apply to model.kind = \"meanfield\"", 0) == 0,
             meanfield);
  BOOST_TEST(c.attention.breaking_setting(&Traits::exchangeable) ==
             "attention.mask = \"window\", attention.window = 5");
  BOOST_TEST(c.attention.traits().shardable);
}

BOOST_AUTO_TEST_CASE(the_new_normalizer_is_a_choice_of_the_configuration) {
  const RunConfig c = parse_config("[attention]\nnormalizer = \"top_k\"\ntop_k = 7\n", "t.toml");
  BOOST_TEST(std::get<TopK>(c.attention.normalizer).k == 7);
  BOOST_TEST(describe(c.attention) == "attention.normalizer = \"top_k\", attention.top_k = 7");
  BOOST_TEST(describe(parse_config(to_toml(c), "resolved").attention) == describe(c.attention));
  BOOST_TEST(error_of("[attention]\nnormalizer = \"top_k\"\ntop_k = 2.5\n") ==
             "attention.top_k: expected an integer, got a float");
  BOOST_TEST(!c.attention.traits().has_energy);
  BOOST_TEST(!c.attention.matrix_normalizer());
}

BOOST_AUTO_TEST_CASE(the_kernel_applies_the_new_mask) {
  const Index n = 300, d = 4;
  const RowMatrix x = test::random_tokens(n, d, 21).theta;
  for (std::int64_t width : {1, 3, 40}) {
    AttentionSpec spec;
    spec.mask = WindowMask{width};
    AttentionKernel kernel({}, spec);
    RowMatrix a(n, d);
    kernel.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
    BOOST_TEST(int(kernel.last_path()) == int(KernelPath::general));
    const double worst = worst_against_loop(x, a, 2.0, [&](Index i) {
      std::vector<Index> keys;
      for (Index j = std::max<Index>(0, i - width + 1); j <= i; ++j) keys.push_back(j);
      return keys;
    });
    BOOST_TEST(worst <= test::kRoundoff, width);
    RowMatrix part(n - 100, d);
    kernel.compute_rows(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), 100, n, part);
    BOOST_TEST((part - a.bottomRows(n - 100)).cwiseAbs().maxCoeff() == 0.0);
  }
}

// A sliding window of w keys costs O(n w d): its blocks score at most max(1/16 more than the n w
// entries it allows, n (w + 15)) entries, the same count per token at n = 1024 and at 4096.
BOOST_AUTO_TEST_CASE(a_window_scores_entries_in_proportion_to_its_width) {
  for (const Index n : {Index{1024}, Index{4096}})
    for (std::int64_t width : {1, 3, 40, 300}) {
      const RowMatrix x = test::random_tokens(n, 2, 23).theta;
      AttentionSpec spec;
      spec.mask = WindowMask{width};
      AttentionKernel kernel({}, spec);
      RowMatrix a(n, 2);
      kernel.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
      double allowed = 0.0;
      for (Index i = 0; i < n; ++i) allowed += static_cast<double>(std::min<Index>(i + 1, width));
      const double bound = std::max((1.0 + 1.0 / 16.0) * allowed, static_cast<double>(n * (width + 15)));
      BOOST_TEST(static_cast<double>(kernel.last_scored()) >= allowed, n << " " << width);
      BOOST_TEST(static_cast<double>(kernel.last_scored()) <= bound, n << " " << width);
    }
}

// Top-k against a loop that sorts each row's scores: the softmax over the k largest, nothing of the rest.
BOOST_AUTO_TEST_CASE(the_kernel_applies_the_new_normalizer) {
  const Index n = 300, d = 4;
  const RowMatrix x = test::random_tokens(n, d, 22).theta;
  for (std::int64_t k : {1, 5, 299, 1000}) {
    AttentionSpec spec;
    spec.normalizer = TopK{k};
    AttentionKernel kernel({}, spec);
    RowMatrix a(n, d);
    kernel.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
    const double worst = worst_against_loop(x, a, 2.0, [&](Index i) {
      std::vector<std::pair<double, Index>> scores;
      for (Index j = 0; j < n; ++j) scores.emplace_back(x.row(i).dot(x.row(j)), j);
      std::sort(scores.begin(), scores.end(), std::greater<>());
      std::vector<Index> keys;
      for (std::size_t r = 0; r < scores.size() && r < static_cast<std::size_t>(k); ++r)
        keys.push_back(scores[r].second);
      return keys;
    });
    BOOST_TEST(worst <= test::kRoundoff, k);
    RowMatrix part(n - 100, d);
    kernel.compute_rows(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), 100, n, part);
    BOOST_TEST((part - a.bottomRows(n - 100)).cwiseAbs().maxCoeff() == 0.0);
  }
  // With the window mask: the k largest among the window's keys.
  AttentionSpec both;
  both.mask = WindowMask{10};
  both.normalizer = TopK{2};
  AttentionKernel kernel({}, both);
  RowMatrix a(n, d);
  kernel.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
  const double worst = worst_against_loop(x, a, 2.0, [&](Index i) {
    std::vector<std::pair<double, Index>> scores;
    for (Index j = std::max<Index>(0, i - 9); j <= i; ++j) scores.emplace_back(x.row(i).dot(x.row(j)), j);
    std::sort(scores.begin(), scores.end(), std::greater<>());
    std::vector<Index> keys;
    for (std::size_t r = 0; r < scores.size() && r < 2; ++r) keys.push_back(scores[r].second);
    return keys;
  });
  BOOST_TEST(worst <= test::kRoundoff);
}
