// OpenMP wait policy on a shared machine: one right-hand side (Post-LN, Q = K = V = I, uniform start)
// timed under each wait policy, with and without one competing busy process, side by side in one run.
// libgomp reads its policy once when it is loaded, so each measurement is a child process (this
// program, re-executed with --child) started with its own environment; the policies alternate over
// the rounds so that a change of machine load hits all alike.
//
//   normdyn_bench_wait_policy [n] [d] [threads] [evaluations] [rounds]
//
// "normdyn default" starts the child with neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT set: this
// program links the executable's default (app/passive_wait.cpp), as the normdyn binary does.
// "libgomp default" is libgomp's own default (spin 300,000 iterations, then sleep), set explicitly
// as GOMP_SPINCOUNT=300000, which also shows that a user's explicit setting is kept.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/qkv.hpp"

using namespace normdyn;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Child: the median time of one evaluation, in milliseconds, on stdout.
int child(Index n, Index d, int threads, int evaluations) {
  DynamicsSpec spec;
  spec.kernel.threads = threads;
  AttentionDynamics dynamics(spec, QkvSource::identity(), n, d);
  std::vector<double> x(dynamics.size()), dxdt(dynamics.size());
  dynamics.layout().pack(uniform_tokens(n, d, 1.0, 1), x.data());
  for (int i = 0; i < 10; ++i) dynamics.rhs(x.data(), dxdt.data(), 0.0);
  std::vector<double> ms;
  for (int i = 0; i < evaluations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    dynamics.rhs(x.data(), dxdt.data(), 0.0);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("%.6f %d %s\n", median(ms), dynamics.threads(), policy ? policy : "(unset)");
  return 0;
}

struct Policy {
  const char* label;
  const char* wait_policy;  // nullptr: unset
  const char* spin_count;
};

double run_child(const char* self, const Policy& p, const std::vector<std::string>& args, std::string& seen) {
  std::string command = "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT";
  if (p.wait_policy) command += std::string(" OMP_WAIT_POLICY=") + p.wait_policy;
  if (p.spin_count) command += std::string(" GOMP_SPINCOUNT=") + p.spin_count;
  command += std::string(" '") + self + "' --child";
  for (const auto& a : args) command += " " + a;
  FILE* out = ::popen(command.c_str(), "r");
  if (!out) return -1.0;
  double ms = -1.0;
  int threads = 0;
  char policy[64] = {0};
  if (std::fscanf(out, "%lf %d %63s", &ms, &threads, policy) != 3) ms = -1.0;
  ::pclose(out);
  seen = policy;
  return ms;
}

pid_t start_busy_process() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    volatile unsigned long spin = 0;
    for (;;) spin = spin + 1;
  }
  return pid;
}

}  // namespace

int main(int argc, char** argv) {
  const bool is_child = argc > 1 && std::strcmp(argv[1], "--child") == 0;
  const int a0 = is_child ? 2 : 1;
  auto arg = [&](int i, long fallback) { return argc > a0 + i ? std::atol(argv[a0 + i]) : fallback; };
  const Index n = arg(0, 256), d = arg(1, 32);
  const int threads = static_cast<int>(arg(2, 2));
  const int evaluations = static_cast<int>(arg(3, 400));
  const int rounds = static_cast<int>(arg(4, 3));
  if (is_child) return child(n, d, threads, evaluations);

  const std::vector<std::string> args = {std::to_string(n), std::to_string(d), std::to_string(threads),
                                         std::to_string(evaluations)};
  const std::vector<Policy> policies = {{"normdyn default", nullptr, nullptr},
                                        {"passive", "passive", nullptr},
                                        {"libgomp default", nullptr, "300000"},
                                        {"active", "active", nullptr}};
  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  std::printf(
      "one right-hand side, n = %lld, d = %lld, %d threads, median of %d evaluations per child, "
      "median over %d rounds; %ld CPUs, load average at start %.2f\n",
      static_cast<long long>(n), static_cast<long long>(d), threads, evaluations, rounds,
      ::sysconf(_SC_NPROCESSORS_ONLN), load[0]);
  std::map<std::pair<int, int>, std::vector<double>> ms;  // (policy, busy) -> per round
  std::vector<std::string> seen(policies.size());
  for (int r = 0; r < rounds; ++r)
    for (int busy = 0; busy < 2; ++busy) {
      const pid_t competitor = busy ? start_busy_process() : 0;
      for (std::size_t i = 0; i < policies.size(); ++i) {
        const std::size_t k = (i + static_cast<std::size_t>(r)) % policies.size();  // rotate the order
        ms[{static_cast<int>(k), busy}].push_back(run_child(argv[0], policies[k], args, seen[k]));
      }
      if (competitor > 0) {
        ::kill(competitor, SIGKILL);
        ::waitpid(competitor, nullptr, 0);
      }
    }
  const double reference = median(ms[{0, 1}]);
  std::printf("%-16s %-22s %12s %16s %22s\n", "policy", "OMP_WAIT_POLICY seen", "alone (ms)", "1 busy proc (ms)",
              "busy / normdyn default");
  for (std::size_t k = 0; k < policies.size(); ++k) {
    const double quiet = median(ms[{static_cast<int>(k), 0}]), loaded = median(ms[{static_cast<int>(k), 1}]);
    std::printf("%-16s %-22s %12.3f %16.3f %22.2f\n", policies[k].label, seen[k].c_str(), quiet, loaded,
                loaded / reference);
  }
  return 0;
}
