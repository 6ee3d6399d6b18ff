#pragma once
// What `normdyn analyze` and normdyn.analyze write: the observables file (RUN.observables.h5 or
// --observables-file; never the run file) and the JSON report, each replaced atomically, after
// checking that neither is the run, the other output or another run.
#include <filesystem>
#include <functional>
#include <string>

#include "normdyn/analyze/analyze.hpp"
#include "normdyn/analyze/options.hpp"
#include "normdyn/analyze/report.hpp"
#include "normdyn/io/observables_file.hpp"

namespace normdyn {

// Called with each staging file before it is written (the command line removes them on a signal).
using StagingHook = std::function<void(const std::filesystem::path&)>;

struct AnalysisOutcome {
  RunAnalysis analysis;
  std::string report;  // the JSON report
  ObservablesDestination observables;
};

// Analyzes `source` as `request` asks and writes what it asks for. A run in memory (no file) has no
// observables file: asking for one is an InputError naming observables_file / no_write.
AnalysisOutcome analyze_and_write(const FrameSource& source, const AnalyzeRequest& request,
                                  const StagingHook& on_staging = {});
// The same for request.run_file (InputError unless it is a run file; the outputs are checked before
// anything is read).
AnalysisOutcome analyze_file(const AnalyzeRequest& request, const StagingHook& on_staging = {});

// The observables file of `run_file`, filled by `fill` under its writer lock (ObservablesFile::replace).
void write_observables_file(const std::filesystem::path& path, const std::filesystem::path& run_file,
                            const std::function<void(ObservablesFile&)>& fill, const StagingHook& on_staging = {});
// The report: a character device (e.g. /dev/stdout) written directly, a file replaced atomically.
void write_report(const std::filesystem::path& path, const std::string& text, const StagingHook& on_staging = {});

}  // namespace normdyn
