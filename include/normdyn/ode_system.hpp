#pragma once
// What an integrator needs to know of a system of ODEs dx/dt = f(x, t) on a flat state vector.
// Implemented by the particle dynamics (dynamics.hpp) and the mean-field PDE (method of lines),
// integrated by the one odeint wrapper in solvers/.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace normdyn {

// A step of a stochastic method: its number (accepted steps since the start of the run) and its
// interval [t0, t1], the same for every evaluation within the step; t1 is the next step's t0 bit for bit.
struct NoiseStep {
  std::int64_t number = 0;
  double t0 = 0.0, t1 = 0.0;
};

// Thrown by a system whose evaluation failed for a reason that is not a numerical outcome of the
// integration (a user's term raised, or returned NaN or the wrong shape): the step loop ends the
// run with status user_term_failed and this message, keeping every frame recorded before.
struct TermFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class OdeSystem {
 public:
  virtual ~OdeSystem() = default;

  virtual std::size_t size() const = 0;
  virtual void rhs(const double* x, double* dxdt, double t) = 0;

  // Times in (t0, t1) where f is not smooth in t (regime switches, per-layer matrices). The
  // integrator never steps across one; it restarts there.
  virtual std::vector<double> breakpoints(double /*t0*/, double /*t1*/) const { return {}; }
  // Called before integrating the smooth piece [t_begin, t_end], so that f evaluated at either end
  // belongs to this piece.
  virtual void enter_piece(double /*t_begin*/, double /*t_end*/) {}

  // Projection back onto the constraint manifold (unit directions). Returns the constraint
  // violation found before projecting; 0 for unconstrained systems.
  virtual double retract(double* /*x*/) const { return 0.0; }

  // Systems with a step of their own (solver.method = "split", e.g. the mean field's splitting of an
  // exact diffusion and the transport): the state after one step of length h from (x, t), written to
  // `out` (not aliasing x). Returns the right-hand-side-like evaluations it took (for the counters).
  virtual bool has_own_step() const { return false; }
  virtual int own_step(const double* /*x*/, double /*t*/, double /*h*/, double* /*out*/) { return 0; }

  // Stochastic systems, dx = f(x, t) dt + G(x, t) ∘ dN (Stratonovich): whether there is noise, and
  // the increment f(x, t) h + G(x, t) ΔN_step of step `step` of length h. ΔN_step is a pure function
  // of the system's seed and the step (its number, or its interval with tree increments), so that a
  // step evaluated twice (Heun's corrector, a resumed run, another process) sees the same noise.
  // Without noise, the Euler increment f(x, t) h.
  virtual bool noisy() const { return false; }
  virtual void increment(const double* x, double t, double h, const NoiseStep& /*step*/, double* dx) {
    rhs(x, dx, t);
    for (std::size_t k = 0; k < size(); ++k) dx[k] *= h;
  }
};

}  // namespace normdyn
