#pragma once
// A SampleObserver that keeps every sample of a particle integration as tokens (for studies and
// tests that need the trajectory in memory without a run file or a Recorder).
#include <optional>
#include <span>
#include <vector>

#include "normdyn/dynamics.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace normdyn {

struct FrameRecorder final : SampleObserver {
  StateLayout layout;
  std::vector<Tokens> frames;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> x,
                                     const CheckpointView&) override {
    frames.push_back(layout.unpack(x.data()));
    return std::nullopt;
  }
};

}  // namespace normdyn
