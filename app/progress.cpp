#include "progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace normdyn::app {

bool ProgressLine::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(double t_begin, double t_end, bool enabled)
    : t_begin_(t_begin), t_end_(t_end), enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::update(double t, std::int64_t steps) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double fraction = t_end_ > t_begin_ ? (t - t_begin_) / (t_end_ - t_begin_) : 1.0;
  const double rate = elapsed > 0.0 ? static_cast<double>(steps) / elapsed : 0.0;
  char eta[32] = "--";
  if (fraction > 1e-6 && fraction < 1.0) std::snprintf(eta, sizeof eta, "%.0fs", elapsed * (1.0 - fraction) / fraction);
  std::fprintf(stderr, "\r\033[Knormdyn: t = %.4g / %.4g (%3.0f%%)  %lld steps  %.3g steps/s  ETA %s", t, t_end_,
               100.0 * fraction, static_cast<long long>(steps), rate, eta);
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
