// The README's Python examples (reading a run with h5py, with xarray, following it live) run as
// written against a run of the default configuration.
#define BOOST_TEST_MODULE readme_examples
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <vector>

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

// The command lines of a `<!-- readme-commands: NAME ... -->` block, without their comments.
std::vector<std::string> readme_commands(const std::string& name) {
  const std::string readme = Scratch::slurp(std::filesystem::path(NORMDYN_SOURCE_DIR) / "README.md");
  const auto at = readme.find("<!-- readme-commands: " + name);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "README.md has no command block " << name);
  const auto open = readme.find("```sh\n", at);
  const auto close = readme.find("```", open + 6);
  std::vector<std::string> lines;
  std::istringstream in(readme.substr(open + 6, close - open - 6));
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

BOOST_AUTO_TEST_CASE(running_commands) {
  Scratch s;
  s.write("my.toml", "[model]\nn = 8\n[solver]\nt_end = 2.0\n");
  const auto lines = readme_commands("running");
  BOOST_TEST_REQUIRE(lines.size() >= 6u);
  for (const std::string& line : lines) {
    BOOST_TEST_INFO(line);
    BOOST_TEST_REQUIRE(line.rfind("normdyn ", 0) == 0u);
    const auto r = s.normdyn(line.substr(8));
    BOOST_TEST(r.exit_code == 0, r.out << r.err);
  }
  BOOST_TEST(std::filesystem::exists(s / "run.h5"));
  BOOST_TEST(std::filesystem::exists(s / "c.h5"));
}
