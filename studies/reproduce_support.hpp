#pragma once
// What the studies of `normdyn reproduce` share: the Builder that times a study and collects its
// rows, particle runs recorded at given times, and the formatting of numbers in the report. A
// study is one function `void f(Builder&)` in its own file, declared in reproduce_studies.hpp and
// listed once in reproduce.cpp.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/studies/reproduce.hpp"

namespace normdyn::studies {

inline std::string num(double v, int digits = 6) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

// The dynamics of one scheme at one beta, its kernel on `threads` threads (the studies vary only these).
inline DynamicsSpec dynamics_spec(const Scheme& scheme, double beta, int threads) {
  DynamicsSpec spec;
  spec.scheme = scheme;
  spec.beta = beta;
  spec.kernel.threads = threads;
  return spec;
}

struct ParticleRun {
  RunStatus status = RunStatus::ok;
  std::vector<Tokens> frames;
};

inline ParticleRun run_particles(AttentionDynamics& dyn, const Tokens& start, const std::vector<double>& times, double rtol,
                          double atol) {
  std::vector<double> x0(dyn.layout().size());
  dyn.layout().pack(start, x0.data());
  IntegratorOptions options;
  options.rtol = rtol;
  options.atol = atol;
  FrameRecorder frames;
  frames.layout = dyn.layout();
  const IntegrationResult result = integrate(dyn, x0, times.front(), times, options, frames);
  return {result.status, std::move(frames.frames)};
}

// Mean off-diagonal cosine of the directions.
inline double mean_cosine(const RowMatrix& theta) {
  const RowMatrix g = theta * theta.transpose();
  const double n = double(g.rows());
  return (g.sum() - g.trace()) / (n * (n - 1.0));
}

// The slope of ln y against x over the samples with x in [x0, x1] (least squares), from ln y.
inline double log_slope(const std::vector<double>& x, const std::vector<double>& log_y, double x0, double x1) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] < x0 || x[i] > x1 || !std::isfinite(log_y[i])) continue;
    const double ly = log_y[i];
    sx += x[i], sy += ly, sxx += x[i] * x[i], sxy += x[i] * ly, m += 1;
  }
  if (m < 2) return std::numeric_limits<double>::quiet_NaN();
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

inline std::string scheme_title(const Scheme& s) {
  return std::visit([](const auto& x) { return std::string(std::decay_t<decltype(x)>::title); }, s);
}

// Runs the studies of one report: times each, collects its rows.
class Builder {
 public:
  explicit Builder(Reproduction& r, const ReproduceOptions& o) : r_(r), o_(o) {}
  const ReproduceOptions& options() const { return o_; }
  bool quick() const { return o_.quick; }
  Reproduction& report() { return r_; }
  // A statement this study does not measure (listed in the report, never given a verdict).
  void not_measured(std::string why) { r_.not_measured.push_back(std::move(why)); }
  template <class F>
  void study(const std::string& name, F&& f) {
    if (o_.progress) o_.progress(name);
    const auto t0 = std::chrono::steady_clock::now();
    f();
    r_.timings.push_back({name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
  }
  void row(ReproductionRow row) { r_.rows.push_back(std::move(row)); }

 private:
  Reproduction& r_;
  const ReproduceOptions& o_;
};

}  // namespace normdyn::studies
