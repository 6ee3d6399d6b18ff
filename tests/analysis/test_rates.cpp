// Decay-rate fits: exact exponentials, power laws and stretched exponentials (law chosen and
// parameter recovered to round-off), time-shifted laws (the correction term), the noise floor and
// the window; and the exact scalar ODE of the symmetric start (Theorem 4.1) for every scheme:
// λ = 2 (post), p = 2 (pre, mix, peri), κ = 4 (cod), λ = 2α and κ = 4α (ngpt), within 5%.
#define BOOST_TEST_MODULE analysis_rates
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>

#include "normdyn/analysis/rates.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "symmetric_series.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using namespace normdyn::analysis;
using normdyn::test::linspace;

namespace {

std::vector<double> eval(const std::vector<double>& t, double (*f)(double)) {
  std::vector<double> y;
  for (double x : t) y.push_back(f(x));
  return y;
}

RateFitOptions floor_at(double floor) {
  RateFitOptions o;
  o.floor = floor;
  return o;
}

RateFitOptions uncorrected() {
  RateFitOptions o;
  o.correction = false;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(exact_laws_are_recovered) {
  const std::vector<double> t = linspace(0.0, 30.0, 301);
  struct Case {
    DecayLaw law;
    double parameter;
    double (*f)(double);
  };
  const Case cases[] = {
      {DecayLaw::exponential, 1.7, [](double x) { return 3.0 * std::exp(-1.7 * x); }},
      {DecayLaw::power, 2.5, [](double x) { return 0.5 * std::pow(x, -2.5); }},
      {DecayLaw::stretched_exponential, 3.0, [](double x) { return 2.0 * std::exp(-3.0 * std::sqrt(x)); }},
  };
  for (const Case& c : cases) {
    const RateFit fit = fit_decay(t, eval(t, c.f), floor_at(1e-300));
    BOOST_TEST_INFO("law " << to_string(c.law));
    BOOST_REQUIRE(fit.ok);
    BOOST_TEST((fit.law == c.law));
    BOOST_TEST(std::abs(fit.parameter - c.parameter) < test::kExactFit * c.parameter);
    BOOST_TEST(std::abs(fit.uncorrected.parameter - c.parameter) < test::kExactFit * c.parameter);
    BOOST_TEST(std::abs(fit.correction) < test::kExactFit);
    BOOST_TEST(fit.parameter_stderr < test::kExactFit);
    BOOST_TEST(fit.systematic < test::kExactFit);
    // The late half of the usable range.
    BOOST_TEST(fit.window.t_start == 15.1);
    BOOST_TEST(fit.window.t_end == 30.0);
    BOOST_TEST(fit.points == 150u);
    // The curve goes back through the data.
    BOOST_TEST(std::abs(law_value(fit.law, fit.log_c, fit.parameter, fit.correction, 20.0) / c.f(20.0) - 1.0) < 1e-9);
    // The other laws fit worse.
    for (const LawFit& other : fit.candidates)
      if (other.law != c.law) BOOST_TEST(other.rss > 1e6 * fit.uncorrected.rss + 1e-20);
  }
}

BOOST_AUTO_TEST_CASE(time_shifted_laws_need_the_correction) {
  // y = C / (t + 30)² on [0, 400]: the plain power-law fit over [200, 400] sees p_eff ≈ 2 − 60/t;
  // the corrected fit removes the O(1/t) term, leaving O(30²/t²).
  const std::vector<double> t = linspace(0.0, 400.0, 401);
  const auto y = eval(t, [](double x) { return 7.0 / ((x + 30.0) * (x + 30.0)); });
  const RateFit fit = fit_decay(t, y);
  BOOST_REQUIRE(fit.ok);
  BOOST_TEST((fit.law == DecayLaw::power));
  BOOST_TEST_MESSAGE("shifted power law: plain p = " << fit.uncorrected.parameter << ", corrected p = " << fit.parameter
                                                     << ", systematic " << fit.systematic);
  BOOST_TEST(std::abs(fit.uncorrected.parameter - 2.0) > 0.1);
  BOOST_TEST(std::abs(fit.parameter - 2.0) < 0.02);
  BOOST_TEST(std::abs(fit.parameter - 2.0) < 0.1 * std::abs(fit.uncorrected.parameter - 2.0));
  // The systematic indicator has the size of the remaining error.
  BOOST_TEST(std::abs(fit.parameter - 2.0) < 10.0 * fit.systematic);
  BOOST_TEST(fit.systematic < 0.02);
  // Same for the stretched exponential exp(−4 sqrt(t + 5)).
  const std::vector<double> ts = linspace(0.0, 200.0, 401);
  const RateFit fs = fit_decay(ts, eval(ts, [](double x) { return std::exp(-4.0 * std::sqrt(x + 5.0)); }), floor_at(1e-300));
  BOOST_REQUIRE(fs.ok);
  BOOST_TEST((fs.law == DecayLaw::stretched_exponential));
  BOOST_TEST(std::abs(fs.parameter - 4.0) < 2e-3);
  BOOST_TEST(std::abs(fs.uncorrected.parameter - 4.0) > 10.0 * std::abs(fs.parameter - 4.0));
  // Without the correction the plain value is reported.
  const RateFit plain = fit_decay(t, y, uncorrected());
  BOOST_TEST(!plain.corrected);
  BOOST_TEST(plain.parameter == fit.uncorrected.parameter);
}

BOOST_AUTO_TEST_CASE(the_floor_ends_the_usable_range) {
  // e^{−2t} down to round-off, then noise around 1e-17: the fit must stop at the floor.
  const std::vector<double> t = linspace(0.0, 30.0, 301);
  std::vector<double> y;
  for (double x : t) y.push_back(std::max(std::exp(-2.0 * x), 1e-17 * (1.5 + std::sin(37.0 * x))));
  const RateFit fit = fit_decay(t, y);  // floor 1e-12: usable while e^{−2t} > 1e-12, t < 13.8
  BOOST_REQUIRE(fit.ok);
  BOOST_TEST(fit.usable_until == 13.8, boost::test_tools::tolerance(1e-12));
  BOOST_TEST((fit.law == DecayLaw::exponential));
  BOOST_TEST(std::abs(fit.parameter - 2.0) < test::kExactFit);
  // Without a floor the noise ruins it.
  const RateFit noisy = fit_decay(t, y, floor_at(0.0));
  BOOST_TEST(std::abs(noisy.parameter - 2.0) > 0.1);
}

BOOST_AUTO_TEST_CASE(given_window_and_law) {
  const std::vector<double> t = linspace(0.0, 30.0, 301);
  const auto y = eval(t, [](double x) { return std::exp(-0.5 * x); });
  RateFitOptions o;
  o.window = TimeWindow{2.0, 5.0};
  o.law = DecayLaw::power;
  const RateFit fit = fit_decay(t, y, o);
  BOOST_REQUIRE(fit.ok);
  BOOST_TEST(!fit.window_automatic);
  BOOST_TEST(!fit.law_automatic);
  BOOST_TEST((fit.law == DecayLaw::power));
  BOOST_TEST(fit.window.t_start == 2.0);
  BOOST_TEST(fit.window.t_end == 5.0);
  BOOST_TEST(fit.points == 31u);
  // Too few frames: no fit, and a reason.
  o.window = TimeWindow{2.0, 2.3};
  const RateFit none = fit_decay(t, y, o);
  BOOST_TEST(!none.ok);
  BOOST_TEST(none.problem.find("window") != std::string::npos);
  BOOST_TEST(!fit_decay(std::vector<double>{0.0, 1.0}, std::vector<double>{1.0, 0.5}).ok);
}

BOOST_AUTO_TEST_CASE(law_names_round_trip) {
  for (DecayLaw law : {DecayLaw::exponential, DecayLaw::power, DecayLaw::stretched_exponential})
    BOOST_TEST((decay_law_from_string(to_string(law)) == law));
  BOOST_TEST(!decay_law_from_string("linear").has_value());
}

// The exact scalar ODE of the symmetric start (n = 256, β = 5 as in the particle test; and n = 16,
// β = 1), sampled like a run: 401 frames on [0, T]. T is where the asymptotic law is well developed
// but the series stays above the floor: 20 (post), 400 (pre, mix, peri), 60 (cod).
BOOST_AUTO_TEST_CASE(symmetric_start_rates_of_every_scheme) {
  NGPT ngpt;
  ngpt.alpha = 0.7;
  NGPT ngpt_sqrt;
  ngpt_sqrt.alpha = 0.7;
  ngpt_sqrt.alpha_decay = 0.5;
  MixLN mix;
  mix.tau = 4.0;
  struct Case {
    Scheme scheme;
    double t_end;
  };
  const Case cases[] = {{PostLN{}, 20.0}, {PreLN{}, 400.0},     {mix, 400.0},     {PeriLN{}, 400.0},
                        {ngpt, 30.0},     {ngpt_sqrt, 120.0},   {LNScaling{}, 60.0}};
  for (const auto& [n, beta] : {std::pair{256.0, 5.0}, std::pair{16.0, 1.0}}) {
    for (const Case& c : cases) {
      const auto expected = symmetric_decay_theory(c.scheme);
      BOOST_REQUIRE(expected.has_value());
      const std::vector<double> t = linspace(0.0, c.t_end, 401);
      const std::vector<double> u = test::symmetric_u_series(c.scheme, n, beta, 1.0, t, 1e-3);
      const RateFit fit = fit_decay(t, u);
      BOOST_TEST_INFO("scheme " << scheme_key(c.scheme) << ", n = " << n << ", beta = " << beta);
      BOOST_REQUIRE(fit.ok);
      const double error = (fit.parameter - expected->parameter) / expected->parameter;
      const double plain_error = (fit.uncorrected.parameter - expected->parameter) / expected->parameter;
      std::printf("symmetric %-5s n = %3g beta = %g: %-21s %.6f (expected %g), rel. error %+.2e "
                  "(plain fit %+.2e), stderr %.1e, systematic %.1e, window [%g, %g]\n",
                  std::string(scheme_key(c.scheme)).c_str(), n, beta, std::string(to_string(fit.law)).c_str(),
                  fit.parameter, expected->parameter, error, plain_error, fit.parameter_stderr, fit.systematic,
                  fit.window.t_start, fit.window.t_end);
      BOOST_TEST((fit.law == expected->law));
      BOOST_TEST(std::abs(error) < test::kRateRelative);
      // The systematic indicator bounds the actual error of the reported value (here known).
      BOOST_TEST(std::abs(fit.parameter - expected->parameter) < 10.0 * fit.systematic + 1e-6 * expected->parameter);
    }
  }
}

BOOST_AUTO_TEST_CASE(symmetric_start_variance_scale_of_theorem_4_3) {
  // Var = (n−1)/n · u has the decay rate of u: −d ln Var/dt ≈ 2/s(t) near consensus, so the scale
  // exponent is 0 (post), 1 (pre, peri), 1/2 (cod).
  const double n = 16.0, beta = 1.0;
  for (const auto& [scheme, t_end] :
       {std::pair<Scheme, double>{PostLN{}, 15.0}, {PreLN{}, 400.0}, {PeriLN{}, 400.0}, {LNScaling{}, 60.0}}) {
    const std::vector<double> t = linspace(0.0, t_end, 401);
    const std::vector<double> u = test::symmetric_u_series(scheme, n, beta, 1.0, t, 1e-3);
    const ScaleFit f = fit_variance_scale(t, u, scheme, 1e-12);
    BOOST_TEST_INFO("scheme " << scheme_key(scheme));
    BOOST_REQUIRE(f.ok);
    std::printf("variance scale %-5s m = %.4f (theory %g), q in [%.4f, %.4f]\n", std::string(scheme_key(scheme)).c_str(),
                f.exponent, variance_scale_exponent(scheme), f.q_min, f.q_max);
    BOOST_TEST(std::abs(f.exponent - variance_scale_exponent(scheme)) < 0.1);
    BOOST_TEST(f.q_min > 1.0);
    BOOST_TEST(f.q_max < 3.0);
  }
}
