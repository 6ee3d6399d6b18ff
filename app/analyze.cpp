#include "analyze.hpp"

#include <cstdio>

#include "normdyn/errors.hpp"
#include "signals.hpp"

namespace normdyn::app {

int analyze_command(const AnalyzeRequest& request) {
  const AnalysisOutcome outcome =
      analyze_file(request, [](const std::filesystem::path& staging) { remove_on_interrupt(staging); });
  if (!request.quiet) print_report(stdout, outcome, request);
  // A result the analysis flags as doubtful is named even when --quiet hides the report.
  if (request.quiet)
    for (const auto& w : outcome.analysis.warnings())
      std::fprintf(stderr, "normdyn: warning %s (%s): %s\n", w.code.c_str(), request.run_file.string().c_str(),
                   w.message.c_str());
  if (request.fail_on_check && outcome.analysis.particles)
    for (const auto& c : outcome.analysis.particles->checks.checks)
      if (c.outcome == analysis::Outcome::fail) return static_cast<int>(ExitCode::numerical_failure);
  return 0;
}

}  // namespace normdyn::app
