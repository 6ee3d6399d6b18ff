#pragma once
// Runs `body` (whose loops are orphaned `omp for` constructs) on a team of `threads`. One thread
// skips the parallel region: libgomp builds a team even for one thread (also under a false `if`
// clause), which costs a system call per region, and with passive waiting wakes the sleeping
// workers. That dominated the right-hand side and the per-frame figures of small systems (perf,
// strace). Outside a parallel region the orphaned loops run on the calling thread alone.
namespace normdyn {

template <class Body>
void run_in_team(int threads, Body&& body) {
  if (threads <= 1) {
    body();
    return;
  }
#pragma omp parallel num_threads(threads)
  body();
}

}  // namespace normdyn
