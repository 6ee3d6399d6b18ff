// The observables writer: whole series and appended frames in the H5MD layout, replacing a series
// by name, integer and multi-dimensional values, text attributes, and the sibling file used when
// the run file cannot be opened for writing.
#define BOOST_TEST_MODULE observables_file
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <unistd.h>

#include "io/h5.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/observables_file.hpp"

using namespace normdyn;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("normdyn_obs_" + std::to_string(::getpid()) + "_" +
                                        boost::unit_test::framework::current_test_case().p_name.get());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(write_read_replace) {
  TempDir dir;
  const fs::path file = dir.path / "obs.h5";
  ObservablesFile f = ObservablesFile::open(file, true);
  const std::vector<double> t{0.0, 0.5, 1.0};
  const std::vector<std::int64_t> step{0, 10, 20};
  f.write_series("energy", t, step, std::vector<double>{1.0, 2.0, 3.0}, {}, "the energy");
  f.write_series("labels", t, step, std::vector<std::int64_t>{0, 0, 0, 1, 0, 0}, {2}, "labels");
  f.write_series("centres", t, step, std::vector<double>(3 * 2 * 4, 0.25), {2, 4});
  f.set_series_attribute("energy", "method", "velocity");
  BOOST_CHECK_THROW(f.write_series("bad", t, step, std::vector<double>{1.0, 2.0}), IoError);

  const ObservableSeries e = f.read_series("energy");
  BOOST_TEST(e.shape == (std::vector<std::uint64_t>{3}), boost::test_tools::per_element());
  BOOST_TEST(e.values == (std::vector<double>{1.0, 2.0, 3.0}), boost::test_tools::per_element());
  BOOST_TEST(e.time == t, boost::test_tools::per_element());
  BOOST_TEST(e.step == step, boost::test_tools::per_element());
  BOOST_TEST(e.description == "the energy");
  const ObservableSeries l = f.read_series("labels");
  BOOST_TEST(l.integer);
  BOOST_TEST(l.shape == (std::vector<std::uint64_t>{3, 2}), boost::test_tools::per_element());
  BOOST_TEST(l.values[3] == 1.0);
  BOOST_TEST(f.read_series("centres").shape == (std::vector<std::uint64_t>{3, 2, 4}), boost::test_tools::per_element());

  // Replacing with another length.
  f.write_series("energy", std::vector<double>{0.0, 1.0}, std::vector<std::int64_t>{0, 1},
                 std::vector<double>{5.0, 6.0});
  BOOST_TEST(f.read_series("energy").values == (std::vector<double>{5.0, 6.0}), boost::test_tools::per_element());
  BOOST_TEST(f.series_names().size() == 3u);
  BOOST_TEST(f.remove_series("centres"));
  BOOST_TEST(!f.remove_series("centres"));
  f.set_text("analysis", "report_json", "{\"a\": 1}");
  BOOST_TEST(*f.text("analysis", "report_json") == "{\"a\": 1}");
  f.close();

  // Readable as plain HDF5 in the H5MD layout.
  const h5::File raw = h5::File::open(file, h5::OpenMode::read_only);
  BOOST_TEST(raw.contains("h5md"));
  BOOST_TEST(raw.open_dataset("observables/energy/value").read_doubles() == (std::vector<double>{5.0, 6.0}),
             boost::test_tools::per_element());
  BOOST_TEST(!raw.open_group("observables/energy").has_attribute("description"));  // replaced whole
}

BOOST_AUTO_TEST_CASE(append_frame_by_frame) {
  TempDir dir;
  ObservablesFile f = ObservablesFile::open(dir.path / "a.h5", true);
  for (int i = 0; i < 5; ++i) {
    const double v[2] = {double(i), -double(i)};
    f.append("pair", 0.1 * i, i, v, {2}, "two values");
    f.append("scalar", 0.1 * i, i, std::span<const double>(v, 1));
  }
  const ObservableSeries p = f.read_series("pair");
  BOOST_TEST(p.shape == (std::vector<std::uint64_t>{5, 2}), boost::test_tools::per_element());
  BOOST_TEST(p.values[9] == -4.0);
  BOOST_TEST(p.step.back() == 4);
  BOOST_TEST(f.read_series("scalar").values.size() == 5u);
  // A whole write replaces what was appended; appending continues the new series.
  f.write_series("scalar", std::vector<double>{9.0}, std::vector<std::int64_t>{90}, std::vector<double>{1.0});
  const double one[1] = {2.0};
  f.append("scalar", 10.0, 100, one);
  BOOST_TEST(f.read_series("scalar").values == (std::vector<double>{1.0, 2.0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sibling_file_when_the_run_file_cannot_be_written) {
  TempDir dir;
  const fs::path run = dir.path / "run.h5";
  { h5::File::create(run, h5::CreateMode::exclusive); }
  BOOST_TEST(ObservablesFile::sibling_path(run) == dir.path / "run.observables.h5");
  BOOST_TEST(ObservablesFile::sibling_path(dir.path / "run.hdf5") == dir.path / "run.hdf5.observables.h5");
  BOOST_TEST(!ObservablesFile::locate(run).has_value());
  {
    // Writable: into the run file.
    ObservablesFile f = ObservablesFile::open_for_run(run);
    BOOST_TEST(f.path() == run);
    f.write_series("x", std::vector<double>{0.0}, std::vector<std::int64_t>{0}, std::vector<double>{1.0});
    BOOST_TEST(!ObservablesFile::locate(run).has_value());  // series alone do not mark an analysis
    f.set_text("analysis", "report_json", "{}");
  }
  BOOST_TEST(*ObservablesFile::locate(run) == run);
  fs::path other = dir.path / "other.h5";
  { h5::File::create(other, h5::CreateMode::exclusive); }
  {
    // Held open read-only (by this process, as a reader would): it cannot be opened for writing.
    const h5::File reader = h5::File::open(other, h5::OpenMode::read_only);
    ObservablesFile f = ObservablesFile::open_for_run(other);
    BOOST_TEST(f.path() == ObservablesFile::sibling_path(other));
    f.write_series("x", std::vector<double>{0.0}, std::vector<std::int64_t>{0}, std::vector<double>{1.0});
    f.set_text("analysis", "report_json", "{}");
  }
  BOOST_TEST(*ObservablesFile::locate(other) == ObservablesFile::sibling_path(other));
  {
    const h5::File sib = h5::File::open(ObservablesFile::sibling_path(other), h5::OpenMode::read_only);
    BOOST_TEST(sib.open_group("observables").attribute_string("run_file").value_or("") == "other.h5");
  }
  if (::geteuid() != 0) {
    // A read-only file (root ignores permissions, so only checked as another user).
    const fs::path ro = dir.path / "ro.h5";
    { h5::File::create(ro, h5::CreateMode::exclusive); }
    fs::permissions(ro, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    BOOST_TEST(ObservablesFile::open_for_run(ro).path() == ObservablesFile::sibling_path(ro));
  }
}

// Every axis of a series is a named dimension (HDF5 dimension scales), so that xarray opens the
// group as it is; the values carry their H5MD unit. (tests/app/test_xarray_groups opens them.)
BOOST_AUTO_TEST_CASE(axes_are_named_dimensions_and_values_have_units) {
  TempDir dir;
  const fs::path file = dir.path / "obs.h5";
  {
    ObservablesFile f = ObservablesFile::open(file, true);
    const std::vector<double> t{0.0, 1.0};
    const std::vector<std::int64_t> step{0, 5};
    f.write_series("centres", t, step, std::vector<double>(2 * 3 * 4, 0.5), {3, 4}, "", {"cluster", "component"}, "1");
    f.write_series("labels", t, step, std::vector<std::int64_t>(2 * 3, 0), {3});
    BOOST_CHECK_THROW(f.write_series("bad", t, step, std::vector<double>(2 * 3, 0.0), {3}, "", {"a", "b"}), IoError);
    BOOST_TEST(f.read_series("centres").values.size() == 24u);
  }
  const h5::File h = h5::File::open(file, h5::OpenMode::read_only);
  const h5::Group centres = h.open_group("observables/centres");
  BOOST_TEST(centres.open_dataset("cluster").is_dimension_only());
  BOOST_TEST(centres.open_dataset("component").shape() == (std::vector<std::uint64_t>{4}),
             boost::test_tools::per_element());
  BOOST_TEST(!centres.open_dataset("time").is_dimension_only());  // a scale with values: a coordinate
  BOOST_TEST(centres.open_dataset("value").attribute_string("unit").value_or("") == "1");
  BOOST_TEST(centres.open_dataset("time").attribute_string("unit").value_or("") == "1");
  BOOST_TEST(h.open_group("observables/labels").open_dataset("axis1").is_dimension_only());  // default name
  BOOST_TEST(!h.open_group("observables/labels").open_dataset("value").has_attribute("unit"));
}
