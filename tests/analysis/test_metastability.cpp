// Plateaus of planted staircases: exact start and end frames, transients excluded, short runs
// dropped, the staircase summary.
#define BOOST_TEST_MODULE analysis_metastability
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "normdyn/analysis/metastability.hpp"

using namespace normdyn::analysis;

namespace {

struct Series {
  std::vector<double> t;
  std::vector<std::int64_t> count;
  std::vector<double> energy;
  void add(double time, std::int64_t c, double e) {
    t.push_back(time);
    count.push_back(c);
    energy.push_back(e);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(planted_staircase) {
  // Log-spaced frames; counts 8 → 4 → 2 → 1; inside each count the energy first rises steeply
  // (clusters tightening: 3 frames), stays flat to 1e-4, then rises before the merge (2 frames).
  // Flat levels Σ (m_c/n)²: 1/8, 1/4, 1/2, 1.
  Series s;
  const std::vector<std::pair<std::int64_t, double>> levels{{8, 0.125}, {4, 0.25}, {2, 0.5}, {1, 1.0}};
  std::vector<std::pair<std::size_t, std::size_t>> flat_frames;
  double t = 0.01;
  for (const auto& [count, level] : levels) {
    for (int k = 3; k >= 1; --k, t *= 1.2) s.add(t, count, level * (1.0 - 0.2 * k));
    const std::size_t first = s.t.size();
    for (int k = 0; k < 20; ++k, t *= 1.2) s.add(t, count, level * (1.0 + 1e-4 * k / 20.0));
    flat_frames.emplace_back(first, s.t.size() - 1);
    if (count > 1)
      for (int k = 1; k <= 2; ++k, t *= 1.2) s.add(t, count, level * (1.0 + 0.1 * k));
  }
  // The count the run starts with (8) is not a plateau by default: nothing has settled into it.
  const auto plateaus = find_plateaus(s.t, s.count, s.energy, {1e-2, 3, 0.0});
  BOOST_REQUIRE_EQUAL(plateaus.size(), levels.size() - 1);
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    BOOST_TEST(plateaus[i].count == levels[i + 1].first);
    BOOST_TEST(plateaus[i].first_frame == flat_frames[i + 1].first);
    BOOST_TEST(plateaus[i].last_frame == flat_frames[i + 1].second);
    BOOST_TEST(plateaus[i].t_start == s.t[flat_frames[i + 1].first]);
    BOOST_TEST(plateaus[i].t_end == s.t[flat_frames[i + 1].second]);
    BOOST_TEST(plateaus[i].duration() > 0.0);
  }
  const auto with_start = find_plateaus(s.t, s.count, s.energy, {1e-2, 3, 0.0, 0.0, false});
  BOOST_REQUIRE_EQUAL(with_start.size(), levels.size());
  BOOST_TEST(with_start.front().first_frame == flat_frames.front().first);
  const std::string summary = staircase(plateaus);
  BOOST_TEST_MESSAGE("staircase: " << summary);
  BOOST_TEST(summary.find("4 [") == 0);
  BOOST_TEST(summary.find(" -> 1 [") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(short_or_steep_runs_are_not_plateaus) {
  Series s;
  for (int i = 0; i < 5; ++i) s.add(i, 10, 0.1 * (1.0 + 0.5 * i));  // constant count, steep energy
  for (int i = 5; i < 7; ++i) s.add(i, 9, 0.4);                     // flat but only 2 frames
  for (int i = 7; i < 12; ++i) s.add(i, 8, 0.5);                    // a plateau
  // Linear times 7..11 last ln(11/7) = 0.45 in log-time: below the default ln 2, so no plateau.
  BOOST_TEST(find_plateaus(s.t, s.count, s.energy, {1e-2, 3, 0.0}).empty());
  const auto plateaus = find_plateaus(s.t, s.count, s.energy, {1e-2, 3, 0.0, 0.0});
  BOOST_REQUIRE_EQUAL(plateaus.size(), 1u);
  BOOST_TEST(plateaus[0].count == 8);
  BOOST_TEST(plateaus[0].t_start == 7.0);
  BOOST_TEST(plateaus[0].t_end == 11.0);
  // A minimum duration drops it too.
  BOOST_TEST(find_plateaus(s.t, s.count, s.energy, {1e-2, 3, 4.5, 0.0}).empty());
  // With 2 frames allowed, the short flat run qualifies.
  BOOST_TEST(find_plateaus(s.t, s.count, s.energy, {1e-2, 2, 0.0, 0.0}).size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_tolerance_is_relative_energy_range) {
  Series s;
  for (int i = 0; i < 10; ++i) s.add(i, 3, 1.0 + 0.003 * i);  // range 2.7 %
  BOOST_TEST(find_plateaus(s.t, s.count, s.energy, {3e-2, 3, 0.0, 0.0, false}).front().last_frame == 9u);
  // With 1 %: the longest stretch has 4 frames (1.000 .. 1.009), the earliest of the equal ones.
  const auto p = find_plateaus(s.t, s.count, s.energy, {1e-2, 3, 0.0, 0.0, false});
  BOOST_REQUIRE_EQUAL(p.size(), 1u);
  BOOST_TEST(p[0].first_frame == 0u);
  BOOST_TEST(p[0].last_frame == 3u);
}

BOOST_AUTO_TEST_CASE(smooth_coarsening_has_no_plateaus) {
  // The count drops by one every 1.3x in t while the energy rises steadily: no metastable state.
  Series s;
  double t = 0.1;
  std::int64_t count = 40;
  for (int i = 0; i < 200; ++i, t *= 1.02) {
    if (i % 13 == 12 && count > 1) --count;
    s.add(t, count, 0.02 * std::pow(t / 0.1, 0.2));
  }
  BOOST_TEST(find_plateaus(s.t, s.count, s.energy).empty());
}
