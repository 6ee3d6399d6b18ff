// `normdyn run` end to end for mean-field and weighted-particle runs: the layout of the
// run file (/fields/density, its axes, /summary, /parameters), a density read back from a run file
// onto another grid, and the masses of weighted tokens.
#define BOOST_TEST_MODULE meanfield_run
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "io/h5.hpp"
#include "tolerances.hpp"

using namespace normdyn;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "normdyn_test_meanfield_run";
  fs::create_directories(dir);
  return dir / name;
}

int run(const std::string& args) {
  const std::string command =
      std::string(NORMDYN_BINARY) + " run " + args + " --quiet --force 2>" + scratch("stderr.txt").string();
  return std::system(command.c_str());
}

std::string stderr_text() {
  std::ifstream in(scratch("stderr.txt"));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

double mass(const std::vector<double>& frame, std::size_t cells_phi, double dr) {
  double s = 0.0;
  for (double v : frame) s += v;
  return s * 2.0 * std::numbers::pi / static_cast<double>(cells_phi) * dr;
}

}  // namespace

BOOST_AUTO_TEST_CASE(meanfield_run_file_is_self_described) {
  const std::string config = std::string(NORMDYN_SOURCE_DIR) + "/data/configs/meanfield.toml";
  const fs::path out = scratch("post.h5");
  BOOST_REQUIRE_EQUAL(run(config + " -o " + out.string() +
                          " --set meanfield.grid=128 --set solver.t_end=3 "
                          "--set output.samples=4"),
                      0);
  h5::File f = h5::File::open(out, h5::OpenMode::read_only);
  const h5::Dataset value = f.open_dataset("/fields/density/value");
  BOOST_TEST((value.shape() == std::vector<std::uint64_t>{4, 128}));
  BOOST_TEST(value.attribute_string("unit").value_or("") == "1/rad");
  BOOST_TEST(f.open_dataset("/fields/density/phi").read_doubles().size() == 128u);
  BOOST_TEST(f.open_dataset("/fields/density/time").read_doubles().back() == 3.0);
  BOOST_TEST(!f.contains("/particles"));
  const h5::Group summary = f.open_group("summary");
  BOOST_TEST(summary.attribute_string("status").value_or("") == "ok");
  BOOST_TEST(summary.attribute_double("mass_drift").value_or(1.0) < test::kMassRoundoff);
  BOOST_TEST(summary.attribute_double("min_density").value_or(-1.0) >= 0.0);
  BOOST_TEST(f.open_group("parameters/model").attribute_string("kind").value_or("") == "meanfield");
  BOOST_TEST(f.open_group("parameters/meanfield").attribute_int("grid").value_or(0) == 128);
  const auto last = value.read_frames(3, 1);
  BOOST_TEST(std::abs(mass(last, 128, 1.0) - 1.0) < test::kMassRoundoff);

  // Continue from the last frame on a finer grid with a radius scheme: conservative remap.
  const fs::path next = scratch("pre.h5");
  const fs::path next_config = scratch("pre.toml");
  std::ofstream(next_config) << "[model]\nkind = \"meanfield\"\nscheme = \"pre\"\nbeta = 8.0\n"
                                "[meanfield]\ngrid = 256\nradial_grid = 8\n"
                                "[init]\nkind = \"file\"\nfile = \""
                             << out.string()
                             << "\"\nradius_width = 0.1\n"
                                "[solver]\nt_end = 1.0\n[output]\nsamples = 3\n";
  BOOST_REQUIRE_EQUAL(run(next_config.string() + " -o " + next.string()), 0);
  h5::File g = h5::File::open(next, h5::OpenMode::read_only);
  const h5::Dataset joint = g.open_dataset("/fields/density/value");
  BOOST_TEST((joint.shape() == std::vector<std::uint64_t>{3, 256, 8}));
  const auto r = g.open_dataset("/fields/density/r").read_doubles();
  BOOST_TEST(r.size() == 24u);
  BOOST_TEST(std::abs(r[0] - (0.95 + 0.1 / 16)) < 1e-14);  // band [0.95, 1.05] at t = 0
  const auto angular = g.open_dataset("/fields/angular_density/value").read_frames(0, 1);
  for (std::size_t i = 0; i < 128; ++i) {  // two fine cells per coarse cell, same average
    BOOST_TEST(std::abs(angular[2 * i] - last[i]) < 1e-12 * std::max(1.0, last[i]));
    BOOST_TEST(std::abs(angular[2 * i + 1] - last[i]) < 1e-12 * std::max(1.0, last[i]));
  }
  for (std::uint64_t k = 0; k < 3; ++k) {
    const auto rr = g.open_dataset("/fields/density/r").read_frames(k, 1);
    BOOST_TEST(std::abs(mass(joint.read_frames(k, 1), 256, rr[1] - rr[0]) - 1.0) < test::kMassRoundoff);
  }
}

BOOST_AUTO_TEST_CASE(causal_meanfield_stores_the_sigma_phi_grid_and_is_analyzed) {
  const std::string config = std::string(NORMDYN_SOURCE_DIR) + "/data/configs/meanfield_causal.toml";
  const fs::path out = scratch("causal.h5");
  BOOST_REQUIRE_EQUAL(run(config + " -o " + out.string() +
                          " --set meanfield.grid=64 --set meanfield.cursor_grid=8 "
                          "--set solver.t_end=2 --set output.samples=5"),
                      0);
  h5::File f = h5::File::open(out, h5::OpenMode::read_only);
  const h5::Dataset value = f.open_dataset("/fields/density/value");
  BOOST_TEST((value.shape() == std::vector<std::uint64_t>{5, 8, 64}));
  const auto sigma = f.open_dataset("/fields/density/sigma").read_doubles();
  BOOST_TEST(sigma.size() == 8u);
  BOOST_TEST(std::abs(sigma[0] - 1.0 / 16.0) < 1e-15);
  BOOST_TEST((f.open_dataset("/fields/angular_density/value").shape() == std::vector<std::uint64_t>{5, 64}));
  BOOST_TEST(f.contains("/fields/narrowest_cluster_cells"));
  const h5::Group summary = f.open_group("summary");
  BOOST_TEST(summary.attribute_string("status").value_or("") == "ok");
  BOOST_TEST(summary.attribute_double("mass_drift").value_or(1.0) < test::kMassRoundoff);
  BOOST_TEST(f.open_group("parameters/meanfield").attribute_int("cursor_grid").value_or(0) == 8);
  const auto first = value.read_frames(0, 1), last = value.read_frames(4, 1);
  double moved = 0.0;
  for (std::size_t i = 0; i < 64; ++i) {
    BOOST_TEST(last[i] == first[i]);  // the first slice attends to nothing
    moved = std::max(moved, std::abs(last[7 * 64 + i] - first[7 * 64 + i]));
  }
  BOOST_TEST(moved > 1e-3);
  for (std::size_t j = 0; j < 8; ++j)
    BOOST_TEST(std::abs(mass(std::vector<double>(last.begin() + 64 * j, last.begin() + 64 * (j + 1)), 64, 1.0) - 1.0) <
               test::kMassRoundoff);
  const std::string analyze = std::string(NORMDYN_BINARY) + " analyze " + out.string() + " --json " +
                              scratch("causal.json").string() + " >/dev/null 2>" + scratch("stderr.txt").string();
  BOOST_TEST(std::system(analyze.c_str()) == 0, stderr_text());
  std::ifstream in(scratch("causal.json"));
  const std::string report(std::istreambuf_iterator<char>(in), {});
  BOOST_TEST(report.find("causal mean field") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(weighted_particles_store_their_masses) {
  const std::string config = std::string(NORMDYN_SOURCE_DIR) + "/data/configs/default.toml";
  const fs::path out = scratch("weighted.h5");
  BOOST_REQUIRE_EQUAL(run(config + " -o " + out.string() +
                          " --set model.d=2 --set model.n=64 --set "
                          "init.kind=perturbed_uniform --set init.amplitude=0.5 "
                          "--set init.sampling=grid --set solver.t_end=1"),
                      0);
  h5::File f = h5::File::open(out, h5::OpenMode::read_only);
  const auto masses = f.open_dataset("/particles/tokens/mass").read_doubles();
  BOOST_REQUIRE_EQUAL(masses.size(), 64u);
  double sum = 0.0;
  for (double m : masses) sum += m;
  BOOST_TEST(std::abs(sum - 1.0) < test::kRoundoff);
  BOOST_TEST(*std::max_element(masses.begin(), masses.end()) > 1.4 / 64);
  // Errors name the key and leave no file behind.
  const fs::path bad = scratch("bad.h5");
  fs::remove(bad);
  BOOST_TEST(run(config + " -o " + bad.string() + " --set model.kind=meanfield") != 0);
  BOOST_TEST(stderr_text().find("model.n: does not apply to model.kind = \"meanfield\"") != std::string::npos);
  BOOST_TEST(!fs::exists(bad));
}

BOOST_AUTO_TEST_CASE(sphere_run_file_is_self_described_and_refusals_name_their_keys) {
  const std::string config = std::string(NORMDYN_SOURCE_DIR) + "/data/configs/meanfield_sphere.toml";
  const fs::path out = scratch("sphere.h5");
  BOOST_REQUIRE_EQUAL(run(config + " -o " + out.string() +
                          " --set meanfield.degree=12 --set solver.t_end=1 "
                          "--set output.samples=3"),
                      0);
  {
    h5::File f = h5::File::open(out, h5::OpenMode::read_only);
    const h5::Dataset value = f.open_dataset("/fields/density/value");
    const std::uint64_t rings = (3 * 12 + 2) / 2;
    BOOST_TEST((value.shape() == std::vector<std::uint64_t>{3, rings, 2 * rings}));
    BOOST_TEST(value.attribute_string("unit").value_or("") == "1/sr");
    const auto theta = f.open_dataset("/fields/density/theta").read_doubles();
    BOOST_TEST(theta.size() == rings);
    BOOST_TEST(std::is_sorted(theta.begin(), theta.end()));  // north to south
    BOOST_TEST(f.open_dataset("/fields/density/phi").read_doubles().size() == 2 * rings);
    BOOST_TEST(f.open_dataset("/fields/spectral_tail/value").shape().size() == 1u);
    const h5::Group summary = f.open_group("summary");
    BOOST_TEST(summary.attribute_string("status").value_or("") == "ok");
    BOOST_TEST(summary.attribute_double("mass_drift").value_or(1.0) < test::kMassRoundoff);
    BOOST_TEST(f.open_group("parameters/model").attribute_int("d").value_or(0) == 3);
    BOOST_TEST(f.open_group("parameters/meanfield").attribute_int("degree").value_or(0) == 12);
  }
  // Q^T K not a multiple of the identity: refused before anything is written, naming the file's key.
  const fs::path qkv = scratch("qkv_sphere.h5");
  fs::remove(qkv);
  {
    auto f = h5::File::create(qkv, h5::CreateMode::exclusive);
    const std::vector<double> eye{1, 0, 0, 0, 1, 0, 0, 0, 1}, skew{1, 0, 0, 0, 2, 0, 0, 0, 1};
    const std::uint64_t dims[2] = {3, 3};
    f.create_dataset("Q", dims, std::span<const double>(skew));
    f.create_dataset("K", dims, std::span<const double>(eye));
    f.create_dataset("V", dims, std::span<const double>(eye));
  }
  const fs::path refused = scratch("sphere_refused.h5");
  fs::remove(refused);
  BOOST_TEST(run(config + " -o " + refused.string() + " --set model.qkv=file --set model.qkv_file=" + qkv.string()) /
                 256 ==
             2);
  BOOST_TEST(stderr_text().find("model.qkv_file") != std::string::npos, stderr_text());
  BOOST_TEST(!fs::exists(refused));
  BOOST_TEST(run(config + " -o " + refused.string() + " --set model.d=4") / 256 == 2);
  BOOST_TEST(stderr_text().find("model.d") != std::string::npos, stderr_text());
  // The circle's analysis refuses the sphere's file with a one-line reason.
  const std::string analyze =
      std::string(NORMDYN_BINARY) + " analyze " + out.string() + " -q 2>" + scratch("stderr.txt").string();
  BOOST_TEST(std::system(analyze.c_str()) / 256 == 2);
  BOOST_TEST(stderr_text().find("sphere") != std::string::npos, stderr_text());
}
