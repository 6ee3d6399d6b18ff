// Right-hand-side benchmark: time and effective rate (4 n² d flops per evaluation) of
// the full right-hand side, the DGEMM rate of the same machine in the same run, their ratio, the
// growth exponent in n, and the vectorized exponentials the kernel could use.
//
// Run through bench/run.sh, which unsets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for this command
// only (they pin OpenBLAS to a slower kernel on this machine) and prints the OpenBLAS core in use.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#ifdef NORMDYN_BENCH_SLEEF
#include <immintrin.h>
#include <sleef.h>
#endif

#include "normdyn/attention.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/qkv.hpp"

using namespace normdyn;

namespace {

double rhs_flops(Index n, Index d) { return 4.0 * double(n) * double(n) * double(d); }

// The full right-hand side of Post-LN with Q = K = V = I (the default model): kernel plus the
// per-token projection, on a uniform start.
void BM_Rhs(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  // Path: 0 general, 1 symmetric (default), 2 symmetric with GEMM tiles only, 3 fused tiles only.
  const Index path = state.range(3);
  DynamicsSpec spec;
  spec.kernel.threads = threads;
  spec.kernel.symmetric = path != 0;
  if (path == 2) spec.kernel.fused_max_dim = 0;
  if (path == 3) spec.kernel.fused_max_dim = d;
  AttentionDynamics dynamics(spec, QkvSource::identity(), n, d);
  std::vector<double> x(dynamics.size()), dxdt(dynamics.size());
  dynamics.layout().pack(uniform_tokens(n, d, 1.0, 1), x.data());
  for (auto _ : state) {
    dynamics.rhs(x.data(), dxdt.data(), 0.0);
    benchmark::DoNotOptimize(dxdt.data());
    benchmark::ClobberMemory();
  }
  state.counters["flops"] = benchmark::Counter(rhs_flops(n, d), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = dynamics.threads();
}

// The kernel alone with random Gaussian Q, K, V (the general path).
void BM_KernelGeneralQkv(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  AttentionKernel kernel({static_cast<int>(state.range(2)), 0, true});
  QkvSource qkv = QkvSource::gaussian(d, 3);
  const RowMatrix theta = uniform_tokens(n, d, 1.0, 1).theta;
  RowMatrix a(n, d);
  for (auto _ : state) {
    kernel.compute(theta, qkv.at(0.0), 1.0, Vector(), a);
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["flops"] = benchmark::Counter(rhs_flops(n, d), benchmark::Counter::kIsIterationInvariantRate);
}

// The kernel alone, Q = K = V = I: the difference to BM_Rhs is the per-token loop of dynamics.cpp.
void BM_KernelIdentity(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  AttentionKernel kernel({static_cast<int>(state.range(2)), 0, true});
  const RowMatrix theta = uniform_tokens(n, d, 1.0, 1).theta;
  RowMatrix a(n, d);
  for (auto _ : state) {
    kernel.compute(theta, AttentionMatrices::identity_matrices(), 1.0, Vector(), a);
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["flops"] = benchmark::Counter(rhs_flops(n, d), benchmark::Counter::kIsIterationInvariantRate);
}

// The machine's DGEMM rate: square C = A B by Eigen's own GEMM and by OpenBLAS; arguments (size,
// threads), threads 0 = all cores.
void BM_DgemmEigen(benchmark::State& state) {
  const Index m = state.range(0);
  Eigen::setNbThreads(state.range(1) > 0 ? static_cast<int>(state.range(1)) : omp_get_max_threads());
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(m, m), b = Eigen::MatrixXd::Random(m, m);
  Eigen::MatrixXd c(m, m);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["flops"] =
      benchmark::Counter(2.0 * double(m) * double(m) * double(m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = Eigen::nbThreads();
  Eigen::setNbThreads(1);
}

void BM_DgemmOpenBLAS(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  openblas_set_num_threads(state.range(1) > 0 ? static_cast<int>(state.range(1)) : omp_get_max_threads());
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(m, m), b = Eigen::MatrixXd::Random(m, m);
  Eigen::MatrixXd c(m, m);
  for (auto _ : state) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a.data(), m, b.data(), m, 0.0, c.data(), m);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["flops"] =
      benchmark::Counter(2.0 * double(m) * double(m) * double(m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = openblas_get_num_threads();
  openblas_set_num_threads(1);
}

// Vectorized exponentials on the kernel's argument range [-2β, 0] (one thread): rate, and the
// largest error in units of the last place against long double.
std::vector<double> exp_arguments() {
  std::vector<double> x(1 << 14);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -2.0 * double(i) / double(x.size());
  return x;
}

double max_ulp_error(const std::vector<double>& x, const std::vector<double>& y) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double exact = std::exp(static_cast<long double>(x[i]));
    const double ulp = std::nextafter(static_cast<double>(exact), 2.0) - static_cast<double>(exact);
    worst = std::max(worst, static_cast<double>(std::abs(static_cast<long double>(y[i]) - exact)) / ulp);
  }
  return worst;
}

template <class F>
void run_exp(benchmark::State& state, F f) {
  const std::vector<double> x = exp_arguments();
  std::vector<double> y(x.size());
  for (auto _ : state) {
    f(x, y);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["exp"] = benchmark::Counter(double(x.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["max_ulp"] = max_ulp_error(x, y);
}

void BM_ExpEigen(benchmark::State& state) {
  run_exp(state, [](const std::vector<double>& x, std::vector<double>& y) {
    Eigen::Map<Eigen::ArrayXd>(y.data(), Index(y.size())) =
        Eigen::Map<const Eigen::ArrayXd>(x.data(), Index(x.size())).exp();
  });
}

void BM_ExpStd(benchmark::State& state) {
  run_exp(state, [](const std::vector<double>& x, std::vector<double>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::exp(x[i]);
  });
}

#ifdef NORMDYN_BENCH_SLEEF
void BM_ExpSleef(benchmark::State& state) {
  run_exp(state, [](const std::vector<double>& x, std::vector<double>& y) {
#ifdef __AVX512F__
    for (std::size_t i = 0; i < x.size(); i += 8)
      _mm512_storeu_pd(y.data() + i, Sleef_expd8_u10avx512f(_mm512_loadu_pd(x.data() + i)));
#else
    for (std::size_t i = 0; i < x.size(); i += 4)
      _mm256_storeu_pd(y.data() + i, Sleef_expd4_u10avx2(_mm256_loadu_pd(x.data() + i)));
#endif
  });
}
#endif

// Collects every run, then prints the summary tables after the usual output.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    // With --benchmark_repetitions the medians summarize, otherwise the single runs.
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate ? r.aggregate_name == "median" : r.repetitions <= 1) runs_.push_back(r);
    }
  }

  void Summarize() const {
    double dgemm = 0.0;
    std::string dgemm_name;
    for (const Run& r : runs_)
      if (r.run_name.str().rfind("BM_Dgemm", 0) == 0 && threads(r) == omp_get_max_threads() && rate(r) > dgemm) {
        dgemm = rate(r);
        dgemm_name = r.run_name.str();
      }
    std::printf("\n== Summary (GEMM backend of the kernel: %s; OpenBLAS core: %s) ==\n", gemm_backend(),
                openblas_get_corename());
    std::printf("machine DGEMM rate: %.1f GFLOP/s (best DGEMM run on all %d threads: %s)\n", dgemm * 1e-9,
                omp_get_max_threads(), dgemm_name.c_str());
    std::printf("effective rate = 4 n^2 d flops per right-hand side / time (the symmetric path does 3 n^2 d)\n\n");
    std::printf("%6s %5s %14s %12s %10s\n", "n", "d", "time/RHS", "GFLOP/s", "of DGEMM");
    std::map<Index, std::vector<std::pair<double, double>>> by_d;  // d -> (n, seconds)
    std::vector<const Run*> sorted;
    for (const Run& r : runs_) sorted.push_back(&r);
    std::sort(sorted.begin(), sorted.end(), [](const Run* a, const Run* b) { return key(*a) < key(*b); });
    for (const Run* run : sorted) {
      const Run& r = *run;
      Index n, d, nthreads, symmetric;
      if (std::sscanf(r.run_name.str().c_str(), "BM_Rhs/%ld/%ld/%ld/%ld", &n, &d, &nthreads, &symmetric) != 4) continue;
      if (nthreads != 0 || symmetric != 1) continue;
      const double seconds = r.GetAdjustedRealTime() * unit_seconds(r);
      std::printf("%6ld %5ld %12.4g s %12.2f %9.1f%%\n", n, d, seconds, rate(r) * 1e-9, 100.0 * rate(r) / dgemm);
      by_d[d].emplace_back(double(n), seconds);
    }
    std::printf("\nfitted growth exponent p of time ~ n^p (least squares in log-log):\n");
    for (const auto& [d, points] : by_d) {
      if (points.size() < 2) continue;
      std::vector<std::pair<double, double>> large;
      for (const auto& p : points)
        if (p.first >= 256) large.push_back(p);
      std::printf("  d = %4ld: p = %.3f over n = 256..4096, %.3f over all n\n", d, slope(large), slope(points));
    }
    for (const Run& r : runs_)
      if (r.run_name.str() == "BM_Rhs/1024/64/0/1/real_time") {
        const double ratio = rate(r) / dgemm;
        std::printf("\ntarget: RHS at (n, d) = (1024, 64) >= 50%% of the same-run DGEMM rate: %.1f%% -> %s\n",
                    100.0 * ratio, ratio >= 0.5 ? "MET" : "NOT MET");
      }
  }

 private:
  static double rate(const Run& r) {
    const auto it = r.counters.find("flops");
    return it == r.counters.end() ? 0.0 : double(it->second);
  }
  // (d, n) of a BM_Rhs run, for the table's order; other runs sort first and are skipped.
  static std::pair<Index, Index> key(const Run& r) {
    Index n = 0, d = 0;
    if (std::sscanf(r.run_name.str().c_str(), "BM_Rhs/%ld/%ld", &n, &d) != 2) return {-1, -1};
    return {d, n};
  }
  static int threads(const Run& r) {
    const auto it = r.counters.find("threads");
    return it == r.counters.end() ? 0 : static_cast<int>(double(it->second) + 0.5);
  }
  static double unit_seconds(const Run& r) {
    switch (r.time_unit) {
      case benchmark::kNanosecond:
        return 1e-9;
      case benchmark::kMicrosecond:
        return 1e-6;
      case benchmark::kMillisecond:
        return 1e-3;
      default:
        return 1.0;
    }
  }
  static double slope(const std::vector<std::pair<double, double>>& points) {
    if (points.size() < 2) return std::nan("");
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [x, y] : points) {
      sx += std::log(x);
      sy += std::log(y);
      sxx += std::log(x) * std::log(x);
      sxy += std::log(x) * std::log(y);
    }
    const double k = double(points.size());
    return (k * sxy - sx * sy) / (k * sxx - sx * sx);
  }
  std::vector<Run> runs_;
};

void register_benchmarks() {
  // DGEMM first: the reference rate of this run.
  for (auto* b : {benchmark::RegisterBenchmark("BM_DgemmEigen", BM_DgemmEigen),
                  benchmark::RegisterBenchmark("BM_DgemmOpenBLAS", BM_DgemmOpenBLAS)})
    b->Args({1024, 1})->Args({1024, 0})->Args({2048, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
  // The benchmark grid, all cores, default (symmetric) path.
  auto* rhs = benchmark::RegisterBenchmark("BM_Rhs", BM_Rhs);
  for (Index n : {32, 256, 1024, 4096})
    for (Index d : {3, 64, 512}) rhs->Args({n, d, 0, 1});
  // One thread, and the general path forced, at a few sizes: what threads and symmetry buy.
  for (Index n : {1024, 4096}) rhs->Args({n, 64, 1, 1})->Args({n, 64, 0, 0})->Args({n, 3, 0, 0});
  // Where fused row tiles and GEMM tiles cross over (the default switches at kFusedMaxDim).
  for (Index d : {2, 3, 4, 6, 8}) rhs->Args({1024, d, 0, 2})->Args({1024, d, 0, 3});
  rhs->Unit(benchmark::kMicrosecond)->UseRealTime();
  benchmark::RegisterBenchmark("BM_KernelIdentity", BM_KernelIdentity)
      ->Args({1024, 64, 0})
      ->Args({4096, 3, 0})
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_KernelGeneralQkv", BM_KernelGeneralQkv)
      ->Args({1024, 64, 0})
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_ExpStd", BM_ExpStd)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_ExpEigen", BM_ExpEigen)->Unit(benchmark::kMicrosecond);
#ifdef NORMDYN_BENCH_SLEEF
  benchmark::RegisterBenchmark("BM_ExpSleef", BM_ExpSleef)->Unit(benchmark::kMicrosecond);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("normdyn_gemm_backend", gemm_backend());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  benchmark::AddCustomContext("omp_wait_policy", wait_policy ? wait_policy : "(unset)");
  register_benchmarks();
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.Summarize();
  benchmark::Shutdown();
  return 0;
}
