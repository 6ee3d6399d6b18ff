#include "analyze.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>

#include "normdyn/dynamics.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/observables_file.hpp"
#include "run.hpp"

namespace normdyn::app {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Cluster centres are written when they take at most this many values (frames × clusters × d).
constexpr std::uint64_t kMaxCentreValues = 20'000'000;

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
  QkvSource qkv = make_qkv(config.model);
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
    case RateQuantity::one_minus_mean_cosine: return "one_minus_mean_cosine";
    case RateQuantity::variance: return "variance";
    case RateQuantity::one_minus_min_cosine: return "one_minus_min_cosine";
    case RateQuantity::diameter: return "diameter";
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
    case RateQuantity::one_minus_mean_cosine: return collect(r.frames, [](const auto& o) { return o.one_minus_mean_cosine; });
    case RateQuantity::variance: return collect(r.frames, [](const auto& o) { return o.variance; });
    case RateQuantity::one_minus_min_cosine: return collect(r.frames, [](const auto& o) { return o.one_minus_min_cosine; });
    case RateQuantity::diameter: return collect(r.frames, [](const auto& o) { return o.diameter; });
  }
  return {};
}

AnalysisResult analyze_run(const RunReader& reader, const AnalyzeOptions& options) {
  AnalysisResult r;
  r.config = reader.config();
  r.revision = reader.revision();
  r.summary = reader.summary();
  r.t = reader.times();
  r.step = reader.steps();
  const std::size_t frames = std::min({reader.frames(), r.t.size(), r.step.size()});
  r.t.resize(frames);
  r.step.resize(frames);
  r.quantity = options.quantity;

  // The run's dynamics, for the exact velocity and attention of every frame.
  std::unique_ptr<AttentionDynamics> dynamics;
  if (options.use_velocity) {
    try {
      RunConfig c = r.config;
      const double work = double(c.model.n) * double(c.model.n) * double(c.model.d);
      c.solver.threads = options.threads ? *options.threads : (work < double(1 << 24) ? 1 : c.solver.threads);
      dynamics = std::make_unique<AttentionDynamics>(make_dynamics(c));
    } catch (const std::exception& e) {
      r.notes.push_back(std::string("the run's dynamics could not be rebuilt (") + e.what() +
                        "): angular speed from finite differences of the frames; <theta_j, A_j> not computed");
    }
  }
  // A discrete run moves by its layer maps, not by the ODE's field: its speed is the movement
  // between frames (per unit t), as for a run without its dynamics.
  const bool discrete = r.config.solver.method == Method::discrete;
  r.angular_speed_method = dynamics && !discrete ? "velocity" : "finite_difference";

  const analysis::ObservableOptions observable_options{r.config.model.beta, options.rank_threshold};
  const Index n = reader.n(), d = reader.d();
  Vector r0;
  RowMatrix previous;
  std::vector<double> secant;  // finite-difference speeds between consecutive frames
  RowMatrix velocity(n, d);
  Vector radial_velocity(n);
  for (std::size_t i = 0; i < frames; ++i) {
    const Tokens x = reader.frame(i);
    const RowMatrix h = analysis::half_squared_chords(x.theta);
    r.frames.push_back(analysis::frame_observables(x, h, observable_options));
    r.clusters.push_back(analysis::find_clusters(h, x.theta, options.clusters));
    if (i > 0) {
      auto events = analysis::cluster_events(r.t[i - 1], r.clusters[i - 1], r.t[i], r.clusters[i]);
      r.events.insert(r.events.end(), events.begin(), events.end());
    }
    if (i == 0) r0 = x.r;
    r.min_radius_growth.push_back((x.r - r0).minCoeff());
    if (dynamics) {
      // At a switch time (Mix-LN's tau, a layer boundary) the regime is the one the scheme assigns to t.
      if (!discrete) {
        dynamics->velocity(x.theta, x.r, r.t[i], r.t[i], velocity, radial_velocity);
        r.mean_angular_speed.push_back(analysis::mean_angular_speed(x.theta, velocity));
      } else if (i > 0) {
        secant.push_back(analysis::mean_angular_speed_between(previous, x.theta, r.t[i] - r.t[i - 1]));
      }
      const RowMatrix& attention = dynamics->attention(x.theta, r.t[i]);
      r.min_radial_alignment.push_back(analysis::min_radial_alignment(x.theta, attention));
      r.max_attention_norm.push_back(analysis::max_row_norm(attention));
    } else if (i > 0) {
      secant.push_back(analysis::mean_angular_speed_between(previous, x.theta, r.t[i] - r.t[i - 1]));
    }
    previous = x.theta;
  }
  if (!dynamics || discrete) {
    // Frame i: the mean of the secant speeds on either side of it (one side at the ends).
    r.mean_angular_speed.assign(frames, kNaN);
    for (std::size_t i = 0; i < frames; ++i) {
      const bool left = i > 0, right = i < secant.size();
      if (left && right) r.mean_angular_speed[i] = 0.5 * (secant[i - 1] + secant[i]);
      else if (left) r.mean_angular_speed[i] = secant[i - 1];
      else if (right) r.mean_angular_speed[i] = secant[i];
    }
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
  return r;
}

namespace {

ObservablesDestination write_observables(ObservablesFile& file, const AnalysisResult& r) {
  ObservablesDestination where;
  where.file = file.path();
  const std::size_t frames = r.t.size();
  auto put = [&](const std::string& name, const std::vector<double>& values, const std::string& description) {
    file.write_series(name, r.t, r.step, values, {}, description);
    where.series.push_back(name);
  };
  auto put_int = [&](const std::string& name, const std::vector<std::int64_t>& values,
                     const std::vector<std::uint64_t>& inner, const std::string& description) {
    file.write_series(name, r.t, r.step, values, inner, description);
    where.series.push_back(name);
  };
  using O = analysis::FrameObservables;
  put("one_minus_mean_cosine", collect(r.frames, [](const O& o) { return o.one_minus_mean_cosine; }),
      "1 - mean of <theta_j, theta_k> over pairs j != k, computed as n/(n-1) Var (no cancellation)");
  put("mean_cosine", collect(r.frames, [](const O& o) { return o.mean_cosine; }), "mean of <theta_j, theta_k> over pairs j != k");
  put("one_minus_min_cosine", collect(r.frames, [](const O& o) { return o.one_minus_min_cosine; }),
      "max over pairs of |theta_j - theta_k|^2 / 2 = 1 - min cosine");
  put("min_cosine", collect(r.frames, [](const O& o) { return o.min_cosine; }), "min over pairs of <theta_j, theta_k>");
  put("variance", collect(r.frames, [](const O& o) { return o.variance; }), "Var = (1/n) sum_j |theta_j - mean|^2 = 1 - |mean|^2");
  put("diameter", collect(r.frames, [](const O& o) { return o.diameter; }), "largest geodesic distance between two tokens (radians)");
  put("energy", collect(r.frames, [](const O& o) { return o.energy; }), "E = sum_jk exp(beta <theta_j, theta_k>) (inf if it overflows)");
  put("normalized_energy", collect(r.frames, [](const O& o) { return o.normalized_energy; }), "E / (n^2 e^beta), in (0, 1]");
  put("mean_radius", collect(r.frames, [](const O& o) { return o.mean_radius; }), "mean of r_j");
  put("mean_angular_speed", r.mean_angular_speed, "mean over tokens of |d theta_j/dt| (radians per unit t)");
  file.set_series_attribute("mean_angular_speed", "method", r.angular_speed_method);
  if (!r.min_radial_alignment.empty())
    put("min_radial_alignment", r.min_radial_alignment, "min_j <theta_j, A_j>");
  if (!r.max_attention_norm.empty()) put("max_attention_norm", r.max_attention_norm, "max_j |A_j|");
  {
    std::vector<std::int64_t> rank, count;
    for (const auto& o : r.frames) rank.push_back(o.effective_rank);
    for (const auto& c : r.clusters) count.push_back(static_cast<std::int64_t>(c.count()));
    put_int("effective_rank", rank, {}, "eigenvalues of (1/n) sum_j theta_j theta_j^T above rank_threshold x trace");
    put_int("cluster_count", count, {}, "number of clusters (cosine > 1 - epsilon, single linkage)");
  }
  if (frames > 0) {
    const auto n = static_cast<std::uint64_t>(r.clusters.front().label.size());
    std::vector<std::int64_t> labels;
    std::size_t kmax = 0;
    for (const auto& c : r.clusters) {
      labels.insert(labels.end(), c.label.begin(), c.label.end());
      kmax = std::max(kmax, c.count());
    }
    put_int("cluster_label", labels, {n}, "id of each token's cluster: the smallest token index in it");
    std::vector<std::int64_t> ids(frames * kmax, -1), sizes(frames * kmax, 0);
    for (std::size_t i = 0; i < frames; ++i)
      for (std::size_t k = 0; k < r.clusters[i].count(); ++k) {
        ids[i * kmax + k] = r.clusters[i].ids[k];
        sizes[i * kmax + k] = r.clusters[i].sizes[k];
      }
    put_int("cluster_id", ids, {kmax}, "cluster ids in increasing order, padded with -1");
    put_int("cluster_size", sizes, {kmax}, "cluster sizes in the order of cluster_id, padded with 0");
    const auto d = static_cast<std::uint64_t>(r.clusters.front().centres.cols());
    if (frames * kmax * d <= kMaxCentreValues) {
      std::vector<double> centres(frames * kmax * d, kNaN);
      for (std::size_t i = 0; i < frames; ++i)
        for (std::size_t k = 0; k < r.clusters[i].count(); ++k)
          for (std::uint64_t c = 0; c < d; ++c)
            centres[(i * kmax + k) * d + c] = r.clusters[i].centres(static_cast<Index>(k), static_cast<Index>(c));
      file.write_series("cluster_centre", r.t, r.step, centres, {kmax, d},
                        "normalized mean direction of each cluster, in the order of cluster_id, padded with NaN");
      where.series.push_back("cluster_centre");
    } else {
      file.remove_series("cluster_centre");
    }
  }
  return where;
}

}  // namespace

int analyze_command(const AnalyzeRequest& request) {
  AnalysisResult result;
  {
    const RunReader reader(request.run_file);  // closed before the file is opened for writing
    result = analyze_run(reader, request.options);
  }
  ObservablesDestination where;
  if (request.write_observables) {
    ObservablesFile file = request.observables_file ? ObservablesFile::open(*request.observables_file, true)
                                                    : ObservablesFile::open_for_run(request.run_file);
    where = write_observables(file, result);
    where.in_run_file = std::filesystem::equivalent(file.path(), request.run_file);
    if (!where.in_run_file) file.set_text("observables", "run_file", request.run_file.filename().string());
    file.set_text("analysis", "report_json", report_json(result, request, where));
    file.close();
  }
  const std::string json = report_json(result, request, where);
  if (request.json) {
    std::ofstream out(*request.json);
    out << json << "\n";
    if (!out) throw IoError(request.json->string() + ": cannot write the report");
  }
  if (!request.quiet) print_report(stdout, result, request, where);
  if (request.fail_on_check)
    for (const auto& c : result.checks.checks)
      if (c.outcome == analysis::Outcome::fail) return static_cast<int>(ExitCode::numerical_failure);
  return 0;
}

}  // namespace normdyn::app
