#pragma once
// The analysis report as JSON (keys documented in docs/guide/analysis.md): the same text for
// `normdyn analyze --json`, the observables file's /analysis@report_json and normdyn.analyze.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/analyze/analyze.hpp"

namespace normdyn {

// Where the observables went.
struct ObservablesDestination {
  std::filesystem::path file;  // empty: not written
  bool in_run_file = false;
  std::vector<std::string> series;
};

struct ReportContext {
  std::optional<std::filesystem::path> run_file;  // none: a run in memory (the report says null)
  ObservablesDestination observables;
  const AnalyzeOptions* options = nullptr;
};

std::string report_json(const RunAnalysis& analysis, const ReportContext& context);

// Whether a file holds a report of report_json (JSON whose "schema" is a normdyn.analysis one): the
// only kind of existing file that `--json` replaces, besides an empty one.
bool is_analysis_report(const std::filesystem::path& path);

}  // namespace normdyn
