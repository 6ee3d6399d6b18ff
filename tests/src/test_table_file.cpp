// The table file of sweep indexes: what is written is read back, column by column, with
// its type; NaN survives; the file appears only complete (no temporary left behind).
#define BOOST_TEST_MODULE table_file
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <unistd.h>

#include "normdyn/errors.hpp"
#include "normdyn/io/table_file.hpp"

using namespace normdyn;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_CASE(columns_matrices_and_attributes_round_trip) {
  const fs::path dir = fs::temp_directory_path() / ("normdyn_table_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TableFile t;
  t.attributes = {{"schema", std::string("x/1")}, {"points", std::int64_t{3}}, {"epsilon", 1e-3}};
  TableGroup runs;
  runs.name = "/runs";
  runs.attributes = {{"note", std::string("ünïcode ok")}};
  runs.columns.push_back({"model.beta", std::vector<double>{1.0, nan, 0.1}});
  runs.columns.push_back({"frames", std::vector<std::int64_t>{201, -1, 3}});
  runs.columns.push_back({"status", std::vector<std::string>{"ok", "diverged", "a \"quoted\", text"}});
  runs.matrices.push_back({"series", 2, 3, {1, 2, 3, 4, nan, 6}});
  t.groups.push_back(runs);
  TableGroup empty;
  empty.name = "/empty";
  empty.columns = {{"nothing", std::vector<std::string>{}}};
  empty.matrices = {{"none", 0, 0, {}}};
  t.groups.push_back(empty);
  write_table_file(dir / "index.h5", t);
  write_table_file(dir / "index.h5", t);  // replaces it
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  BOOST_TEST(files == 1u);

  const TableFile back = read_table_file(dir / "index.h5");
  BOOST_REQUIRE_EQUAL(back.groups.size(), 2u);
  const TableGroup* g = nullptr;
  for (const auto& x : back.groups)
    if (x.name == "/runs") g = &x;
  BOOST_REQUIRE(g);
  BOOST_REQUIRE_EQUAL(g->columns.size(), 3u);
  for (const auto& c : g->columns) {
    if (c.name == "model.beta") {
      const auto& v = std::get<std::vector<double>>(c.values);
      BOOST_TEST(v[0] == 1.0);
      BOOST_TEST(std::isnan(v[1]));
      BOOST_TEST(v[2] == 0.1);
    } else if (c.name == "frames") {
      BOOST_TEST((std::get<std::vector<std::int64_t>>(c.values) == std::vector<std::int64_t>{201, -1, 3}));
    } else {
      BOOST_TEST(c.name == "status");
      BOOST_TEST((std::get<std::vector<std::string>>(c.values) ==
                  std::vector<std::string>{"ok", "diverged", "a \"quoted\", text"}));
    }
  }
  BOOST_REQUIRE_EQUAL(g->matrices.size(), 1u);
  BOOST_TEST(g->matrices[0].rows == 2u);
  BOOST_TEST(g->matrices[0].cols == 3u);
  BOOST_TEST(g->matrices[0].values[5] == 6.0);
  BOOST_TEST(std::isnan(g->matrices[0].values[4]));
  BOOST_TEST(std::get<std::string>(g->attributes.at(0).second) == "ünïcode ok");
  bool seen_points = false;
  for (const auto& [k, v] : back.attributes)
    if (k == "points") seen_points = std::get<std::int64_t>(v) == 3;
  BOOST_TEST(seen_points);
  BOOST_CHECK_THROW(read_table_file(dir / "missing.h5"), IoError);
  fs::remove_all(dir);
}
