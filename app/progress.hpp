#pragma once
// A one-line progress report on stderr: only when stderr is a terminal and not --quiet, so that
// scripts and CI logs stay clean. Rate-limited to a few updates per second.
#include <chrono>
#include <cstdint>

namespace normdyn::app {

class ProgressLine {
 public:
  ProgressLine(double t_begin, double t_end, bool enabled);
  ~ProgressLine();
  void update(double t, std::int64_t steps);
  void finish();  // erases the line
  bool enabled() const { return enabled_; }

  // Whether stderr is an interactive terminal.
  static bool stderr_is_terminal();

 private:
  double t_begin_, t_end_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace normdyn::app
