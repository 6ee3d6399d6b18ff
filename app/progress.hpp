#pragma once
// Progress of a run on stderr, drawn from the experiment's progress events. On a terminal a line
// redrawn in place (unless --quiet); elsewhere nothing, unless asked for plain lines or JSON lines
// every few seconds (batch logs, cluster jobs, notebooks that read stderr).
#include <chrono>

#include "normdyn/experiment/experiment.hpp"

namespace normdyn::app {

class ProgressLine {
 public:
  enum class Style { none, line, plain, jsonl };
  explicit ProgressLine(Style style) : style_(style) {}
  ~ProgressLine();
  void show(const ProgressEvent& event);
  void finish();  // erases the line
  bool enabled() const { return style_ != Style::none; }
  // Seconds between events the style wants.
  double interval() const { return style_ == Style::line ? 0.2 : 5.0; }

  // Whether stderr is an interactive terminal.
  static bool stderr_is_terminal();

 private:
  // The time left, from the recent rate of progress in t (steps shrink and grow as tokens
  // cluster, so the whole session's average misleads); negative until it can be trusted.
  double eta(const ProgressEvent& e);

  Style style_;
  bool drawn_ = false;
  // Smoothed rate of t per wall second and the event it was last updated at.
  double rate_ = 0.0;
  double last_t_ = 0.0, last_seconds_ = 0.0;
  int samples_ = 0;
};

}  // namespace normdyn::app
