#pragma once
// How a run ended. Recorded as a string in /summary/status and mapped to the exit code.
#include <iosfwd>
#include <optional>
#include <string_view>

#include "normdyn/errors.hpp"

namespace normdyn {

enum class RunStatus {
  ok,                // reached t_end
  synchronized,      // stopped early: every pairwise cosine exceeded 1 - epsilon
  diverged,          // NaN or Inf in the state
  step_underflow,    // the adaptive step fell below solver.dt_min
  max_steps,         // solver.max_steps accepted steps without reaching t_end
  interrupted,       // SIGINT / SIGTERM; the file holds every frame up to then
  user_term_failed,  // a term of the user's raised, or returned NaN or the wrong shape
};
// The last of them: files store a status as its integer 0 .. kLastRunStatus.
inline constexpr RunStatus kLastRunStatus = RunStatus::user_term_failed;

std::string_view to_string(RunStatus s) noexcept;
std::optional<RunStatus> run_status_from_string(std::string_view s) noexcept;
ExitCode exit_code(RunStatus s) noexcept;
bool is_numerical_failure(RunStatus s) noexcept;
std::ostream& operator<<(std::ostream& os, RunStatus s);

}  // namespace normdyn
