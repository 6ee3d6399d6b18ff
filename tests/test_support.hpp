#pragma once
// Shared helpers of the test suites: random states, scheme type lists, a naive attention reference.
#include <cmath>
#include <cstring>
#include <tuple>
#include <variant>

#include "normdyn/attention.hpp"
#include "normdyn/random.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn::test {

template <class V>
struct variant_to_tuple;
template <class... Ts>
struct variant_to_tuple<std::variant<Ts...>> {
  using type = std::tuple<Ts...>;
};
// Every scheme of the registry, for BOOST_AUTO_TEST_CASE_TEMPLATE.
using AllSchemes = typename variant_to_tuple<Scheme>::type;

// Whether two arrays of doubles are the same bit for bit.
inline bool same_bits(const double* a, const double* b, std::size_t count) {
  return std::memcmp(a, b, count * sizeof(double)) == 0;
}

inline Tokens random_tokens(Index n, Index d, std::uint64_t seed, double r_min = 0.5, double r_max = 2.0) {
  Random rng(seed, RandomStream::initial_tokens, 99);
  Tokens t{RowMatrix(n, d), Vector(n)};
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < d; ++i) t.theta(j, i) = rng.normal();
    t.theta.row(j).normalize();
    t.r(j) = r_min + (r_max - r_min) * rng.uniform();
  }
  return t;
}

inline RowMatrix random_matrix(Index rows, Index cols, std::uint64_t seed, double scale = 1.0) {
  Random rng(seed, RandomStream::attention_matrices, 77);
  RowMatrix m(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = scale * rng.normal();
  return m;
}

// A random rotation (orthogonal matrix with det +1) from the QR of a Gaussian matrix.
RowMatrix random_rotation(Index d, std::uint64_t seed);

// Attention by the definition, in long double, one token at a time.
// Random Q, K, V of one head, entries of standard deviation 1/sqrt(d).
inline AttentionMatrices random_qkv(Index d, std::uint64_t seed) {
  AttentionMatrices m;
  m.identity = false;
  m.Q = random_matrix(d, d, seed, 1.0 / std::sqrt(double(d)));
  m.K = random_matrix(d, d, seed + 1, 1.0 / std::sqrt(double(d)));
  m.V = random_matrix(d, d, seed + 2, 1.0 / std::sqrt(double(d)));
  return m;
}

inline RowMatrix naive_attention(const RowMatrix& theta, const AttentionMatrices& m, double beta,
                                 const Vector& masses = Vector()) {
  const Index n = theta.rows(), d = theta.cols();
  const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(d, d);
  const Eigen::MatrixXd Q = m.identity ? I : Eigen::MatrixXd(m.Q);
  const Eigen::MatrixXd K = m.identity ? I : Eigen::MatrixXd(m.K);
  const Eigen::MatrixXd V = m.identity ? I : Eigen::MatrixXd(m.V);
  RowMatrix out(n, d);
  for (Index j = 0; j < n; ++j) {
    const Eigen::VectorXd q = Q * theta.row(j).transpose();
    std::vector<long double> s(static_cast<std::size_t>(n));
    long double max_s = -1e300L;
    for (Index k = 0; k < n; ++k) {
      s[static_cast<std::size_t>(k)] = beta * q.dot(K * theta.row(k).transpose());
      max_s = std::max(max_s, s[static_cast<std::size_t>(k)]);
    }
    long double z = 0;
    std::vector<long double> acc(static_cast<std::size_t>(d), 0.0L);
    for (Index k = 0; k < n; ++k) {
      long double w = std::exp(s[static_cast<std::size_t>(k)] - max_s);
      if (masses.size() == n) w *= masses(k);
      z += w;
      const Eigen::VectorXd v = V * theta.row(k).transpose();
      for (Index i = 0; i < d; ++i) acc[static_cast<std::size_t>(i)] += w * v(i);
    }
    for (Index i = 0; i < d; ++i) out(j, i) = static_cast<double>(acc[static_cast<std::size_t>(i)] / z);
  }
  return out;
}

}  // namespace normdyn::test

#include <Eigen/LU>
#include <Eigen/QR>
inline normdyn::RowMatrix normdyn::test::random_rotation(Index d, std::uint64_t seed) {
  const RowMatrix g = random_matrix(d, d, seed);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr{Eigen::MatrixXd(g)};
  Eigen::MatrixXd q = qr.householderQ();
  const Eigen::MatrixXd r = qr.matrixQR();
  for (Index i = 0; i < d; ++i)
    if (r(i, i) < 0) q.col(i) *= -1.0;
  if (q.determinant() < 0) q.col(0) *= -1.0;
  return q;
}
