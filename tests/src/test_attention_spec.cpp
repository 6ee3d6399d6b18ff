// The attention specification (attention_spec.hpp): every alternative of every list, in every
// combination, against a generic plain loop over (i, j) that asks each alternative only its list's
// contract (templated over the lists, so a new alternative is tested the moment it is added); the
// built-in alternatives against their closed forms in long double; tangency of the velocities; causality (later
// tokens do not move earlier ones); the strictly causal row 0; rows of a sharded run against the
// whole; the traits and the settings that break them; the [attention] configuration keys.
#define BOOST_TEST_MODULE attention_spec
#include <boost/test/unit_test.hpp>

#include <Eigen/SVD>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "normdyn/attention.hpp"
#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/qkv.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;

namespace {

// The definition, one row at a time: s_ij = beta <R_i Q x_i, R_j K x_j> - lambda |i - j| / n over the keys
// the mask allows (R_p: RoPE's rotation of position p when rope_base > 0, else I), w_ij = m_j e^{s_ij} /
// (sum_k m_k e^{s_ik}) (softmax), m_j e^{s_ij} / sum_k m_k e^{b_ik} (uniform), or e^{s_ij} scaled on both
// sides until rows and columns sum to 1 (sinkhorn), A_i = sum_j w_ij V x_j, and A_i = 0 for a row
// without a key.
RowMatrix reference(const RowMatrix& x, const AttentionMatrices& m, double beta, const std::string& mask, double lambda,
                    const std::string& normalizer, const Vector& masses = Vector(), double rope_base = 0.0) {
  BOOST_REQUIRE(mask == "none" || mask == "causal" || mask == "strictly_causal");  // the closed forms known here
  BOOST_REQUIRE(normalizer == "softmax" || normalizer == "uniform" || normalizer == "sinkhorn");
  const Index n = x.rows(), d = x.cols();
  RowMatrix a = RowMatrix::Zero(n, d);
  RowMatrix q = m.identity ? x : RowMatrix(x * m.Q.transpose());
  RowMatrix k = m.identity ? x : RowMatrix(x * m.K.transpose());
  const RowMatrix v = m.identity ? x : RowMatrix(x * m.V.transpose());
  if (rope_base > 0)
    for (RowMatrix* rows : {&q, &k})
      for (Index p = 0; p < n; ++p) {
        // R_p as a matrix: the rotation by p base^(-2c/d) in the plane of coordinates (2c, 2c + 1).
        RowMatrix r = RowMatrix::Identity(d, d);
        for (Index c = 0; 2 * c + 1 < d; ++c) {
          const long double angle = p * std::pow(static_cast<long double>(rope_base), -2.0L * c / d);
          r(2 * c, 2 * c) = r(2 * c + 1, 2 * c + 1) = static_cast<double>(std::cos(angle));
          r(2 * c + 1, 2 * c) = static_cast<double>(std::sin(angle));
          r(2 * c, 2 * c + 1) = -r(2 * c + 1, 2 * c);
        }
        rows->row(p) = (r * rows->row(p).transpose()).transpose();
      }
  std::vector<std::vector<long double>> w(static_cast<std::size_t>(n),
                                          std::vector<long double>(static_cast<std::size_t>(n), 0.0L));
  std::vector<long double> norm(static_cast<std::size_t>(n), 1.0L);
  for (Index i = 0; i < n; ++i) {
    const Index last = mask == "none" ? n : mask == "causal" ? i + 1 : i;
    long double z = 0, ref = 0;
    for (Index j = 0; j < last; ++j) {
      const long double mass = masses.size() ? masses(j) : 1.0;
      const long double b = -static_cast<long double>(lambda) * std::abs(i - j) / n;
      long double s = b;
      for (Index c = 0; c < d; ++c) s += static_cast<long double>(beta) * q(i, c) * k(j, c);
      w[i][j] = (normalizer == "sinkhorn" ? 1.0L : mass) * std::exp(s);
      z += w[i][j];
      ref += mass * std::exp(b);
    }
    norm[i] = normalizer == "uniform" ? ref : z;
  }
  if (normalizer == "sinkhorn")  // alternate until the columns sum to 1 in long double
    for (int sweep = 0; sweep < 100000; ++sweep) {
      long double worst = 0;
      for (Index i = 0; i < n; ++i) {
        long double row = 0;
        for (Index j = 0; j < n; ++j) row += w[i][j];
        for (Index j = 0; j < n; ++j) w[i][j] /= row;
      }
      for (Index j = 0; j < n; ++j) {
        long double column = 0;
        for (Index i = 0; i < n; ++i) column += w[i][j];
        worst = std::max(worst, std::abs(column - 1.0L));
        for (Index i = 0; i < n; ++i) w[i][j] /= column;
      }
      if (worst < 1e-17L) break;
    }
  for (Index i = 0; i < n; ++i)
    for (Index c = 0; c < d && (mask != "strictly_causal" || i > 0); ++c) {
      long double sum = 0;
      for (Index j = 0; j < n; ++j) sum += w[i][j] * v(j, c);
      a(i, c) = static_cast<double>(normalizer == "sinkhorn" ? sum : sum / norm[i]);
    }
  return a;
}

// The definition from the lists' contracts alone, one row at a time: keys(i) from the mask, b_ij from the
// bias, the rows of Q x and K x rotated one position at a time, and the normalizer: row-local (its
// numerators u_ij of the row's allowed scores, A_i = factor sum_j m_j u_ij V x_j, sums in long double) or
// of the whole matrix (its scaling of the n x n matrix e^{s_ij - max_i}, A = W V, without masses). A
// row without a key, or whose allowed keys the bias all masks, has A_i = 0.
RowMatrix generic_reference(const RowMatrix& x, const AttentionMatrices& m, double beta, const AttentionSpec& s,
                            const Vector& masses = Vector()) {
  const Index n = x.rows(), d = x.cols();
  RowMatrix q = m.identity ? x : RowMatrix(x * m.Q.transpose());
  RowMatrix k = m.identity ? x : RowMatrix(x * m.K.transpose());
  const RowMatrix v = m.identity ? x : RowMatrix(x * m.V.transpose());
  std::visit(
      [&](const auto& p) {
        for (Index i = 0; i < n; ++i) {
          RowMatrix qi = q.row(i), ki = k.row(i);
          p.rotate(qi, i);
          p.rotate(ki, i);
          q.row(i) = qi;
          k.row(i) = ki;
        }
      },
      s.positions);
  const auto keys = [&](Index i) { return std::visit([&](const auto& a) { return a.keys(i, n); }, s.mask); };
  const auto bias = [&](Index i, Index j) {
    return std::visit([&](const auto& b) { return b.bias(i, j, n); }, s.bias);
  };
  const auto score = [&](Index i, Index j) { return beta * q.row(i).dot(k.row(j)) + bias(i, j); };
  RowMatrix a = RowMatrix::Zero(n, d);
  std::visit(
      [&](const auto& z) {
        using Z = std::decay_t<decltype(z)>;
        if constexpr (RowNormalizer<Z>) {
          for (Index i = 0; i < n; ++i) {
            const KeyRange r = keys(i);
            if (r.first >= r.last) continue;
            Eigen::RowVectorXd u(r.last - r.first);
            for (Index j = r.first; j < r.last; ++j) u(j - r.first) = score(i, j);
            const double top = u.maxCoeff();
            if (top == -std::numeric_limits<double>::infinity()) continue;
            z.numerators(u, top);
            long double weight_sum = 0, reference_sum = 0;
            std::vector<long double> sum(static_cast<std::size_t>(d), 0.0L);
            for (Index j = r.first; j < r.last; ++j) {
              const long double mass = masses.size() ? masses(j) : 1.0;
              const long double w = mass * u(j - r.first);
              weight_sum += w;
              reference_sum += mass * std::exp(static_cast<long double>(bias(i, j)));
              for (Index c = 0; c < d; ++c) sum[static_cast<std::size_t>(c)] += w * v(j, c);
            }
            const double factor = z.factor(top, static_cast<double>(weight_sum), static_cast<double>(reference_sum));
            for (Index c = 0; c < d; ++c) a(i, c) = factor * static_cast<double>(sum[static_cast<std::size_t>(c)]);
          }
        } else {
          RowMatrix w = RowMatrix::Zero(n, n);
          for (Index i = 0; i < n; ++i) {
            for (Index j = 0; j < n; ++j) w(i, j) = score(i, j);
            w.row(i) = (w.row(i).array() - w.row(i).maxCoeff()).exp();
          }
          BOOST_REQUIRE(z.scale(w) > 0);
          a = w * v;
        }
      },
      s.normalizer);
  return a;
}

AttentionSpec spec(const std::string& mask, double lambda, const std::string& normalizer, double rope_base = 0.0) {
  AttentionSpec s;
  s.mask = *make_alternative<AttentionMask>(mask);
  if (lambda > 0) s.bias = Alibi{lambda};
  if (rope_base > 0) s.positions = Rope{rope_base};
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

// The built-in alternatives whose closed forms `reference` knows.
const std::vector<std::string> kClosedFormMasks{"none", "causal", "strictly_causal"};
const std::vector<std::string> kClosedFormNormalizers{"softmax", "uniform", "sinkhorn"};

// Every mask and every row-local normalizer of the lists, by key.
std::vector<std::string> every_mask() {
  std::vector<std::string> out;
  for (auto k : alternative_keys<AttentionMask>()) out.emplace_back(k);
  return out;
}
std::vector<std::string> every_row_normalizer() {
  std::vector<std::string> out;
  for_each_alternative<AttentionNormalizer>([&](auto z) {
    if constexpr (RowNormalizer<decltype(z)>) out.emplace_back(decltype(z)::key);
  });
  return out;
}

}  // namespace

// Every combination of the alternatives of the four lists (each as example_alternative makes it), with
// and without Q, K, V and masses, against the generic loop. Combinations the configuration refuses (a
// normalizer of the whole matrix under a mask) are left out.
BOOST_AUTO_TEST_CASE(every_alternative_of_every_list_matches_the_generic_loop) {
  const Index d = 6;
  int combinations = 0;
  for (Index n : {1, 9, 140}) {
    const RowMatrix x = test::random_tokens(n, d, 3).theta;
    const AttentionMatrices general = test::random_qkv(d, 11);
    const Vector masses = Vector::Random(n).array().abs() + 0.1;
    for_each_alternative<AttentionMask>([&](auto mask) {
      for_each_alternative<ScoreBias>([&](auto bias) {
        for_each_alternative<AttentionPositions>([&](auto positions) {
          for_each_alternative<AttentionNormalizer>([&](auto normalizer) {
            AttentionSpec s;
            s.mask = example_alternative<decltype(mask)>(n);
            s.bias = example_alternative<decltype(bias)>(n);
            s.positions = example_alternative<decltype(positions)>(n);
            s.normalizer = example_alternative<decltype(normalizer)>(n);
            if (s.matrix_normalizer() && !is_first_alternative(s.mask)) return;
            ++combinations;
            for (bool identity : {true, false})
              for (bool weighted : {false, true}) {
                const AttentionMatrices& m = identity ? AttentionMatrices::identity_matrices() : general;
                const Vector w = weighted ? masses : Vector();
                const RowMatrix a = kernel_attention(x, m, 2.5, s, {}, w);
                const RowMatrix ref = generic_reference(x, m, 2.5, s, s.matrix_normalizer() ? Vector() : w);
                BOOST_TEST_INFO("n " << n << " " << describe(s) << (identity ? " identity" : " general")
                                     << (weighted ? " weighted" : ""));
                // A scaling of the whole matrix stops within its own tolerance (Sinkhorn: 1e-12).
                const double tolerance = s.matrix_normalizer() ? 1e-11 : test::kRoundoff;
                BOOST_TEST((a - ref).cwiseAbs().maxCoeff() <= tolerance * std::max(1.0, ref.cwiseAbs().maxCoeff()));
                if (!s.traits().shardable || n < 100) continue;
                AttentionKernel kernel({}, s);
                RowMatrix part(n - 61, d);
                kernel.compute_rows(x, m, 2.5, w, 61, n, part);
                BOOST_TEST((part - a.bottomRows(n - 61)).cwiseAbs().maxCoeff() == 0.0);
              }
          });
        });
      });
    });
  }
  BOOST_TEST(combinations > 0);
}

// The built-in alternatives against their closed forms in long double (the generic loop above trusts
// each alternative's own functions; this checks those functions' formulas).
BOOST_AUTO_TEST_CASE(built_in_alternatives_match_their_closed_forms) {
  const Index d = 6;
  for (Index n : {1, 2, 9, 300}) {  // 300 tokens: several row blocks, blocks of one causal row range each
    const RowMatrix x = test::random_tokens(n, d, 3).theta;
    const AttentionMatrices general = test::random_qkv(d, 11);
    Vector masses = Vector::Random(n).array().abs() + 0.1;
    for (const auto& mask : kClosedFormMasks)
      for (double lambda : {0.0, 3.0})
        for (double rope_base : {0.0, 10000.0, 3.0})
          for (const auto& normalizer : kClosedFormNormalizers)
            for (bool identity : {true, false})
              for (bool weighted : {false, true}) {
                if (normalizer == "sinkhorn" && (mask != "none" || n > 50))
                  continue;  // refused; the reference is O(n^3)
                const AttentionMatrices& m = identity ? AttentionMatrices::identity_matrices() : general;
                const Vector w = weighted ? masses : Vector();
                const RowMatrix a = kernel_attention(x, m, 2.5, spec(mask, lambda, normalizer, rope_base), {}, w);
                const RowMatrix ref = reference(x, m, 2.5, mask, lambda, normalizer, w, rope_base);
                BOOST_TEST_INFO("n " << n << " mask " << mask << " lambda " << lambda << " rope " << rope_base << " "
                                     << normalizer << (identity ? " identity" : " general")
                                     << (weighted ? " weighted" : ""));
                // Relative to the size of A: USA's rows are e^{beta} larger than the softmax's. Sinkhorn's
                // columns sum to 1 within its tolerance, 1e-12 by default.
                const double tolerance = normalizer == "sinkhorn" ? 1e-11 : test::kRoundoff;
                BOOST_TEST((a - ref).cwiseAbs().maxCoeff() <= tolerance * std::max(1.0, ref.cwiseAbs().maxCoeff()));
              }
  }
}

// beta = 0: every key weighs the same, A_i is the mean of the (allowed) values, on both paths.
BOOST_AUTO_TEST_CASE(beta_zero_is_the_mean_of_the_values) {
  const Index n = 300, d = 5;
  const RowMatrix x = test::random_tokens(n, d, 15).theta;
  const RowMatrix mean = x.colwise().mean().replicate(n, 1);
  for (bool symmetric : {true, false}) {
    KernelOptions o;
    o.symmetric = symmetric;
    const RowMatrix a = kernel_attention(x, AttentionMatrices::identity_matrices(), 0.0, {}, o);
    BOOST_TEST((a - mean).cwiseAbs().maxCoeff() <= test::kRoundoff, symmetric);
  }
  const RowMatrix causal =
      kernel_attention(x, AttentionMatrices::identity_matrices(), 0.0, spec("causal", 0, "softmax"));
  BOOST_TEST((causal.row(9) - x.topRows(10).colwise().mean()).cwiseAbs().maxCoeff() <= test::kRoundoff);
  BOOST_TEST(parse_config("[model]\nbeta = 0.0\n", "t.toml").model.beta == 0.0);
}

// The equiangular model (Post-LN, Q = K = V = I): tokens with every pairwise cosine rho stay so, and
//   softmax:  rho' = 2 e^{beta rho} (1 - rho) ((n - 1) rho + 1) / (e^beta + (n - 1) e^{beta rho}),
//   uniform:  rho' = (2/n) e^{beta rho} (1 - rho) ((n - 1) rho + 1),
// so 1 - rho decays at the rates 2 and 2 e^beta. The particle system from init.kind = "equiangular",
// integrated by RK4 beside the scalar equation with the same steps, follows it to 1e-10.
BOOST_AUTO_TEST_CASE(equiangular_tokens_follow_the_closed_form_equation) {
  const Index n = 7, d = 9;
  const double beta = 1.5, dt = 1e-3;
  for (const std::string normalizer : {"softmax", "uniform"})
    for (const double rho0 : {-0.1, 0.0, 0.4}) {
      const Tokens start = equiangular_tokens(n, d, rho0, 1.0, 3);
      const RowMatrix gram = start.theta * start.theta.transpose();
      BOOST_TEST((gram.diagonal().array() - 1.0).abs().maxCoeff() <= test::kRoundoff);
      BOOST_TEST(
          (gram - RowMatrix::Constant(n, n, rho0) - (1.0 - rho0) * RowMatrix::Identity(n, n)).cwiseAbs().maxCoeff() <=
          test::kRoundoff);
      DynamicsSpec ds;
      ds.beta = beta;
      ds.attention = spec("none", 0, normalizer);
      AttentionDynamics dyn(ds, QkvSource::identity(), n, d);
      std::vector<double> x(dyn.size()), k1(x.size()), k2(x.size()), k3(x.size()), k4(x.size()), y(x.size());
      dyn.layout().pack(start, x.data());
      const auto f = [&](double r) {
        const double e = std::exp(beta * r), grow = (1.0 - r) * ((n - 1) * r + 1.0);
        return normalizer == "softmax" ? 2.0 * e * grow / (std::exp(beta) + (n - 1) * e) : 2.0 / n * e * grow;
      };
      double rho = rho0, worst = 0.0;
      for (int step = 0; step < 2000; ++step) {
        const double t = step * dt;
        const auto stage = [&](const std::vector<double>& from, const std::vector<double>& slope, double h) {
          for (std::size_t i = 0; i < y.size(); ++i) y[i] = from[i] + h * slope[i];
        };
        dyn.rhs(x.data(), k1.data(), t);
        stage(x, k1, dt / 2);
        dyn.rhs(y.data(), k2.data(), t + dt / 2);
        stage(x, k2, dt / 2);
        dyn.rhs(y.data(), k3.data(), t + dt / 2);
        stage(x, k3, dt);
        dyn.rhs(y.data(), k4.data(), t + dt);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
        const double r1 = f(rho), r2 = f(rho + dt / 2 * r1), r3 = f(rho + dt / 2 * r2), r4 = f(rho + dt * r3);
        rho += dt / 6 * (r1 + 2 * r2 + 2 * r3 + r4);
        const Eigen::Map<const RowMatrix> theta(x.data(), n, d);
        const RowMatrix g = theta * theta.transpose();
        worst = std::max(worst, std::abs((g.sum() - g.trace()) / (n * (n - 1)) - rho));
      }
      BOOST_TEST(worst <= 1e-10, normalizer << " rho0 " << rho0 << " rho(2) " << rho);
    }
}

// The scaling itself: rows and columns of the weights sum to 1 within the tolerance; a tolerance it
// cannot reach gives NaN attention (a numerical failure of the run, not a wrong number).
BOOST_AUTO_TEST_CASE(sinkhorn_weights_are_doubly_stochastic) {
  const Index n = 40;
  const RowMatrix x = test::random_tokens(n, 4, 12).theta;
  RowMatrix k = x * x.transpose();
  for (Index i = 0; i < n; ++i) k.row(i) = (3.0 * (k.row(i).array() - k.row(i).maxCoeff())).exp();
  for (double tol : {1e-6, 1e-12}) {
    RowMatrix w = k;
    const int sweeps = Sinkhorn{tol}.scale(w);
    BOOST_TEST(sweeps > 0);
    BOOST_TEST((w.rowwise().sum().array() - 1.0).abs().maxCoeff() <= 1e-14);
    BOOST_TEST((w.colwise().sum().array() - 1.0).abs().maxCoeff() <= tol);
  }
  RowMatrix w = k;
  BOOST_TEST(Sinkhorn{1e-30}.scale(w) == -1);
  AttentionSpec unreachable = spec("none", 0, "sinkhorn");
  std::get<Sinkhorn>(unreachable.normalizer).tol = 1e-30;
  const RowMatrix a = kernel_attention(x, AttentionMatrices::identity_matrices(), 3.0, unreachable);
  BOOST_TEST(a.array().isNaN().all());
}

// RoPE's scores depend on positions through their differences only: shifting every position by the
// same amount (the rows of a shard) leaves the weights alone, and token p's own score is beta |x_p|^2.
BOOST_AUTO_TEST_CASE(rope_rotations_preserve_norms_and_relative_positions) {
  const Index n = 20, d = 6;
  const RowMatrix x = test::random_tokens(n, d, 13).theta;
  RowMatrix a = x, b = x;
  Rope{100.0}.rotate(a, 0);
  Rope{100.0}.rotate(b, 7);
  BOOST_TEST((a.rowwise().norm() - x.rowwise().norm()).cwiseAbs().maxCoeff() <= test::kRoundoff);
  const RowMatrix sa = a * a.transpose(), sb = b * b.transpose();
  BOOST_TEST((sa - sb).cwiseAbs().maxCoeff() <= test::kRoundoff);
  BOOST_TEST((sa.diagonal() - (x * x.transpose()).diagonal()).cwiseAbs().maxCoeff() <= test::kRoundoff);
}

// The default keeps the paper's kernel, its symmetric path included (the known-answer tests hold its
// numbers); any other specification takes the general path.
BOOST_AUTO_TEST_CASE(only_the_default_specification_takes_the_symmetric_path) {
  const RowMatrix x = test::random_tokens(200, 6, 4).theta;
  AttentionKernel specified({}, AttentionSpec{});
  RowMatrix b(200, 6);
  specified.compute(x, AttentionMatrices::identity_matrices(), 3.0, Vector(), b);
  BOOST_TEST(int(specified.last_path()) == int(KernelPath::symmetric));
  for (const AttentionSpec& s :
       {spec("causal", 0, "softmax"), spec("none", 1, "softmax"), spec("none", 0, "uniform")}) {
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
  for (const Vector& masses :
       {Vector(), Vector(Vector::Constant(n, 2.0)), Vector(Vector::LinSpaced(n, 0.5, 1.5)), Vector()}) {
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
  const RowMatrix a =
      kernel_attention(x, AttentionMatrices::identity_matrices(), 2.0, spec("strictly_causal", 0, "softmax"));
  BOOST_TEST(a.row(0).cwiseAbs().maxCoeff() == 0.0);
}

// The work follows the mask: a causal kernel scores at most 1/16 more entries than the n (n + 1) / 2
// it allows (the blocks are sized for that), the unmasked general path all n^2; its rows asked in a
// range that does not start on a block boundary are still those of the whole, bit for bit.
BOOST_AUTO_TEST_CASE(a_causal_mask_scores_about_half_the_entries) {
  const Index n = 1024, d = 8;
  const RowMatrix x = test::random_tokens(n, d, 9).theta;
  AttentionKernel causal({}, spec("causal", 0.0, "softmax"));
  RowMatrix a(n, d);
  causal.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
  const double allowed = 0.5 * static_cast<double>(n * (n + 1));
  BOOST_TEST(static_cast<double>(causal.last_scored()) >= allowed);
  BOOST_TEST(static_cast<double>(causal.last_scored()) <= (1.0 + 1.0 / 16.0) * allowed);
  BOOST_TEST(causal.block_rows(n, KernelPath::general) < AttentionKernel().block_rows(n, KernelPath::general));
  KernelOptions general;
  general.symmetric = false;
  AttentionKernel unmasked(general);
  unmasked.compute(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), a);
  BOOST_TEST(unmasked.last_scored() == n * n);
  RowMatrix part(n - 333, d);
  causal.compute_rows(x, AttentionMatrices::identity_matrices(), 2.0, Vector(), 333, n, part);
  const RowMatrix whole =
      kernel_attention(x, AttentionMatrices::identity_matrices(), 2.0, spec("causal", 0.0, "softmax"));
  BOOST_TEST((part - whole.bottomRows(n - 333)).cwiseAbs().maxCoeff() == 0.0);
}

BOOST_AUTO_TEST_CASE(rows_of_a_shard_are_the_rows_of_the_whole) {
  const Index n = 150, d = 3;
  const RowMatrix x = test::random_tokens(n, d, 7).theta;
  for (const auto& mask : every_mask())
    for (const auto& normalizer : every_row_normalizer()) {
      const AttentionSpec s = spec(mask, 2.0, normalizer, mask == "causal" ? 50.0 : 0.0);
      const RowMatrix whole = kernel_attention(x, AttentionMatrices::identity_matrices(), 1.5, s);
      AttentionKernel kernel({}, s);
      RowMatrix part(n - 61, d);
      kernel.compute_rows(x, AttentionMatrices::identity_matrices(), 1.5, Vector(), 61, n, part);
      BOOST_TEST((part - whole.bottomRows(n - 61)).cwiseAbs().maxCoeff() == 0.0, mask << " " << normalizer);
    }
}

BOOST_AUTO_TEST_CASE(velocities_are_tangent_and_threads_do_not_change_them) {
  const Index n = 400, d = 8;
  const RowMatrix x = test::random_tokens(n, d, 8).theta;
  for (const auto& mask : every_mask()) {
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
    BOOST_TEST((v1.cwiseProduct(x).rowwise().sum()).cwiseAbs().maxCoeff() <
               test::kRoundoff * std::max(1.0, v1.cwiseAbs().maxCoeff()));
    BOOST_TEST((v1 - v2).cwiseAbs().maxCoeff() == 0.0, mask);
  }
}

// Several heads: the attention is the sum of each head's; heads of Q = K = V = I are one head H
// times; the rows of a shard are those of the whole.
BOOST_AUTO_TEST_CASE(heads_add_their_attention) {
  const Index n = 60, d = 4;
  const RowMatrix x = test::random_tokens(n, d, 14).theta;
  AttentionMatrices m = test::random_qkv(d, 21);
  m.other_heads = {test::random_qkv(d, 22), AttentionMatrices::identity_matrices()};
  AttentionMatrices first = m;
  first.other_heads.clear();
  for (const auto& [mask, rope] : {std::pair<std::string, double>{"none", 0.0}, {"causal", 100.0}}) {
    const AttentionSpec s = spec(mask, 0.0, "softmax", rope);
    const RowMatrix a = kernel_attention(x, m, 2.0, s);
    const RowMatrix ref = reference(x, first, 2.0, mask, 0.0, "softmax", Vector(), rope) +
                          reference(x, m.other_heads[0], 2.0, mask, 0.0, "softmax", Vector(), rope) +
                          reference(x, m.other_heads[1], 2.0, mask, 0.0, "softmax", Vector(), rope);
    BOOST_TEST((a - ref).cwiseAbs().maxCoeff() <= test::kRoundoff * std::max(1.0, ref.cwiseAbs().maxCoeff()), mask);
    AttentionKernel kernel({}, s);
    RowMatrix part(n - 17, d);
    kernel.compute_rows(x, m, 2.0, Vector(), 17, n, part);
    BOOST_TEST((part - a.bottomRows(n - 17)).cwiseAbs().maxCoeff() == 0.0, mask);
  }
  const RowMatrix one = kernel_attention(x, AttentionMatrices::identity_matrices(), 2.0, {});
  const RowMatrix three = kernel_attention(x, AttentionMatrices::identity_matrices(3), 2.0, {});
  const RowMatrix expected = 3.0 * one;  // rounded once, as the kernel does (no fused multiply-add)
  BOOST_TEST((three - expected).cwiseAbs().maxCoeff() == 0.0);
}

// The random kinds draw every head; the first head is the one-head model's, bit for bit, and the
// others differ from it.
BOOST_AUTO_TEST_CASE(random_heads_keep_the_first_head_of_one_head) {
  const Index d = 4;
  for (const bool per_layer : {false, true}) {
    QkvSource one = per_layer ? QkvSource::gaussian_per_layer(d, 5) : QkvSource::gaussian(d, 5);
    QkvSource three = per_layer ? QkvSource::gaussian_per_layer(d, 5, 3) : QkvSource::gaussian(d, 5, 3);
    const AttentionMatrices a = one.at(1.5), b = three.at(1.5);
    BOOST_TEST(b.heads() == 3);
    BOOST_TEST((a.Q - b.Q).cwiseAbs().maxCoeff() == 0.0);
    BOOST_TEST((a.V - b.V).cwiseAbs().maxCoeff() == 0.0);
    BOOST_TEST((b.other_heads[0].Q - b.Q).cwiseAbs().maxCoeff() > 0.1);
    BOOST_TEST((b.other_heads[1].K - b.other_heads[0].K).cwiseAbs().maxCoeff() > 0.1);
  }
  QkvSource unit = QkvSource::gaussian_unit_norm(d, 5, false, 2);
  for (const AttentionMatrices* h : {&unit.at(0.0), &unit.at(0.0).other_heads[0]})
    BOOST_TEST(Eigen::JacobiSVD<RowMatrix>(h->Q.transpose() * h->K).singularValues()(0) == 1.0,
               boost::test_tools::tolerance(1e-12));
  BOOST_TEST(QkvSource::identity(4).at(0.0).heads() == 4);
}

BOOST_AUTO_TEST_CASE(traits_and_the_settings_that_break_them) {
  BOOST_TEST(AttentionSpec{}.traits().exchangeable);
  BOOST_TEST(AttentionSpec{}.traits().has_energy);
  BOOST_TEST(AttentionSpec{}.breaking_setting(&Traits::exchangeable).empty());
  const AttentionSpec causal = spec("causal", 0, "softmax");
  BOOST_TEST(!causal.traits().exchangeable);
  BOOST_TEST(causal.traits().meanfield);  // the causal mean field over the cursor
  BOOST_TEST(causal.traits().shardable);
  BOOST_TEST(causal.breaking_setting(&Traits::exchangeable) == "attention.mask = \"causal\"");
  const AttentionSpec alibi = spec("none", 2.5, "uniform");
  BOOST_TEST(alibi.breaking_setting(&Traits::exchangeable) ==
             "attention.bias = \"alibi\", attention.alibi_slope = 2.5");
  BOOST_TEST(alibi.breaking_setting(&Traits::meanfield).empty());  // with a causal mask; the configuration checks
  BOOST_TEST(spec("none", 0, "uniform").breaking_setting(&Traits::meanfield).empty());
  BOOST_TEST(spec("none", 0, "sinkhorn").breaking_setting(&Traits::meanfield) ==
             "attention.normalizer = \"sinkhorn\", attention.sinkhorn_tol = 1e-12");
  BOOST_TEST(spec("none", 0, "uniform").traits().has_energy);
  BOOST_TEST(describe(spec("strictly_causal", 1, "uniform")) ==
             "attention.mask = \"strictly_causal\", attention.bias = \"alibi\", attention.alibi_slope = 1, "
             "attention.normalizer = \"uniform\"");
  const AttentionSpec rope = spec("none", 0, "softmax", 500.0);
  BOOST_TEST(!rope.traits().exchangeable);
  BOOST_TEST(!rope.traits().rotation_equivariant);
  BOOST_TEST(rope.traits().shardable);
  BOOST_TEST(rope.breaking_setting(&Traits::exchangeable) ==
             "attention.positions = \"rope\", attention.rope_base = 500");
  const AttentionSpec sinkhorn = spec("none", 0, "sinkhorn");
  BOOST_TEST(sinkhorn.traits().exchangeable);
  BOOST_TEST(!sinkhorn.traits().shardable);
  BOOST_TEST(sinkhorn.breaking_setting(&Traits::shardable) ==
             "attention.normalizer = \"sinkhorn\", attention.sinkhorn_tol = 1e-12");
}

BOOST_AUTO_TEST_CASE(the_attention_table_of_the_configuration) {
  const RunConfig c = parse_config(
      "[attention]\nmask = \"causal\"\nbias = \"alibi\"\nalibi_slope = 0.5\nnormalizer = \"uniform\"\n", "t.toml");
  BOOST_TEST(describe(c.attention) ==
             "attention.mask = \"causal\", attention.bias = \"alibi\", attention.alibi_slope = 0.5, "
             "attention.normalizer = \"uniform\"");
  // The keys of the first release stay as aliases: attention.alibi = lambda, attention.rope = true.
  const RunConfig old = parse_config(
      "[model]\nd = 4\n[attention]\nmask = \"causal\"\nalibi = 0.5\nnormalizer = "
      "\"uniform\"\nrope = true\n",
      "t.toml");
  BOOST_TEST(describe(old.attention) ==
             "attention.mask = \"causal\", attention.bias = \"alibi\", attention.alibi_slope = 0.5, "
             "attention.positions = \"rope\", attention.rope_base = 10000, attention.normalizer = \"uniform\"");
  BOOST_TEST(parse_config("[attention]\nalibi = 0\nrope = false\n", "t.toml").attention.is_default());
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
  BOOST_TEST(error("[attention]\nmask = \"casual\"\n").find("attention.mask: unknown value \"casual\"") !=
             std::string::npos);
  BOOST_TEST(error("[attention]\nmask = \"casual\"\n").find("did you mean \"causal\"") != std::string::npos);
  BOOST_TEST(error("[attention]\nalibi = -1\n").find("attention.alibi") != std::string::npos);
  BOOST_TEST(
      error("[attention]\nbias = \"alibi\"\nalibi_slope = -1\n").find("attention.alibi_slope: must be >= 0, got -1") ==
      0);
  BOOST_TEST(error("[attention]\nbias = \"alibi\"\nalibi = 1\n").find("attention.alibi: give either attention.bias") ==
             0);
  BOOST_TEST(error("[attention]\nalibi_slope = 1\n")
                 .find("attention.alibi_slope: applies only to attention.bias = \"alibi\" "
                       "(attention.bias is \"none\")") == 0);
  BOOST_TEST(error("[attention]\nnormalizer = \"sparsemax\"\n").find("attention.normalizer") != std::string::npos);
  const std::string meanfield = "[model]\nkind = \"meanfield\"\nscheme = \"post\"\n[init]\nkind = \"uniform\"\n";
  BOOST_TEST(error(meanfield + "[attention]\nmask = \"causal\"\n") == "accepted");
  BOOST_TEST(error(meanfield + "[attention]\nmask = \"causal\"\nalibi = 1.0\n") == "accepted");
  BOOST_TEST(error(meanfield + "[attention]\nalibi = 1.0\n").find("attention.bias") != std::string::npos);
  BOOST_TEST(error(meanfield + "[attention]\nmask = \"none\"\n") == "accepted");
  BOOST_TEST(error(meanfield + "[attention]\nnormalizer = \"uniform\"\n") == "accepted");
  BOOST_TEST(error(meanfield + "[attention]\nrope = true\n").find("attention.rope") != std::string::npos);
  BOOST_TEST(error(meanfield + "[attention]\nnormalizer = \"sinkhorn\"\n").find("attention.normalizer") !=
             std::string::npos);
  BOOST_TEST(error("[model]\nd = 3\n[attention]\nrope = true\n").find("attention.rope: needs an even model.d") == 0);
  BOOST_TEST(error("[model]\nd = 4\n[attention]\nrope = true\nrope_base = 0\n").find("attention.rope_base") == 0);
  BOOST_TEST(error("[model]\nd = 4\n[attention]\nrope_base = 100\n")
                 .find("attention.rope_base: applies only to attention.positions = \"rope\"") == 0);
  BOOST_TEST(
      error("[model]\nd = 3\n[attention]\npositions = \"rope\"\n").find("attention.positions: needs an even model.d") ==
      0);
  BOOST_TEST(error("[attention]\nsinkhorn_tol = 1e-9\n").find("attention.sinkhorn_tol: applies only") == 0);
  BOOST_TEST(error("[attention]\nnormalizer = \"sinkhorn\"\nmask = \"causal\"\n").find("attention.normalizer") == 0);
  BOOST_TEST(error("[model]\nheads = 0\n").find("model.heads") == 0);
  BOOST_TEST(error("[model]\nn = 4\nd = 3\n[init]\nkind = \"equiangular\"\n")
                 .find("init.kind: \"equiangular\" needs model.d >= model.n") == 0);
  BOOST_TEST(error("[model]\nn = 4\nd = 4\n[init]\nkind = \"equiangular\"\nrho = -0.5\n")
                 .find("init.rho: must be >= -1/(n - 1)") == 0);
  BOOST_TEST(error("[init]\nrho = 0.5\n").find("init.rho") == 0);
  BOOST_TEST(error("[model]\nn = 4\nd = 4\n[init]\nkind = \"equiangular\"\nrho = 0.25\n") == "accepted");
  BOOST_TEST(error("[model]\nkind = \"meanfield\"\nheads = 2\n[init]\nkind = \"uniform\"\n").find("model.heads") == 0);
  BOOST_TEST(parse_config("[model]\nheads = 4\n", "t.toml").model.heads == 4);
  const RunConfig r = parse_config(
      "[model]\nd = 4\n[attention]\nrope = true\nrope_base = 50\nnormalizer = \"sinkhorn\"\nsinkhorn_tol = 1e-10\n",
      "t.toml");
  BOOST_TEST(describe(r.attention) ==
             "attention.positions = \"rope\", attention.rope_base = 50, attention.normalizer = \"sinkhorn\", "
             "attention.sinkhorn_tol = 1e-10");
  BOOST_TEST(describe(parse_config(to_toml(r), "resolved").attention) == describe(r.attention));
}
