#pragma once
// The time-stepping methods of a particle run (solver.method), one row each. The rows generate the
// `Method` enumeration, its names, `is_adaptive`, the validation of the solver keys that apply only
// to some methods, the method table of `normdyn config-reference` (and so of the README), and the
// integrator's dispatch: solvers/integrator.cpp picks the loop from the row (dense output: samples
// from the continuous extension; adaptive: controlled steps landing on every sample time; fixed:
// equal steps of at most solver.dt) and needs only the odeint type of the new method. The recipe
// is in docs/ARCHITECTURE.md.
//
// This header is free of odeint: the configuration sits below the solvers.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

namespace normdyn {

// How a method advances the state.
enum class StepControl {
  adaptive,    // error-controlled steps (solver.rtol, solver.atol, solver.dt_min)
  fixed,       // equal steps of at most solver.dt
  stochastic,  // equal steps of at most solver.dt of a stochastic method (weak order `order`); the
               // only methods of a run with noise
  layers,      // the scheme's discrete layer maps of step solver.dt (solvers/layer_maps.hpp), not an ODE solver
};

// X(name, control, order, dense_output, description). `order` is the order of the solution the
// method carries forward (0: variable); `dense_output`: samples come from a continuous extension of
// each step, so sample times do not shorten the steps.
#define NORMDYN_METHODS(X)                                                                                  \
  X(dopri5, adaptive, 5, true, "Dormand-Prince 5(4), FSAL; samples from its 4th-order dense output")        \
  X(cash_karp54, adaptive, 5, false, "Cash-Karp 5(4)")                                                      \
  X(fehlberg78, adaptive, 8, false, "Runge-Kutta-Fehlberg 7(8)")                                            \
  X(bulirsch_stoer, adaptive, 0, false, "Bulirsch-Stoer extrapolation; adapts its order")                   \
  X(rk4, fixed, 4, false, "classical Runge-Kutta")                                                          \
  X(euler, fixed, 1, false, "explicit Euler")                                                               \
  X(stratonovich_heun, stochastic, 1, false,                                                                \
    "stochastic Heun (Stratonovich; weak order 1, deterministic order 2), retracted after each stage")      \
  X(euler_maruyama, stochastic, 1, false,                                                                   \
    "Euler-Maruyama with retraction (weak order 1); the Stratonovich flow only where the noise's "          \
    "coefficient depends on a token through P_theta alone")                                                 \
  X(discrete, layers, 1, false, "the discrete transformer: one layer map of step h = solver.dt per layer")  \
  X(split, fixed, 2, false,                                                                                 \
    "model.kind = \"meanfield\" only: the solver's own step of at most solver.dt, Strang splitting of the " \
    "exact diffusion and the transport of meanfield.method")

enum class Method {
#define NORMDYN_METHOD_ENUM(name, control, order, dense, description) name,
  NORMDYN_METHODS(NORMDYN_METHOD_ENUM)
#undef NORMDYN_METHOD_ENUM
};

struct MethodInfo {
  Method method;
  std::string_view name;  // the value of solver.method
  StepControl control;
  int order;  // 0: variable
  bool dense_output;
  std::string_view description;
};

inline constexpr std::array kMethods{
#define NORMDYN_METHOD_ROW(name, control, order, dense, description) \
  MethodInfo{Method::name, #name, StepControl::control, order, dense, description},
    NORMDYN_METHODS(NORMDYN_METHOD_ROW)
#undef NORMDYN_METHOD_ROW
};

constexpr const MethodInfo& method_info(Method m) { return kMethods[static_cast<std::size_t>(m)]; }
constexpr std::string_view to_string(Method m) { return method_info(m).name; }
constexpr bool is_adaptive(Method m) { return method_info(m).control == StepControl::adaptive; }
constexpr std::string_view to_string(StepControl c) {
  switch (c) {
    case StepControl::adaptive:
      return "adaptive";
    case StepControl::fixed:
      return "fixed step";
    case StepControl::stochastic:
      return "stochastic";
    case StepControl::layers:
      return "layer maps";
  }
  return "?";
}

// Steps that time can resolve. Near t the doubles are at most |t| 2^-52 apart, so a step h >= |t| 2^-52
// advances t (t + h > t), and one below it may round back to t: such a run would take its steps without
// moving (or, counted as t_end / h, more steps than an int64 holds) and end "ok" at its start. Fixed
// steps, stochastic steps and layer maps refuse h below this at t_end (solver.dt; the configuration
// checks it before a run, the step loops again), and an adaptive step that does not advance t ends the
// run with status step_underflow. It also bounds a run's number of fixed steps by 2^52.
inline constexpr double kTimeResolution = 0x1p-52;
inline bool step_advances_time(double h, double t) { return h >= std::abs(t) * kTimeResolution; }

// solver.method = "auto" (the default): dopri5 or fehlberg78, whichever is expected to need fewer
// right-hand sides for this tolerance and these sample times. The expectation is a cost model fitted
// to bench/work_precision.py (Post-LN, beta = 1, n = 32 and 256, rtol 1e-3 ... 1e-12, atol = rtol / 100):
// per unit of time, dopri5 takes about 78 (1e-8 / rtol)^(1/5) evaluations and fehlberg78 about
// 38 (1e-8 / rtol)^(1/8) (its 13 stages per step included). fehlberg78 has no dense output, so its
// steps also end at every sample time: at least one step of 13 evaluations per sample interval.
// With the default 201 frames over t = 20 that keeps dopri5 down to rtol ~1e-9; with few frames
// fehlberg78 is chosen from rtol ~1e-5 on (3.4 times fewer evaluations at rtol 1e-10).
// Bulirsch-Stoer is never chosen: its steps cannot be resumed bit for bit.
// `intervals`: (length, how many) of the stretches between consecutive sample times, from t_start.
inline Method auto_method(double rtol, std::span<const std::pair<double, double>> intervals) {
  const double dopri5_rate = 78.0 * std::pow(1e-8 / rtol, 1.0 / 5.0);
  const double fehlberg_rate = 38.0 * std::pow(1e-8 / rtol, 1.0 / 8.0);
  const double fehlberg_step = 13.0 / fehlberg_rate;
  double dopri5 = 0.0, fehlberg = 0.0;
  for (const auto& [gap, count] : intervals) {
    if (!(gap > 0.0)) continue;
    dopri5 += count * dopri5_rate * gap;
    fehlberg += count * 13.0 * std::max(1.0, std::ceil(gap / fehlberg_step));
  }
  return fehlberg < dopri5 ? Method::fehlberg78 : Method::dopri5;
}

}  // namespace normdyn
