// ---- The noisy pitchfork on the circle (Post-LN, d = 2, Q = K = V = I, independent noise σ dW_i).
// In the angle, dφ_i = v(φ_i) dt + σ dβ_i with v = (1/β) ∂_φ log(G * μ) for softmax and (1/β) ∂_φ (G * μ)
// for the uniform normalizer (weights e^{β<x_i, x_j>}/n), G = e^{β cos}. Linearizing the mean field at
// the uniform density, the Fourier mode k grows at
//
//   λ_k = k² (I_k(β)/(β Z) − σ²/2),   Z = I_0(β) (softmax), 1 (uniform)   (I_1(β)/β → 1/2 at β = 0),
//
// so the uniform state is stable iff σ² > σ_c² = 2 I_1(β)/(β Z). Above, each mode of the empirical
// measure c_k = (1/n) Σ_j e^{i k φ_j} is an Ornstein-Uhlenbeck process with noise k² σ²/n and rate
// |λ_k|: n E|c_k|² → σ²/(σ² − 2 I_k(β)/(β Z)) (for k = 1, σ²/(σ² − σ_c²)). Below, r = |c_1| → r* =
// |∫ e^{iφ} ρ|, ρ the stationary density ρ ∝ exp(2U/σ²) with U = (1/β) log(G * ρ) (softmax) or
// (G * ρ)/β (uniform), solved here by damped fixed-point iteration on a grid. At β = 0 this is the
// noisy Kuramoto model of the survey (pitchfork at κ = 2/σ² = 2); for β > 0 the rates are the
// linearization above.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {
namespace {

// I_k(β)/β with its β → 0 limit.
double bessel_over_beta(int k, double beta) {
  if (beta == 0.0) return k == 1 ? 0.5 : 0.0;
  return std::cyl_bessel_i(double(k), beta) / beta;
}
double pitchfork_z(bool softmax, double beta) { return softmax ? std::cyl_bessel_i(0.0, beta) : 1.0; }
double pitchfork_threshold(bool softmax, double beta) {
  return 2.0 * bessel_over_beta(1, beta) / pitchfork_z(softmax, beta);
}

// r* of the stationary self-consistency ρ ∝ exp(2U[ρ]/σ²) on M grid angles (the periodic trapezoidal
// rule, exact for these smooth densities), from ρ = 1 + cos φ / 2. U is taken relative to its
// maximum. At β = 0 both normalizers give U = ∫ cos(φ − φ') ρ(φ') dφ'/(2π) (the limit of either).
double stationary_order_parameter(bool softmax, double beta, double sigma2) {
  const int m = 256;
  std::vector<double> phi(m), kernel(static_cast<std::size_t>(m) * m), rho(m), u(m), next(m);
  for (int i = 0; i < m; ++i) phi[i] = 2.0 * std::numbers::pi * i / m;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      const double c = std::cos(phi[i] - phi[j]);
      kernel[static_cast<std::size_t>(i) * m + j] = beta == 0.0 ? c : std::exp(beta * c);
    }
  for (int i = 0; i < m; ++i) rho[i] = 1.0 + 0.5 * std::cos(phi[i]);
  for (int iteration = 0; iteration < 20000; ++iteration) {
    double top = -1e300;
    for (int i = 0; i < m; ++i) {
      double g = 0.0;
      for (int j = 0; j < m; ++j) g += kernel[static_cast<std::size_t>(i) * m + j] * rho[j];
      g /= m;
      u[i] = beta == 0.0 ? g : softmax ? std::log(g) / beta : g / beta;
      top = std::max(top, u[i]);
    }
    double total = 0.0;
    for (int i = 0; i < m; ++i) total += next[i] = std::exp(2.0 * (u[i] - top) / sigma2);
    double change = 0.0;
    for (int i = 0; i < m; ++i) {
      const double updated = 0.5 * rho[i] + 0.5 * next[i] * m / total;
      change = std::max(change, std::abs(updated - rho[i]));
      rho[i] = updated;
    }
    if (change < 1e-13) break;
  }
  std::complex<double> c = 0.0;
  for (int i = 0; i < m; ++i) c += rho[i] * std::polar(1.0, phi[i]);
  return std::abs(c) / m;
}

// A statistic's time average over a stationary window and its standard error from batch means.
struct TimeAverage {
  double mean = 0.0, standard_error = 0.0;
};
TimeAverage batch_average(const std::vector<double>& x, int batches) {
  const std::size_t per = x.size() / static_cast<std::size_t>(batches);
  std::vector<double> means;
  for (int b = 0; b < batches; ++b) {
    double s = 0.0;
    for (std::size_t i = 0; i < per; ++i) s += x[b * per + i];
    means.push_back(s / double(per));
  }
  double m = 0.0, v = 0.0;
  for (double y : means) m += y;
  m /= batches;
  for (double y : means) v += (y - m) * (y - m);
  return {m, std::sqrt(v / (batches - 1.0) / batches)};
}

std::complex<double> fourier_mode(const Tokens& t, int k) {
  std::complex<double> c = 0.0;
  for (Index j = 0; j < t.n(); ++j) c += std::pow(std::complex<double>(t.theta(j, 0), t.theta(j, 1)), k);
  return c / double(t.n());
}

}  // namespace

void noise_pitchfork(Builder& b) {
  const ReproduceOptions& o = b.options();
  b.study("noisy pitchfork on the circle", [&] {
    // Above: n E|c_k|² over [burn, burn + window]; allowance for the finite-n bias and the step's
    // weak error, on top of three standard errors of the time average.
    constexpr double kAboveAllowance = 0.08;
    // Below: |r − r*| within this (r's O(1/n) bias and the step's weak error stay under 0.01 at these sizes).
    constexpr double kBelowTolerance = 0.03;
    const Index n_above = o.quick ? 32 : 64, n_below = o.quick ? 64 : 128;
    const double h = 0.02, window_above = o.quick ? 600.0 : 3000.0, window_below = o.quick ? 60.0 : 150.0;
    const double burn = 30.0, sample_every = 0.5;
    for (const bool softmax : {true, false})
      for (const double beta : {0.0, 1.0, 2.0}) {
        if (!softmax && beta == 0.0) continue;  // at beta = 0 both normalizers are the mean over the tokens
        const std::string normalizer = softmax ? "softmax" : "uniform";
        const double z = pitchfork_z(softmax, beta), sc2 = pitchfork_threshold(softmax, beta);
        const auto spec_for = [&](double sigma2, std::uint64_t seed) {
          DynamicsSpec spec = dynamics_spec(PostLN{}, beta, o.threads);
          if (!softmax) spec.attention.normalizer = Uniform{};
          spec.noise = NoiseSpec{IndependentNoise{std::sqrt(sigma2)}, seed};
          return spec;
        };
        // Equal steps to t_end: the budget is the step count plus a margin (the long window above
        // takes more than kStudyStepBudget steps; a wrong engine still cannot take more).
        const auto options_to = [&](double t_end) {
          IntegratorOptions io;
          io.method = Method::stratonovich_heun;
          io.dt = h;
          io.max_steps = static_cast<std::int64_t>(std::ceil(t_end / h)) + 16;
          return io;
        };
        const auto sampled = [&](double t_end) {
          std::vector<double> t{0.0};
          for (double s = burn; s <= t_end + 1e-9; s += sample_every) t.push_back(s);
          return t;
        };
        const std::string how = "normdyn run with model.scheme = \"post\", model.d = 2, model.beta = " + num(beta, 2) +
                                ", attention.normalizer = \"" + normalizer +
                                "\", noise.kind = \"independent\", "
                                "solver.method = \"stratonovich_heun\", solver.dt = " +
                                num(h, 3);
        {  // above the threshold: σ² = 2 σ_c², from uniform starts
          const double sigma2 = 2.0 * sc2;
          const std::vector<double> times = sampled(burn + window_above);
          const ParticleRun run = run_particles(b.engine(), spec_for(sigma2, 11), QkvSource::identity(),
                                                uniform_tokens(n_above, 2, 1.0, 11), times, options_to(times.back()));
          const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
          std::vector<double> c1, c2;
          for (std::size_t k = 1; complete && k < run.frames.size(); ++k) {
            c1.push_back(double(n_above) * std::norm(fourier_mode(run.frames[k], 1)));
            c2.push_back(double(n_above) * std::norm(fourier_mode(run.frames[k], 2)));
          }
          const double limit1 = sigma2 / (sigma2 - sc2),
                       limit2 = sigma2 / (sigma2 - 2.0 * bessel_over_beta(2, beta) / z);
          std::string measured = "the run ended early";
          bool holds = false;
          if (complete) {
            const TimeAverage a1 = batch_average(c1, 20), a2 = batch_average(c2, 20);
            const double d1 = std::abs(a1.mean / limit1 - 1.0), d2 = std::abs(a2.mean / limit2 - 1.0);
            const double t1 = kAboveAllowance + 3.0 * a1.standard_error / limit1,
                         t2 = kAboveAllowance + 3.0 * a2.standard_error / limit2;
            holds = d1 <= t1 && d2 <= t2;
            measured = "n E r^2 = " + num(a1.mean, 4) + " +- " + num(a1.standard_error, 2) + " (limit " +
                       num(limit1, 4) + "), n E|c_2|^2 = " + num(a2.mean, 4) + " +- " + num(a2.standard_error, 2) +
                       " (limit " + num(limit2, 4) + ")";
          }
          b.row({"noise-pitchfork-" + normalizer + "-beta" + num(beta, 2) + "-above",
                 "Noisy transformer on the circle (Post-LN, " + normalizer + ", beta = " + num(beta, 2) +
                     ") above sigma_c^2 = 2 I_1(beta)/(beta Z) = " + num(sc2, 5) +
                     " (sigma^2 = 2 sigma_c^2): the uniform "
                     "state is stable and n E r^2 -> sigma^2/(sigma^2 - sigma_c^2) (mode 2: sigma^2/(sigma^2 - 2 "
                     "I_2/(beta Z)))",
                 how + ", model.n = " + std::to_string(n_above) + ", noise.sigma^2 = " + num(sigma2, 6) +
                     ", init.kind = \"uniform\", init.seed = noise.seed = 11, solver.t_end = " +
                     num(burn + window_above, 5) + "; n |c_k|^2 averaged every 0.5 over t >= " + num(burn, 3) +
                     " (standard error from 20 batch means)",
                 measured, num(limit1, 4),
                 "each within " + num(kAboveAllowance, 2) +
                     " (relative; finite n and step) + 3 standard errors of its limit",
                 holds ? "holds" : "fails"});
        }
        {  // below: σ² = σ_c²/2, from a cap
          const double sigma2 = 0.5 * sc2, expected = stationary_order_parameter(softmax, beta, sigma2);
          const std::vector<double> times = sampled(burn + window_below);
          const ParticleRun run = run_particles(b.engine(), spec_for(sigma2, 12), QkvSource::identity(),
                                                cap_tokens(n_below, 2, 1.0, 1.0, 12), times, options_to(times.back()));
          const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
          std::vector<double> r;
          for (std::size_t k = 1; complete && k < run.frames.size(); ++k)
            r.push_back(std::abs(fourier_mode(run.frames[k], 1)));
          std::string measured = "the run ended early";
          bool holds = false;
          if (complete) {
            const TimeAverage a = batch_average(r, 10);
            holds = std::abs(a.mean - expected) <= kBelowTolerance;
            measured = "time-averaged r = " + num(a.mean, 4) + " +- " + num(a.standard_error, 2);
          }
          b.row({"noise-pitchfork-" + normalizer + "-beta" + num(beta, 2) + "-below",
                 "Noisy transformer on the circle (Post-LN, " + normalizer + ", beta = " + num(beta, 2) +
                     ") below sigma_c^2 = " + num(sc2, 5) +
                     " (sigma^2 = sigma_c^2/2): r -> r* = |int e^{i phi} rho| with rho "
                     "proportional to " +
                     (softmax ? "(G * rho)^{2/(beta sigma^2)}" : "exp(2 (G * rho)/(beta sigma^2))") +
                     ", G = e^{beta cos} (solved in the row on 256 angles)",
                 how + ", model.n = " + std::to_string(n_below) + ", noise.sigma^2 = " + num(sigma2, 6) +
                     ", init.kind = \"cap\", init.delta = 1, init.seed = noise.seed = 12, solver.t_end = " +
                     num(burn + window_below, 5) + "; r = |mean token| averaged every 0.5 over t >= " + num(burn, 3),
                 measured, num(expected, 4), "|r - r*| <= " + num(kBelowTolerance, 2), holds ? "holds" : "fails"});
        }
      }
  });
}

}  // namespace normdyn::studies
