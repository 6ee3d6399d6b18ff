#pragma once
// Per-frame observables in the H5MD layout, in the run file or in a file of their own:
//
//   /observables/<name>/value   [frames] or [frames, k...]; float64 (counts and labels: int64)
//   /observables/<name>/time    [frames] float64
//   /observables/<name>/step    [frames] int64
//   /observables/<name>         attributes: description, and any others the writer sets
//   /observables/<name>/<axis>  dimensions naming the inner axes (HDF5 dimension scales; time
//                               names the first), so that xarray opens the group as it is
//
// A series is written whole (replacing any series of that name) or appended frame by frame (the
// value, time and step datasets are extendable), so that the analysis and a running simulation can
// use the same writer. Free-form results (e.g. the analysis report as JSON) go into attributes of
// another group (`set_text`). No HDF5 type crosses this interface.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace normdyn {

// A series as read back.
struct ObservableSeries {
  std::vector<std::uint64_t> shape;  // [frames, k...]
  bool integer = false;              // int64 values (else float64)
  std::vector<double> values;        // flattened, row-major (int64 converted)
  std::vector<double> time;
  std::vector<std::int64_t> step;
  std::string description;
};

class ObservablesFile {
 public:
  // Opens `path` read-write; creates it (with the /h5md header) if it does not exist and `create`.
  static ObservablesFile open(const std::filesystem::path& path, bool create);
  // Where the observables of a run go: the run file itself if it can be opened for writing, else the
  // sibling file sibling_path(run_file) (created if needed, with /observables@run_file naming the run).
  static ObservablesFile open_for_run(const std::filesystem::path& run_file);
  // Writes the observables file `path` of the run `run_file` as `normdyn analyze` does, so that
  // nothing can damage it or the run: under the writer lock of `path` (io/file_lock.hpp), `fill`
  // writes into a copy of the existing file (or a new one), which then replaces `path` in one rename
  // (io/atomic_file.hpp; `on_staging` as there). /observables@run_file names the run.
  static void replace(const std::filesystem::path& path, const std::filesystem::path& run_file,
                      const std::function<void(ObservablesFile&)>& fill,
                      const std::function<void(const std::filesystem::path&)>& on_staging = {});
  // RUN.h5 → RUN.observables.h5 (any other name: name + ".observables.h5").
  static std::filesystem::path sibling_path(const std::filesystem::path& run_file);
  // The file holding a run's analysis, if any: the run file if `normdyn analyze` wrote its report
  // there (/analysis), else the sibling file if it exists. (Every run file has /observables: runs
  // write energy, variance and minimum cosine per frame themselves.)
  static std::optional<std::filesystem::path> locate(const std::filesystem::path& run_file);

  ~ObservablesFile();
  ObservablesFile(ObservablesFile&&) noexcept;
  ObservablesFile& operator=(ObservablesFile&&) noexcept;

  // Writes a whole series, replacing any of that name. `values` holds frames × Π inner_dims values.
  // `axis_names` names the inner dimensions (default axis1, axis2, ...; time is the first), `unit`
  // is the H5MD unit of the values (empty: none, as for counts and labels).
  void write_series(const std::string& name, std::span<const double> time, std::span<const std::int64_t> step,
                    std::span<const double> values, const std::vector<std::uint64_t>& inner_dims = {},
                    const std::string& description = "", const std::vector<std::string>& axis_names = {},
                    const std::string& unit = "");
  void write_series(const std::string& name, std::span<const double> time, std::span<const std::int64_t> step,
                    std::span<const std::int64_t> values, const std::vector<std::uint64_t>& inner_dims = {},
                    const std::string& description = "", const std::vector<std::string>& axis_names = {},
                    const std::string& unit = "");
  // Appends one frame, creating the series on first use with these inner dimensions.
  void append(const std::string& name, double time, std::int64_t step, std::span<const double> values,
              const std::vector<std::uint64_t>& inner_dims = {}, const std::string& description = "");
  // Sets a string attribute of the series group.
  void set_series_attribute(const std::string& name, const std::string& key, const std::string& value);
  bool remove_series(const std::string& name);
  std::vector<std::string> series_names() const;
  ObservableSeries read_series(const std::string& name) const;

  // A string attribute `key` of group `group` (created if needed), e.g. ("analysis", "report_json").
  void set_text(const std::string& group, const std::string& key, const std::string& text);
  std::optional<std::string> text(const std::string& group, const std::string& key) const;

  const std::filesystem::path& path() const;
  void flush();
  void close();

 private:
  ObservablesFile();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace normdyn
