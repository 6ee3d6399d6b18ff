#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace normdyn::app {

bool ProgressLine::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::show(const ProgressEvent& e) {
  if (!enabled_ || e.done) return;
  // This session's share of the way, for its rate and the time left.
  const double span = e.t_end - e.t_begin;
  const double session_fraction = span > 0.0 ? (e.t - e.t_begin) / span : 1.0;
  const double rate = e.session_seconds > 0.0 ? static_cast<double>(e.session_steps) / e.session_seconds : 0.0;
  char eta[32] = "--";
  if (session_fraction > 1e-6 && session_fraction < 1.0)
    std::snprintf(eta, sizeof eta, "%.0fs", e.session_seconds * (1.0 - session_fraction) / session_fraction);
  std::fprintf(stderr, "\r\033[Knormdyn: t = %.4g / %.4g (%3.0f%%)  %lld steps  %.3g steps/s  ETA %s", e.t, e.t_end,
               100.0 * e.fraction(), static_cast<long long>(e.steps), rate, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace normdyn::app
