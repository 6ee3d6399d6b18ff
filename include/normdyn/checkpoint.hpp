#pragma once
// Counters of an integration and the point from which it can restart and repeat the same steps.
// Plain data shared by the integrators (which produce them) and the run file (which stores them).
#include <array>
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

namespace normdyn {

// The scalars of a checkpoint as one record of doubles, the one encoding used wherever a
// checkpoint is stored or sent (the run file's /checkpoint/<slot>/record, MPI broadcasts): t, dt,
// accepted, rejected and rhs evaluations, max drift, next sample, and the integration seconds of
// the sessions so far. Counts are exact in float64 up to 2^53.
inline constexpr std::size_t kCheckpointRecordSize = 8;

inline std::array<double, kCheckpointRecordSize> encode_checkpoint_record(const Checkpoint& c, double wall_seconds) {
  return {c.t,
          c.dt,
          static_cast<double>(c.counters.accepted_steps),
          static_cast<double>(c.counters.rejected_steps),
          static_cast<double>(c.counters.rhs_evaluations),
          c.counters.max_constraint_drift,
          static_cast<double>(c.next_sample),
          wall_seconds};
}

// The inverse of encode_checkpoint_record (the state x is left empty). `record` must hold
// kCheckpointRecordSize values.
inline Checkpoint decode_checkpoint_record(std::span<const double> record, double& wall_seconds) {
  Checkpoint c;
  c.t = record[0];
  c.dt = record[1];
  c.counters.accepted_steps = static_cast<std::int64_t>(record[2]);
  c.counters.rejected_steps = static_cast<std::int64_t>(record[3]);
  c.counters.rhs_evaluations = static_cast<std::int64_t>(record[4]);
  c.counters.max_constraint_drift = record[5];
  c.next_sample = static_cast<std::size_t>(record[6]);
  wall_seconds = record[7];
  return c;
}

}  // namespace normdyn
