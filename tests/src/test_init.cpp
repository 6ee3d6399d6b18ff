// Initial conditions: the properties each kind promises, and reproducibility from the seed.
#define BOOST_TEST_MODULE init
#include <boost/test/unit_test.hpp>

#include "normdyn/init.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {
double max_norm_error(const RowMatrix& theta) { return (theta.rowwise().norm().array() - 1.0).abs().maxCoeff(); }
}  // namespace

BOOST_AUTO_TEST_CASE(uniform_tokens_are_unit_and_reproducible) {
  const Tokens a = uniform_tokens(100, 4, 2.5, 7);
  const Tokens b = uniform_tokens(100, 4, 2.5, 7);
  const Tokens c = uniform_tokens(100, 4, 2.5, 8);
  BOOST_TEST(max_norm_error(a.theta) < test::kRoundoff);
  BOOST_TEST((a.r.array() == 2.5).all());
  BOOST_TEST(bool(a.theta == b.theta));
  BOOST_TEST(bool(a.theta != c.theta));
  // The mean of uniform directions is near 0 (|mean| ~ 1/sqrt(n)).
  BOOST_TEST(a.theta.colwise().mean().norm() < 0.4);
}

BOOST_AUTO_TEST_CASE(gaussian_tokens_carry_their_norm_as_radius) {
  const Tokens g = gaussian_tokens(2000, 16, 3);
  BOOST_TEST(max_norm_error(g.theta) < test::kRoundoff);
  // E|x|² = d for x ~ N(0, I_d).
  BOOST_TEST(std::abs(g.r.array().square().mean() - 16.0) < 0.5);
}

BOOST_AUTO_TEST_CASE(orthonormal_tokens_have_identity_gram) {
  for (Index n : {1, 5, 32})
    for (Index d : {n, n + 3}) {
      if (d < 2) continue;
      const Tokens t = orthonormal_tokens(n, d, 1.5, 11);
      const RowMatrix gram = t.theta * t.theta.transpose();
      BOOST_TEST((gram - RowMatrix::Identity(n, n)).cwiseAbs().maxCoeff() < 1e-14);
      BOOST_TEST((t.r.array() == 1.5).all());
    }
}

BOOST_AUTO_TEST_CASE(cap_tokens_respect_the_cosine_bound) {
  for (Index d : {2, 3, 64, 512})
    for (double delta : {1e-4, 0.01, 0.5, 1.9}) {
      const Tokens t = cap_tokens(40, d, 1.0, delta, 5);
      BOOST_TEST(max_norm_error(t.theta) < test::kRoundoff);
      const RowMatrix gram = t.theta * t.theta.transpose();
      BOOST_TEST(gram.minCoeff() >= 1.0 - delta - 1e-14);
      // The cap is used: some pair is spread over at least a tenth of the allowed angle.
      BOOST_TEST(gram.minCoeff() < 1.0 - 0.01 * delta);
    }
}
