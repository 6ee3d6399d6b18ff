#include "analyze.hpp"

#include "normdyn/errors.hpp"
#include "signals.hpp"

namespace normdyn::app {

int analyze_command(const AnalyzeRequest& request) {
  const AnalysisOutcome outcome =
      analyze_file(request, [](const std::filesystem::path& staging) { remove_on_interrupt(staging); });
  if (!request.quiet) print_report(stdout, outcome, request);
  if (request.fail_on_check && outcome.analysis.particles)
    for (const auto& c : outcome.analysis.particles->checks.checks)
      if (c.outcome == analysis::Outcome::fail) return static_cast<int>(ExitCode::numerical_failure);
  return 0;
}

}  // namespace normdyn::app
