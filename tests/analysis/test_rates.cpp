// Decay-rate fits: exact exponentials, power laws and stretched exponentials (law chosen and
// parameter recovered to round-off), time-shifted laws (the correction term), the noise floor and
// the window; and the exact scalar ODE of the symmetric start (Theorem 4.1) for every scheme:
// λ = 2 (post), p = 2 (pre, mix, peri), κ = 4 (cod), λ = 2α and κ = 4α (ngpt), within 5%.
#define BOOST_TEST_MODULE analysis_rates
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <limits>
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
    // The law is steady over the whole usable range, which is the window; the fit is citable.
    BOOST_TEST(fit.window.t_start == 0.1);
    BOOST_TEST(fit.window.t_end == 30.0);
    BOOST_TEST(fit.points == 300u);
    BOOST_TEST(fit.problem.empty(), fit.problem << ": " << fit.detail);
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
  const RateFit fs =
      fit_decay(ts, eval(ts, [](double x) { return std::exp(-4.0 * std::sqrt(x + 5.0)); }), floor_at(1e-300));
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
  BOOST_TEST(none.problem == "too_short");
  BOOST_TEST(none.detail.find("window") != std::string::npos);
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
  const Case cases[] = {{PostLN{}, 20.0}, {PreLN{}, 400.0},   {mix, 400.0},       {PeriLN{}, 400.0},
                        {ngpt, 30.0},     {ngpt_sqrt, 120.0}, {LNScaling{}, 60.0}};
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
      std::printf(
          "symmetric %-5s n = %3g beta = %g: %-21s %.6f (expected %g), rel. error %+.2e "
          "(plain fit %+.2e), stderr %.1e, systematic %.1e, window [%g, %g]\n",
          std::string(scheme_key(c.scheme)).c_str(), n, beta, std::string(to_string(fit.law)).c_str(), fit.parameter,
          expected->parameter, error, plain_error, fit.parameter_stderr, fit.systematic, fit.window.t_start,
          fit.window.t_end);
      BOOST_TEST((fit.law == expected->law));
      BOOST_TEST(std::abs(error) < test::kRateRelative);
      // The systematic indicator bounds the actual error of the reported value (here known).
      BOOST_TEST(std::abs(fit.parameter - expected->parameter) < 10.0 * fit.systematic + 1e-6 * expected->parameter);
    }
  }
}

BOOST_AUTO_TEST_CASE(symmetric_start_variance_scale_of_theorem_4_3) {
  // Var = (n−1)/n · u has the decay rate of u: −d ln Var/dt ≈ 2/s(t) near consensus, so the rate
  // exponent is that of the scale (0 post, 1 pre and peri, 1/2 cod) and q = rate · scale is flat.
  const double n = 16.0, beta = 1.0;
  for (const auto& [scheme, t_end] :
       {std::pair<Scheme, double>{PostLN{}, 15.0}, {PreLN{}, 400.0}, {PeriLN{}, 400.0}, {LNScaling{}, 60.0}}) {
    const std::vector<double> t = linspace(0.0, t_end, 401);
    const std::vector<double> u = test::symmetric_u_series(scheme, n, beta, 1.0, t, 1e-3);
    std::vector<double> radius;  // r(t) = 1 + t near consensus for the schemes with a radius
    for (double x : t) radius.push_back(scheme_has_radius(scheme) ? 1.0 + x : 1.0);
    const ScaleFit f = fit_variance_scale(t, u, radius, scheme, 1e-12);
    BOOST_TEST_INFO("scheme " << scheme_key(scheme));
    BOOST_REQUIRE(f.ok);
    std::printf("variance scale %-5s m = %.4f (scale exponent %.4f), q ~ t^%.4f in [%.4f, %.4f]\n",
                std::string(scheme_key(scheme)).c_str(), f.exponent, f.scale_exponent, f.q_exponent, f.q_min, f.q_max);
    BOOST_TEST(std::abs(f.exponent - f.scale_exponent) < 0.1);
    BOOST_TEST(std::abs(f.q_exponent) < 0.1);
    BOOST_TEST(f.q_min > 1.0);
    BOOST_TEST(f.q_max < 3.0);
  }
}

// The corpus of known answers: every fit is within 5% of the truth or carries a problem token, and
// never an unflagged wrong fit. `expect` is the token the case must get ("" : citable).
BOOST_AUTO_TEST_CASE(corpus_of_known_answers) {
  struct Case {
    const char* name;
    std::vector<double> t, y;
    DecayLaw law;
    double truth;  // NaN: no law to find
    std::string expect;
  };
  auto series = [](double t0, double t1, std::size_t count, auto f) {
    std::pair<std::vector<double>, std::vector<double>> s;
    s.first = linspace(t0, t1, count);
    for (double x : s.first) s.second.push_back(f(x));
    return s;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Case> cases;
  auto add = [&](const char* name, std::pair<std::vector<double>, std::vector<double>> s, DecayLaw law, double truth,
                 std::string expect) {
    cases.push_back({name, s.first, s.second, law, truth, std::move(expect)});
  };
  // A two-cluster plateau until t = 40, then the collapse at rate 2 (Post-LN, uniform start).
  add("plateau then collapse",
      series(0.0, 60.0, 401,
             [](double x) { return x < 40.0 ? 0.5 * (1.0 + 1e-3 * std::sin(x)) : 0.5 * std::exp(-2.0 * (x - 40.0)); }),
      DecayLaw::exponential, 2.0, "");
  // Multiplicative noise of 20%: either right or flagged.
  add("noise",
      series(0.0, 40.0, 401, [](double x) { return std::exp(-0.5 * x) * (1.0 + 0.2 * std::sin(97.0 * x * x)); }),
      DecayLaw::exponential, 0.5, "?");
  // Round-off floor below the fit floor: e^{-2t} + noise of 1e-15, fit floor 0.
  {
    auto s = series(0.0, 30.0, 301, [](double x) { return std::exp(-2.0 * x) + 1e-15 * (1.5 + std::sin(37.0 * x)); });
    cases.push_back({"round-off floor", s.first, s.second, DecayLaw::exponential, 2.0, "?"});
  }
  add("nothing decays", series(0.0, 100.0, 401, [](double x) { return 0.6 + 0.01 * std::sin(x); }), DecayLaw::power,
      nan, "no_decay");
  add("decays then stops", series(0.0, 50.0, 401, [](double x) { return std::exp(-std::min(x, 10.0)); }),
      DecayLaw::exponential, nan, "metastable");
  add("slow power law, short run", series(0.0, 100.0, 401, [](double x) { return std::pow(1.0 + x, -0.3); }),
      DecayLaw::power, 0.3, "!");
  add("exponential, shifted origin", series(0.0, 20.0, 201, [](double x) { return std::exp(-1.5 * (x + 3.0)); }),
      DecayLaw::exponential, 1.5, "");
  add("power, shifted origin", series(0.0, 400.0, 401, [](double x) { return std::pow(x + 5.0, -2.0); }),
      DecayLaw::power, 2.0, "");
  add("stretched, shifted origin", series(0.0, 60.0, 401, [](double x) { return std::exp(-4.0 * std::sqrt(x + 5.0)); }),
      DecayLaw::stretched_exponential, 4.0, "");
  for (const Case& c : cases) {
    RateFitOptions o;
    if (std::string(c.name) == "round-off floor") o.floor = 0.0;
    const RateFit fit = fit_decay(c.t, c.y, o);
    std::printf("corpus %-28s: %s %-21s %.6g window [%g, %g] decay %.3g problem %s%s%s\n", c.name,
                fit.ok ? "fit" : "none", std::string(to_string(fit.law)).c_str(), fit.parameter, fit.window.t_start,
                fit.window.t_end, fit.decay_factor, fit.problem.empty() ? "-" : fit.problem.c_str(),
                fit.detail.empty() ? "" : ": ", fit.detail.c_str());
    BOOST_TEST_INFO("case " << c.name << ": " << fit.problem << " " << fit.detail);
    // Never an unflagged wrong fit.
    if (fit.citable()) {
      BOOST_TEST(std::isfinite(c.truth));
      BOOST_TEST((fit.law == c.law));
      BOOST_TEST(std::abs(fit.parameter - c.truth) <= test::kRateRelative * c.truth);
    }
    if (c.expect == "!")
      BOOST_TEST(!fit.problem.empty());  // too_short or no_decay: both true
    else if (c.expect != "?")
      BOOST_TEST(fit.problem == c.expect);
    BOOST_TEST((fit.problem.empty() || std::find(std::begin(kProblemTokens), std::end(kProblemTokens), fit.problem) !=
                                           std::end(kProblemTokens)));
  }
}
