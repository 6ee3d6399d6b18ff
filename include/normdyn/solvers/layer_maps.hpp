#pragma once
// The discrete transformer: L layers of step h of a scheme's layer map (spec section 3), the object
// whose h → 0 limit is the ODE. Produces frames through the same SampleObserver as the integrators,
// in the same state layout, so that a depth study compares like with like.
#include <span>

#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn {

// Applies layers of step h from (t0, start) and produces a frame at each sample time, which must
// be a whole number of layers (validated by the configuration). Counters: accepted_steps = layers,
// rhs_evaluations = attention evaluations (one per layer).
IntegrationResult run_layers(AttentionDynamics& dynamics, std::span<const double> x0, double t0, double h,
                             std::span<const double> sample_times, std::int64_t max_layers, SampleObserver& observer,
                             const Checkpoint* resume = nullptr);

}  // namespace normdyn
