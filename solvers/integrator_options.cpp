#include "normdyn/config.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn {

IntegratorOptions integrator_options(const SolverConfig& s) {
  IntegratorOptions io;
  io.method = s.method;
  io.rtol = s.rtol;
  io.atol = s.atol;
  io.dt = s.dt;
  io.dt_min = s.dt_min;
  io.max_steps = s.max_steps;
  io.retract = s.project;
  return io;
}

}  // namespace normdyn
