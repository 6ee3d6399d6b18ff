#pragma once
// What the studies of `normdyn reproduce` share: the Builder that times a study and collects its
// rows, particle runs recorded at given times, and the formatting of numbers in the report. A
// study is one function `void f(Builder&)` in its own file, declared in reproduce_studies.hpp and
// listed once in reproduce.cpp.
#include <Eigen/Eigenvalues>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/random.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/studies/engine.hpp"
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
  std::string message;  // the integrator's account of how the run ended
  std::vector<Tokens> frames;
};

// Every study run has a budget of accepted steps, so that a wrong engine ends with status max_steps
// instead of running forever. A flow that is stiff where the right one is not does that: with the
// speed factor's 1/r forgotten, Pre- and Peri-LN directions keep a unit relaxation rate while the
// radii grow like t, and dopri5 is held by its stability to steps of about 3.3 (measured: 3e5 steps
// to t = 1e6): some 3e199 steps to the corollary's horizon t = 1e200, which the library's engine,
// whose steps grow like t, reaches in at most 2860. The library's engine takes at most 3000 steps in
// any run of the full report (the equal steps of the noise rows), so a run that uses up thirty times
// that is not the flow the rows are about; the budget costs a wrong engine one to two seconds per
// run of 8 tokens.
constexpr std::int64_t kStudyStepBudget = 100'000;

// How a run ended, for a row: "max_steps (reached solver.max_steps = 100000 at t = ...)".
inline std::string run_ending(const ParticleRun& run) {
  return std::string(to_string(run.status)) + (run.message.empty() ? "" : " (" + run.message + ")");
}

namespace detail {
// Keeps every frame; ends the run (status synchronized) at the first frame whose pairwise cosines
// all exceed 1 − sync_epsilon when that is > 0, as solver.sync_epsilon does in a run.
struct StudyRecorder final : SampleObserver {
  StateLayout layout;
  double sync_epsilon = 0.0;
  std::vector<Tokens> frames;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> x,
                                     const CheckpointView&) override {
    frames.push_back(layout.unpack(x.data()));
    if (sync_epsilon > 0.0 && analysis::all_cosines_above(frames.back().theta, 1.0 - sync_epsilon))
      return RunStatus::synchronized;
    return std::nullopt;
  }
};
}  // namespace detail

// The engine's particle system from `start`, frames at `times` (the first is the start time), within
// kStudyStepBudget steps unless `options` sets its own. With sync_epsilon > 0 the run stops (status
// synchronized) at the first frame where every pairwise cosine exceeds 1 − sync_epsilon.
inline ParticleRun run_particles(const Engine& engine, const DynamicsSpec& spec, QkvSource qkv, const Tokens& start,
                                 const std::vector<double>& times, IntegratorOptions options,
                                 double sync_epsilon = 0.0) {
  const std::unique_ptr<OdeSystem> system = engine.particles(spec, std::move(qkv), start.n(), start.d());
  const StateLayout layout{start.n(), start.d()};
  std::vector<double> x0(layout.size());
  layout.pack(start, x0.data());
  if (options.max_steps == 0) options.max_steps = kStudyStepBudget;
  detail::StudyRecorder frames;
  frames.layout = layout;
  frames.sync_epsilon = sync_epsilon;
  const IntegrationResult result = integrate(*system, x0, times.front(), times, options, frames);
  return {result.status, result.status == RunStatus::ok ? std::string() : result.message, std::move(frames.frames)};
}

// The same with dopri5 (or the default method) at these tolerances.
inline ParticleRun run_particles(const Engine& engine, const DynamicsSpec& spec, QkvSource qkv, const Tokens& start,
                                 const std::vector<double>& times, double rtol, double atol,
                                 double sync_epsilon = 0.0) {
  IntegratorOptions options;
  options.rtol = rtol;
  options.atol = atol;
  return run_particles(engine, spec, std::move(qkv), start, times, options, sync_epsilon);
}

// The engine's velocity (dθ/dt, dr/dt packed as tokens) at `x` and time t, in the regime of the
// smooth piece that starts at t.
inline Tokens engine_velocity(const Engine& engine, const DynamicsSpec& spec, QkvSource qkv, const Tokens& x,
                              double t) {
  const std::unique_ptr<OdeSystem> system = engine.particles(spec, std::move(qkv), x.n(), x.d());
  const StateLayout layout{x.n(), x.d()};
  const std::vector<double> b = system->breakpoints(t, t + 1.0);
  system->enter_piece(t, b.empty() ? t + 1.0 : b.front());
  std::vector<double> state(layout.size()), rate(layout.size());
  layout.pack(x, state.data());
  system->rhs(state.data(), rate.data(), t);
  return layout.unpack(rate.data());
}

// Equally spaced times 0, T/K, ..., T.
inline std::vector<double> linear_times(double t_end, int intervals) {
  std::vector<double> t;
  for (int i = 0; i <= intervals; ++i) t.push_back(i == intervals ? t_end : t_end * i / intervals);
  return t;
}

// 0, then `count` log-spaced times from t0 to t_end (the last exactly t_end).
inline std::vector<double> log_times(double t0, double t_end, int count) {
  std::vector<double> t{0.0};
  for (int i = 0; i < count; ++i)
    t.push_back(i + 1 == count ? t_end : t0 * std::pow(t_end / t0, double(i) / (count - 1)));
  return t;
}

// The scheme's key with its parameters that differ from the defaults ("ngpt-alpha0.5-decay1"),
// for row ids.
inline std::string scheme_tag(const Scheme& s) {
  std::string tag(scheme_key(s));
  const auto defaults = scheme_parameters(*make_scheme(scheme_key(s)));
  const auto values = scheme_parameters(s);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].second != defaults[i].second) {
      std::string name(values[i].first);
      if (name == "alpha_decay") name = "decay";
      char b[64];
      std::snprintf(b, sizeof b, "%.6g", values[i].second);
      tag += "-" + name + b;
    }
  return tag;
}

// The scheme's title with its parameters ("nGPT (alpha = 0.5, alpha_decay = 1)").
inline std::string scheme_label(const Scheme& s) {
  std::string label = std::visit([](const auto& x) { return std::string(std::decay_t<decltype(x)>::title); }, s);
  std::string params;
  for (const auto& [key, value] : scheme_parameters(s)) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", value);
    params += (params.empty() ? "" : ", ") + std::string(key) + " = " + b;
  }
  return params.empty() ? label : label + " (" + params + ")";
}

// The TOML of a scheme and its parameters, for the commands of the rows.
inline std::string scheme_settings(const Scheme& s) {
  std::string out = "model.scheme = \"" + std::string(scheme_key(s)) + "\"";
  for (const auto& [key, value] : scheme_parameters(s)) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", value);
    out += ", model." + std::string(key) + " = " + b;
  }
  return out;
}

// B = I + S/(2 |S|) with S the symmetric part of a Gaussian matrix drawn from the seed: symmetric,
// eigenvalues in [0.5, 1.5], the top one simple (almost surely).
inline RowMatrix positive_definite_qk(Index d, std::uint64_t seed) {
  Random rng(seed, RandomStream::attention_matrices);
  RowMatrix g(d, d);
  for (Index i = 0; i < d; ++i)
    for (Index j = 0; j < d; ++j) g(i, j) = rng.normal();
  const RowMatrix s = 0.5 * (g + g.transpose());
  const double norm = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(s).eigenvalues().cwiseAbs().maxCoeff();
  return RowMatrix::Identity(d, d) + s / (2.0 * norm);
}

// Q = I, K = V = B: QᵀK = V = B, held for all t.
inline QkvSource qk_equals_v(const RowMatrix& b) {
  AttentionMatrices m;
  m.identity = false;
  m.Q = RowMatrix::Identity(b.rows(), b.cols());
  m.K = b;
  m.V = b;
  return QkvSource::layers({m});
}

// The largest distance between corresponding directions of two configurations.
inline double direction_distance(const Tokens& a, const Tokens& b) {
  return (a.theta - b.theta).rowwise().norm().maxCoeff();
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
  const Engine& engine() const { return o_.engine; }
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
