#pragma once
// Time integration of an OdeSystem with Boost.Odeint steppers. The step loop is ours, so that
//  * frames are produced at exactly the requested sample times: by dopri5's dense output (its
//    4th-order continuous extension), or by landing steps on the sample times (the other methods);
//  * the integrator never steps across a breakpoint of the system (regime switches, per-layer
//    attention matrices): it lands on it and restarts there;
//  * after every accepted step the state is retracted onto the constraint manifold (unit
//    directions) when `retract` is set, and FSAL derivatives are recomputed at the retracted state;
//  * outcomes are counters and a status (ok, diverged, step_underflow, max_steps, or a status
//    chosen by the observer), never exceptions;
//  * a run can be resumed from a Checkpoint and repeats the same steps (bitwise for dopri5,
//    cash_karp54, fehlberg78, rk4 and euler; bulirsch_stoer restarts its order control).
// The methods are the rows of steppers.hpp; only solvers/integrator.cpp includes odeint.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/checkpoint.hpp"
#include "normdyn/ode_system.hpp"
#include "normdyn/status.hpp"
#include "normdyn/steppers.hpp"

namespace normdyn {

struct IntegratorOptions {
  Method method = Method::dopri5;  // any row of steppers.hpp but the layer maps (run_layers)
  double rtol = 1e-8;
  double atol = 1e-10;
  double dt = 0.01;            // fixed steppers: largest step; adaptive: first trial step
  double dt_min = 1e-12;       // adaptive: status step_underflow below this
  std::int64_t max_steps = 0;  // 0: unlimited
  bool retract = true;
};

class SampleObserver {
 public:
  virtual ~SampleObserver() = default;
  // Sample `index` at time t (exactly a requested time) after `step` accepted steps. Returning a
  // status ends the run with it (e.g. synchronized); the sample itself is kept.
  virtual std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t step, std::span<const double> x,
                                             const CheckpointView& checkpoint) = 0;
  // After every accepted step. Returning a status ends the run (e.g. interrupted).
  virtual std::optional<RunStatus> on_step(double /*t*/, const Counters& /*counters*/) { return std::nullopt; }
};

struct IntegrationResult {
  RunStatus status = RunStatus::ok;
  std::string message;
  double t_reached = 0.0;
  std::size_t samples_emitted = 0;  // including those before a resume point
  Counters counters;
  double wall_seconds = 0.0;      // in the integrator, excluding the observer's time
  double observer_seconds = 0.0;  // in on_sample / on_step (output, analysis)
};

// Integrates from (t0, x0) through `sample_times` (increasing, >= t0). A sample at exactly t0 is
// produced from x0. With `resume`, starts from the checkpoint instead of (t0, x0). Throws
// std::invalid_argument for a method of StepControl::layers (those run through run_layers).
IntegrationResult integrate(OdeSystem& system, std::span<const double> x0, double t0,
                            std::span<const double> sample_times, const IntegratorOptions& options,
                            SampleObserver& observer, const Checkpoint* resume = nullptr);

}  // namespace normdyn
