#include "team_observer.hpp"

#include <cstring>

#include "normdyn/errors.hpp"
#include "normdyn/text_hash.hpp"

namespace normdyn {
namespace {

// FNV-1a over the bytes of the state and the step count.
std::uint64_t state_hash(std::span<const double> x, std::int64_t step) {
  return fnv1a(&step, sizeof step, fnv1a(x.data(), x.size_bytes()));
}

}  // namespace

std::optional<RunStatus> TeamObserver::agree_on(std::optional<RunStatus> local) {
  // Statuses travel as 1 + their enumerator; the largest wins (every stop the observers can ask
  // for ends the run; which one is recorded must only be the same everywhere).
  const int code = team_.max(local ? 1 + static_cast<int>(*local) : 0);
  if (code == 0) return std::nullopt;
  return static_cast<RunStatus>(code - 1);
}

std::optional<RunStatus> TeamObserver::on_sample(std::size_t index, double t, std::int64_t step,
                                                 std::span<const double> x, const CheckpointView& checkpoint) {
  if (!team_.same(state_hash(x, step)))
    throw IoError("sharded run: the processes hold different states at t = " + std::to_string(t) +
                  " (are all ranks running the same normdyn build on the same kind of CPU?)");
  std::optional<RunStatus> local;
  if (inner_) local = inner_->on_sample(index, t, step, x, checkpoint);
  return agree_on(local);
}

std::optional<RunStatus> TeamObserver::on_step(double t, const Counters& counters) {
  std::optional<RunStatus> local;
  if (inner_)
    local = inner_->on_step(t, counters);
  else if (stop_requested_ && stop_requested_() != 0)
    local = RunStatus::interrupted;
  return agree_on(local);
}

}  // namespace normdyn
