// Per-frame observables: the recorder's three series and the analysis's pairwise matrix, before
// (one thread, every tile of the Gram matrix) and after (upper tiles only, on the threads), timed
// side by side in one run. Usage: normdyn_bench_observables [n] [d] [repeats] [threads]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "normdyn/analysis/observables.hpp"
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

  const double rec_before = seconds_of([&] {
    const auto p = analysis::pairwise_summary(x.theta, beta);
    sink = p.energy + analysis::variance(x.theta) + p.min_cosine;
  }, repeats);
  const double rec_after = seconds_of([&] {
    sink = analysis::compute_frame_observables(frame_observable_names(), x, beta, threads)[0];
  }, repeats);
  const double rec_after_one = seconds_of([&] {
    sink = analysis::compute_frame_observables(frame_observable_names(), x, beta, 1)[0];
  }, repeats);
  std::printf("n = %lld, d = %lld, %d threads, best of %d\n", static_cast<long long>(n), static_cast<long long>(d),
              threads, repeats);
  std::printf("recorder (energy, variance, min_cosine): before %.4f s, after %.4f s (1 thread: %.4f s); ratio %.2f (1 thread: %.2f)\n",
              rec_before, rec_after, rec_after_one, rec_before / rec_after, rec_before / rec_after_one);

  const double an_before = seconds_of([&] {
    const RowMatrix h = chords_before(x.theta);
    sink = (-beta * h.array()).exp().sum();
  }, repeats);
  omp_set_num_threads(threads);
  const double an_after = seconds_of([&] {
    const RowMatrix h = analysis::half_squared_chords(x.theta);
    sink = analysis::normalized_energy(h, beta);
  }, repeats);
  std::printf("analysis (pairwise matrix + normalized energy): before %.4f s, after %.4f s; ratio %.2f\n", an_before,
              an_after, an_before / an_after);
  return sink > -1.0 ? 0 : 1;
}
