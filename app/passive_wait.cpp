// Passive waiting by default for OpenMP threads. libgomp's default spins at a barrier for about
// 300,000 iterations before sleeping: on a machine shared with other jobs the spinning thread takes
// the core from the thread it waits for (one right-hand side many times slower, measured by
// bench/bench_wait_policy.cpp). libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, in its ELF
// constructor, and has no API to change the policy later; main() and the executable's own
// constructors run after it, and the executable's .preinit_array runs before the C library has set
// up the environment (the C library then resets it). What runs in between are the constructors of
// the other shared libraries: this one, linked after libgomp and depending on nothing but the C
// library, is initialized before libgomp (dependencies first, otherwise later-needed first), which
// the test app/passive_wait_default checks through libgomp's own report (OMP_DISPLAY_ENV).
// A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is kept; child processes inherit the default.
#include <cstdlib>

namespace {

[[gnu::constructor]] void default_to_passive_waiting() {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr)
    ::setenv("OMP_WAIT_POLICY", "passive", 0);
}

}  // namespace
