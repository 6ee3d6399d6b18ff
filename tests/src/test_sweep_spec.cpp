// Sweep files: the documented expansion order, stable names, [set], the base file beside
// the sweep file, and every kind of bad input reported with its key (and point) before anything
// runs.
#define BOOST_TEST_MODULE sweep_spec
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "normdyn/errors.hpp"
#include "normdyn/sweep.hpp"

using namespace normdyn;
namespace fs = std::filesystem;

namespace {

struct Dir {
  fs::path path = fs::temp_directory_path() / ("normdyn_sweep_spec_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

SweepSpec parse(const std::string& text, const Dir& dir) { return parse_sweep(text, dir.path / "sweep.toml"); }

// The InputError of parsing and expanding `text`: {key, message} ("" if none).
std::pair<std::string, std::string> error_of(const std::string& text, const Dir& dir) {
  try {
    expand_sweep(parse(text, dir));
  } catch (const InputError& e) {
    return {e.key(), e.what()};
  }
  return {"", ""};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(points_are_nested_loops_over_the_axes_in_file_order) {
  Dir dir;
  // Written neither alphabetically nor in section order: the file's order decides. The second axis
  // uses a dotted key instead of a quoted one.
  const auto spec = parse(R"([axes]
"model.scheme" = ["pre", "post"]
init.seed = [3, 1]
"model.beta" = [1.0, 4, 0.5]
)",
                          dir);
  BOOST_REQUIRE_EQUAL(spec.axes.size(), 3u);
  BOOST_TEST(spec.axes[0].key == "model.scheme");
  BOOST_TEST(spec.axes[1].key == "init.seed");
  BOOST_TEST(spec.axes[2].key == "model.beta");
  const auto points = expand_sweep(spec);
  BOOST_REQUIRE_EQUAL(points.size(), 12u);
  // Last axis fastest.
  BOOST_TEST(points[0].name == "scheme=pre_seed=3_beta=1");
  BOOST_TEST(points[1].name == "scheme=pre_seed=3_beta=4");
  BOOST_TEST(points[2].name == "scheme=pre_seed=3_beta=0.5");
  BOOST_TEST(points[3].name == "scheme=pre_seed=1_beta=1");
  BOOST_TEST(points[6].name == "scheme=post_seed=3_beta=1");
  BOOST_TEST(points[11].name == "scheme=post_seed=1_beta=0.5");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    BOOST_TEST(p.index == i);
    BOOST_TEST(p.coordinates[0] == i / 6);
    BOOST_TEST(p.coordinates[1] == (i / 3) % 2);
    BOOST_TEST(p.coordinates[2] == i % 3);
  }
  // The values reached the typed configuration.
  BOOST_TEST(scheme_key(points[7].config.model.scheme) == "post");
  BOOST_TEST(points[7].config.init.seed == 3u);
  BOOST_TEST(points[7].config.model.beta == 4.0);
  BOOST_TEST(points[7].config.model.qkv_seed == 3u);  // its default follows the seed, as in a plain run
}

BOOST_AUTO_TEST_CASE(base_is_read_beside_the_sweep_file_and_set_overrides_it) {
  Dir dir;
  dir.write("base.toml", "[model]\nn = 12\nd = 4\nbeta = 2.0\n[solver]\nt_end = 5.0\n");
  const auto spec = parse(R"(base = "base.toml"
[set]
"solver.t_end" = 7.5
output.times = [0.0, 1.0, 7.5]
[axes]
"model.n" = [8, 12]
)",
                          dir);
  BOOST_TEST(spec.base == dir.path / "base.toml");
  const auto points = expand_sweep(spec);
  BOOST_REQUIRE_EQUAL(points.size(), 2u);
  for (const auto& p : points) {
    BOOST_TEST(p.config.model.d == 4);
    BOOST_TEST(p.config.model.beta == 2.0);
    BOOST_TEST(p.config.solver.t_end == 7.5);
    BOOST_TEST(p.config.output.times.size() == 3u);
  }
  BOOST_TEST(points[0].config.model.n == 8);
  BOOST_TEST(points[1].config.model.n == 12);
  BOOST_TEST(points[0].name == "n=8");
  // No axes: one point, the base itself.
  const auto single = expand_sweep(parse("base = \"base.toml\"\n", dir));
  BOOST_REQUIRE_EQUAL(single.size(), 1u);
  BOOST_TEST(single[0].name == "run");
  BOOST_TEST(single[0].config.model.n == 12);
}

BOOST_AUTO_TEST_CASE(names_are_short_exact_and_unique) {
  Dir dir;
  // Numbers in their shortest exact form, arrays by a hash of their text.
  const auto points = expand_sweep(parse(R"([set]
"model.scheme" = "ngpt"
[axes]
"model.alpha" = [0.001, 1e-7, 2.5]
"output.times" = [[0.0, 1.0], [0.0, 2.0, 20.0]]
"init.kind" = ["uniform", "gaussian"]
)",
                                         dir));
  BOOST_REQUIRE_EQUAL(points.size(), 12u);
  BOOST_TEST(points[0].name.rfind("alpha=0.001_times=h", 0) == 0u);
  BOOST_TEST(contains(points[0].name, "_kind=uniform"));
  BOOST_TEST(points[4].name.rfind("alpha=1e-07_times=h", 0) == 0u);
  BOOST_TEST(points[0].name != points[2].name);
  std::set<std::string> names;
  for (const auto& p : points) names.insert(p.name);
  BOOST_TEST(names.size() == points.size());
}

BOOST_AUTO_TEST_CASE(values_are_stored_typed_as_their_key) {
  Dir dir;
  const auto points = expand_sweep(parse("[axes]\n\"model.beta\" = [4]\n\"solver.project\" = [false]\n", dir));
  BOOST_TEST(std::get<double>(config_value(points[0].config, "model.beta")) == 4.0);  // an integer, read as a float
  BOOST_TEST(value_label(config_value(points[0].config, "model.beta")) == "4");
  BOOST_TEST(std::get<bool>(config_value(points[0].config, "solver.project")) == false);
  BOOST_TEST(value_label(ConfigScalar(0.1)) == "0.1");
  BOOST_TEST(value_label(ConfigScalar(std::vector<double>{0.0, 0.5})) == "[0, 0.5]");
}

BOOST_AUTO_TEST_CASE(a_bad_axis_value_names_the_axis_and_the_point) {
  Dir dir;
  const auto [key, message] = error_of(R"([axes]
"init.seed" = [1, 2]
"model.beta" = [1.0, -4.0, 9.0]
)",
                                       dir);
  BOOST_TEST(key == "axes.\"model.beta\"");
  BOOST_TEST(contains(message, "point 2 of 6 (init.seed = 1, model.beta = -4.0)"), message);
  BOOST_TEST(contains(message, "must be >= 0, got -4"), message);
  // A value of the wrong type.
  const auto wrong_type = error_of("[axes]\n\"model.n\" = [8, \"many\"]\n", dir);
  BOOST_TEST(wrong_type.first == "axes.\"model.n\"");
  BOOST_TEST(contains(wrong_type.second, "point 2 of 2 (model.n = \"many\"): expected an integer"), wrong_type.second);
  // A combination that no single value violates: the point names the values, the key the culprit.
  const auto combination =
      error_of("[axes]\n\"init.kind\" = [\"uniform\", \"orthonormal\"]\n\"model.n\" = [3, 8]\n", dir);
  BOOST_TEST(combination.first == "axes.\"init.kind\"");
  BOOST_TEST(contains(combination.second, "point 4 of 4 (init.kind = \"orthonormal\", model.n = 8)"),
             combination.second);
  BOOST_TEST(contains(combination.second, "needs model.d >= model.n"), combination.second);
  // A key that applies only to some points: the base and [set] are named by their key.
  const auto applies = error_of("[set]\n\"model.tau\" = 2.0\n[axes]\n\"model.scheme\" = [\"mix\", \"pre\"]\n", dir);
  BOOST_TEST(applies.first == "model.tau");
  BOOST_TEST(contains(applies.second, "point 2 of 2 (model.scheme = \"pre\")"), applies.second);
}

BOOST_AUTO_TEST_CASE(every_problem_of_the_sweep_file_names_its_key) {
  Dir dir;
  struct Case {
    std::string text, key, part;
  };
  const std::vector<Case> cases{
      {"[axes]\n\"model.betta\" = [1.0]\n", "axes.\"model.betta\"", "did you mean \"model.beta\"?"},
      {"[axes]\n\"model.beta\" = []\n", "axes.\"model.beta\"", "has no values"},
      {"[axes]\n\"model.beta\" = 4.0\n", "axes.\"model.beta\"", "must be an array"},
      {"[axes]\n\"output.path\" = [\"a.h5\"]\n", "axes.\"output.path\"", "set by the sweep"},
      {"[axes]\n\"solver.threads\" = [1, 2]\n", "axes.\"solver.threads\"", "--threads"},
      {"[axes]\n\"model.beta\" = [1.0, 1]\n", "axes", "points 0 and 1"},
      {"[set]\n\"model.bta\" = 1.0\n", "set.\"model.bta\"", "did you mean \"model.beta\"?"},
      {"[model]\nbeta = 2.0\n", "model", "go into the base file, or into [set]"},
      {"bse = \"x.toml\"\n", "bse", "did you mean base?"},
      {"base = \"missing.toml\"\n", "base", "missing.toml: no such configuration file"},
      {"[axes]\n\"init.seed\" = [1]\n[ensemble]\nover = \"model.beta\"\n", "ensemble.over", "not an axis"},
      {"[ensemble]\npair_cosine = 1.5\n", "ensemble.pair_cosine", "must be in (-1, 1)"},
      {"[ensemble]\nclusters = 1\n", "ensemble.clusters", "unknown key"},
      {"[axes\n", dir.path.string() + "/sweep.toml:1:", "invalid TOML"},
      {"[set]\n\"model.kind\" = \"meanfield\"\n[axes]\n\"model.beta\" = [1.0]\n", "model.kind",
       "sweeps run particle models only"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_INFO(c.text);
    const auto [key, message] = error_of(c.text, dir);
    BOOST_TEST(key.rfind(c.key, 0) == 0u, key);
    BOOST_TEST(contains(message, c.part), message);
  }
}

BOOST_AUTO_TEST_CASE(ensemble_defaults_follow_the_axes) {
  Dir dir;
  const auto both = parse("[axes]\n\"model.beta\" = [1.0]\n\"init.seed\" = [1, 2]\n", dir);
  BOOST_TEST(both.ensemble.over == "init.seed");
  BOOST_TEST(both.ensemble.phase_axis == "model.beta");
  BOOST_TEST(both.ensemble.cluster_epsilon == 1e-3);
  BOOST_TEST(both.ensemble.pair_cosine == 0.999);
  const auto none = parse("[axes]\n\"model.n\" = [4, 8]\n", dir);
  BOOST_TEST(none.ensemble.over.empty());
  BOOST_TEST(none.ensemble.phase_axis.empty());
  const auto chosen = parse(
      "[axes]\n\"model.n\" = [4, 8]\n\"init.seed\" = [1, 2]\n[ensemble]\nover = \"\"\nphase_axis = \"model.n\"\n", dir);
  BOOST_TEST(chosen.ensemble.over.empty());
  BOOST_TEST(chosen.ensemble.phase_axis == "model.n");
}

BOOST_AUTO_TEST_CASE(the_example_sweep_is_valid) {
  const auto spec = load_sweep(fs::path(NORMDYN_SOURCE_DIR) / "data/configs/sweep_beta_circle.toml");
  const auto points = expand_sweep(spec);
  BOOST_TEST(points.size() == 56u);
  BOOST_TEST(points[8].name == "beta=2_seed=1");
  BOOST_TEST(points[8].config.solver.t_end == 1000.0);
  BOOST_TEST(points[8].config.model.d == 2);
  BOOST_TEST(spec.ensemble.phase_axis == "model.beta");
}

// Point i computed on demand equals the eager expansion's (mixed radix, the last axis fastest).
BOOST_AUTO_TEST_CASE(lazy_points_equal_the_expansion) {
  Dir dir;
  const SweepSpec spec = parse(
      "[axes]\n\"model.scheme\" = [\"post\", \"pre\"]\n\"model.beta\" = [1.0, 4.0, 0.5]\n\"init.seed\" = [3, 1]\n",
      dir);
  const SweepPoints lazy(spec);
  const auto points = expand_sweep(spec);
  BOOST_TEST(lazy.size() == 12u);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const SweepPoint p = lazy.point(i);
    BOOST_TEST(p.name == points[i].name);
    BOOST_TEST(lazy.name(i) == points[i].name);
    BOOST_TEST(p.coordinates == points[i].coordinates);
    BOOST_TEST(to_toml(p.config) == to_toml(points[i].config));
  }
  BOOST_TEST((lazy.coordinates(7) == std::vector<std::size_t>{1, 0, 1}));
  // A product far beyond memory is counted, not expanded.
  std::string beta, seeds, rtol, n;
  for (int v = 1; v <= 100; ++v) {
    const std::string sep = v > 1 ? ", " : "";
    beta += sep + std::to_string(v) + ".5";
    seeds += sep + std::to_string(v);
    rtol += sep + std::to_string(v) + "e-9";
    n += sep + std::to_string(v + 1);
  }
  const std::string big = "[axes]\n\"model.beta\" = [" + beta + "]\n\"init.seed\" = [" + seeds +
                          "]\n\"solver.rtol\" = [" + rtol + "]\n\"model.n\" = [" + n + "]\n";
  const SweepSpec huge = parse(big, dir);
  BOOST_TEST(SweepPoints(huge).size() == 100000000u);
  BOOST_TEST(SweepPoints(huge).point(99999999).config.model.n == 101u);
}

BOOST_AUTO_TEST_CASE(zipped_axes_and_point_lists) {
  Dir dir;
  const SweepSpec spec = parse(
      "[[zip]]\n\"model.n\" = [8, 16]\n\"solver.t_end\" = [2.0, 4.0]\n"
      "[axes]\n\"init.seed\" = [1, 2, 3]\n"
      "[[point]]\n\"model.scheme\" = \"pre\"\n"
      "[[point]]\n\"model.scheme\" = \"ngpt\"\nset = { \"model.alpha\" = 0.5 }\n",
      dir);
  BOOST_REQUIRE(spec.axes.size() == 3u);
  BOOST_TEST(spec.axes[0].dimension == "n+t_end");
  BOOST_TEST(spec.axes[1].dimension == "seed");
  BOOST_TEST(spec.axes[2].dimension == "point");
  const auto points = expand_sweep(spec);
  BOOST_TEST(points.size() == 12u);  // 2 zipped x 3 seeds x 2 points
  BOOST_TEST(points[0].config.model.n == 8u);
  BOOST_TEST(points[0].config.solver.t_end == 2.0);
  BOOST_TEST(points[11].config.model.n == 16u);
  BOOST_TEST(points[11].config.solver.t_end == 4.0);
  BOOST_TEST(points[11].name == "n=16_t_end=4_seed=3_scheme=ngpt_alpha=0.5");
  const auto columns = sweep_columns(spec);
  BOOST_TEST(columns.size() == 4u);  // model.n, solver.t_end, init.seed, model.scheme
  BOOST_TEST(error_of("[[zip]]\n\"model.n\" = [8, 16]\n\"solver.t_end\" = [2.0]\n", dir).first ==
             "zip[0].\"solver.t_end\"");
}

// A value's own [set]: model.alpha applies at the nGPT points only (elsewhere it would be refused).
BOOST_AUTO_TEST_CASE(set_per_value_of_an_axis) {
  Dir dir;
  const auto points = expand_sweep(
      parse("[axes]\n\"model.scheme\" = [\"post\", { value = \"ngpt\", set = { \"model.alpha\" = 0.25 } }]\n", dir));
  BOOST_REQUIRE(points.size() == 2u);
  BOOST_TEST(std::get<double>(config_value(points[1].config, "model.alpha")) == 0.25);
  BOOST_TEST(points[1].name == "scheme=ngpt");
  BOOST_TEST(error_of("[axes]\n\"model.scheme\" = [\"post\", \"ngpt\"]\n[set]\n\"model.alpha\" = 0.25\n", dir).first ==
             "model.alpha");
}

// --set on the sweep, and := replacing a conflicting key of the base.
BOOST_AUTO_TEST_CASE(overrides_and_replacing_overrides) {
  Dir dir;
  dir.write("base.toml", "[output]\nsamples = 5\n[solver]\nrtol = 1e-8\nt_end = 4.0\n");
  SweepSpec spec = parse("base = \"base.toml\"\n[axes]\n\"init.seed\" = [1, 2]\n", dir);
  SweepSpec plain = spec;
  add_overrides(plain, {"output.times=[0.0, 2.0, 4.0]"});
  try {
    expand_sweep(plain);
    BOOST_FAIL("a conflict with the base was accepted");
  } catch (const InputError& e) {
    BOOST_TEST(e.key() == "output.samples");
    BOOST_TEST(std::string(e.what()).find(":=") != std::string::npos, e.what());
  }
  add_overrides(spec, {"output.times:=[0.0, 2.0, 4.0]", "solver.method:=discrete", "solver.dt=0.5"});
  const auto points = expand_sweep(spec);
  BOOST_TEST(points[0].config.output.times.size() == 3u);
  BOOST_TEST(!points[0].config.output.samples);
  BOOST_TEST(to_toml(points[0].config).find("rtol") == std::string::npos);
  BOOST_CHECK_THROW(add_overrides(spec, {"init.seed=4"}), InputError);  // an axis
  BOOST_CHECK_THROW(add_overrides(spec, {"output.path=x.h5"}), InputError);
  // The same syntax in the configuration layer (normdyn run --set, Python's set=).
  const RunConfig c = parse_config("[solver]\nrtol = 1e-8\n", "t", {"solver.method:=rk4"});
  BOOST_TEST(to_toml(c).find("rtol") == std::string::npos);
  BOOST_CHECK_THROW(parse_config("[solver]\nrtol = 1e-8\n", "t", {"solver.method=rk4"}), InputError);
}
