// The one translation unit that includes Boost.Odeint.
//
// The state is a std::vector<double> with odeint's range_algebra: the best-tested odeint path, and
// one that sidesteps the Eigen 3.4 / Boost 1.74 incompatibility of 2-D Eigen states (pitfalls.md).
// The particle state [θ | r] is mapped onto Eigen matrices inside the right-hand side instead.
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/stopwatch.hpp"

#include <algorithm>
#include <boost/numeric/odeint.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace normdyn {
namespace odeint = boost::numeric::odeint;
namespace {

using State = std::vector<double>;
using Clock = std::chrono::steady_clock;

// The system as odeint sees it; counts right-hand-side evaluations.
struct CountingSystem {
  OdeSystem* system;
  std::int64_t* evaluations;
  void operator()(const State& x, State& dxdt, double t) const {
    ++*evaluations;
    system->rhs(x.data(), dxdt.data(), t);
  }
};

bool all_finite(const State& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

// The loop state shared by the three drivers below.
class Run {
 public:
  Run(OdeSystem& system, std::span<const double> x0, double t0, std::span<const double> samples,
      const IntegratorOptions& options, SampleObserver& observer, const Checkpoint* resume)
      : system_(system),
        samples_(samples),
        options_(options),
        observer_(observer),
        x_(x0.begin(), x0.end()),
        t_(t0),
        dt_(options.dt) {
    if (resume) {
      x_ = resume->x;
      t_ = resume->t;
      dt_ = resume->dt;
      counters_ = resume->counters;
      next_sample_ = resume->next_sample;
    } else if (options_.retract) {
      counters_.max_constraint_drift = std::max(counters_.max_constraint_drift, system_.retract(x_.data()));
    }
    if (!samples_.empty()) t_final_ = samples_.back();
    x_new_.resize(x_.size());
    sample_.resize(x_.size());
    dxdt_.resize(x_.size());
    dxdt_new_.resize(x_.size());
  }

  CountingSystem counting() { return CountingSystem{&system_, &counters_.rhs_evaluations}; }

  // Ends of the smooth pieces after t: breakpoints, optionally every sample time, and t_final.
  std::vector<double> piece_ends(bool include_samples) const {
    std::vector<double> ends = system_.breakpoints(t_, t_final_);
    if (include_samples)
      for (std::size_t i = next_sample_; i < samples_.size(); ++i)
        if (samples_[i] > t_) ends.push_back(samples_[i]);
    ends.push_back(t_final_);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    ends.erase(std::remove_if(ends.begin(), ends.end(), [&](double e) { return e <= t_; }), ends.end());
    return ends;
  }

  // Emits the samples at exactly the current time (the start, or a step that landed on one).
  bool emit_samples_at_current_time(const CheckpointView& checkpoint) {
    while (next_sample_ < samples_.size() && samples_[next_sample_] <= t_) {
      if (!emit(x_, samples_[next_sample_], checkpoint)) return false;
    }
    return true;
  }

  // Emits sample `next_sample_` from `state` (already on the manifold); false if the run ends.
  bool emit(const State& state, double t, CheckpointView checkpoint) {
    const auto start = Clock::now();
    checkpoint.next_sample = next_sample_ + 1;
    const std::size_t index = next_sample_++;
    auto stop = observer_.on_sample(index, t, counters_.accepted_steps, state, checkpoint);
    observer_seconds_ += seconds_since(start);
    if (stop) {
      finish(*stop, "stopped by the observer at t = " + std::to_string(t));
      t_reached_ = t;
      return false;
    }
    return true;
  }

  // After an accepted step to (x_new_, t_new): checks, retraction, bookkeeping. False: run ends.
  bool accept(double t_new) {
    ++counters_.accepted_steps;
    if (!all_finite(x_new_)) {
      finish(RunStatus::diverged, "non-finite state after the step to t = " + std::to_string(t_new));
      return false;
    }
    if (options_.retract)
      counters_.max_constraint_drift = std::max(counters_.max_constraint_drift, system_.retract(x_new_.data()));
    return true;
  }

  bool after_step() {
    if (options_.max_steps > 0 && counters_.accepted_steps >= options_.max_steps && t_ < t_final_) {
      finish(RunStatus::max_steps,
             "reached solver.max_steps = " + std::to_string(options_.max_steps) + " at t = " + std::to_string(t_));
      return false;
    }
    const auto start = Clock::now();
    auto stop = observer_.on_step(t_, counters_);
    observer_seconds_ += seconds_since(start);
    if (stop) {
      finish(*stop, "stopped at t = " + std::to_string(t_));
      return false;
    }
    return true;
  }

  // A step that time cannot resolve (steppers.hpp) leaves t where it is: the run ends there.
  void stalls(double h, double t_at) {
    finish(RunStatus::step_underflow, "step size " + format_step(h) + " (solver.dt = " + format_step(options_.dt) +
                                          ") is below the resolution of time at t = " + format_step(t_at) +
                                          ": the steps cannot advance t from " + format_step(t_));
  }
  static std::string format_step(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
  }

  bool step_too_small(double dt) {
    if (dt >= options_.dt_min) return false;
    finish(RunStatus::step_underflow, "step size " + std::to_string(dt) + " fell below solver.dt_min = " +
                                          std::to_string(options_.dt_min) + " at t = " + std::to_string(t_));
    return true;
  }

  void finish(RunStatus status, std::string message) {
    status_ = status;
    message_ = std::move(message);
    finished_ = true;
  }

  IntegrationResult result(Clock::time_point start) const {
    IntegrationResult r;
    r.status = status_;
    r.message = finished_ ? message_ : "reached t_end";
    r.t_reached = t_reached_.value_or(t_);
    r.samples_emitted = next_sample_;
    r.counters = counters_;
    r.observer_seconds = observer_seconds_;
    r.wall_seconds = seconds_since(start) - observer_seconds_;
    return r;
  }

  // The trial step from t_ towards the piece end: lands exactly on it when within reach.
  double clamp_to(double end, double dt) const {
    const double remaining = end - t_;
    return dt >= remaining * (1.0 - 1e-12) ? remaining : dt;
  }

  OdeSystem& system_;
  std::span<const double> samples_;
  const IntegratorOptions& options_;
  SampleObserver& observer_;
  State x_, x_new_, sample_, dxdt_, dxdt_new_;
  double t_ = 0.0;
  double dt_ = 0.0;
  double t_final_ = 0.0;
  Counters counters_;
  std::size_t next_sample_ = 0;
  double observer_seconds_ = 0.0;
  RunStatus status_ = RunStatus::ok;
  std::string message_;
  bool finished_ = false;
  std::optional<double> t_reached_;
};

// Methods with dense output (an FSAL controlled stepper with calc_state, e.g. dopri5): samples
// come from the continuous extension of each step.
template <class Controlled>
void run_dense(Run& run, Controlled controlled) {
  if (!run.emit_samples_at_current_time({run.t_, run.dt_, run.x_, run.counters_, 0})) return;
  for (double end : run.piece_ends(false)) {
    run.system_.enter_piece(run.t_, end);
    run.counting()(run.x_, run.dxdt_, run.t_);
    while (run.t_ < end) {
      const Counters before = run.counters_;
      double dt = run.clamp_to(end, run.dt_);
      const double dt_tried = dt;
      const bool lands = dt == end - run.t_;
      double t = run.t_;
      const auto result = controlled.try_step(run.counting(), run.x_, run.dxdt_, t, run.x_new_, run.dxdt_new_, dt);
      if (result == odeint::fail) {
        ++run.counters_.rejected_steps;
        run.dt_ = dt;
        if (run.step_too_small(dt)) return;
        continue;
      }
      const double t_old = run.t_;
      const double t_new = lands ? end : t;
      if (!lands && !(t_new > t_old)) return run.stalls(dt_tried, t_new);
      if (!run.accept(t_new)) return;
      // Samples inside (t_old, t_new] from the continuous extension of this step. It uses the
      // stages of the step just taken, so it runs before the FSAL derivative is refreshed.
      const CheckpointView checkpoint{t_old, dt_tried, run.x_, before, 0};
      while (run.next_sample_ < run.samples_.size() && run.samples_[run.next_sample_] <= t_new) {
        const double ts = run.samples_[run.next_sample_];
        if (ts == t_new) {
          run.sample_ = run.x_new_;
        } else {
          controlled.stepper().calc_state(ts, run.sample_, run.x_, run.dxdt_, t_old, run.x_new_, run.dxdt_new_, t_new);
          if (run.options_.retract) run.system_.retract(run.sample_.data());
        }
        if (!run.emit(run.sample_, ts, checkpoint)) {
          run.t_ = t_new;
          return;
        }
      }
      if (run.options_.retract) run.counting()(run.x_new_, run.dxdt_new_, t_new);
      std::swap(run.x_, run.x_new_);
      std::swap(run.dxdt_, run.dxdt_new_);
      run.t_ = t_new;
      run.dt_ = dt;
      if (!run.after_step()) return;
    }
  }
}

// Controlled steppers without dense output: steps land on every sample time.
template <class Controlled>
void run_controlled(Run& run, Controlled controlled) {
  if (!run.emit_samples_at_current_time({run.t_, run.dt_, run.x_, run.counters_, 0})) return;
  for (double end : run.piece_ends(true)) {
    run.system_.enter_piece(run.t_, end);
    run.counting()(run.x_, run.dxdt_, run.t_);
    while (run.t_ < end) {
      double dt = run.clamp_to(end, run.dt_);
      const double dt_tried = dt;
      const bool lands = dt == end - run.t_;
      double t = run.t_;
      const auto result = controlled.try_step(run.counting(), run.x_, run.dxdt_, t, run.x_new_, dt);
      if (result == odeint::fail) {
        ++run.counters_.rejected_steps;
        run.dt_ = dt;
        if (run.step_too_small(dt)) return;
        continue;
      }
      const double t_new = lands ? end : t;
      if (!lands && !(t_new > run.t_)) return run.stalls(dt_tried, t_new);
      if (!run.accept(t_new)) return;
      std::swap(run.x_, run.x_new_);
      run.t_ = t_new;
      // Keep the controller's proposal unless the step was cut short to land on the piece end.
      if (!lands || dt > run.dt_) run.dt_ = dt;
      if (run.t_ < end) run.counting()(run.x_, run.dxdt_, run.t_);
      if (!run.after_step()) return;
    }
    if (!run.emit_samples_at_current_time({run.t_, run.dt_, run.x_, run.counters_, 0})) return;
  }
}

// Fixed steps of at most dt, dividing every interval between sample times and breakpoints evenly.
// `step(run, t, h, t_next)` leaves the state after the step from (run.x_, t) in run.x_new_; t_next
// is the time the step lands on, the next step's t bit for bit.
template <class Step>
void run_equal_steps(Run& run, Step step) {
  if (!run.emit_samples_at_current_time({run.t_, run.dt_, run.x_, run.counters_, 0})) return;
  for (double end : run.piece_ends(true)) {
    const double begin = run.t_;
    run.system_.enter_piece(begin, end);
    const double span = end - begin;
    // Steps time cannot resolve are refused before they are counted (the count would overflow).
    if (span > run.options_.dt && !step_advances_time(run.options_.dt, end)) return run.stalls(run.options_.dt, end);
    const auto steps = static_cast<std::int64_t>(std::max(1.0, std::ceil(span / run.options_.dt * (1.0 - 1e-12))));
    const double h = span / static_cast<double>(steps);
    for (std::int64_t k = 0; k < steps; ++k) {
      const double t_new = k + 1 == steps ? end : begin + static_cast<double>(k + 1) * h;
      step(run, begin + static_cast<double>(k) * h, h, t_new);
      if (!run.accept(t_new)) return;
      std::swap(run.x_, run.x_new_);
      run.t_ = t_new;
      if (!run.after_step()) return;
    }
    if (!run.emit_samples_at_current_time({run.t_, run.dt_, run.x_, run.counters_, 0})) return;
  }
}

template <class Stepper>
void run_fixed(Run& run, Stepper stepper) {
  run_equal_steps(run, [&](Run& r, double t, double h, double) {
    r.x_new_ = r.x_;
    stepper.do_step(r.counting(), r.x_new_, t, h);
  });
}

// Stochastic methods draw the noise of a step from its number (accepted steps since the start of the
// run) or its interval, so that a resumed run or another process takes the same increments.
template <class Stepper>
void run_stochastic(Run& run, Stepper stepper) {
  run_equal_steps(run, [&](Run& r, double t, double h, double t_next) {
    stepper.step(r, t, h, NoiseStep{r.counters_.accepted_steps, t, t_next});
  });
}

// x_{k+1} = x_k + f(x_k) h + G(x_k) ΔN_k, retracted (by accept()). The retraction supplies the
// Itô-Stratonovich correction of the spheres' curvature, −(d − 1) σ² h / (2 s²) θ, so this converges to
// the Stratonovich flow when G depends on a token through P_θ alone (independent noise, a speed
// factor free of the attention); the configuration refuses it otherwise.
struct EulerMaruyama {
  void step(Run& run, double t, double h, const NoiseStep& noise) const {
    ++run.counters_.rhs_evaluations;
    run.system_.increment(run.x_.data(), t, h, noise, run.dxdt_.data());
    for (std::size_t i = 0; i < run.x_.size(); ++i) run.x_new_[i] = run.x_[i] + run.dxdt_[i];
  }
};

// The stochastic Heun method (Rümelin 1982): predictor x̃ = x + f(x) h + G(x) ΔN, retracted;
// x_{k+1} = x + (f(x) + f(x̃)) h / 2 + (G(x) + G(x̃)) ΔN / 2 with the same ΔN. Weak order 1 for the
// Stratonovich SDE (strong order 1 for commutative noise); without noise it is Heun's second-order
// Runge-Kutta method.
struct StratonovichHeun {
  void step(Run& run, double t, double h, const NoiseStep& noise) const {
    run.counters_.rhs_evaluations += 2;
    run.system_.increment(run.x_.data(), t, h, noise, run.dxdt_.data());
    for (std::size_t i = 0; i < run.x_.size(); ++i) run.sample_[i] = run.x_[i] + run.dxdt_[i];
    if (run.options_.retract) run.system_.retract(run.sample_.data());
    run.system_.increment(run.sample_.data(), t + h, h, noise, run.dxdt_new_.data());
    for (std::size_t i = 0; i < run.x_.size(); ++i) run.x_new_[i] = run.x_[i] + 0.5 * (run.dxdt_[i] + run.dxdt_new_[i]);
  }
};

template <Method M>
struct StochasticStepper;
template <>
struct StochasticStepper<Method::euler_maruyama> {
  static EulerMaruyama make(const IntegratorOptions&) { return {}; }
};
template <>
struct StochasticStepper<Method::stratonovich_heun> {
  static StratonovichHeun make(const IntegratorOptions&) { return {}; }
};

// The odeint stepper of every method of steppers.hpp that integrates an ODE: a new row there needs
// one specialization here; its loop follows from the row (dense output, adaptive or fixed).
template <Method M>
struct OdeintStepper;
template <>
struct OdeintStepper<Method::dopri5> {
  static auto make(const IntegratorOptions& o) {
    return odeint::make_controlled(o.atol, o.rtol, odeint::runge_kutta_dopri5<State>());
  }
};
template <>
struct OdeintStepper<Method::cash_karp54> {
  static auto make(const IntegratorOptions& o) {
    return odeint::make_controlled(o.atol, o.rtol, odeint::runge_kutta_cash_karp54<State>());
  }
};
template <>
struct OdeintStepper<Method::fehlberg78> {
  static auto make(const IntegratorOptions& o) {
    return odeint::make_controlled(o.atol, o.rtol, odeint::runge_kutta_fehlberg78<State>());
  }
};
template <>
struct OdeintStepper<Method::bulirsch_stoer> {
  static auto make(const IntegratorOptions& o) { return odeint::bulirsch_stoer<State>(o.atol, o.rtol); }
};
template <>
struct OdeintStepper<Method::rk4> {
  static auto make(const IntegratorOptions&) { return odeint::runge_kutta4<State>(); }
};
template <>
struct OdeintStepper<Method::euler> {
  static auto make(const IntegratorOptions&) { return odeint::euler<State>(); }
};

template <Method M>
void run_method(Run& run) {
  constexpr MethodInfo info = method_info(M);
  if constexpr (M == Method::split) {  // the system's own step (OdeSystem::own_step)
    run_equal_steps(run, [](Run& r, double t, double h, double) {
      r.counters_.rhs_evaluations += r.system_.own_step(r.x_.data(), t, h, r.x_new_.data());
    });
  } else if constexpr (info.control == StepControl::layers) {
    return;  // rejected by integrate()
  } else if constexpr (info.control == StepControl::stochastic) {
    run_stochastic(run, StochasticStepper<M>::make(run.options_));
  } else if constexpr (info.dense_output) {
    static_assert(info.control == StepControl::adaptive, "dense output is implemented for controlled FSAL steppers");
    run_dense(run, OdeintStepper<M>::make(run.options_));
  } else if constexpr (info.control == StepControl::adaptive) {
    run_controlled(run, OdeintStepper<M>::make(run.options_));
  } else {
    run_fixed(run, OdeintStepper<M>::make(run.options_));
  }
}

}  // namespace

IntegrationResult integrate(OdeSystem& system, std::span<const double> x0, double t0,
                            std::span<const double> sample_times, const IntegratorOptions& options,
                            SampleObserver& observer, const Checkpoint* resume) {
  if (method_info(options.method).control == StepControl::layers)
    throw std::invalid_argument("integrate: solver.method = \"" + std::string(to_string(options.method)) +
                                "\" is a layer map; it runs through run_layers");
  if (options.method == Method::split && !system.has_own_step())
    throw std::invalid_argument("integrate: solver.method = \"split\" needs a system with a step of its own");
  if (system.noisy() && method_info(options.method).control != StepControl::stochastic)
    throw std::invalid_argument("integrate: solver.method = \"" + std::string(to_string(options.method)) +
                                "\" is not a stochastic method, and the system has noise");
  const auto start = Clock::now();
  Run run(system, x0, t0, sample_times, options, observer, resume);
  if (sample_times.empty()) return run.result(start);
  try {
    switch (options.method) {
#define NORMDYN_METHOD_CASE(name, control, order, dense, description) \
  case Method::name:                                                  \
    run_method<Method::name>(run);                                    \
    break;
      NORMDYN_METHODS(NORMDYN_METHOD_CASE)
#undef NORMDYN_METHOD_CASE
    }
  } catch (const odeint::step_adjustment_error& e) {
    run.finish(RunStatus::step_underflow, std::string("odeint: ") + e.what());
  } catch (const TermFailure& e) {
    run.finish(RunStatus::user_term_failed, e.what());
  }
  return run.result(start);
}

}  // namespace normdyn
