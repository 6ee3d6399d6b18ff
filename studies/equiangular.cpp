#include "normdyn/studies/equiangular.hpp"

#include <cmath>
#include <limits>

#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {

double equiangular_rate(bool softmax, double n, double beta, double rho) {
  const double e = std::exp(beta * rho), grow = (1.0 - rho) * ((n - 1.0) * rho + 1.0);
  return softmax ? 2.0 * e * grow / (std::exp(beta) + (n - 1.0) * e) : 2.0 / n * e * grow;
}

std::vector<double> equiangular_theory(bool softmax, double n, double beta, double rho0,
                                       const std::vector<double>& times) {
  std::vector<double> out{rho0};
  double rho = rho0;
  for (std::size_t i = 1; i < times.size(); ++i) {
    const int steps = std::max(1, static_cast<int>(std::ceil((times[i] - times[i - 1]) / 1e-4)));
    const double h = (times[i] - times[i - 1]) / steps;
    for (int s = 0; s < steps; ++s) {
      const double k1 = equiangular_rate(softmax, n, beta, rho),
                   k2 = equiangular_rate(softmax, n, beta, rho + h / 2 * k1),
                   k3 = equiangular_rate(softmax, n, beta, rho + h / 2 * k2),
                   k4 = equiangular_rate(softmax, n, beta, rho + h * k3);
      rho += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    }
    out.push_back(rho);
  }
  return out;
}

EquiangularMeasurement measure_equiangular(const std::vector<Tokens>& frames, const std::vector<double>& times,
                                           const std::vector<double>& theory) {
  EquiangularMeasurement m;
  std::vector<double> window_t, window_y;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const Index n = frames[i].n();
    const RowMatrix g = frames[i].theta * frames[i].theta.transpose();
    const double rho = mean_cosine(frames[i].theta);
    m.rho.push_back(rho);
    // Equiangular: every off-diagonal cosine is the mean.
    m.spread.push_back(((g.array() - rho).abs() * (1.0 - RowMatrix::Identity(n, n).array())).maxCoeff());
    m.max_spread = std::max(m.max_spread, m.spread.back());
    m.max_deviation = std::max(m.max_deviation, std::abs(rho - theory[i]));
    if (1.0 - rho <= 1e-5 && 1.0 - rho >= 1e-10) {
      window_t.push_back(times[i]);
      window_y.push_back(std::log(1.0 - rho));
    }
  }
  m.rate_frames = static_cast<int>(window_t.size());
  m.rate_fitted = window_t.size() >= 3 ? -log_slope(window_t, window_y, window_t.front(), window_t.back())
                                       : std::numeric_limits<double>::quiet_NaN();
  return m;
}

EquiangularStudy equiangular_study(const EquiangularStudyRequest& request) {
  const EquiangularStudyRequest& r = request;
  if (r.n < 2) throw InputError("--n", "needs at least 2 tokens");
  const Index d = r.d > 0 ? r.d : r.n;
  if (d < r.n) throw InputError("--d", "needs d >= n = " + std::to_string(r.n) + " for equiangular tokens");
  if (!(r.beta >= 0.0) || !std::isfinite(r.beta)) throw InputError("--beta", "needs a number >= 0");
  if (!(r.rho0 < 1.0) || !(r.rho0 >= -1.0 / static_cast<double>(r.n - 1)))
    throw InputError("--rho0", "needs -1/(n - 1) <= rho0 < 1");
  if (r.normalizer != "softmax" && r.normalizer != "uniform")
    throw InputError("--normalizer", "is softmax or uniform, got \"" + r.normalizer + "\"");
  if (!(r.t_end > 0.0) || !std::isfinite(r.t_end)) throw InputError("--t-end", "needs a positive number");
  if (r.samples < 1) throw InputError("--samples", "needs at least 1");
  const bool softmax = r.normalizer == "softmax";
  EquiangularStudy study;
  study.request = r;
  study.t = linear_times(r.t_end, r.samples);
  study.rho_theory = equiangular_theory(softmax, double(r.n), r.beta, r.rho0, study.t);
  study.rate_theory = softmax ? 2.0 : 2.0 * std::exp(r.beta);
  DynamicsSpec spec = dynamics_spec(PostLN{}, r.beta, r.threads);
  if (!softmax) spec.attention.normalizer = Uniform{};
  const ParticleRun run = run_particles(library_engine(), spec, QkvSource::identity(),
                                        equiangular_tokens(r.n, d, r.rho0, 1.0, 1), study.t, 1e-12, 1e-14);
  study.status = std::string(to_string(run.status));
  const EquiangularMeasurement m = measure_equiangular(run.frames, study.t, study.rho_theory);
  study.rho_particles = m.rho;
  study.spread = m.spread;
  study.max_deviation = m.max_deviation;
  study.rate_fitted = m.rate_fitted;
  study.rate_frames = m.rate_frames;
  return study;
}

nlohmann::json to_json(const EquiangularStudy& study) {
  const EquiangularStudyRequest& r = study.request;
  nlohmann::json j;
  j["parameters"] = {
      {"n", r.n},         {"d", r.d > 0 ? r.d : r.n}, {"beta", r.beta},  {"rho0", r.rho0}, {"normalizer", r.normalizer},
      {"t_end", r.t_end}, {"samples", r.samples},     {"scheme", "post"}};
  j["t"] = study.t;
  j["rho_theory"] = study.rho_theory;
  j["rho_particles"] = study.rho_particles;
  j["spread"] = study.spread;
  j["max_deviation"] = study.max_deviation;
  j["rate_theory"] = study.rate_theory;
  j["rate_fitted"] = std::isfinite(study.rate_fitted) ? nlohmann::json(study.rate_fitted) : nlohmann::json(nullptr);
  j["rate_frames"] = study.rate_frames;
  j["status"] = study.status;
  return j;
}

}  // namespace normdyn::studies
