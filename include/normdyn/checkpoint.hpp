#pragma once
// Counters of an integration and the point from which it can restart and repeat the same steps.
// Plain data shared by the integrators (which produce them) and the run file (which stores them).
#include <cstdint>
#include <span>
#include <vector>

namespace normdyn {

struct Counters {
  std::int64_t accepted_steps = 0;
  std::int64_t rejected_steps = 0;
  std::int64_t rhs_evaluations = 0;
  double max_constraint_drift = 0.0;  // largest violation found before a retraction
};

// Where integration can restart and repeat the same steps: the state at the start of the step in
// progress, its time and trial step, the counters before it, and the next sample to produce.
struct CheckpointView {
  double t = 0.0;
  double dt = 0.0;
  std::span<const double> x;
  Counters counters;
  std::size_t next_sample = 0;
};

struct Checkpoint {
  double t = 0.0;
  double dt = 0.0;
  std::vector<double> x;
  Counters counters;
  std::size_t next_sample = 0;

  static Checkpoint from(const CheckpointView& v) {
    return Checkpoint{v.t, v.dt, std::vector<double>(v.x.begin(), v.x.end()), v.counters, v.next_sample};
  }
  CheckpointView view() const { return CheckpointView{t, dt, x, counters, next_sample}; }
};

}  // namespace normdyn
