// Per-frame observables against the integration, timed side by side in one run (before and after
// alternately, best of the repeats):
//  * the recorder's three series (energy, variance, min_cosine) per frame: the serial pass over every
//    tile, the tiled pass with a scalar loop over the pairs of each tile, and the library's pass
//    (whole-tile vectorized reductions, on the threads);
//  * one right-hand side of the attention kernel (Q = K = V = I, the kernel a run uses) at the same
//    n, d and threads, and the frame's cost as a fraction of one dopri5 step (6 right-hand sides; 7
//    with a retraction, which only lowers the fraction);
//  * the analysis's pairwise matrix.
// Usage: normdyn_bench_observables [n] [d] [repeats] [threads]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/attention.hpp"
#include "normdyn/io/run_file.hpp"

using namespace normdyn;

namespace {

double seconds_of(const auto& f, int repeats) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Best times of two functions run alternately, so that a change of machine load hits both alike.
std::pair<double, double> interleaved_seconds(const auto& f, const auto& g, int repeats) {
  double best_f = 1e300, best_g = 1e300;
  for (int r = 0; r < repeats; ++r) {
    best_f = std::min(best_f, seconds_of(f, 1));
    best_g = std::min(best_g, seconds_of(g, 1));
  }
  return {best_f, best_g};
}

// The analysis's matrix as it was computed before: one product, serial loops.
RowMatrix chords_before(const RowMatrix& theta) {
  const Index n = theta.rows();
  const Eigen::RowVectorXd mean = theta.colwise().mean();
  const RowMatrix c = theta.rowwise() - mean;
  RowMatrix h(n, n);
  h.noalias() = -c * c.transpose();
  const Vector sq = h.diagonal();
  for (Index j = 0; j < n; ++j) {
    for (Index k = 0; k < n; ++k) h(j, k) = std::max(0.0, h(j, k) - 0.5 * (sq(j) + sq(k)));
    h(j, j) = 0.0;
  }
  for (Index j = 0; j < n; ++j)
    for (Index k = j + 1; k < n; ++k) h(k, j) = h(j, k);
  return h;
}

// The tiled pass as it was: the upper tiles on the threads, a scalar loop over each tile's pairs.
analysis::PairwiseSummary tiled_scalar_loop(const RowMatrix& theta, double beta, int threads) {
  constexpr Index kBlock = 256;
  const Index n = theta.rows();
  const Index blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::pair<Index, Index>> tiles;
  for (Index a = 0; a < blocks; ++a)
    for (Index b = a; b < blocks; ++b) tiles.emplace_back(a, b);
  std::vector<analysis::PairwiseSummary> sums(tiles.size());
#pragma omp parallel num_threads(threads)
  {
    RowMatrix gram;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      const auto [a, b] = tiles[i];
      const Index ra = a * kBlock, na = std::min(kBlock, n - ra);
      const Index rb = b * kBlock, nb = std::min(kBlock, n - rb);
      gram.noalias() = theta.middleRows(ra, na) * theta.middleRows(rb, nb).transpose();
      auto& t = sums[i];
      t.energy = (a == b ? 1.0 : 2.0) * (beta * gram.array()).exp().sum();
      double min_cos = 1.0, sum_cos = 0.0;
      for (Index p = 0; p < na; ++p)
        for (Index q = (a == b ? p + 1 : 0); q < nb; ++q) {
          min_cos = std::min(min_cos, gram(p, q));
          sum_cos += gram(p, q);
        }
      t.min_cosine = min_cos;
      t.mean_cosine = 2.0 * sum_cos;
    }
  }
  analysis::PairwiseSummary s;
  s.energy = 0.0;
  s.mean_cosine = 0.0;
  for (const auto& t : sums) {
    s.energy += t.energy;
    s.min_cosine = std::min(s.min_cosine, t.min_cosine);
    s.mean_cosine += t.mean_cosine;
  }
  s.mean_cosine /= double(n) * double(n - 1);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const Index n = argc > 1 ? std::atol(argv[1]) : 4096;
  const Index d = argc > 2 ? std::atol(argv[2]) : 64;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const int threads = argc > 4 ? std::atoi(argv[4]) : omp_get_max_threads();
  Eigen::setNbThreads(1);  // as in a run: the attention kernel turns Eigen's own threading off
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g;
  Tokens x;
  x.theta.resize(n, d);
  for (Index j = 0; j < n; ++j)
    for (Index c = 0; c < d; ++c) x.theta(j, c) = g(rng);
  x.theta.rowwise().normalize();
  x.r = Vector::Ones(n);
  const double beta = 1.0;
  volatile double sink = 0.0;

  const double rec_serial = seconds_of(
      [&] {
        const auto p = analysis::pairwise_summary(x.theta, beta);
        sink = p.energy + analysis::variance(x.theta) + p.min_cosine;
      },
      repeats);
  analysis::PairwiseSummary old_pass;
  std::vector<double> values;
  const auto [rec_before, rec_after] = interleaved_seconds(
      [&] {
        old_pass = tiled_scalar_loop(x.theta, beta, threads);
        sink = old_pass.energy + analysis::variance(x.theta) + old_pass.min_cosine;
      },
      [&] { values = analysis::compute_frame_observables(frame_observable_names(), x, beta, threads); }, repeats);
  const double products_and_min = seconds_of([&] { sink = analysis::min_pairwise_cosine(x.theta); }, repeats);
  AttentionKernel kernel(KernelOptions{.threads = threads});
  RowMatrix attention(n, d);
  const Vector no_masses;
  const double rhs = seconds_of(
      [&] {
        kernel.compute(x.theta, AttentionMatrices::identity_matrices(), beta, no_masses, attention);
        sink = attention(0, 0);
      },
      repeats);
  std::printf("n = %lld, d = %lld, %d threads, best of %d\n", static_cast<long long>(n), static_cast<long long>(d),
              threads, repeats);
  std::printf("frame observables (energy, variance, min_cosine):\n");
  std::printf("  serial, every tile      %.4f s\n", rec_serial);
  std::printf("  tiled, scalar pair loop %.4f s (before)\n", rec_before);
  std::printf("  tiled, tile reductions  %.4f s (after); before/after %.2f\n", rec_after, rec_before / rec_after);
  std::printf("    of which the tiles' products and minimum (no exponentials) %.4f s\n", products_and_min);
  std::printf("  same values: energy rel. diff %.1e, min_cosine %s\n",
              std::abs(values[0] - old_pass.energy) / old_pass.energy,
              values[2] == 1.0 - (1.0 - old_pass.min_cosine) ? "equal" : "DIFFERENT");
  std::printf("one right-hand side (attention kernel, %s path) %.4f s\n",
              kernel.last_path() == KernelPath::symmetric ? "symmetric" : "general", rhs);
  std::printf("frame / right-hand side: before %.3f, after %.3f\n", rec_before / rhs, rec_after / rhs);
  std::printf("frame / dopri5 step (6 right-hand sides): before %.3f, after %.3f\n", rec_before / (6 * rhs),
              rec_after / (6 * rhs));

  const double an_before = seconds_of(
      [&] {
        const RowMatrix h = chords_before(x.theta);
        sink = (-beta * h.array()).exp().sum();
      },
      repeats);
  omp_set_num_threads(threads);
  const double an_after = seconds_of(
      [&] {
        const RowMatrix h = analysis::half_squared_chords(x.theta);
        sink = analysis::normalized_energy(h, beta);
      },
      repeats);
  std::printf("analysis (pairwise matrix + normalized energy): before %.4f s, after %.4f s; ratio %.2f\n", an_before,
              an_after, an_before / an_after);
  return sink > -1.0 ? 0 : 1;
}
