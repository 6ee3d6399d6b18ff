// The analysis of a particle run: per-frame observables of the registry (with the run's dynamics
// rebuilt for velocities and attention), clusters and their events, plateaus, the rate fit and the
// theorem checks, and the check that every stored direction is a unit vector.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "normdyn/analyze/analyze.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/observable_registry.hpp"

namespace normdyn {
namespace {

// How far a stored direction may be from the unit sphere beyond the drift the run recorded: the
// round-off of the retraction, or (without retraction, solver.project = false) the integrator's
// own drift, about 1e-9 at rtol 1e-8 and far below this bound at any tolerance a run would use.
constexpr double kSphereTolerance = 1e-6;
constexpr double kSphereToleranceUnprojected = 1e-3;

constexpr RateQuantity kQuantities[] = {RateQuantity::one_minus_mean_cosine, RateQuantity::variance,
                                        RateQuantity::one_minus_min_cosine, RateQuantity::diameter};

template <class F>
std::vector<double> collect(const std::vector<analysis::FrameObservables>& frames, F f) {
  std::vector<double> out;
  out.reserve(frames.size());
  for (const auto& o : frames) out.push_back(f(o));
  return out;
}

double two_norm(const Eigen::MatrixXd& m) {
  if (m.size() == 0) return 0.0;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m.transpose() * m, Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(0.0, eig.eigenvalues().maxCoeff()));
}

// The norms the theorems' hypotheses name, over the layers the run went through.
analysis::AttentionNorms attention_norms(const RunConfig& config, const std::vector<double>& t) {
  analysis::AttentionNorms a;
  if (config.model.qkv == QkvKind::identity || t.empty()) return a;
  QkvSource qkv = make_qkv(config);
  std::vector<double> times{t.front()};
  for (double b : qkv.breakpoints(t.front(), t.back())) times.push_back(b);
  const auto d = static_cast<Index>(config.model.d);
  const Eigen::MatrixXd eye = Eigen::MatrixXd::Identity(d, d);
  a.max_qk_norm = 0.0;
  a.max_v_minus_identity = a.max_qk_minus_identity = a.max_energy_asymmetry = 0.0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const AttentionMatrices& m = qkv.at(times[i]);
    if (m.identity) continue;  // a layer of identity matrices changes nothing below
    const Eigen::MatrixXd qk = Eigen::MatrixXd(m.Q).transpose() * Eigen::MatrixXd(m.K);
    const Eigen::MatrixXd v = m.V;
    const double qk_norm = two_norm(qk), v_norm = two_norm(v);
    if (i == 0) {
      a.qk_norm_at_start = qk_norm;
      a.v_norm_at_start = v_norm;
    }
    a.max_qk_norm = std::max(a.max_qk_norm, qk_norm);
    a.max_qk_minus_identity = std::max(a.max_qk_minus_identity, two_norm(qk - eye));
    a.max_v_minus_identity = std::max(a.max_v_minus_identity, two_norm(v - eye));
    a.max_energy_asymmetry = std::max(a.max_energy_asymmetry, two_norm(qk - qk.transpose()) + two_norm(v - qk));
    // Once every hypothesis is broken, later layers change no conclusion.
    if (a.max_qk_norm > 1.0 + 1e-6 && a.max_v_minus_identity > 1e-6 && a.max_energy_asymmetry > 1e-6 &&
        a.max_qk_minus_identity > 1e-6)
      break;
  }
  if (a.max_qk_norm == 0.0) a.max_qk_norm = 1.0;
  return a;
}

}  // namespace

std::string_view to_string(RateQuantity q) noexcept {
  switch (q) {
    case RateQuantity::one_minus_mean_cosine:
      return "one_minus_mean_cosine";
    case RateQuantity::variance:
      return "variance";
    case RateQuantity::one_minus_min_cosine:
      return "one_minus_min_cosine";
    case RateQuantity::diameter:
      return "diameter";
  }
  return "one_minus_mean_cosine";
}

std::optional<RateQuantity> rate_quantity_from_string(std::string_view s) noexcept {
  for (RateQuantity q : kQuantities)
    if (s == to_string(q)) return q;
  return std::nullopt;
}

std::vector<std::string> rate_quantity_names() {
  std::vector<std::string> names;
  for (RateQuantity q : kQuantities) names.emplace_back(to_string(q));
  return names;
}

std::vector<double> quantity_series(const AnalysisResult& r, RateQuantity q) {
  switch (q) {
    case RateQuantity::one_minus_mean_cosine:
      return collect(r.frames, [](const auto& o) { return o.one_minus_mean_cosine; });
    case RateQuantity::variance:
      return collect(r.frames, [](const auto& o) { return o.variance; });
    case RateQuantity::one_minus_min_cosine:
      return collect(r.frames, [](const auto& o) { return o.one_minus_min_cosine; });
    case RateQuantity::diameter:
      return collect(r.frames, [](const auto& o) { return o.diameter; });
  }
  return {};
}

AnalysisResult analyze_particles(const FrameSource& reader, const AnalyzeOptions& options) {
  AnalysisResult r;
  r.config = reader.config();
  r.revision = reader.revision();
  r.summary = reader.summary();
  r.t = reader.times();
  r.step = reader.steps();
  const std::size_t frames = std::min({reader.frames(), r.t.size(), r.step.size()});
  if (!reader.has_particles())
    throw InputError("run", "a mean-field run has no particle frames (analyze_meanfield reads it)");
  r.t.resize(frames);
  r.step.resize(frames);
  r.quantity = options.quantity;

  // The block's terms with the weights the run stored: the dynamics and the energy's potential.
  // The user's terms are code, not data of the file: without them, the energy and what follows.
  RunConfig without_user_terms = r.config;
  without_user_terms.terms.clear();
  const BlockTerms terms = make_terms(without_user_terms, reader.feedforward());
  // The run's dynamics, for the exact velocity and attention of every frame.
  std::unique_ptr<AttentionDynamics> dynamics;
  if (options.use_velocity) {
    try {
      if (!r.config.terms.empty())
        throw InputError("terms", "the run has terms of the user's, whose code the file does not hold");
      RunConfig c = r.config;
      const double work = double(c.model.n) * double(c.model.n) * double(c.model.d);
      c.solver.threads = options.threads ? *options.threads : (work < double(1 << 24) ? 1 : c.solver.threads);
      dynamics = std::make_unique<AttentionDynamics>(make_dynamics(c, terms));
    } catch (const std::exception& e) {
      r.notes.push_back(std::string("the run's dynamics could not be rebuilt (") + e.what() +
                        "): angular speed from finite differences of the frames; <theta_j, A_j> not computed");
    }
  }
  // A discrete run moves by its layer maps, not by the ODE's field: its speed is the movement
  // between frames (per unit t), as for a run without its dynamics.
  const bool discrete = r.config.solver.method == Method::discrete;
  r.angular_speed_method = dynamics && !discrete ? "velocity" : "finite_difference";

  // The registry's observables that this run can give (observable_registry.hpp).
  for (const auto& o : kFrameObservables) {
    const bool dynamics_needed = o.need == ObservableNeed::dynamics || o.needs_dynamics;
    if (o.discrete_only && !discrete) continue;
    // Without the dynamics the angular speed comes from finite differences, the radial speed of
    // discrete runs from the layers themselves.
    const bool fallback = o.name == "mean_angular_speed" || (o.name == "min_radial_speed" && discrete);
    if (dynamics_needed && !dynamics && !fallback) continue;
    r.observable_names.emplace_back(o.name);
  }
  analysis::FrameComputeOptions compute_options;
  compute_options.beta = r.config.model.beta;
  compute_options.rank_threshold = options.rank_threshold;
  compute_options.threads = options.threads.value_or(0);
  compute_options.discrete = discrete;
  compute_options.terms = &terms;
  analysis::FrameObservableComputer computer(r.observable_names, compute_options);
  r.observable_values.assign(r.observable_names.size(), {});

  const Index n = reader.n(), d = reader.d();
  RowMatrix previous;
  std::vector<double> secant;  // finite-difference speeds between consecutive frames
  RowMatrix velocity(n, d);
  Vector radial_velocity(n), inverse_speed(n);
  double max_norm_error = 0.0;
  std::size_t worst_frame = 0;
  for (std::size_t i = 0; i < frames; ++i) {
    const Tokens x = reader.frame(i);
    if (x.theta.rows() > 0) {
      const double e = (x.theta.rowwise().norm().array() - 1.0).abs().maxCoeff();
      if (e > max_norm_error) {
        max_norm_error = e;
        worst_frame = i;
      }
    }
    const RowMatrix h = analysis::half_squared_chords(x.theta);
    analysis::FrameInput in;
    in.tokens = &x;
    in.t = r.t[i];
    in.step = r.step[i];
    in.h = &h;
    if (dynamics) {
      // At a switch time (Mix-LN's tau, a layer boundary) the regime is the one the scheme assigns to t.
      dynamics->velocity(x.theta, x.r, r.t[i], r.t[i], velocity, radial_velocity);
      const RowMatrix& attention = dynamics->attention(x.theta, r.t[i]);
      inverse_speed = analysis::inverse_speed_factors(r.config.model.scheme, r.t[i], r.t[i], x.theta, x.r, attention);
      in.velocity = &velocity;
      in.radial_velocity = &radial_velocity;
      in.attention = &attention;
      in.inverse_speed = &inverse_speed;
    }
    if ((!dynamics || discrete) && i > 0)
      secant.push_back(analysis::mean_angular_speed_between(previous, x.theta, r.t[i] - r.t[i - 1]));
    const std::vector<double> values = computer.compute(in);
    for (std::size_t k = 0; k < values.size(); ++k) r.observable_values[k].push_back(values[k]);
    r.clusters.push_back(analysis::find_clusters(h, x.theta, options.clusters));
    if (i > 0) {
      auto events = analysis::cluster_events(r.t[i - 1], r.clusters[i - 1], r.t[i], r.clusters[i]);
      r.events.insert(r.events.end(), events.begin(), events.end());
    }
    previous = x.theta;
  }
  // The fixed struct of the per-frame figures the rest of the analysis reads, from the registry's values.
  auto value = [&](std::string_view name, std::size_t i) {
    const auto* s = r.observable(name);
    return s ? (*s)[i] : kNaN;
  };
  for (std::size_t i = 0; i < frames; ++i) {
    analysis::FrameObservables f;
    f.one_minus_mean_cosine = value("one_minus_mean_cosine", i);
    f.mean_cosine = value("mean_cosine", i);
    f.one_minus_min_cosine = value("one_minus_min_cosine", i);
    f.min_cosine = value("min_cosine", i);
    f.variance = value("variance", i);
    f.diameter = value("diameter", i);
    f.energy = value("energy", i);
    f.normalized_energy = value("normalized_energy", i);
    f.mean_radius = value("mean_radius", i);
    f.effective_rank = static_cast<int>(value("effective_rank", i));
    r.frames.push_back(f);
  }
  if (const auto* s = r.observable("min_radius_growth")) r.min_radius_growth = *s;
  if (dynamics) {
    // A discrete run moves by its layer maps, not by the ODE's field: its speed is the movement
    // between frames (per unit t), below.
    if (!discrete) r.mean_angular_speed = *r.observable("mean_angular_speed");
    r.min_radial_alignment = *r.observable("min_radial_alignment");
    r.max_attention_norm = *r.observable("max_attention_norm");
  }
  if (!dynamics || discrete) {
    // Frame i: the mean of the secant speeds on either side of it (one side at the ends).
    r.mean_angular_speed.assign(frames, kNaN);
    for (std::size_t i = 0; i < frames; ++i) {
      const bool left = i > 0, right = i < secant.size();
      if (left && right)
        r.mean_angular_speed[i] = 0.5 * (secant[i - 1] + secant[i]);
      else if (left)
        r.mean_angular_speed[i] = secant[i - 1];
      else if (right)
        r.mean_angular_speed[i] = secant[i];
    }
    for (std::size_t k = 0; k < r.observable_names.size(); ++k)
      if (r.observable_names[k] == "mean_angular_speed") r.observable_values[k] = r.mean_angular_speed;
  }

  if (const auto* radius = r.observable("mean_radius")) r.radius_growth = analysis::growth_exponent(r.t, *radius);
  if (scheme_has_radius(r.config.model.scheme) && r.observable("clock_median")) {
    const auto* speed = r.observable("min_radial_speed");
    r.clock = analysis::clock_diagnostic(r.t, *r.observable("clock_min"), *r.observable("clock_median"),
                                         speed ? std::span<const double>(*speed) : std::span<const double>());
  }

  std::vector<std::int64_t> counts;
  for (const auto& c : r.clusters) counts.push_back(static_cast<std::int64_t>(c.count()));
  const std::vector<double> energy = collect(r.frames, [](const auto& o) { return o.normalized_energy; });
  r.plateaus = analysis::find_plateaus(r.t, counts, energy, options.plateaus);
  // The automatic window lies after the last merge of clusters; a run ending with several
  // clusters has not reached its final collapse.
  analysis::RateFitOptions rate = options.rate;
  for (const auto& e : r.events)
    if (e.kind == analysis::ClusterEvent::Kind::merge) rate.after = std::max(rate.after, e.t);
  if (!r.clusters.empty()) rate.final_clusters = r.clusters.back().count();
  r.rate_fit = analysis::fit_decay(r.t, quantity_series(r, options.quantity), rate);
  if (r.rate_fit.ok && !r.rate_fit.problem.empty()) {
    // A number was fitted but is not one to cite: the reader must not take it for the rate.
    AnalysisWarning w;
    w.code = "inconclusive_fit";
    w.message = "the decay rate fitted to " + std::string(to_string(options.quantity)) + " is not one to cite (" +
                r.rate_fit.problem + "): " + r.rate_fit.detail;
    r.warnings.push_back(std::move(w));
  }

  analysis::CheckSeries series;
  series.t = r.t;
  series.one_minus_mean_cosine = quantity_series(r, RateQuantity::one_minus_mean_cosine);
  series.one_minus_min_cosine = quantity_series(r, RateQuantity::one_minus_min_cosine);
  series.variance = quantity_series(r, RateQuantity::variance);
  series.normalized_energy = energy;
  series.min_radial_alignment = r.min_radial_alignment;
  series.min_radius_growth = r.min_radius_growth;
  series.mean_radius = collect(r.frames, [](const auto& o) { return o.mean_radius; });
  series.attention = attention_norms(r.config, r.t);
  if (!r.max_attention_norm.empty() && !r.t.empty() && r.t.front() == 0.0)
    series.max_attention_at_start = r.max_attention_norm.front();
  if (dynamics && !discrete && frames > 0 && n > 1) {
    // dγ/dt of the mean cosine from the velocity at the first frame: 2n/(n−1) <θ̄, mean velocity>.
    const Tokens x = reader.frame(0);
    dynamics->velocity(x.theta, x.r, r.t[0], r.t[0], velocity, radial_velocity);
    const Eigen::RowVectorXd mean = x.theta.colwise().mean();
    const Eigen::RowVectorXd mean_velocity = velocity.colwise().mean();
    series.initial_slope_velocity = 2.0 * double(n) / double(n - 1) * mean.dot(mean_velocity);
  }
  analysis::CheckOptions check_options = options.checks;
  check_options.rate.floor = options.rate.floor;
  check_options.rate.correction = options.rate.correction;
  check_options.rate.late_fraction = options.rate.late_fraction;
  check_options.rate.window = options.rate.window;
  r.checks = analysis::theorem_checks(r.config, series, check_options);
  {
    // Every stored direction is a unit vector (up to the drift the run itself recorded): frames off
    // the sphere were not written by the dynamics, and every number computed from them is suspect.
    analysis::Check c;
    c.name = "frames_on_sphere";
    c.statement = "every stored direction theta_j is a unit vector";
    const double allowed = (r.config.solver.project ? kSphereTolerance : kSphereToleranceUnprojected) +
                           (r.summary ? r.summary->max_norm_drift : 0.0);
    c.criterion = "max over frames and tokens of | |theta_j| - 1 | <= " + std::to_string(allowed);
    c.theory = 0.0;
    c.measured = max_norm_error;
    c.ok = max_norm_error <= allowed;
    c.outcome = c.ok ? analysis::Outcome::ok : analysis::Outcome::fail;
    if (!c.ok) {
      c.note = "frame " + std::to_string(worst_frame) +
               " is off the sphere: the file is damaged or was not written by normdyn";
      r.notes.push_back("frames off the unit sphere (max | |theta_j| - 1 | = " + std::to_string(max_norm_error) +
                        " at frame " + std::to_string(worst_frame) + "): the results below are not trustworthy");
    }
    r.checks.checks.insert(r.checks.checks.begin(), c);
  }
  return r;
}

}  // namespace normdyn
