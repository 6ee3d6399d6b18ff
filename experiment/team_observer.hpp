#pragma once
// The observer of a sharded run (`mpirun -n P normdyn run`): makes every decision that ends the run
// a decision of all processes, so that they keep taking the same steps.
//
// Rank 0 records (its inner observer writes the file, checks the synchronization stop, flushes and
// reports progress); the other ranks have no inner observer. After every step the processes agree
// on whether to stop (rank 0's decision, or an interrupt that reached any process), and at every
// sample they check that they hold the same state (a 64-bit hash of its bytes): they take the same
// steps by construction, and a difference (e.g. processes of different builds) ends the run with an
// error rather than a wrong file.
#include <functional>

#include "normdyn/experiment/team.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn {

class TeamObserver final : public SampleObserver {
 public:
  // `inner`: rank 0's recorder; nullptr on the other ranks, which poll `stop_requested` themselves.
  TeamObserver(Team& team, SampleObserver* inner, std::function<int()> stop_requested)
      : team_(team), inner_(inner), stop_requested_(std::move(stop_requested)) {}

  std::optional<RunStatus> on_sample(std::size_t index, double t, std::int64_t step, std::span<const double> x,
                                     const CheckpointView& checkpoint) override;
  std::optional<RunStatus> on_step(double t, const Counters& counters) override;

 private:
  std::optional<RunStatus> agree_on(std::optional<RunStatus> local);

  Team& team_;
  SampleObserver* inner_;
  std::function<int()> stop_requested_;
};

}  // namespace normdyn
