#pragma once
// x'' = −x as a first-order OdeSystem, exact solution (cos t, −sin t) from (1, 0): the reference
// problem of the step-loop tests.
#include "normdyn/ode_system.hpp"

namespace normdyn::test {

struct Oscillator final : OdeSystem {
  std::size_t size() const override { return 2; }
  void rhs(const double* x, double* dxdt, double) override {
    dxdt[0] = x[1];
    dxdt[1] = -x[0];
  }
};

}  // namespace normdyn::test
