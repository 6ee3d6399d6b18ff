// Linear stability of the uniform density as an exact test of the mean-field solver:
// a Fourier mode k of small amplitude must grow as exp(∫ λ_k) with λ_k in closed form
// (uniform_state_rate, derived in docs/meanfield.md), for every scheme, several k and β, within 1%
// of the rate; and, for attention matrices that commute with rotations, rotate at the predicted speed.
#define BOOST_TEST_MODULE meanfield_linear
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <numbers>

#include "meanfield_support.hpp"
#include "normdyn/density.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using normdyn::test::AllSchemes;

namespace {

constexpr double kAmplitude = 1e-5;  // nonlinear corrections to mode k are O(ε²) relative
constexpr double kTime = 3.0;
const RadialLaw kLaw{1.0, 0.1};

Scheme with_parameters(Scheme s) {
  if (auto* mix = std::get_if<MixLN>(&s)) mix->tau = 1.5;  // the switch inside [0, kTime]
  if (auto* ngpt = std::get_if<NGPT>(&s)) {
    ngpt->alpha = 0.7;
    ngpt->alpha_decay = 0.5;
  }
  return s;
}

struct Measured {
  std::complex<double> log_ratio;  // log(c_k(t) / c_k(0))
  std::complex<double> exact;      // ∫ λ_k
};

Measured measure(const Scheme& scheme, double beta, int k, const CircleAttention& att) {
  MeanFieldSpec spec;
  spec.scheme = scheme;
  spec.beta = beta;
  spec.grid = 128;
  spec.radial_grid = 16;
  spec.layers = {att};
  MeanFieldCircle system(spec);
  const std::vector<double> rho0 = cell_averages(Density::perturbed_uniform(k, kAmplitude), spec.grid);
  const auto x0 = system.initial_state(rho0, kLaw.r0, kLaw.width);
  IntegrationResult result;
  const auto states = test::solve(system, x0, {0.0, kTime}, test::tight_options(1e-11), &result);
  BOOST_REQUIRE(result.status == RunStatus::ok);
  const auto c0 = test::fourier_mode(system.angular_density(states[0].data()), system.phi(), k);
  const auto c1 = test::fourier_mode(system.angular_density(states[1].data()), system.phi(), k);
  return {std::log(c1 / c0), uniform_state_log_amplification(scheme, beta, att, k, kTime, kLaw)};
}

void check(const std::string& label, const Measured& m) {
  const double rate = m.log_ratio.real() / kTime, exact = m.exact.real() / kTime;
  const double rate_error = std::abs(rate - exact) / std::abs(exact);
  // Phase: arg of the ratio against Im ∫λ, on the circle.
  const double phase_error = std::abs(std::remainder(m.log_ratio.imag() - m.exact.imag(), 2.0 * std::numbers::pi));
  std::printf("%-34s rate %.10f (exact %.10f) rel. error %.2e; phase %+.6f (exact %+.6f) error %.1e\n",
              label.c_str(), rate, exact, rate_error, m.log_ratio.imag(), m.exact.imag(), phase_error);
  BOOST_TEST_INFO(label);
  BOOST_TEST(rate_error < test::kLinearRate);
  BOOST_TEST(phase_error < test::kLinearRate * std::max(std::abs(m.exact.imag()), std::abs(m.exact.real())) + 1e-9);
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(mode_growth_matches_the_closed_form, S, AllSchemes) {
  const Scheme scheme = with_parameters(S{});
  for (double beta : {1.0, 4.0, 10.0})
    for (int k : {1, 2, 3, 5}) {
      char label[64];
      std::snprintf(label, sizeof label, "%s beta = %g, k = %d", std::string(S::key).c_str(), beta, k);
      check(label, measure(scheme, beta, k, CircleAttention{}));
    }
}

// Q^T K = a I + b J, V = c I + e J: the uniform state drifts and modes rotate. Radius schemes need V
// aligned with Q^T K (then the state does not drift and the radial perturbation decouples).
BOOST_AUTO_TEST_CASE_TEMPLATE(rotation_invariant_attention_matrices, S, AllSchemes) {
  const Scheme scheme = with_parameters(S{});
  const double delta = std::atan2(0.3, 0.8);
  const CircleAttention att = S::has_radius ? CircleAttention{0.8, 0.3, 1.2 * std::cos(delta), 1.2 * std::sin(delta)}
                                            : CircleAttention{0.8, 0.3, 1.1, -0.4};
  for (int k : {1, 3}) {
    char label[64];
    std::snprintf(label, sizeof label, "%s a,b,c,e = %.2g,%.2g,%.2g,%.2g k = %d", std::string(S::key).c_str(), att.a,
                  att.b, att.c, att.e, k);
    check(label, measure(scheme, 5.0, k, att));
  }
}

BOOST_AUTO_TEST_CASE(closed_form_of_post_ln) {
  // λ_k = k² I_k(β) / (β I_0(β)) for Post-LN with Q = K = V = I, in long double from the series.
  for (double beta : {0.5, 3.0, 12.0})
    for (int k : {1, 2, 4, 7}) {
      long double ik = 0, i0 = 0, term_k = std::pow(0.5L * beta, k) / std::tgamma(k + 1.0L), term_0 = 1;
      for (int j = 0; j < 200; ++j) {
        ik += term_k;
        i0 += term_0;
        term_k *= 0.25L * beta * beta / ((j + 1.0L) * (j + k + 1.0L));
        term_0 *= 0.25L * beta * beta / ((j + 1.0L) * (j + 1.0L));
      }
      const double expected = static_cast<double>(k * k * ik / (beta * i0));
      const auto rate = uniform_state_rate(PostLN{}, beta, CircleAttention{}, k, 0.0);
      BOOST_TEST(std::abs(rate.real() - expected) < 1e-13 * expected);
      BOOST_TEST(std::abs(rate.imag()) < 1e-15);
    }
  // A radius scheme whose uniform state drifts has no closed-form mode.
  BOOST_CHECK_THROW(uniform_state_rate(PreLN{}, 2.0, CircleAttention{1.0, 0.0, 1.0, 0.5}, 1, 1.0, kLaw),
                    std::domain_error);
}

BOOST_AUTO_TEST_CASE(circle_form_of_attention_matrices) {
  AttentionMatrices m;
  m.identity = false;
  m.Q = RowMatrix{{1.0, 2.0}, {-2.0, 1.0}};  // Q^T K with K = I: [[1, -2], [2, 1]] = I + 2 J
  m.K = RowMatrix::Identity(2, 2);
  m.V = RowMatrix{{0.5, -1.5}, {1.5, 0.5}};
  const auto c = circle_attention(m);
  BOOST_REQUIRE(c.has_value());
  BOOST_TEST(c->a == 1.0);
  BOOST_TEST(c->b == 2.0);
  BOOST_TEST(c->c == 0.5);
  BOOST_TEST(c->e == 1.5);
  m.V(0, 1) = 0.0;
  BOOST_TEST(!circle_attention(m).has_value());
}

// Per-layer matrices: layer k on [k, k + 1), breakpoints at the integers; the amplification of a mode
// is the sum of each layer's.
BOOST_AUTO_TEST_CASE(per_layer_matrices) {
  MeanFieldSpec spec;
  spec.beta = 6.0;
  spec.grid = 128;
  spec.layers = {CircleAttention{}, CircleAttention{0.5, 0.0, 1.0, 0.0}};
  MeanFieldCircle system(spec);
  BOOST_TEST((system.breakpoints(0.0, 3.0) == std::vector<double>{1.0}));
  const int k = 2;
  const auto x0 = system.initial_state(cell_averages(Density::perturbed_uniform(k, kAmplitude), spec.grid), 1.0, 0.0);
  const auto states = test::solve(system, x0, {0.0, 2.5}, test::tight_options(1e-11));
  const double measured = std::log(std::abs(test::fourier_mode(states[1], system.phi(), k) /
                                            test::fourier_mode(states[0], system.phi(), k)));
  const double exact = uniform_state_rate(PostLN{}, 6.0, spec.layers[0], k, 0.0).real() +
                       1.5 * uniform_state_rate(PostLN{}, 6.0, spec.layers[1], k, 0.0).real();
  std::printf("per-layer matrices: log amplification %.10f (exact %.10f)\n", measured, exact);
  BOOST_TEST(std::abs(measured - exact) < test::kLinearRate * exact);
}
