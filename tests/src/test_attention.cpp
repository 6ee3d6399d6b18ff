// The attention kernel against the definition (long double, one token at a time), and its
// invariances: block size and thread count do not change the result; huge β does not overflow.
#define BOOST_TEST_MODULE attention
#include <boost/test/unit_test.hpp>

#include "normdyn/attention.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {
RowMatrix compute(const RowMatrix& theta, const AttentionMatrices& m, double beta, KernelOptions o = {},
                  const Vector& masses = Vector()) {
  AttentionKernel kernel(o);
  RowMatrix a(theta.rows(), theta.cols());
  kernel.compute(theta, m, beta, masses, a);
  return a;
}

AttentionMatrices random_qkv(Index d, std::uint64_t seed) {
  AttentionMatrices m;
  m.identity = false;
  m.Q = test::random_matrix(d, d, seed, 1.0 / std::sqrt(double(d)));
  m.K = test::random_matrix(d, d, seed + 1, 1.0 / std::sqrt(double(d)));
  m.V = test::random_matrix(d, d, seed + 2, 1.0 / std::sqrt(double(d)));
  return m;
}
}  // namespace

BOOST_AUTO_TEST_CASE(identity_matches_definition) {
  for (Index n : {1, 2, 17, 64})
    for (Index d : {2, 3, 16}) {
      const RowMatrix theta = test::random_tokens(n, d, 1).theta;
      for (double beta : {0.1, 1.0, 9.0}) {
        const RowMatrix a = compute(theta, AttentionMatrices::identity_matrices(), beta);
        const RowMatrix ref = test::naive_attention(theta, AttentionMatrices::identity_matrices(), beta);
        BOOST_TEST((a - ref).cwiseAbs().maxCoeff() < test::kRoundoff);
      }
    }
}

BOOST_AUTO_TEST_CASE(general_matrices_match_definition) {
  const Index n = 40, d = 7;
  const RowMatrix theta = test::random_tokens(n, d, 2).theta;
  const AttentionMatrices m = random_qkv(d, 5);
  const RowMatrix a = compute(theta, m, 2.0);
  const RowMatrix ref = test::naive_attention(theta, m, 2.0);
  BOOST_TEST((a - ref).cwiseAbs().maxCoeff() < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(masses_weight_the_softmax) {
  const Index n = 30, d = 4;
  const RowMatrix theta = test::random_tokens(n, d, 3).theta;
  Vector masses(n);
  for (Index k = 0; k < n; ++k) masses(k) = 0.1 + double(k % 5);
  const RowMatrix a = compute(theta, AttentionMatrices::identity_matrices(), 1.5, {}, masses);
  const RowMatrix ref = test::naive_attention(theta, AttentionMatrices::identity_matrices(), 1.5, masses);
  BOOST_TEST((a - ref).cwiseAbs().maxCoeff() < test::kRoundoff);
  // Equal masses are the unweighted kernel, bit for bit up to round-off.
  const RowMatrix equal = compute(theta, AttentionMatrices::identity_matrices(), 1.5, {}, Vector::Constant(n, 3.0));
  const RowMatrix plain = compute(theta, AttentionMatrices::identity_matrices(), 1.5);
  BOOST_TEST((equal - plain).cwiseAbs().maxCoeff() < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(block_size_and_threads_do_not_change_the_result) {
  const Index n = 301, d = 9;
  const RowMatrix theta = test::random_tokens(n, d, 4).theta;
  const AttentionMatrices m = random_qkv(d, 8);
  const RowMatrix reference = compute(theta, m, 3.0, {1, 1});
  for (int threads : {1, 2, 3})
    for (Index block : {0, 7, 64, 512}) {
      const RowMatrix a = compute(theta, m, 3.0, {threads, block});
      BOOST_TEST((a - reference).cwiseAbs().maxCoeff() < test::kThreadAgreement);
    }
}

BOOST_AUTO_TEST_CASE(large_beta_does_not_overflow) {
  const RowMatrix theta = test::random_tokens(50, 3, 5).theta;
  const RowMatrix a = compute(theta, AttentionMatrices::identity_matrices(), 1e4);
  BOOST_TEST(a.allFinite());
  // At β → ∞ each token attends to itself (its own score is the unique maximum).
  BOOST_TEST((a - theta).cwiseAbs().maxCoeff() < 1e-9);
}

BOOST_AUTO_TEST_CASE(single_token_attends_to_itself) {
  const RowMatrix theta = test::random_tokens(1, 5, 6).theta;
  const RowMatrix a = compute(theta, AttentionMatrices::identity_matrices(), 1.0);
  BOOST_TEST((a - theta).cwiseAbs().maxCoeff() < test::kRoundoff);
}
