#pragma once
// SampleObservers that keep every sample of an integration in memory (for studies and tests that
// need the trajectory without a run file or a Recorder): as tokens (particles) or as raw states
// (any OdeSystem, e.g. the mean-field grid).
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

struct StateRecorder final : SampleObserver {
  std::vector<std::vector<double>> states;
  std::optional<RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double> x,
                                     const CheckpointView&) override {
    states.emplace_back(x.begin(), x.end());
    return std::nullopt;
  }
};

}  // namespace normdyn
