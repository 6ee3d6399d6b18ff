// Growth exponents and the Post-LN clock diagnostic on series with known answers.
#define BOOST_TEST_MODULE analysis_trajectory_summary
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "normdyn/analysis/trajectory_summary.hpp"
#include "tolerances.hpp"

using namespace normdyn::analysis;

namespace {
std::vector<double> times(double t_end, int frames) {
  std::vector<double> t;
  for (int i = 0; i < frames; ++i) t.push_back(t_end * i / (frames - 1));
  return t;
}
}  // namespace

BOOST_AUTO_TEST_CASE(power_growth_is_found_and_steady) {
  const auto t = times(1000.0, 401);
  for (double a : {0.5, 1.0, 2.0}) {
    std::vector<double> y;
    for (double s : t) y.push_back(2.0 + 3.0 * std::pow(s, a));
    const GrowthExponent g = growth_exponent(t, y);
    BOOST_TEST_INFO("a = " << a);
    BOOST_TEST(g.problem.empty());
    BOOST_TEST(g.exponent == a, boost::test_tools::tolerance(normdyn::test::kExactFit));
  }
}

BOOST_AUTO_TEST_CASE(flags_no_growth_too_short_and_drifting_exponents) {
  const auto t = times(100.0, 201);
  BOOST_TEST(growth_exponent(t, std::vector<double>(t.size(), 1.0)).problem.rfind("no_growth", 0) == 0);
  const auto few = times(1.0, 4);
  BOOST_TEST(growth_exponent(few, std::vector<double>{1, 2, 3, 4}).problem.rfind("too_short", 0) == 0);
  // r − r0 = log(1 + t): the local exponent keeps falling.
  std::vector<double> y;
  for (double s : t) y.push_back(1.0 + std::log1p(s));
  const GrowthExponent g = growth_exponent(t, y);
  BOOST_TEST(g.problem.rfind("not_steady", 0) == 0);
  BOOST_TEST(g.exponent < 0.5);
}

BOOST_AUTO_TEST_CASE(clock_diagnostic_tells_stall_slow_and_normal) {
  const auto t = times(1000.0, 401);
  std::vector<double> slow, normal, positive(t.size(), 0.5), stalled(t.size(), 0.5);
  for (double s : t) slow.push_back(std::log1p(s)), normal.push_back(s);
  stalled.back() = 0.0;
  BOOST_TEST(clock_diagnostic(t, slow, slow, stalled).verdict.find("stalls") != std::string::npos);
  const ClockDiagnostic c = clock_diagnostic(t, slow, slow, positive);
  BOOST_TEST(c.verdict.find("slow, not stalled") != std::string::npos);
  BOOST_TEST(c.clock_median_final == std::log1p(1000.0));
  BOOST_TEST(clock_diagnostic(t, normal, normal, positive).verdict.find("keeps pace") != std::string::npos);
}
