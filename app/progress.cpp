#include "progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace normdyn::app {

bool ProgressLine::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::~ProgressLine() { finish(); }

double ProgressLine::eta(const ProgressEvent& e) {
  const double dt = e.t - last_t_, dw = e.session_seconds - last_seconds_;
  if (dw > 0.0) {
    const double rate = dt / dw;
    // Exponential average over the last few updates.
    rate_ = samples_ == 0 ? rate : 0.7 * rate_ + 0.3 * rate;
    ++samples_;
  }
  last_t_ = e.t;
  last_seconds_ = e.session_seconds;
  if (samples_ < 3 || e.session_seconds < 1.0 || !(rate_ > 0.0)) return -1.0;
  return (e.t_end - e.t) / rate_;
}

void ProgressLine::show(const ProgressEvent& e) {
  if (style_ == Style::none) return;
  if (samples_ == 0 && last_seconds_ == 0.0) last_t_ = e.t_begin;
  const double left = e.done ? 0.0 : eta(e);
  const double rate = e.session_seconds > 0.0 ? static_cast<double>(e.session_steps) / e.session_seconds : 0.0;
  if (style_ == Style::jsonl) {
    std::fprintf(stderr,
                 "{\"t\": %.17g, \"t_end\": %.17g, \"fraction\": %.6f, \"steps\": %lld, \"frames\": %zu, "
                 "\"total_frames\": %zu, \"session_seconds\": %.3f, \"steps_per_second\": %.6g, \"eta_seconds\": %s, "
                 "\"done\": %s}\n",
                 e.t, e.t_end, e.fraction(), static_cast<long long>(e.steps), e.frames, e.total_frames,
                 e.session_seconds, rate, left >= 0.0 ? std::to_string(left).c_str() : "null",
                 e.done ? "true" : "false");
    std::fflush(stderr);
    return;
  }
  if (e.done && style_ == Style::line) return;
  char eta_text[32] = "--";
  if (left >= 0.0) std::snprintf(eta_text, sizeof eta_text, "%.0fs", left);
  if (style_ == Style::line) {
    std::fprintf(stderr, "\r\033[Knormdyn: t = %.4g / %.4g (%3.0f%%)  %lld steps  %.3g steps/s  ETA %s", e.t, e.t_end,
                 100.0 * e.fraction(), static_cast<long long>(e.steps), rate, eta_text);
    drawn_ = true;
  } else {
    std::fprintf(stderr, "normdyn: t = %.6g / %.6g (%.1f%%), %zu of %zu frames, %lld steps, %.3g steps/s, ETA %s\n",
                 e.t, e.t_end, 100.0 * e.fraction(), e.frames, e.total_frames, static_cast<long long>(e.steps), rate,
                 e.done ? "0s" : eta_text);
  }
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (style_ != Style::line || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace normdyn::app
