// The terms of the block output: the feed-forward term against a plain loop, its potential (F = ∇Φ
// for every activation, by central differences), its place in the velocity (the scheme applies to
// U = A + F, radial part included), and the discrete maps of both blocks tending to the same ODE.
#define BOOST_TEST_MODULE terms
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "../test_support.hpp"
#include "../tolerances.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"

using namespace normdyn;

namespace {

FeedForward feedforward(Index m, Index d, const Activation& activation) {
  FeedForward f;
  f.a = test::random_matrix(m, d, 21, 0.8);
  f.omega = test::random_matrix(m, 1, 22, 0.7).col(0);
  f.activation = activation;
  return f;
}

const std::vector<Activation> kActivations{Relu{}, Tanh{}, Gelu{}};

// The relative error of central differences of step 1e-5 on O(1) smooth functions (and at a kink of
// the rectifier, which random points avoid).
constexpr double kCentralDifference = 1e-8;

// A row-local term's NaN in the token 130 (the third block of 64 rows, its third row).
void nan_at_token_130(double, const double* theta, const double*, double* out, std::int64_t n, std::int64_t d, void*) {
  for (std::int64_t i = 0; i < n; ++i)
    if (std::abs(theta[i * d] - 0.25) < 1e-12 && std::abs(theta[i * d + 1] - 0.5) < 1e-12) out[i * d] = std::nan("");
}

}  // namespace

BOOST_AUTO_TEST_CASE(feedforward_equals_a_plain_loop) {
  const Index n = 7, d = 5, m = 6;
  const RowMatrix theta = test::random_tokens(n, d, 3).theta;
  for (const Activation& act : kActivations) {
    const FeedForward f = feedforward(m, d, act);
    RowMatrix out = RowMatrix::Ones(n, d);
    f.add(theta, out);
    for (Index i = 0; i < n; ++i) {
      Eigen::RowVectorXd expected = Eigen::RowVectorXd::Ones(d);
      for (Index k = 0; k < m; ++k) {
        const double u = f.a.row(k).dot(theta.row(i));
        const double s = std::visit([&](const auto& a) { return a.value(u); }, act);
        expected += f.omega(k) * s * f.a.row(k);
      }
      BOOST_TEST_INFO("activation " << alternative_key(act) << ", token " << i);
      BOOST_TEST((out.row(i) - expected).norm() <= test::kRoundoff * (1.0 + expected.norm()));
    }
  }
}

BOOST_AUTO_TEST_CASE(each_activation_is_the_derivative_of_its_antiderivative) {
  for (const Activation& act : kActivations)
    for (const double u : {-3.1, -0.7, -1e-3, 0.4, 2.2, 9.0}) {
      const double h = 1e-5;
      const auto [s, derivative] = std::visit(
          [&](const auto& a) {
            return std::pair{a.value(u), (a.antiderivative(u + h) - a.antiderivative(u - h)) / (2.0 * h)};
          },
          act);
      BOOST_TEST_INFO("activation " << alternative_key(act) << " at u = " << u);
      BOOST_TEST(std::abs(derivative - s) <= kCentralDifference * (1.0 + std::abs(s)));
    }
  BOOST_TEST(Gelu::antiderivative(0.0) == 0.0, boost::test_tools::tolerance(1e-16));
  BOOST_TEST(Tanh::antiderivative(0.0) == 0.0, boost::test_tools::tolerance(1e-16));
  BOOST_TEST(std::isfinite(Tanh::antiderivative(800.0)));
}

BOOST_AUTO_TEST_CASE(the_term_is_the_gradient_of_its_potential) {
  const Index d = 4, m = 5;
  const RowMatrix x = test::random_tokens(1, d, 9).theta;
  for (const Activation& act : kActivations) {
    const FeedForward f = feedforward(m, d, act);
    RowMatrix grad = RowMatrix::Zero(1, d);
    f.add(x, grad);
    for (Index c = 0; c < d; ++c) {
      RowMatrix plus = x, minus = x;
      plus(0, c) += 1e-5;
      minus(0, c) -= 1e-5;
      const double numeric = (f.potential(plus) - f.potential(minus)) / 2e-5;
      BOOST_TEST_INFO("activation " << alternative_key(act) << ", component " << c);
      BOOST_TEST(std::abs(numeric - grad(0, c)) <= kCentralDifference * (1.0 + std::abs(grad(0, c))));
    }
  }
}

BOOST_AUTO_TEST_CASE(the_scheme_applies_to_the_block_output) {
  const Index n = 6, d = 3;
  const Tokens x = test::random_tokens(n, d, 4);
  for (const Scheme& scheme : {Scheme{PostLN{}}, Scheme{PreLN{}}, Scheme{PeriLN{}}}) {
    DynamicsSpec plain;
    plain.scheme = scheme;
    plain.beta = 2.0;
    plain.kernel.threads = 1;
    DynamicsSpec with = plain;
    with.terms.terms.emplace_back(feedforward(4, d, Tanh{}));
    AttentionDynamics a(plain, QkvSource::identity(), n, d), b(with, QkvSource::identity(), n, d);
    const RowMatrix attention = a.attention(x.theta, 0.0);
    RowMatrix u = attention;
    std::get<FeedForward>(with.terms.terms[0]).add(x.theta, u);
    RowMatrix dtheta(n, d);
    Vector dr(n);
    b.velocity(x.theta, x.r, 0.0, 0.0, dtheta, dr);
    std::visit(
        [&](const auto& s) {
          for (Index j = 0; j < n; ++j) {
            const double theta_dot_u = x.theta.row(j).dot(u.row(j));
            const TokenContext c{0.0, 0.0, x.r(j), theta_dot_u, u.row(j).norm()};
            const Eigen::RowVectorXd expected = (u.row(j) - theta_dot_u * x.theta.row(j)) / s.speed(c);
            BOOST_TEST_INFO("scheme " << scheme_key(scheme) << ", token " << j);
            BOOST_TEST((dtheta.row(j) - expected).norm() <= test::kRoundoff);
            BOOST_TEST(std::abs(dr(j) - s.radial_rate(c)) <= test::kRoundoff);
          }
        },
        scheme);
  }
}

// Both blocks are consistent with the ODE of U = A + F: the distance of L layers of step h = T/L to
// the ODE falls like h (first order), whichever block.
BOOST_AUTO_TEST_CASE(parallel_and_serial_blocks_tend_to_the_same_ode) {
  const Index n = 8, d = 3;
  const Tokens start = test::random_tokens(n, d, 6, 1.0, 1.0);
  const StateLayout layout{n, d};
  std::vector<double> x0(layout.size());
  layout.pack(start, x0.data());
  const std::vector<double> times{0.0, 2.0};
  for (const Scheme& scheme : {Scheme{PostLN{}}, Scheme{PreLN{}}}) {
    DynamicsSpec spec;
    spec.scheme = scheme;
    spec.beta = 1.0;
    spec.kernel.threads = 1;
    spec.terms.terms.emplace_back(feedforward(4, d, Gelu{}));
    AttentionDynamics ode(spec, QkvSource::identity(), n, d);
    FrameRecorder exact;
    exact.layout = layout;
    IntegratorOptions tight;
    tight.rtol = 1e-12;
    tight.atol = 1e-14;
    BOOST_REQUIRE(integrate(ode, x0, 0.0, times, tight, exact).status == RunStatus::ok);
    for (const TermsBlock block : {TermsBlock::parallel, TermsBlock::serial}) {
      spec.terms.block = block;
      std::vector<double> errors;
      for (const double h : {0.02, 0.01}) {
        AttentionDynamics maps(spec, QkvSource::identity(), n, d);
        FrameRecorder net;
        net.layout = layout;
        BOOST_REQUIRE(run_layers(maps, x0, 0.0, h, times, 0, net).status == RunStatus::ok);
        errors.push_back((net.frames.back().theta - exact.frames.back().theta).norm() +
                         (net.frames.back().r - exact.frames.back().r).norm());
      }
      const double order = std::log2(errors[0] / errors[1]);
      BOOST_TEST_INFO("scheme " << scheme_key(scheme) << ", block "
                                << (block == TermsBlock::serial ? "serial" : "parallel") << ": errors " << errors[0]
                                << ", " << errors[1]);
      BOOST_TEST(std::abs(order - 1.0) < test::kOrderSlack);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_terms_have_the_traits_of_their_parts) {
  BlockTerms none;
  BOOST_TEST(none.empty());
  BOOST_TEST(none.traits().meanfield);
  BlockTerms one;
  one.terms.emplace_back(FeedForward{});
  BOOST_TEST(!one.traits().meanfield);
  BOOST_TEST(!one.traits().rotation_equivariant);
  BOOST_TEST(one.traits().exchangeable);
  BOOST_TEST(one.traits().shardable);
  BOOST_TEST((alternative_keys<Activation>() == std::vector<std::string_view>{"relu", "tanh", "gelu"}));
}

namespace {

// A user's term with the C signature: out_i += c (1 + t) r_i e_0 - 0.2 θ_i, c = *user.
void user_drift(double t, const double* theta, const double* r, double* out, std::int64_t n, std::int64_t d,
                void* user) {
  const double c = *static_cast<const double*>(user);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < d; ++k) out[i * d + k] -= 0.2 * theta[i * d + k];
    out[i * d] += c * (1.0 + t) * r[i];
  }
}

// Returns NaN in row 2 once t > 0.6.
void late_nan(double t, const double*, const double*, double* out, std::int64_t n, std::int64_t d, void*) {
  if (t > 0.6 && n > 2) out[2 * d + 1] = std::nan("");
}

UserTerm user_term(UserCallback::Function f, bool rows, double* c) {
  auto callback = std::make_shared<UserCallback>();
  callback->function = f;
  callback->user = c;
  return UserTerm{"drift", callback, rows};
}

}  // namespace

// U = A + f(t, θ, r) with t and r reaching the term, called on every token (or on blocks of 64 rows
// with `rows`), the same bits either way, and for a range of rows as for the whole.
BOOST_AUTO_TEST_CASE(a_users_term_sees_t_theta_and_r) {
  const Index n = 150, d = 3;
  const Tokens x = test::random_tokens(n, d, 5);
  double c = 0.3;
  for (bool rows : {false, true}) {
    DynamicsSpec spec;
    spec.scheme = PreLN{};
    spec.kernel.threads = 1;
    spec.terms.terms.emplace_back(user_term(&user_drift, rows, &c));
    AttentionDynamics with(spec, QkvSource::identity(), n, d);
    DynamicsSpec plain_spec = spec;
    plain_spec.terms.terms.clear();
    AttentionDynamics plain(plain_spec, QkvSource::identity(), n, d);
    const double t = 0.7;
    RowMatrix u = plain.attention(x.theta, t);
    for (Index i = 0; i < n; ++i) {
      u.row(i) -= 0.2 * x.theta.row(i);
      u(i, 0) += c * (1.0 + t) * x.r(i);
    }
    const RowMatrix got = with.block_output(x.theta, x.r, t, t);
    BOOST_TEST((got - u).cwiseAbs().maxCoeff() <= test::kRoundoff);
    // A range of rows gets the bits of the whole.
    std::vector<double> state(with.size()), whole(with.size()), part(with.size(), 0.0);
    with.layout().pack(x, state.data());
    with.rhs(state.data(), whole.data(), t);
    with.rhs_rows(state.data(), part.data(), t, 70, 100);
    for (Index k = 70 * d; k < 100 * d; ++k)
      BOOST_TEST(part[static_cast<std::size_t>(k)] == whole[static_cast<std::size_t>(k)]);
    BOOST_TEST(!with.spec().terms.traits().has_energy);
  }
}

// A term that returns NaN ends the run with status user_term_failed, naming the term, with the frames
// before kept; the discrete maps likewise.
BOOST_AUTO_TEST_CASE(a_failing_term_ends_the_run_with_its_status) {
  const Index n = 5, d = 3;
  DynamicsSpec spec;
  spec.kernel.threads = 1;
  spec.terms.terms.emplace_back(user_term(&late_nan, false, nullptr));
  AttentionDynamics dyn(spec, QkvSource::identity(), n, d);
  std::vector<double> x0(dyn.size());
  dyn.layout().pack(test::random_tokens(n, d, 6), x0.data());
  const std::vector<double> samples{0.0, 0.25, 0.5, 0.75, 1.0};
  IntegratorOptions options;
  options.method = Method::rk4;
  options.dt = 0.05;
  FrameRecorder frames;
  frames.layout = dyn.layout();
  const IntegrationResult r = integrate(dyn, x0, 0.0, samples, options, frames);
  BOOST_TEST(r.status == RunStatus::user_term_failed);
  BOOST_TEST(r.message.find("'drift' returned a non-finite value (token 2, column 1)") != std::string::npos);
  BOOST_TEST(frames.frames.size() == 3u);
  FrameRecorder layers;
  layers.layout = dyn.layout();
  const IntegrationResult l = run_layers(dyn, x0, 0.0, 0.05, samples, 0, layers);
  BOOST_TEST(l.status == RunStatus::user_term_failed);
  BOOST_TEST(layers.frames.size() == 3u);
}

// A row-local term is called on blocks of tokens; its failure names the token of the whole system,
// not the row of the block.
BOOST_AUTO_TEST_CASE(a_row_local_terms_failure_names_the_token) {
  const Index n = 150, d = 3;
  DynamicsSpec spec;
  spec.kernel.threads = 1;
  spec.terms.terms.emplace_back(user_term(&nan_at_token_130, true, nullptr));
  AttentionDynamics dyn(spec, QkvSource::identity(), n, d);
  Tokens tokens = test::random_tokens(n, d, 7);
  tokens.theta.row(130) << 0.25, 0.5, std::sqrt(1.0 - 0.25 * 0.25 - 0.5 * 0.5);
  std::vector<double> x(dyn.size()), dx(dyn.size());
  dyn.layout().pack(tokens, x.data());
  try {
    dyn.rhs(x.data(), dx.data(), 0.0);
    BOOST_FAIL("the NaN was not seen");
  } catch (const TermFailure& e) {
    BOOST_TEST(std::string(e.what()).find("(token 130, column 0)") != std::string::npos, e.what());
  }
}
