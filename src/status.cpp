#include "normdyn/status.hpp"

#include <array>
#include <ostream>
#include <utility>

namespace normdyn {
namespace {
constexpr std::array<std::pair<RunStatus, std::string_view>, 7> kNames{{
    {RunStatus::ok, "ok"},
    {RunStatus::synchronized, "synchronized"},
    {RunStatus::diverged, "diverged"},
    {RunStatus::step_underflow, "step_underflow"},
    {RunStatus::max_steps, "max_steps"},
    {RunStatus::interrupted, "interrupted"},
    {RunStatus::user_term_failed, "user_term_failed"},
}};
static_assert(kNames.size() == static_cast<std::size_t>(kLastRunStatus) + 1, "every status named, the last one last");
}  // namespace

std::string_view to_string(RunStatus s) noexcept {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "unknown";
}

std::optional<RunStatus> run_status_from_string(std::string_view s) noexcept {
  for (const auto& [status, name] : kNames)
    if (name == s) return status;
  return std::nullopt;
}

bool is_numerical_failure(RunStatus s) noexcept {
  return s == RunStatus::diverged || s == RunStatus::step_underflow || s == RunStatus::max_steps ||
         s == RunStatus::user_term_failed;
}

std::ostream& operator<<(std::ostream& os, RunStatus s) { return os << to_string(s); }

ExitCode exit_code(RunStatus s) noexcept {
  if (is_numerical_failure(s)) return ExitCode::numerical_failure;
  if (s == RunStatus::interrupted) return ExitCode::interrupted;
  return ExitCode::ok;
}

}  // namespace normdyn
