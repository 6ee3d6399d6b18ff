#include "normdyn/analyze/outputs.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "normdyn/errors.hpp"
#include "normdyn/io/atomic_file.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/observable_registry.hpp"

namespace normdyn {
namespace {

namespace fs = std::filesystem;

// An output may be absent, a regular file, or (for the report) a character device such as
// /dev/stdout; a FIFO would block, a directory cannot be written.
void require_writable_target(const fs::path& p, const std::string& label, bool device_ok) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return;
  if (S_ISREG(st.st_mode) || (device_ok && S_ISCHR(st.st_mode))) return;
  throw InputError(label, p.string() + " exists and is not a regular file");
}

// Outputs never replace the run being analyzed, each other, or another run.
void check_outputs(const AnalyzeRequest& request, const std::optional<fs::path>& run_file,
                   const fs::path& observables) {
  if (request.json) {
    const std::string label = request.label("json");
    if (run_file && same_file(*request.json, *run_file))
      throw InputError(label, request.json->string() + " is the run file being analyzed");
    if (request.write_observables && same_file(*request.json, observables))
      throw InputError(label, request.json->string() + " is also the observables file");
    require_writable_target(*request.json, label, true);
    // A report replaces an earlier report (or an empty file), never another file.
    std::error_code ec;
    if (fs::is_regular_file(*request.json, ec) && fs::file_size(*request.json, ec) > 0 && !ec &&
        !is_analysis_report(*request.json))
      throw InputError(label, request.json->string() +
                                  " exists and is not a normdyn analysis report, which is all a report replaces: "
                                  "choose another path or remove it");
  }
  if (!request.write_observables) return;
  const std::string label = request.observables_file ? request.label("observables_file") : "run";
  if (run_file && same_file(observables, *run_file))
    throw InputError(label, observables.string() + " is the run file: analyze never writes into a run file");
  require_writable_target(observables, label, false);
  std::error_code ec;
  if (fs::exists(observables, ec) && is_run_file(observables))
    throw InputError(label, observables.string() + " is a normdyn run file; observables go into a file of their own");
}

// The observables as the files have always stored them: H5MD units on the values of the particles'
// series, the registry's unit as a group attribute.
ObservablesDestination write_series(ObservablesFile& file, const RunAnalysis& a) {
  ObservablesDestination where;
  where.file = file.path();
  const bool particles = a.particles.has_value();
  const std::vector<double>& t = particles ? a.particles->t : a.meanfield->t;
  const std::vector<std::int64_t>& step = particles ? a.particles->step : a.meanfield->step;
  bool centres = false;
  for (const ObservableSeriesOut& s : observable_series(a, true)) {
    const bool registry = find_observable(s.name).has_value() || !particles;
    std::string unit;
    if (particles && !s.integer) unit = s.name == "diameter" || s.name == "mean_angular_speed" ? "rad" : "1";
    const auto names = particles ? s.inner_names : std::vector<std::string>{};
    if (s.integer) {
      std::vector<std::int64_t> ints(s.values.begin(), s.values.end());
      file.write_series(s.name, t, step, ints, s.inner, s.description, names, unit);
    } else {
      file.write_series(s.name, t, step, s.values, s.inner, s.description, names, unit);
    }
    if (registry) file.set_series_attribute(s.name, "unit", s.unit);
    for (const auto& [key, value] : s.attributes) file.set_series_attribute(s.name, key, value);
    centres = centres || s.name == "cluster_centre";
    where.series.push_back(s.name);
  }
  // Too many values to keep: an earlier analysis' centres would no longer match the frames.
  if (particles && !centres) file.remove_series("cluster_centre");
  return where;
}

}  // namespace

void write_observables_file(const fs::path& path, const fs::path& run_file,
                            const std::function<void(ObservablesFile&)>& fill, const StagingHook& on_staging) {
  ObservablesFile::replace(path, run_file, fill, on_staging);
}

void write_report(const fs::path& path, const std::string& text, const StagingHook& on_staging) {
  // stdio rather than a stream: errno then names the cause (a full disk, a file-size limit).
  auto write = [&](const fs::path& p) {
    std::FILE* out = std::fopen(p.c_str(), "w");
    if (!out) throw IoError(path.string() + ": cannot write the report: " + std::strerror(errno));
    const bool written = std::fputs(text.c_str(), out) >= 0 && std::fputc('\n', out) != EOF && std::fflush(out) == 0;
    const int err = errno;
    const bool closed = std::fclose(out) == 0;
    if (!written || !closed)
      throw IoError(path.string() + ": cannot write the report: " + std::strerror(written ? errno : err));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode))
    write(path);
  else
    replace_file_atomically(path, write, false, on_staging);
}

AnalysisOutcome analyze_and_write(const FrameSource& source, const AnalyzeRequest& request,
                                  const StagingHook& on_staging) {
  const std::optional<fs::path> run_file = source.file();
  if (request.write_observables && !run_file)
    throw InputError(request.label(request.observables_file ? "observables_file" : "no_write"),
                     "a run held in memory has no run file for an observables file to describe; normdyn.observables "
                     "gives the series as a Dataset");
  // The analysis never writes the run file (a live writer may be appending to it, and an
  // interrupted write would leave it unreadable): the observables go to RUN.observables.h5.
  const fs::path observables = request.observables_file
                                   ? *request.observables_file
                                   : (run_file ? ObservablesFile::sibling_path(*run_file) : fs::path());
  check_outputs(request, run_file, observables);
  AnalysisOutcome out;
  out.analysis = analyze_run(source, request.options);
  ReportContext context{run_file, {}, &request.options};
  if (request.write_observables)
    write_observables_file(
        observables, *run_file,
        [&](ObservablesFile& file) {
          context.observables = write_series(file, out.analysis);
          context.observables.file = observables;
          context.observables.in_run_file = false;
          file.set_text("analysis", "report_json", report_json(out.analysis, context));
        },
        on_staging);
  out.observables = context.observables;
  out.report = report_json(out.analysis, context);
  if (request.json) write_report(*request.json, out.report, on_staging);
  return out;
}

AnalysisOutcome analyze_file(const AnalyzeRequest& request, const StagingHook& on_staging) {
  require_run_file(request.run_file, "run");
  // Checked before the file is read, so that a bad output costs no analysis.
  const fs::path observables =
      request.observables_file ? *request.observables_file : ObservablesFile::sibling_path(request.run_file);
  check_outputs(request, request.run_file, observables);
  const RunFileSource source(request.run_file);
  return analyze_and_write(source, request, on_staging);
}

}  // namespace normdyn
