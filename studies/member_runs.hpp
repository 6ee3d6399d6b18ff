#pragma once
// Independent runs of the rows, `count` members, each single-threaded, spread over `threads` threads
// (0: the cores), as the in-process ensembles of experiment/ensemble.hpp spread theirs. The rows that
// must integrate the Builder's engine (so that a wrong engine handed to `normdyn reproduce` reaches
// them) use it in place of run_ensemble, which integrates configurations with the library's dynamics
// that a test's mutant engine could not replace; random_weights uses it for its configurations. A
// member's exception is rethrown on the caller's thread.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace normdyn::studies {

template <class F>
void for_each_member(std::size_t count, int threads, F&& member) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < count;) try {
        member(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(count, threads > 0 ? unsigned(threads) : cores);
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace normdyn::studies
