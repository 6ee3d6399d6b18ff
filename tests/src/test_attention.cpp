// The attention kernel against the definition (long double, one token at a time), and its
// invariances: block size and thread count do not change the result; huge β does not overflow.
#define BOOST_TEST_MODULE attention
#include <boost/test/unit_test.hpp>

#include <Eigen/SVD>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "normdyn/attention.hpp"
#include "normdyn/qkv.hpp"
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
  const AttentionMatrices m = test::random_qkv(d, 5);
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
  const AttentionMatrices m = test::random_qkv(d, 8);
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

// ---- The two paths: symmetric fast path for Q = K = V = I, general path otherwise ----

namespace {
double max_abs_diff(const RowMatrix& a, const RowMatrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

struct PathResult {
  RowMatrix a;
  KernelPath path;
};
PathResult compute_path(const RowMatrix& theta, const AttentionMatrices& m, double beta, KernelOptions o,
                        const Vector& masses = Vector()) {
  AttentionKernel kernel(o);
  RowMatrix a(theta.rows(), theta.cols());
  kernel.compute(theta, m, beta, masses, a);
  return {a, kernel.last_path()};
}
KernelOptions general_only(int threads = 0, Index block = 0) { return {threads, block, false}; }
}  // namespace

BOOST_AUTO_TEST_CASE(symmetric_path_is_taken_and_matches_definition) {
  // n = 129 and 300 are tiled (4 blocks); block 43 at n = 301 gives 7 blocks, an odd count, so
  // the schedule has a bye in every round. Small d takes the fused tiles, larger d GEMM tiles; both
  // are also forced for every d.
  const std::vector<std::pair<Index, Index>> cases = {{1, 0}, {2, 0}, {17, 0}, {64, 0}, {129, 0}, {300, 0}, {301, 43}};
  for (const auto& [n, block] : cases)
    for (Index d : {2, 3, 8, 9, 16}) {
      const RowMatrix theta = test::random_tokens(n, d, 11).theta;
      for (double beta : {0.1, 1.0, 9.0}) {
        const auto fast = compute_path(theta, AttentionMatrices::identity_matrices(), beta, {0, block, true});
        BOOST_TEST((fast.path == KernelPath::symmetric));
        const RowMatrix ref = test::naive_attention(theta, AttentionMatrices::identity_matrices(), beta);
        BOOST_TEST(max_abs_diff(fast.a, ref) < test::kRoundoff, "n = " << n << ", d = " << d << ", beta = " << beta);
        for (Index fused_max_dim : {Index{0}, d}) {
          KernelOptions o{0, block, true};
          o.fused_max_dim = fused_max_dim;
          const auto forced = compute_path(theta, AttentionMatrices::identity_matrices(), beta, o);
          BOOST_TEST(max_abs_diff(forced.a, ref) < test::kRoundoff, "fused_max_dim = " << fused_max_dim);
        }
        const auto general = compute_path(theta, AttentionMatrices::identity_matrices(), beta, general_only(0, block));
        BOOST_TEST((general.path == KernelPath::general));
        BOOST_TEST(max_abs_diff(fast.a, general.a) < test::kRoundoff);
      }
    }
}

BOOST_AUTO_TEST_CASE(symmetric_path_with_masses_matches_definition) {
  const Index n = 300, d = 5;
  const RowMatrix theta = test::random_tokens(n, d, 12).theta;
  Vector masses(n);
  for (Index k = 0; k < n; ++k) masses(k) = 0.05 + double((7 * k) % 11);
  const auto fast = compute_path(theta, AttentionMatrices::identity_matrices(), 2.5, {}, masses);
  BOOST_TEST((fast.path == KernelPath::symmetric));
  const RowMatrix ref = test::naive_attention(theta, AttentionMatrices::identity_matrices(), 2.5, masses);
  BOOST_TEST(max_abs_diff(fast.a, ref) < test::kRoundoff);
}

BOOST_AUTO_TEST_CASE(tokens_off_the_sphere) {
  // The kernel is defined for any tokens (intermediate Runge–Kutta stages are slightly off the
  // sphere). Norms within the symmetric path's bound use it; widely spread norms fall back.
  const Index n = 200, d = 4;
  RowMatrix theta = test::random_tokens(n, d, 13).theta;
  for (Index j = 0; j < n; ++j) theta.row(j) *= 1.0 + 0.3 * std::sin(double(j));
  const auto near = compute_path(theta, AttentionMatrices::identity_matrices(), 3.0, {});
  BOOST_TEST((near.path == KernelPath::symmetric));
  BOOST_TEST(max_abs_diff(near.a, test::naive_attention(theta, AttentionMatrices::identity_matrices(), 3.0)) <
             test::kRoundoff);
  const double wide_beta = 200.0;  // β (max |θ|² − min |θ|²) / 2 ≈ 140 > the bound
  const auto wide = compute_path(theta, AttentionMatrices::identity_matrices(), wide_beta, {});
  BOOST_TEST((wide.path == KernelPath::general));
  const RowMatrix ref = test::naive_attention(theta, AttentionMatrices::identity_matrices(), wide_beta);
  BOOST_TEST(max_abs_diff(wide.a, ref) < 1e3 * test::kRoundoff);  // scores up to β |θ|² ≈ 340
  BOOST_TEST(wide.a.allFinite());
}

BOOST_AUTO_TEST_CASE(threads_give_bitwise_identical_results_on_both_paths) {
  // Large enough for the kernel to run in parallel; the symmetric path at n = 1100 has 8 tiles
  // of 138 rows, 7 rounds of 4 tiles each.
  for (const auto& [n, d] : std::vector<std::pair<Index, Index>>{{301, 9}, {1100, 3}}) {
    const RowMatrix theta = test::random_tokens(n, d, 14).theta;
    const AttentionMatrices qkv = test::random_qkv(d, 15);
    for (bool symmetric : {true, false}) {
      const auto one = compute_path(theta, AttentionMatrices::identity_matrices(), 2.0, {1, 0, symmetric});
      BOOST_TEST((one.path == (symmetric ? KernelPath::symmetric : KernelPath::general)));
      for (int threads : {2, 3, 4}) {
        const auto many = compute_path(theta, AttentionMatrices::identity_matrices(), 2.0, {threads, 0, symmetric});
        BOOST_TEST(max_abs_diff(one.a, many.a) == 0.0,
                   "identity, symmetric = " << symmetric << ", threads = " << threads);
      }
    }
    const RowMatrix one = compute(theta, qkv, 2.0, {1, 0});
    for (int threads : {2, 3, 4}) BOOST_TEST(max_abs_diff(one, compute(theta, qkv, 2.0, {threads, 0})) == 0.0);
  }
}

// Any range of rows has the bits of those rows of the whole matrix, on every path: the blocks and
// tiles are those of the whole matrix, whatever the range (what makes a sharded run the one-process
// run bit for bit).
BOOST_AUTO_TEST_CASE(rows_of_any_range_have_the_bits_of_the_whole) {
  for (const auto& [n, d] : std::vector<std::pair<Index, Index>>{{301, 9}, {1100, 3}, {90, 5}}) {
    const RowMatrix theta = test::random_tokens(n, d, 24).theta;
    Vector masses = Vector::LinSpaced(n, 0.5, 1.5);
    masses /= masses.sum();
    struct Case {
      const char* name;
      AttentionMatrices qkv;
      Vector masses;
      bool symmetric;
    };
    const std::vector<Case> cases{{"symmetric", AttentionMatrices::identity_matrices(), Vector(), true},
                                  {"symmetric, masses", AttentionMatrices::identity_matrices(), masses, true},
                                  {"general, identity", AttentionMatrices::identity_matrices(), Vector(), false},
                                  {"general, random Q, K, V", test::random_qkv(d, 25), Vector(), true},
                                  {"general, masses", test::random_qkv(d, 26), masses, true}};
    for (const Case& c : cases) {
      AttentionKernel kernel({2, 0, c.symmetric});
      RowMatrix whole(n, d);
      kernel.compute(theta, c.qkv, 2.0, c.masses, whole);
      for (const auto& [begin, end] :
           std::vector<std::pair<Index, Index>>{{0, n}, {1, n - 1}, {n / 3, n / 2 + 7}, {n - 1, n}, {0, 1}}) {
        RowMatrix part(end - begin, d);
        kernel.compute_rows(theta, c.qkv, 2.0, c.masses, begin, end, part);
        BOOST_TEST(test::same_bits(part.data(), whole.data() + begin * d, static_cast<std::size_t>(part.size())),
                   c.name << ", n = " << n << ", rows [" << begin << ", " << end << ")");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(block_size_does_not_change_the_symmetric_result) {
  const Index n = 301;
  for (Index d : {3, 9}) {  // fused tiles and GEMM tiles by default
    const RowMatrix theta = test::random_tokens(n, d, 16).theta;
    const RowMatrix reference = test::naive_attention(theta, AttentionMatrices::identity_matrices(), 3.0);
    for (int threads : {1, 2, 3})
      for (Index block : {0, 7, 64, 150, 151, 512}) {  // 43, 5, 3, 2 and 1 blocks
        const auto r = compute_path(theta, AttentionMatrices::identity_matrices(), 3.0, {threads, block, true});
        BOOST_TEST(max_abs_diff(r.a, reference) < test::kThreadAgreement,
                   "d " << d << ", threads " << threads << ", block " << block);
      }
  }
}

BOOST_AUTO_TEST_CASE(automatic_tiles_use_a_multiple_of_four_blocks) {
  const AttentionKernel kernel;
  for (Index n : {129, 256, 1000, 1024, 4096, 65536}) {
    const Index block = kernel.block_rows(n, KernelPath::symmetric);
    const Index blocks = (n + block - 1) / block;
    BOOST_TEST(blocks % 4 == 0);
    BOOST_TEST(block <= 256);
  }
  BOOST_TEST(kernel.block_rows(100, KernelPath::symmetric) == 100);
}

BOOST_AUTO_TEST_CASE(reports_its_gemm_backend) {
#ifdef NORMDYN_OPENBLAS
  BOOST_TEST(std::string(gemm_backend()) == "openblas");
#else
  BOOST_TEST(std::string(gemm_backend()) == "eigen");
#endif
}

// model.qkv = "gaussian_unit_norm": the spectral norms |Q^T K| and |V| are exactly 1 (the
// hypotheses of Theorems 4.2 and 4.3), V = I on request, and the draw follows the seed.
BOOST_AUTO_TEST_CASE(gaussian_unit_norm_matrices_have_unit_spectral_norms) {
  for (const Index d : {2, 5, 16}) {
    QkvSource qkv = QkvSource::gaussian_unit_norm(d, 7);
    const AttentionMatrices& m = qkv.at(0.0);
    const RowMatrix qk = m.Q.transpose() * m.K;
    BOOST_TEST(std::abs(Eigen::JacobiSVD<RowMatrix>(qk).singularValues()(0) - 1.0) < 1e-12);
    BOOST_TEST(std::abs(Eigen::JacobiSVD<RowMatrix>(m.V).singularValues()(0) - 1.0) < 1e-12);
    BOOST_TEST(!qk.isApprox(RowMatrix::Identity(d, d)));
    QkvSource with_identity = QkvSource::gaussian_unit_norm(d, 7, true);
    BOOST_TEST(with_identity.at(0.0).V.isApprox(RowMatrix::Identity(d, d)));
    BOOST_TEST(with_identity.at(0.0).Q.isApprox(m.Q));
    QkvSource other = QkvSource::gaussian_unit_norm(d, 8);
    BOOST_TEST(!other.at(0.0).Q.isApprox(m.Q));
  }
}
