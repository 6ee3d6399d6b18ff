// `normdyn reproduce --quick` end to end: the report's rows carry every documented key and a valid
// verdict, no row fails, the files are written, an existing report is not overwritten without
// --force; `normdyn study symmetric` writes the documented JSON layout.
#define BOOST_TEST_MODULE app_reproduce_cli
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_harness.hpp"

using namespace normdyn;
using nlohmann::json;

BOOST_AUTO_TEST_CASE(quick_reproduction_has_measured_rows_and_no_failure) {
  test::Scratch s;
  const test::CommandResult r = s.normdyn("reproduce --quick -o rep --threads 1");
  BOOST_TEST_INFO("stdout: " << r.out << "\nstderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  const json j = json::parse(test::Scratch::slurp(s / "rep/reproduction.json"));
  BOOST_TEST(j["quick"].get<bool>());
  BOOST_REQUIRE(j["rows"].size() >= 10u);
  const std::set<std::string> verdicts{"holds", "fails", "inconclusive", "differs"};
  std::set<std::string> ids;
  for (const auto& row : j["rows"]) {
    for (const char* key : {"id", "statement", "command", "measured", "theory", "criterion", "verdict"}) {
      BOOST_TEST_INFO("row " << row.dump() << ", key " << key);
      BOOST_REQUIRE(row.contains(key));
      BOOST_TEST(!row[key].get<std::string>().empty());
    }
    BOOST_TEST(verdicts.count(row["verdict"].get<std::string>()) == 1u);
    BOOST_TEST(row["verdict"].get<std::string>() != "fails", row["id"].get<std::string>() << ": " << row["measured"]);
    BOOST_TEST(ids.insert(row["id"].get<std::string>()).second);
  }
  for (const char* id : {"4.1-slope-peri", "4.1-law-post", "4.1-particles-mix", "4.2-identity"})
    BOOST_TEST(ids.count(id) == 1u);
  // Continuum limits (every scheme in depth; particles to mean field; grid order), Theorem 4.3 with
  // random Q, K and Theorem 4.2 with random Q, K, V of norm 1.
  for (const char* id : {"7-depth-post", "7-depth-pre", "7-depth-mix", "7-depth-peri", "7-depth-ngpt", "7-depth-cod",
                         "7-meanfield-w1-grid", "7-meanfield-w1-sampled", "7-meanfield-grid-post",
                         "4.3-scale-random-qk-post", "4.3-radius-random-qk-peri", "4.2-random-unit-norm",
                         "3.1-sync-post-n16-d3-beta1", "3.1-sync-peri-n8-d5-beta2"}) {
    BOOST_TEST_INFO(id);
    BOOST_TEST(ids.count(id) == 1u);
  }
  // The random-weight experiment and metastability.
  for (const char* id : {"rw-early-motion", "rw-collapse", "rw-pre-radius", "meta-staircase-s1", "meta-staircase-s2",
                         "meta-phase-diagram", "meta-peri-vs-post-d3", "meta-peri-vs-post-d64"})
    BOOST_TEST(ids.count(id) == 1u, id);
  BOOST_TEST(std::filesystem::exists(s / "rep/random_weights.json"));
  BOOST_TEST(std::filesystem::exists(s / "rep/metastability.json"));
  BOOST_TEST(j["timings"].size() >= 3u);
  const std::string md = test::Scratch::slurp(s / "rep/reproduction.md");
  BOOST_TEST(test::contains(md, "| 4.1-law-pre |"));
  BOOST_TEST(test::contains(md, "## Not measured"));
  // The figures, or the note why there are none.
  BOOST_TEST((std::filesystem::exists(s / "rep/symmetric_start.png") || test::contains(md, "Figures skipped")));

  const test::CommandResult again = s.normdyn("reproduce --quick -o rep");
  BOOST_TEST(again.exit_code == 3);
  BOOST_TEST(test::contains(again.err, "exists"));
}

BOOST_AUTO_TEST_CASE(symmetric_study_json_layout) {
  test::Scratch s;
  const test::CommandResult r =
      s.normdyn("study symmetric --n 16 --beta 2 --t-end 3 --samples 6 --tau 1 --json sym.json");
  BOOST_TEST_INFO("stderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  const json j = json::parse(test::Scratch::slurp(s / "sym.json"));
  BOOST_TEST(j["parameters"]["tau"].get<double>() == 1.0);
  BOOST_TEST(j["schemes"].size() == 6u);
  for (const auto& [key, v] : j["schemes"].items())
    for (const char* f : {"t", "gamma", "dgamma_dt", "r"}) {
      BOOST_TEST_INFO(key << "." << f);
      BOOST_TEST(v[f].size() == 7u);
    }
  BOOST_TEST(s.normdyn("study symmetric --n 16 --beta 2 --t-end 3 --json sym.json").exit_code == 3);
  // Log-spaced times: t = 0, then K times from T0 to T.
  const test::CommandResult lg =
      s.normdyn("study symmetric --n 16 --beta 2 --t-end 3 --log-times 0.01 5 --json log.json");
  BOOST_TEST_INFO("stderr: " << lg.err);
  BOOST_REQUIRE_EQUAL(lg.exit_code, 0);
  const json jl = json::parse(test::Scratch::slurp(s / "log.json"));
  const auto t = jl["schemes"]["peri"]["t"].get<std::vector<double>>();
  BOOST_REQUIRE_EQUAL(t.size(), 6u);
  BOOST_TEST(t[0] == 0.0);
  BOOST_TEST(std::abs(t[1] - 0.01) < 1e-15);
  BOOST_TEST(std::abs(t[3] / t[2] - t[2] / t[1]) < 1e-12);
  BOOST_TEST(t[5] == 3.0);
  BOOST_TEST(jl["schemes"]["peri"]["gamma"].size() == 6u);
  BOOST_TEST(s.normdyn("study symmetric --n 16 --beta 2 --t-end 3 --log-times 0.01 5 --samples 4").exit_code == 2);
  const test::CommandResult bad_log = s.normdyn("study symmetric --n 16 --beta 2 --t-end 3 --log-times 4 5");
  BOOST_TEST(bad_log.exit_code == 2);
  BOOST_TEST(test::contains(bad_log.err, "--log-times"));
  const test::CommandResult bad = s.normdyn("study symmetric --n 16 --beta -1 --t-end 3");
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(test::contains(bad.err, "--beta"));
}

// `--only`: the named groups' rows only, a report that says it is partial and the command that
// regenerates it; an unknown group is refused before anything is written, naming the flag and the
// groups there are.
BOOST_AUTO_TEST_CASE(only_runs_the_named_groups_and_says_the_report_is_partial) {
  test::Scratch s;
  const test::CommandResult r = s.normdyn("reproduce --quick --only theorem-4.2 -o part --threads 1");
  BOOST_TEST_INFO("stdout: " << r.out << "\nstderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  const json j = json::parse(test::Scratch::slurp(s / "part/reproduction.json"));
  BOOST_TEST(j["only"] == json::array({"theorem-4.2"}));
  BOOST_TEST(j["command"].get<std::string>() == "normdyn reproduce --quick --only theorem-4.2");
  BOOST_REQUIRE(!j["rows"].empty());
  for (const auto& row : j["rows"]) BOOST_TEST(row["id"].get<std::string>().rfind("4.2-", 0) == 0u, row["id"]);
  BOOST_TEST(!std::filesystem::exists(s / "part/symmetric_start.json"));
  const std::string md = test::Scratch::slurp(s / "part/reproduction.md");
  BOOST_TEST(test::contains(md, "**Partial reproduction**: only the groups `theorem-4.2`"));
  BOOST_TEST(!test::contains(md, "Figures skipped: the plot script failed"));

  const test::CommandResult bad = s.normdyn("reproduce --quick --only theorem-4.2,nonsense -o bad");
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(test::contains(bad.err, "--only"));
  BOOST_TEST(test::contains(bad.err, "'nonsense'"));
  BOOST_TEST(test::contains(bad.err, "noise-pitchfork"));
  BOOST_TEST(!std::filesystem::exists(s / "bad"));
}
