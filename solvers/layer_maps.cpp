#include "normdyn/solvers/layer_maps.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "normdyn/stopwatch.hpp"

namespace normdyn {
namespace {
using Clock = SteadyClock;
}  // namespace

IntegrationResult run_layers(AttentionDynamics& dynamics, std::span<const double> x0, double t0, double h,
                             std::span<const double> sample_times, std::int64_t max_layers, SampleObserver& observer,
                             const Checkpoint* resume) {
  const auto start = Clock::now();
  const StateLayout& layout = dynamics.layout();
  std::vector<double> x(x0.begin(), x0.end());
  IntegrationResult result;
  Counters& counters = result.counters;
  // Layers are counted from t0; layer k maps t0 + k h to t0 + (k + 1) h.
  std::int64_t layer = 0;
  std::size_t next = 0;
  if (resume) {
    x = resume->x;
    counters = resume->counters;
    next = resume->next_sample;
    layer = static_cast<std::int64_t>(std::llround((resume->t - t0) / h));
  }
  auto time_of = [&](std::int64_t k) { return t0 + static_cast<double>(k) * h; };
  auto layer_of = [&](double t) { return static_cast<std::int64_t>(std::llround((t - t0) / h)); };

  auto emit_due = [&]() -> bool {
    while (next < sample_times.size() && layer_of(sample_times[next]) <= layer) {
      const auto t_obs = Clock::now();
      const double t = sample_times[next];
      const CheckpointView checkpoint{time_of(layer), h, x, counters, next + 1};
      const std::size_t index = next++;
      auto stop = observer.on_sample(index, t, counters.accepted_steps, x, checkpoint);
      result.observer_seconds += seconds_since(t_obs);
      if (stop) {
        result.status = *stop;
        result.message = "stopped by the observer at t = " + std::to_string(t);
        return false;
      }
    }
    return true;
  };

  result.message = "reached t_end";
  // Layers that time cannot resolve (steppers.hpp) are refused before they are counted: the count
  // (t - t0) / h would overflow, and every sample would be emitted at once from the first state.
  if (!sample_times.empty() && !step_advances_time(h, sample_times.back())) {
    result.status = RunStatus::step_underflow;
    char text[160];
    std::snprintf(text, sizeof text,
                  "layer step %.6g (solver.dt) is below the resolution of time at t = %.6g: "
                  "the layers cannot advance t",
                  h, sample_times.back());
    result.message = text;
    result.t_reached = resume ? resume->t : t0;
    result.samples_emitted = next;
    result.wall_seconds = seconds_since(start);
    return result;
  }
  const std::int64_t last_layer = sample_times.empty() ? 0 : layer_of(sample_times.back());
  bool running = emit_due();
  while (running && layer < last_layer) {
    try {
      dynamics.layer(layout.theta(x.data()), layout.r(x.data()), time_of(layer), h);
    } catch (const TermFailure& e) {
      result.status = RunStatus::user_term_failed;
      result.message = e.what();
      break;
    }
    ++layer;
    ++counters.accepted_steps;
    ++counters.rhs_evaluations;
    if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); })) {
      result.status = RunStatus::diverged;
      result.message = "non-finite state after layer " + std::to_string(layer);
      break;
    }
    running = emit_due();
    if (!running) break;
    if (max_layers > 0 && counters.accepted_steps >= max_layers && layer < last_layer) {
      result.status = RunStatus::max_steps;
      result.message = "reached solver.max_steps = " + std::to_string(max_layers) + " layers";
      break;
    }
    const auto t_obs = Clock::now();
    auto stop = observer.on_step(time_of(layer), counters);
    result.observer_seconds += seconds_since(t_obs);
    if (stop) {
      result.status = *stop;
      result.message = "stopped at t = " + std::to_string(time_of(layer));
      break;
    }
  }
  result.t_reached = time_of(layer);
  result.samples_emitted = next;
  result.wall_seconds = seconds_since(start) - result.observer_seconds;
  return result;
}

}  // namespace normdyn
