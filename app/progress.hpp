#pragma once
// A one-line progress report on stderr, drawn from the experiment's progress events: only when
// stderr is a terminal and not --quiet, so that scripts and CI logs stay clean.
#include "normdyn/experiment/experiment.hpp"

namespace normdyn::app {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine();
  void show(const ProgressEvent& event);
  void finish();  // erases the line
  bool enabled() const { return enabled_; }

  // Whether stderr is an interactive terminal.
  static bool stderr_is_terminal();

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace normdyn::app
