#include "normdyn/analysis/observables.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <omp.h>
#include <stdexcept>

#include "normdyn/observable_registry.hpp"
#include "normdyn/thread_team.hpp"

namespace normdyn::analysis {
namespace {

// Rows per block (tile side) of the pairwise passes.
constexpr Index kPairBlock = 256;
// Below this n² (d + 16) the pairwise passes stay on one thread (a team costs more than it saves).
constexpr double kSerialPairWork = double(1 << 20);

int pair_threads(Index n, Index d, int requested) {
  if (double(n) * double(n) * double(d + 16) < kSerialPairWork) return 1;
  return requested > 0 ? requested : omp_get_max_threads();
}

// E (if with_energy), min and mean cosine over the tiles of the Gram matrix: see
// pairwise_summary_threaded.
PairwiseSummary tiled_pairs(Eigen::Ref<const RowMatrix> theta, double beta, int threads, bool with_energy);

}  // namespace

double variance(Eigen::Ref<const RowMatrix> theta) {
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  return (theta.rowwise() - mean).rowwise().squaredNorm().mean();
}

double interaction_energy(Eigen::Ref<const RowMatrix> theta, double beta) {
  const RowMatrix gram = theta * theta.transpose();
  return (beta * gram.array()).exp().sum();
}

double min_pairwise_cosine(Eigen::Ref<const RowMatrix> theta) {
  if (theta.rows() < 2) return 1.0;
  // The tiled pass (O(block²) memory, not an n×n Gram matrix); its minimum is exact.
  return tiled_pairs(theta, 0.0, 0, false).min_cosine;
}

PairwiseSummary pairwise_summary(Eigen::Ref<const RowMatrix> theta, double beta) {
  const Index n = theta.rows();
  PairwiseSummary s;
  if (n == 0) return s;
  constexpr Index kBlock = 256;
  double energy = 0.0, min_cos = 1.0, sum_cos = 0.0;
  RowMatrix gram;
  for (Index begin = 0; begin < n; begin += kBlock) {
    const Index rows = std::min(kBlock, n - begin);
    gram.noalias() = theta.middleRows(begin, rows) * theta.transpose();
    energy += (beta * gram.array()).exp().sum();
    for (Index i = 0; i < rows; ++i)
      for (Index k = 0; k < n; ++k) {
        if (k == begin + i) continue;
        min_cos = std::min(min_cos, gram(i, k));
        sum_cos += gram(i, k);
      }
  }
  s.energy = energy;
  s.min_cosine = n > 1 ? min_cos : 1.0;
  s.mean_cosine = n > 1 ? sum_cos / (static_cast<double>(n) * static_cast<double>(n - 1)) : 1.0;
  return s;
}

bool all_cosines_above(Eigen::Ref<const RowMatrix> theta, double threshold) {
  const Index n = theta.rows();
  if (n < 2) return true;
  // For unit vectors |θ_j − θ_k|² = 2 − 2 <θ_j, θ_k>: the condition is a diameter bound D.
  const double diameter = std::sqrt(std::max(0.0, 2.0 - 2.0 * threshold));
  // Necessary: every token within D of the first.
  double from_first = 0.0;
  for (Index j = 1; j < n; ++j) from_first = std::max(from_first, (theta.row(j) - theta.row(0)).norm());
  if (from_first > diameter) return false;
  // Sufficient: every token within D/2 of the mean direction (triangle inequality).
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  double from_mean = 0.0;
  for (Index j = 0; j < n; ++j) from_mean = std::max(from_mean, (theta.row(j) - mean).norm());
  if (2.0 * from_mean < diameter) return true;
  return min_pairwise_cosine(theta) > threshold;
}

double one_minus_mean_cosine(Eigen::Ref<const RowMatrix> theta) {
  const Index n = theta.rows();
  if (n < 2) return 0.0;
  return static_cast<double>(n) / static_cast<double>(n - 1) * variance(theta);
}

RowMatrix half_squared_chords(Eigen::Ref<const RowMatrix> theta) {
  const Index n = theta.rows();
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  const RowMatrix c = theta.rowwise() - mean;
  const Vector sq = c.rowwise().squaredNorm();
  RowMatrix h(n, n);
  // Row blocks on the threads (the attention kernel leaves Eigen's own GEMM threading off); each
  // block is one product, computed the same way whichever thread owns it.
  const Index blocks = (n + kPairBlock - 1) / kPairBlock;
  const int threads = pair_threads(n, theta.cols(), 0);
  auto block = [&](Index b) {
    const Index begin = b * kPairBlock, rows = std::min(kPairBlock, n - begin);
    h.middleRows(begin, rows).noalias() = -c.middleRows(begin, rows) * c.transpose();
    for (Index i = 0; i < rows; ++i) {
      const Index j = begin + i;
      for (Index k = 0; k < n; ++k) h(j, k) = std::max(0.0, h(j, k) + 0.5 * (sq(j) + sq(k)));
      h(j, j) = 0.0;
    }
  };
  // Symmetric to the last bit (the products need not be): column j below the diagonal from row j.
  auto mirror = [&](Index j) {
    for (Index k = j + 1; k < n; ++k) h(k, j) = h(j, k);
  };
  // The implicit barrier after the blocks orders them before the mirror.
  run_in_team(threads, [&] {
#pragma omp for schedule(dynamic, 1)
    for (Index b = 0; b < blocks; ++b) block(b);
#pragma omp for schedule(dynamic, 64)
    for (Index j = 0; j < n; ++j) mirror(j);
  });
  return h;
}

double max_one_minus_cosine(Eigen::Ref<const RowMatrix> h) { return h.rows() < 2 ? 0.0 : h.maxCoeff(); }

double geodesic_diameter(Eigen::Ref<const RowMatrix> h) {
  // |θ_j − θ_k| = 2 sin(φ/2) and H = |θ_j − θ_k|²/2, so φ = 2 asin(sqrt(H/2)).
  return 2.0 * std::asin(std::min(1.0, std::sqrt(0.5 * max_one_minus_cosine(h))));
}

double normalized_energy(Eigen::Ref<const RowMatrix> h, double beta) {
  const Index rows = h.rows();
  const auto n = static_cast<double>(rows);
  // Per-row sums on the threads, added in row order: the same result for any number of threads.
  Vector row_sum(rows);
  const int threads = pair_threads(rows, 1, 0);
  run_in_team(threads, [&] {
#pragma omp for schedule(static)
    for (Index j = 0; j < rows; ++j) row_sum(j) = (-beta * h.row(j).array()).exp().sum();
  });
  return row_sum.sum() / (n * n);
}

std::vector<double> moment_eigenvalues(Eigen::Ref<const RowMatrix> theta) {
  const Index n = theta.rows(), d = theta.cols();
  // The smaller of ΘᵀΘ/n (d×d) and ΘΘᵀ/n (n×n): same nonzero eigenvalues.
  Eigen::MatrixXd m = d <= n ? Eigen::MatrixXd(theta.transpose() * theta) : Eigen::MatrixXd(theta * theta.transpose());
  m /= static_cast<double>(n);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m, Eigen::EigenvaluesOnly);
  std::vector<double> values(eig.eigenvalues().data(), eig.eigenvalues().data() + eig.eigenvalues().size());
  std::sort(values.begin(), values.end(), std::greater<>());
  return values;
}

int effective_rank(Eigen::Ref<const RowMatrix> theta, double threshold) {
  const std::vector<double> values = moment_eigenvalues(theta);
  double trace = 0.0;
  for (double v : values) trace += v;
  int rank = 0;
  for (double v : values)
    if (v > threshold * trace) ++rank;
  return rank;
}

double mean_angular_speed(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const RowMatrix> velocity) {
  const Index n = theta.rows();
  double sum = 0.0;
  for (Index j = 0; j < n; ++j) {
    const double radial = velocity.row(j).dot(theta.row(j));
    sum += (velocity.row(j) - radial * theta.row(j)).norm();
  }
  return sum / static_cast<double>(n);
}

double mean_angular_speed_between(Eigen::Ref<const RowMatrix> theta0, Eigen::Ref<const RowMatrix> theta1, double dt) {
  const Index n = theta0.rows();
  double sum = 0.0;
  for (Index j = 0; j < n; ++j) sum += 2.0 * std::asin(std::min(1.0, 0.5 * (theta1.row(j) - theta0.row(j)).norm()));
  return sum / (static_cast<double>(n) * dt);
}

double min_radial_alignment(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const RowMatrix> attention) {
  double m = std::numeric_limits<double>::infinity();
  for (Index j = 0; j < theta.rows(); ++j) m = std::min(m, theta.row(j).dot(attention.row(j)));
  return m;
}

double max_row_norm(Eigen::Ref<const RowMatrix> m) {
  double best = 0.0;
  for (Index j = 0; j < m.rows(); ++j) best = std::max(best, m.row(j).norm());
  return best;
}

FrameObservables frame_observables(const Tokens& tokens, Eigen::Ref<const RowMatrix> h,
                                   const ObservableOptions& options) {
  FrameObservables o;
  const double n = static_cast<double>(tokens.n());
  o.variance = variance(tokens.theta);
  o.one_minus_mean_cosine = tokens.n() < 2 ? 0.0 : n / (n - 1.0) * o.variance;
  o.mean_cosine = 1.0 - o.one_minus_mean_cosine;
  o.one_minus_min_cosine = max_one_minus_cosine(h);
  o.min_cosine = 1.0 - o.one_minus_min_cosine;
  o.diameter = geodesic_diameter(h);
  o.normalized_energy = normalized_energy(h, options.beta);
  o.energy = o.normalized_energy * n * n * std::exp(options.beta);
  o.mean_radius = tokens.r.size() > 0 ? tokens.r.mean() : 1.0;
  o.effective_rank = effective_rank(tokens.theta, options.rank_threshold);
  return o;
}

PairwiseSummary pairwise_summary_threaded(Eigen::Ref<const RowMatrix> theta, double beta, int threads) {
  return tiled_pairs(theta, beta, threads, true);
}

namespace {

PairwiseSummary tiled_pairs(Eigen::Ref<const RowMatrix> theta, double beta, int threads, bool with_energy) {
  const Index n = theta.rows();
  PairwiseSummary s;
  if (n == 0) return s;
  const Index blocks = (n + kPairBlock - 1) / kPairBlock;
  // Tiles (a, b) with a ≤ b; an off-diagonal tile stands for itself and its transpose.
  std::vector<std::pair<Index, Index>> tiles;
  for (Index a = 0; a < blocks; ++a)
    for (Index b = a; b < blocks; ++b) tiles.emplace_back(a, b);
  struct TileSum {
    double energy = 0.0, min_cos = 1.0, sum_cos = 0.0;
  };
  std::vector<TileSum> sums(tiles.size());
  const int team = pair_threads(n, theta.cols(), threads);
  auto tile = [&](std::size_t i, RowMatrix& gram) {
    const auto [a, b] = tiles[i];
    const Index ra = a * kPairBlock, na = std::min(kPairBlock, n - ra);
    const Index rb = b * kPairBlock, nb = std::min(kPairBlock, n - rb);
    gram.noalias() = theta.middleRows(ra, na) * theta.middleRows(rb, nb).transpose();
    TileSum& t = sums[i];
    // Whole-tile reductions (Eigen's vectorized exp, min and sum) rather than a scalar loop over
    // the pairs: the loop's serial min/add chains cost as much as the tile's product. A diagonal
    // tile holds both orders of each pair and its diagonal, which the sum takes out.
    if (with_energy) t.energy = (a == b ? 1.0 : 2.0) * (beta * gram.array()).exp().sum();
    if (a != b) {
      t.min_cos = gram.minCoeff();
      t.sum_cos = 2.0 * gram.sum();  // (j, k) and (k, j)
    } else {
      double min_cos = 1.0;
      for (Index p = 0; p + 1 < na; ++p) min_cos = std::min(min_cos, gram.row(p).tail(na - p - 1).minCoeff());
      t.min_cos = min_cos;
      t.sum_cos = gram.sum() - gram.trace();
    }
  };
  run_in_team(team, [&] {
    RowMatrix gram;  // each thread's
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < tiles.size(); ++i) tile(i, gram);
  });
  double energy = 0.0, min_cos = 1.0, sum_cos = 0.0;
  for (const auto& t : sums) {
    energy += t.energy;
    min_cos = std::min(min_cos, t.min_cos);
    sum_cos += t.sum_cos;
  }
  s.energy = energy;
  s.min_cosine = n > 1 ? min_cos : 1.0;
  s.mean_cosine = n > 1 ? sum_cos / (static_cast<double>(n) * static_cast<double>(n - 1)) : 1.0;
  return s;
}

}  // namespace

Vector inverse_speed_factors(const Scheme& scheme, double t, double t_regime, Eigen::Ref<const RowMatrix> theta,
                             Eigen::Ref<const Vector> r, Eigen::Ref<const RowMatrix> attention) {
  Vector out(theta.rows());
  std::visit(
      [&](const auto& s) {
        for (Index j = 0; j < theta.rows(); ++j) {
          const TokenContext c{t, t_regime, r(j), theta.row(j).dot(attention.row(j)), attention.row(j).norm()};
          out(j) = 1.0 / s.speed(c);
        }
      },
      scheme);
  return out;
}

// ---- The registry's functions ----------------------------------------------------------------------

namespace {

using History = FrameObservableComputer::History;

// What several observables of one frame share, computed on first use.
class FrameWork {
 public:
  FrameWork(const FrameInput& input, const FrameComputeOptions& o, const History& h)
      : in(input), options(o), history(h) {}
  const FrameInput& in;
  const FrameComputeOptions& options;
  const History& history;

  const Tokens& x() const { return *in.tokens; }
  double n() const { return static_cast<double>(in.tokens->n()); }
  double variance() {
    if (!variance_) variance_ = analysis::variance(x().theta);
    return *variance_;
  }
  double one_minus_mean_cosine() { return x().n() < 2 ? 0.0 : n() / (n() - 1.0) * variance(); }
  // From H when the caller has it (1 − min cos to full relative accuracy), else from the Gram pass.
  double one_minus_min_cosine() {
    if (in.h) return max_one_minus_cosine(*in.h);
    return 1.0 - pairs().min_cosine;
  }
  double normalized_energy() {
    const double scale = n() * n() * std::exp(options.beta);
    const double interaction = in.h ? analysis::normalized_energy(*in.h, options.beta) : pairs().energy / scale;
    return interaction + potential() / scale;
  }
  double energy() {
    if (in.h) return normalized_energy() * n() * n() * std::exp(options.beta);
    return pairs().energy + potential();
  }
  // 2βn Σ_j Φ(θ_j) of the terms that have a potential (0 without terms).
  double potential() {
    if (!options.terms || options.terms->empty()) return 0.0;
    if (!potential_) potential_ = 2.0 * options.beta * n() * options.terms->potential(x().theta);
    return *potential_;
  }
  const PairwiseSummary& pairs() {
    if (!pairs_) pairs_ = pairwise_summary_threaded(x().theta, options.beta, options.threads);
    return *pairs_;
  }
  bool dynamics() const { return in.velocity && in.radial_velocity && in.attention && in.inverse_speed; }
  // Layers (discrete) between the previous frame and this one; 0 when there is no previous frame.
  double layers() const { return history.has_previous ? static_cast<double>(in.step - history.step) : 0.0; }

 private:
  std::optional<double> variance_;
  std::optional<double> potential_;
  std::optional<PairwiseSummary> pairs_;
};

struct Entry {
  std::string_view name;
  double (*compute)(FrameWork&);
};

double median(Vector v) {
  if (v.size() == 0) return kNaN;
  const auto mid = v.size() / 2;
  std::nth_element(v.data(), v.data() + mid, v.data() + v.size());
  const double upper = v(mid);
  if (v.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(v.data(), v.data() + mid));
}

// The per-token clock ∫ 1/s_j dt up to this frame (trapezoid; 0 at the first frame).
Vector clock_now(FrameWork& w) {
  const Vector& now = *w.in.inverse_speed;
  if (!w.history.has_previous || w.history.clock.size() != now.size()) return Vector::Zero(now.size());
  return w.history.clock + 0.5 * (w.in.t - w.history.t) * (w.history.inverse_speed + now);
}

// One entry per name of the registry, in any order (looked up by name).
const Entry kEntries[] = {
    {"energy", [](FrameWork& w) { return w.energy(); }},
    {"normalized_energy", [](FrameWork& w) { return w.normalized_energy(); }},
    {"variance", [](FrameWork& w) { return w.variance(); }},
    {"one_minus_mean_cosine", [](FrameWork& w) { return w.one_minus_mean_cosine(); }},
    {"mean_cosine", [](FrameWork& w) { return 1.0 - w.one_minus_mean_cosine(); }},
    {"one_minus_min_cosine", [](FrameWork& w) { return w.one_minus_min_cosine(); }},
    {"min_cosine", [](FrameWork& w) { return 1.0 - w.one_minus_min_cosine(); }},
    {"diameter",
     [](FrameWork& w) { return 2.0 * std::asin(std::min(1.0, std::sqrt(0.5 * w.one_minus_min_cosine()))); }},
    {"effective_rank", [](FrameWork& w) { return double(effective_rank(w.x().theta, w.options.rank_threshold)); }},
    {"mean_radius", [](FrameWork& w) { return w.x().r.size() > 0 ? w.x().r.mean() : 1.0; }},
    {"min_radius_growth",
     [](FrameWork& w) {
       const Vector& r0 = w.history.has_previous ? w.history.r0 : w.x().r;
       return (w.x().r - r0).minCoeff();
     }},
    {"mean_angular_speed",
     [](FrameWork& w) { return w.in.velocity ? mean_angular_speed(w.x().theta, *w.in.velocity) : kNaN; }},
    {"mean_cosine_rate",
     [](FrameWork& w) {
       if (!w.in.velocity || w.x().n() < 2) return kNaN;
       const Eigen::RowVectorXd mean = w.x().theta.colwise().mean();
       const Eigen::RowVectorXd mean_velocity = w.in.velocity->colwise().mean();
       return 2.0 * w.n() / (w.n() - 1.0) * mean.dot(mean_velocity);
     }},
    {"min_radial_alignment",
     [](FrameWork& w) { return w.in.attention ? min_radial_alignment(w.x().theta, *w.in.attention) : kNaN; }},
    {"max_attention_norm", [](FrameWork& w) { return w.in.attention ? max_row_norm(*w.in.attention) : kNaN; }},
    {"min_radial_speed",
     [](FrameWork& w) {
       if (w.options.discrete) {
         if (!w.history.has_previous || w.in.t <= w.history.t) return kNaN;
         return (w.x().r - w.history.r).minCoeff() / (w.in.t - w.history.t);
       }
       return w.in.radial_velocity ? w.in.radial_velocity->minCoeff() : kNaN;
     }},
    {"clock_min", [](FrameWork& w) { return w.in.inverse_speed ? clock_now(w).minCoeff() : kNaN; }},
    {"clock_median", [](FrameWork& w) { return w.in.inverse_speed ? median(clock_now(w)) : kNaN; }},
    {"layer_angle",
     [](FrameWork& w) {
       const double layers = w.layers();
       if (!(layers > 0)) return kNaN;
       return mean_angular_speed_between(w.history.theta, w.x().theta, 1.0) / layers;
     }},
    {"mean_cosine_layer_rate",
     [](FrameWork& w) {
       const double layers = w.layers();
       if (!(layers > 0)) return kNaN;
       return ((1.0 - w.one_minus_mean_cosine()) - w.history.mean_cosine) / layers;
     }},
};

int entry_index(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kEntries); ++i)
    if (kEntries[i].name == name) return static_cast<int>(i);
  throw std::invalid_argument("unknown observable \"" + name + "\"");
}

}  // namespace

FrameObservableComputer::FrameObservableComputer(std::vector<std::string> names, FrameComputeOptions options)
    : names_(std::move(names)), options_(options) {
  for (const auto& name : names_) {
    if (!find_observable(name)) throw std::invalid_argument("unknown observable \"" + name + "\"");
    index_.push_back(entry_index(name));
  }
}

std::vector<double> FrameObservableComputer::compute(const FrameInput& frame) {
  FrameWork work(frame, options_, history_);
  std::vector<double> values;
  values.reserve(index_.size());
  for (int i : index_) values.push_back(kEntries[i].compute(work));
  // Carry this frame forward.
  const Tokens& x = *frame.tokens;
  if (!history_.has_previous) history_.r0 = x.r;
  if (frame.inverse_speed) {
    history_.clock = clock_now(work);
    history_.inverse_speed = *frame.inverse_speed;
  }
  history_.mean_cosine = 1.0 - work.one_minus_mean_cosine();
  history_.theta = x.theta;
  history_.r = x.r;
  history_.t = frame.t;
  history_.step = frame.step;
  history_.has_previous = true;
  return values;
}

std::vector<double> compute_frame_observables(const std::vector<std::string>& names, const Tokens& tokens, double beta,
                                              int threads, const BlockTerms* terms) {
  for (const auto& name : names) {
    const auto info = find_observable(name);
    if (info && info->need != ObservableNeed::directions && info->need != ObservableNeed::radii)
      throw std::invalid_argument("observable \"" + name + "\" needs more than one frame's tokens");
  }
  FrameComputeOptions options;
  options.beta = beta;
  options.threads = threads;
  options.terms = terms;
  FrameObservableComputer computer(names, options);
  FrameInput in;
  in.tokens = &tokens;
  return computer.compute(in);
}

bool has_function(std::string_view name) {
  for (const auto& e : kEntries)
    if (e.name == name) return true;
  return false;
}

}  // namespace normdyn::analysis
