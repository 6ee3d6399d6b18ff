#pragma once
// Helpers of the sweep tests: the index of a sweep as columns, and the child processes
// of a running sweep.
#include <dirent.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "cli_harness.hpp"
#include "normdyn/io/table_file.hpp"

namespace normdyn::test {

// /runs of DIR/index.h5, by column name.
struct SweepIndex {
  std::map<std::string, TableValues> runs;
  std::map<std::string, TableAttribute> attributes;
  std::map<std::string, TableMatrix> series, ensemble;

  explicit SweepIndex(const std::filesystem::path& dir) {
    const TableFile t = read_table_file(dir / "index.h5");
    for (const auto& [k, v] : t.attributes) attributes[k] = v;
    for (const auto& g : t.groups) {
      if (g.name == "/runs")
        for (const auto& c : g.columns) runs[c.name] = c.values;
      if (g.name == "/series")
        for (const auto& m : g.matrices) series[m.name] = m;
      if (g.name == "/ensemble")
        for (const auto& m : g.matrices) ensemble[m.name] = m;
    }
  }
  const std::vector<std::string>& strings(const std::string& name) const {
    return std::get<std::vector<std::string>>(runs.at(name));
  }
  const std::vector<double>& doubles(const std::string& name) const {
    return std::get<std::vector<double>>(runs.at(name));
  }
  const std::vector<std::int64_t>& ints(const std::string& name) const {
    return std::get<std::vector<std::int64_t>>(runs.at(name));
  }
  std::size_t size() const { return strings("name").size(); }
  std::size_t row(const std::string& name) const {
    const auto& names = strings("name");
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    throw std::out_of_range("no run named " + name);
  }
};

// Processes whose parent is `parent` and whose command line contains `part`.
inline std::vector<int> children_of(int parent, const std::string& part) {
  std::vector<int> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = ::readdir(proc)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::vector<std::string> fields = proc_stat_fields(std::stoi(name));
    if (fields.size() < 2 || std::stoi(fields[1]) != parent) continue;
    std::ifstream cmd("/proc/" + name + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (cmdline.find(part) != std::string::npos) out.push_back(std::stoi(name));
  }
  ::closedir(proc);
  return out;
}

inline long long mtime_ns(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

// The run file of sweep point `name` (in DIR "out") equals, bit for bit, a direct run of the
// point's configuration.
inline void compare_with_reference(const Scratch& s, const std::string& name) {
  const std::string ref = "ref_" + name + ".h5";
  const auto direct = s.normdyn("run 'out/runs/" + name + ".toml' -q --threads 1 -o '" + ref + "'");
  BOOST_REQUIRE_MESSAGE(direct.exit_code == 0, direct.err);
  const auto r = s.shell(std::string(NORMDYN_PYTHON) + " " + NORMDYN_SOURCE_DIR +
                         "/tests/app/compare_runs.py 'out/runs/" + name + ".h5' '" + ref + "' --complete");
  BOOST_TEST(r.exit_code == 0, name << ": " << r.err);
}

}  // namespace normdyn::test
