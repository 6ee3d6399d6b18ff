// The cost of the attention composition, side by side in one run (a plain program: prints ratios):
//   * the default specification against itself built as before (the general and symmetric paths);
//   * a causal mask against the unmasked right-hand side (the kernel skips the keys after each block),
//     with the kernel's blocks (sized for the mask) and with the fixed 256-row blocks it used before;
//   * RoPE, ALiBi and the uniform normalizer against the unmasked general path;
//   * H heads of random Q, K, V against one head (each head costs one head).
// Every configuration is timed in rounds that alternate between them, so that a change of machine
// load hits all alike; the table reports medians over rounds.
//
//   normdyn_bench_attention_spec [n] [d] [rounds] [threads]     (defaults 4096 64 7 0)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/qkv.hpp"

using namespace normdyn;

namespace {

struct Case {
  std::string name;
  AttentionSpec attention;
  bool symmetric = true;
  Index heads = 1;
  bool random_qkv = false;
  Index block_rows = 0;  // 0: the kernel's choice
  std::vector<double> seconds;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Index n = argc > 1 ? std::atol(argv[1]) : 4096;
  const Index d = argc > 2 ? std::atol(argv[2]) : 64;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 7;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  AttentionSpec causal, alibi, rope, uniform, causal_alibi;
  causal.mask = CausalMask{};
  causal_alibi.mask = CausalMask{};
  causal_alibi.bias = Alibi{1.0};
  alibi.bias = Alibi{1.0};
  rope.positions = Rope{};
  uniform.normalizer = Uniform{};
  std::vector<Case> cases{
      {"default (symmetric path)", {}, true, 1, false, 0, {}},
      {"default, general path", {}, false, 1, false, 0, {}},
      {"causal mask", causal, true, 1, false, 0, {}},
      {"causal, 256-row blocks", causal, true, 1, false, 256, {}},
      {"causal + ALiBi", causal_alibi, true, 1, false, 0, {}},
      {"ALiBi", alibi, true, 1, false, 0, {}},
      {"RoPE", rope, true, 1, false, 0, {}},
      {"uniform normalizer", uniform, true, 1, false, 0, {}},
      {"1 head, random Q, K, V", {}, true, 1, true, 0, {}},
      {"4 heads, random Q, K, V", {}, true, 4, true, 0, {}},
  };
  const Tokens start = uniform_tokens(n, d, 1.0, 1);
  for (int round = 0; round < rounds; ++round)
    for (Case& c : cases) {
      DynamicsSpec spec;
      spec.kernel.threads = threads;
      spec.kernel.symmetric = c.symmetric;
      spec.kernel.block_rows = c.block_rows;
      spec.attention = c.attention;
      AttentionDynamics dynamics(spec, c.random_qkv ? QkvSource::gaussian(d, 3, c.heads) : QkvSource::identity(), n, d);
      std::vector<double> x(dynamics.size()), dxdt(dynamics.size());
      dynamics.layout().pack(start, x.data());
      dynamics.rhs(x.data(), dxdt.data(), 0.0);  // warm: buffers sized, pages touched
      const int reps = 3;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) dynamics.rhs(x.data(), dxdt.data(), 0.0);
      c.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
    }
  const double general = median(cases[1].seconds), one_head = median(cases[8].seconds);
  std::printf("n = %ld, d = %ld, %d rounds, threads %d (0: OpenMP default = %d); median seconds per right-hand side\n",
              static_cast<long>(n), static_cast<long>(d), rounds, threads, omp_get_max_threads());
  std::printf("%-28s %12s %22s\n", "case", "seconds", "ratio");
  for (const Case& c : cases) {
    const double s = median(c.seconds);
    if (c.heads > 1)
      std::printf("%-28s %12.4e %10.3f x 1 head = %.3f H\n", c.name.c_str(), s, s / one_head,
                  s / one_head / static_cast<double>(c.heads));
    else if (c.random_qkv || &c == &cases[0] || &c == &cases[1])
      std::printf("%-28s %12.4e %10.3f x general\n", c.name.c_str(), s, s / general);
    else
      std::printf("%-28s %12.4e %10.3f x general (%.3f x default)\n", c.name.c_str(), s, s / general,
                  s / median(cases[0].seconds));
  }
  return 0;
}
