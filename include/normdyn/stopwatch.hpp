#pragma once
// Time for counters, summaries and file stamps: durations on the steady clock (never goes back
// when the system clock is set), dates in UTC.
#include <chrono>
#include <ctime>
#include <string>

namespace normdyn {

using SteadyClock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Now in UTC, ISO 8601 to the second: "2026-03-01T12:00:00Z".
inline std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace normdyn
