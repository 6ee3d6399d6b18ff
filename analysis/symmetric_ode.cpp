#include "normdyn/analysis/symmetric_ode.hpp"

#include <cmath>
#include <stdexcept>

#include "normdyn/analysis/theorems.hpp"

namespace normdyn::analysis {

SymmetricRate symmetric_rate(const Scheme& scheme, double n, double beta, double t, double t_regime,
                             double one_minus_gamma, double r) {
  const double gamma = 1.0 - one_minus_gamma;
  TokenContext c = symmetric_context(n, beta, gamma, r, t);
  c.t_regime = t_regime;
  const double e = std::exp(-beta * one_minus_gamma);
  const double w_other = e / (1.0 + (n - 1.0) * e);
  const double s = scheme_speed(scheme, c);
  return {2.0 * w_other * one_minus_gamma * (1.0 + (n - 1.0) * gamma) / s, scheme_radial_rate(scheme, c)};
}

namespace {

struct State {
  double log_u;  // ln(1 − γ)
  double r;
};

// d(ln(1 − γ))/dt = −(dγ/dt)/(1 − γ), written without the division.
State rate(const Scheme& scheme, double n, double beta, double t, double t_regime, const State& x) {
  const double u = std::exp(x.log_u);
  const double gamma = 1.0 - u;
  TokenContext c = symmetric_context(n, beta, gamma, x.r, t);
  c.t_regime = t_regime;
  const double e = std::exp(-beta * u);
  const double w_other = e / (1.0 + (n - 1.0) * e);
  return {-2.0 * w_other * (1.0 + (n - 1.0) * gamma) / scheme_speed(scheme, c), scheme_radial_rate(scheme, c)};
}

}  // namespace

std::vector<double> linear_times(double t_end, int samples) {
  std::vector<double> t(static_cast<std::size_t>(samples) + 1);
  for (int k = 0; k <= samples; ++k) t[static_cast<std::size_t>(k)] = t_end * k / samples;
  return t;
}

SymmetricTrajectory symmetric_trajectory(const Scheme& scheme, const SymmetricOdeParameters& p,
                                         const std::vector<double>& times) {
  if (!(p.n >= 2.0) || !(p.beta > 0.0) || !(p.r0 > 0.0) || !(p.step > 0.0))
    throw std::invalid_argument("symmetric_trajectory: needs n >= 2, beta > 0, r0 > 0, step > 0");
  SymmetricTrajectory out;
  State x{0.0, p.r0};
  double t = 0.0;
  auto record = [&](double at) {
    const double u = std::exp(x.log_u);
    const SymmetricRate d = symmetric_rate(scheme, p.n, p.beta, at, at, u, x.r);
    out.t.push_back(at);
    out.gamma.push_back(1.0 - u);
    out.one_minus_gamma.push_back(u);
    out.log_one_minus_gamma.push_back(x.log_u);
    out.dgamma_dt.push_back(d.dgamma_dt);
    out.r.push_back(x.r);
  };
  auto advance = [&](double end) {
    const auto steps = static_cast<long>(std::ceil((end - t) / p.step - 1e-9));
    if (steps <= 0) return;
    const double dt = (end - t) / static_cast<double>(steps);
    const double begin = t;
    for (long k = 0; k < steps; ++k) {
      const double tk = begin + static_cast<double>(k) * dt;
      const double mid = tk + 0.5 * dt;
      auto f = [&](double tt, State s) { return rate(scheme, p.n, p.beta, tt, mid, s); };
      const State k1 = f(tk, x);
      const State k2 = f(mid, {x.log_u + 0.5 * dt * k1.log_u, x.r + 0.5 * dt * k1.r});
      const State k3 = f(mid, {x.log_u + 0.5 * dt * k2.log_u, x.r + 0.5 * dt * k2.r});
      const State k4 = f(tk + dt, {x.log_u + dt * k3.log_u, x.r + dt * k3.r});
      x.log_u += dt / 6.0 * (k1.log_u + 2.0 * k2.log_u + 2.0 * k3.log_u + k4.log_u);
      x.r += dt / 6.0 * (k1.r + 2.0 * k2.r + 2.0 * k3.r + k4.r);
    }
    t = end;
  };
  double previous = 0.0;
  for (double target : times) {
    if (!(target >= previous)) throw std::invalid_argument("symmetric_trajectory: times must be increasing and >= 0");
    for (double b : scheme_breakpoints(scheme, t, target)) advance(b);
    advance(target);
    record(target);
    previous = target;
  }
  return out;
}

}  // namespace normdyn::analysis
