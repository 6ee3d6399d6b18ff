// Passive waiting by default for OpenMP threads. libgomp's default spins at a barrier for about
// 300,000 iterations before sleeping: on a machine shared with other jobs the spinning thread takes
// the core from the thread it waits for (one right-hand side many times slower, measured by
// bench/bench_wait_policy.cpp). libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, in its
// constructor, and has no API to change the policy later. The executable links libgomp's archive, so
// that constructor is one of the executable's own; a constructor with a priority runs before those
// without one (the linker orders .init_array by priority), and this one has the highest a program
// may use. The test app/passive_wait_default checks the order through libgomp's own report
// (OMP_DISPLAY_ENV). A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is kept; child processes inherit
// the default.
#include <cstdlib>

namespace {

[[gnu::constructor(101)]] void default_to_passive_waiting() {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr)
    ::setenv("OMP_WAIT_POLICY", "passive", 0);
}

}  // namespace
