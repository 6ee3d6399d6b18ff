// The README's Python examples (reading a run with h5py, with xarray, following it live) run as
// written against a run of the default configuration.
#define BOOST_TEST_MODULE readme_examples
#include <boost/test/unit_test.hpp>

#include "cli_harness.hpp"

using namespace normdyn;
using test::Scratch;

namespace {

// The fenced code block that follows `<!-- readme-example: NAME -->` in README.md.
std::string readme_example(const std::string& name) {
  const std::string readme = Scratch::slurp(std::filesystem::path(NORMDYN_SOURCE_DIR) / "README.md");
  const std::string marker = "<!-- readme-example: " + name + " -->";
  const auto at = readme.find(marker);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "README.md has no example " << name);
  const auto open = readme.find("```python\n", at);
  const auto close = readme.find("```", open + 10);
  return readme.substr(open + 10, close - open - 10);
}

struct DefaultRun {
  Scratch s;
  DefaultRun() {
    std::filesystem::create_directories(s / "runs");
    const auto r = s.normdyn(std::string("run ") + NORMDYN_SOURCE_DIR + "/data/configs/default.toml -q -o runs/default.h5");
    BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  }
  test::CommandResult python(const std::string& name) {
    // Not "<name>.py": a script named h5py.py would shadow the module it imports.
    s.write("readme_" + name + ".py", readme_example(name));
    return s.shell(std::string(NORMDYN_PYTHON) + " readme_" + name + ".py");
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(h5py_example) {
  DefaultRun run;
  const auto r = run.python("h5py");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("(201, 32, 3) 20.0 ok\n", 0) == 0, r.out);
  BOOST_TEST(r.out.find("[model]\nscheme = \"post\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(xarray_example) {
  DefaultRun run;
  const auto r = run.python("xarray");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == "('time', 'token', 'component')\n(32, 3)\n", r.out);
}

BOOST_AUTO_TEST_CASE(xarray_groups_example) {
  DefaultRun run;
  const auto r = run.python("xarray-groups");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == "('time',) 1 True\n", r.out);
}

BOOST_AUTO_TEST_CASE(follow_live_example) {
  DefaultRun run;
  const auto r = run.python("follow");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("201 frames, t = 20.0\n", 0) == 0, r.out);
}
