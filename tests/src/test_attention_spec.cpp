// The attention specification (attention_spec.hpp): each mask, score bias and normalizer against an
// independent plain loop over (i, j) in long double; tangency of the velocities; causality (later
// tokens do not move earlier ones); the strictly causal row 0; rows of a sharded run against the
// whole; the traits and the settings that break them; the [attention] configuration keys.
#define BOOST_TEST_MODULE attention_spec
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "normdyn/attention.hpp"
#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/errors.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

// The definition, one row at a time: s_ij = beta <Q x_i, K x_j> - lambda |i - j| / n over the keys the
// mask allows, w_ij = m_j e^{s_ij} / (sum_k m_k e^{s_ik}) (softmax) or m_j e^{s_ij} / sum_k m_k e^{b_ik}
// (uniform), A_i = sum_j w_ij V x_j, and A_i = 0 for a row without a key.
RowMatrix reference(const RowMatrix& x, const AttentionMatrices& m, double beta, const std::string& mask,
                    double lambda, const std::string& normalizer, const Vector& masses = Vector()) {
  const Index n = x.rows(), d = x.cols();
  RowMatrix a = RowMatrix::Zero(n, d);
  const RowMatrix q = m.identity ? x : RowMatrix(x * m.Q.transpose());
  const RowMatrix k = m.identity ? x : RowMatrix(x * m.K.transpose());
  const RowMatrix v = m.identity ? x : RowMatrix(x * m.V.transpose());
  for (Index i = 0; i < n; ++i) {
    const Index last = mask == "none" ? n : mask == "causal" ? i + 1 : i;
    long double z = 0, ref = 0;
    std::vector<long double> sum(static_cast<std::size_t>(d), 0.0L);
    for (Index j = 0; j < last; ++j) {
      const long double mass = masses.size() ? masses(j) : 1.0;
      const long double b = -static_cast<long double>(lambda) * std::abs(i - j) / n;
      long double s = b;
      for (Index c = 0; c < d; ++c) s += static_cast<long double>(beta) * q(i, c) * k(j, c);
      const long double w = mass * std::exp(s);
      z += w;
      ref += mass * std::exp(b);
      for (Index c = 0; c < d; ++c) sum[static_cast<std::size_t>(c)] += w * v(j, c);
    }
    if (last == 0) continue;
    const long double norm = normalizer == "softmax" ? z : ref;
    for (Index c = 0; c < d; ++c) a(i, c) = static_cast<double>(sum[static_cast<std::size_t>(c)] / norm);
  }
  return a;
}

AttentionSpec spec(const std::string& mask, double lambda, const std::string& normalizer) {
  AttentionSpec s;
  s.mask = *make_alternative<AttentionMask>(mask);
  if (lambda > 0) s.bias = Alibi{lambda};
  s.normalizer = *make_alternative<AttentionNormalizer>(normalizer);
  return s;
}

RowMatrix kernel_attention(const RowMatrix& x, const AttentionMatrices& m, double beta, const AttentionSpec& s,
                           KernelOptions o = {}, const Vector& masses = Vector()) {
  AttentionKernel kernel(o, s);
  RowMatrix a(x.rows(), x.cols());
  kernel.compute(x, m, beta, masses, a);
  return a;
}

const std::vector<std::string> kMasks{"none", "causal", "strictly_causal"};
const std::vector<std::string> kNormalizers{"softmax", "uniform"};

}  // namespace

BOOST_AUTO_TEST_CASE(every_combination_matches_the_definition) {
  const Index d = 5;
  for (Index n : {1, 2, 9, 300}) {  // 300 tokens: several row blocks, blocks of one causal row range each
    const RowMatrix x = test::random_tokens(n, d, 3).theta;
    const AttentionMatrices general = test::random_qkv(d, 11);
    Vector masses = Vector::Random(n).array().abs() + 0.1;
    for (const auto& mask : kMasks)
      for (double lambda : {0.0, 3.0})
        for (const auto& normalizer : kNormalizers)
          for (bool identity : {true, false})
            for (bool weighted : {false, true}) {
              const AttentionMatrices& m = identity ? AttentionMatrices::identity_matrices() : general;
              const Vector w = weighted ? masses : Vector();
              const RowMatrix a = kernel_attention(x, m, 2.5, spec(mask, lambda, normalizer), {}, w);
              const RowMatrix ref = reference(x, m, 2.5, mask, lambda, normalizer, w);
              BOOST_TEST_INFO("n " << n << " mask " << mask << " lambda " << lambda << " " << normalizer
                                   << (identity ? " identity" : " general") << (weighted ? " weighted" : ""));
              // Relative to the size of A: USA's rows are e^{beta} larger than the softmax's.
              BOOST_TEST((a - ref).cwiseAbs().maxCoeff() <= test::kRoundoff * std::max(1.0, ref.cwiseAbs().maxCoeff()));
            }
  }
}

// The default keeps the paper's kernel, its symmetric path included (the known-answer tests hold its
// numbers); any other specification takes the general path.
BOOST_AUTO_TEST_CASE(only_the_default_specification_takes_the_symmetric_path) {
  const RowMatrix x = test::random_tokens(200, 6, 4).theta;
  AttentionKernel specified({}, AttentionSpec{});
  RowMatrix b(200, 6);
  specified.compute(x, AttentionMatrices::identity_matrices(), 3.0, Vector(), b);
  BOOST_TEST(int(specified.last_path()) == int(KernelPath::symmetric));
  for (const AttentionSpec& s : {spec("causal", 0, "softmax"), spec("none", 1, "softmax"), spec("none", 0, "uniform")}) {
    AttentionKernel other({}, s);
    other.compute(x, AttentionMatrices::identity_matrices(), 3.0, Vector(), b);
    BOOST_TEST(int(other.last_path()) == int(KernelPath::general), describe(s));
  }
}

// The uniform normalizer's reference sums are kept between calls: a change of masses must renew them.
BOOST_AUTO_TEST_CASE(one_kernel_follows_a_change_of_masses) {
  const Index n = 50, d = 3;
  const RowMatrix x = test::random_tokens(n, d, 9).theta;
  const AttentionSpec s = spec("causal", 2.0, "uniform");
  AttentionKernel kernel({}, s);
  RowMatrix a(n, d);
  for (const Vector& masses : {Vector(), Vector(Vector::Constant(n, 2.0)), Vector(Vector::LinSpaced(n, 0.5, 1.5)), Vector()}) {
    kernel.compute(x, AttentionMatrices::identity_matrices(), 1.5, masses, a);
    const RowMatrix ref = reference(x, AttentionMatrices::identity_matrices(), 1.5, "causal", 2.0, "uniform", masses);
    BOOST_TEST((a - ref).cwiseAbs().maxCoeff() <= test::kRoundoff * std::max(1.0, ref.cwiseAbs().maxCoeff()));
  }
}

BOOST_AUTO_TEST_CASE(later_tokens_do_not_move_earlier_ones_under_a_causal_mask) {
  const Index n = 120, d = 4;
  RowMatrix x = test::random_tokens(n, d, 5).theta;
  for (const std::string mask : {"causal", "strictly_causal"}) {
    const AttentionSpec s = spec(mask, 1.0, "softmax");
    const RowMatrix before = kernel_attention(x, AttentionMatrices::identity_matrices(), 2.0, s);
    RowMatrix y = x;
    y.bottomRows(n / 2) = test::random_tokens(n / 2, d, 6).theta;  // tokens n/2 .. n-1 changed
    const RowMatrix after = kernel_attention(y, AttentionMatrices::identity_matrices(), 2.0, s);
    BOOST_TEST((before.topRows(n / 2) - after.topRows(n / 2)).cwiseAbs().maxCoeff() == 0.0, mask);
    BOOST_TEST((before.bottomRows(n / 2) - after.bottomRows(n / 2)).cwiseAbs().maxCoeff() > 0.0, mask);
  }
  // Strictly causal: the first token has no key, A_0 = 0, and it does not move.
  const RowMatrix a = kernel_attention(x, AttentionMatrices::identity_matrices(), 2.0, spec("strictly_causal", 0, "softmax"));
  BOOST_TEST(a.row(0).cwiseAbs().maxCoeff() == 0.0);
}

BOOST_AUTO_TEST_CASE(rows_of_a_shard_are_the_rows_of_the_whole) {
  const Index n = 150, d = 3;
  const RowMatrix x = test::random_tokens(n, d, 7).theta;
  for (const auto& mask : kMasks)
    for (const auto& normalizer : kNormalizers) {
      const AttentionSpec s = spec(mask, 2.0, normalizer);
      const RowMatrix whole = kernel_attention(x, AttentionMatrices::identity_matrices(), 1.5, s);
      AttentionKernel kernel({}, s);
      RowMatrix part(n - 61, d);
      kernel.compute_rows(x, AttentionMatrices::identity_matrices(), 1.5, Vector(), 61, n, part);
      BOOST_TEST((part - whole.bottomRows(n - 61)).cwiseAbs().maxCoeff() <=
                     test::kRoundoff * std::max(1.0, whole.cwiseAbs().maxCoeff()),
                 mask << " " << normalizer);
    }
}

BOOST_AUTO_TEST_CASE(velocities_are_tangent_and_threads_do_not_change_them) {
  const Index n = 400, d = 8;
  const RowMatrix x = test::random_tokens(n, d, 8).theta;
  for (const auto& mask : kMasks) {
    DynamicsSpec ds;
    ds.beta = 2.0;
    ds.attention = spec(mask, 4.0, "uniform");
    ds.kernel.threads = 1;
    AttentionDynamics one(ds, QkvSource::identity(), n, d);
    ds.kernel.threads = 2;
    AttentionDynamics two(ds, QkvSource::identity(), n, d);
    RowMatrix v1(n, d), v2(n, d);
    Vector r = Vector::Ones(n), dr1(n), dr2(n);
    one.velocity(x, r, 0.0, 0.0, v1, dr1);
    two.velocity(x, r, 0.0, 0.0, v2, dr2);
    BOOST_TEST((v1.cwiseProduct(x).rowwise().sum()).cwiseAbs().maxCoeff() < test::kRoundoff * std::max(1.0, v1.cwiseAbs().maxCoeff()));
    BOOST_TEST((v1 - v2).cwiseAbs().maxCoeff() == 0.0, mask);
  }
}

BOOST_AUTO_TEST_CASE(traits_and_the_settings_that_break_them) {
  BOOST_TEST(AttentionSpec{}.traits().exchangeable);
  BOOST_TEST(AttentionSpec{}.traits().has_energy);
  BOOST_TEST(AttentionSpec{}.breaking_setting(&Traits::exchangeable).empty());
  const AttentionSpec causal = spec("causal", 0, "softmax");
  BOOST_TEST(!causal.traits().exchangeable);
  BOOST_TEST(!causal.traits().meanfield);
  BOOST_TEST(causal.traits().shardable);
  BOOST_TEST(causal.breaking_setting(&Traits::exchangeable) == "attention.mask = \"causal\"");
  const AttentionSpec alibi = spec("none", 2.5, "uniform");
  BOOST_TEST(alibi.breaking_setting(&Traits::exchangeable) == "attention.alibi = 2.5");
  BOOST_TEST(alibi.breaking_setting(&Traits::meanfield) == "attention.alibi = 2.5");
  BOOST_TEST(spec("none", 0, "uniform").breaking_setting(&Traits::meanfield) == "attention.normalizer = \"uniform\"");
  BOOST_TEST(spec("none", 0, "uniform").traits().has_energy);
  BOOST_TEST(describe(spec("strictly_causal", 1, "uniform")) ==
             "attention.mask = \"strictly_causal\", attention.alibi = 1, attention.normalizer = \"uniform\"");
}

BOOST_AUTO_TEST_CASE(the_attention_table_of_the_configuration) {
  const RunConfig c = parse_config("[attention]\nmask = \"causal\"\nalibi = 0.5\nnormalizer = \"uniform\"\n", "t.toml");
  BOOST_TEST(describe(c.attention) == "attention.mask = \"causal\", attention.alibi = 0.5, attention.normalizer = \"uniform\"");
  // The resolved configuration keeps it.
  BOOST_TEST(describe(parse_config(to_toml(c), "resolved").attention) == describe(c.attention));
  BOOST_TEST(parse_config("", "t.toml").attention.is_default());
  const auto error = [](const std::string& text) {
    try {
      parse_config(text, "t.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  BOOST_TEST(error("[attention]\nmask = \"casual\"\n").find("attention.mask: unknown value \"casual\"") != std::string::npos);
  BOOST_TEST(error("[attention]\nmask = \"casual\"\n").find("did you mean \"causal\"") != std::string::npos);
  BOOST_TEST(error("[attention]\nalibi = -1\n").find("attention.alibi") != std::string::npos);
  BOOST_TEST(error("[attention]\nnormalizer = \"sparsemax\"\n").find("attention.normalizer") != std::string::npos);
  const std::string meanfield = "[model]\nkind = \"meanfield\"\nscheme = \"post\"\n[init]\nkind = \"uniform\"\n";
  BOOST_TEST(error(meanfield + "[attention]\nmask = \"causal\"\n").find("attention.mask") != std::string::npos);
  BOOST_TEST(error(meanfield + "[attention]\nalibi = 1.0\n").find("attention.alibi") != std::string::npos);
  BOOST_TEST(error(meanfield + "[attention]\nmask = \"none\"\n") == "accepted");
}
