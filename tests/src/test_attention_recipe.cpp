// The recipe of docs/ARCHITECTURE.md ("Adding an attention alternative"), kept true: a mask defined
// only in tests/src/window_mask.hpp and appended to the list by the build reaches the configuration
// (its key among the choices, the mean-field refusal from its traits), the kernel (against a plain
// loop, and its rows under sharding), the traits that turn off what depends on them, and describe().
#define BOOST_TEST_MODULE attention_recipe
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "normdyn/attention.hpp"
#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

BOOST_AUTO_TEST_CASE(the_new_mask_is_a_choice_of_the_configuration) {
  const RunConfig c = parse_config("[attention]\nmask = \"window\"\n", "t.toml");
  BOOST_TEST(std::holds_alternative<WindowMask>(c.attention.mask));
  BOOST_TEST(describe(c.attention) == "attention.mask = \"window\"");
  BOOST_TEST(describe(parse_config(to_toml(c), "resolved").attention) == describe(c.attention));
  std::string error;
  try {
    parse_config("[model]\nkind = \"meanfield\"\n[init]\nkind = \"uniform\"\n[attention]\nmask = \"window\"\n", "t.toml");
  } catch (const InputError& e) {
    error = e.what();
  }
  BOOST_TEST(error.rfind("attention.mask: \"window\" does not apply to model.kind = \"meanfield\"", 0) == 0, error);
  BOOST_TEST(c.attention.breaking_setting(&Traits::exchangeable) == "attention.mask = \"window\"");
  BOOST_TEST(c.attention.traits().shardable);
}

BOOST_AUTO_TEST_CASE(the_kernel_applies_the_new_mask) {
  const Index n = 300, d = 4;
  const RowMatrix x = test::random_tokens(n, d, 21).theta;
  AttentionSpec spec;
  spec.mask = WindowMask{};
  AttentionKernel kernel({}, spec);
  RowMatrix a(n, d);
  kernel.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
  BOOST_TEST(int(kernel.last_path()) == int(KernelPath::general));
  double worst = 0.0;
  for (Index i = 0; i < n; ++i) {
    Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(d);
    double z = 0.0;
    for (Index j = std::max<Index>(0, i - 2); j <= i; ++j) {
      const double w = std::exp(2.0 * x.row(i).dot(x.row(j)));
      sum += w * x.row(j);
      z += w;
    }
    worst = std::max(worst, (a.row(i) - sum / z).cwiseAbs().maxCoeff());
  }
  BOOST_TEST(worst <= test::kRoundoff);
  RowMatrix part(n - 100, d);
  kernel.compute_rows(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), 100, n, part);
  BOOST_TEST((part - a.bottomRows(n - 100)).cwiseAbs().maxCoeff() == 0.0);
}
