#pragma once
// `normdyn analyze`: the analysis library (include/normdyn/analyze/) on a run file, its report
// printed for people. The analysis, the report's JSON and the files it writes are the library's.
#include <cstdio>

#include "normdyn/analyze/outputs.hpp"

namespace normdyn::app {

// The report as text for people (report.cpp).
void print_report(std::FILE* out, const AnalysisOutcome& outcome, const AnalyzeRequest& request);

// Analyzes request.run_file, writes the observables (into RUN.observables.h5, or --observables-file;
// never into the run file) and the report, each replaced atomically, and prints the report unless
// quiet. Returns the process exit code.
int analyze_command(const AnalyzeRequest& request);

}  // namespace normdyn::app
