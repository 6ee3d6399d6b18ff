// Configuration → dynamics → integration through the installed headers and libraries.
#include <cstdio>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/config.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"

namespace {
struct Count final : normdyn::SampleObserver {
  std::size_t samples = 0;
  std::optional<normdyn::RunStatus> on_sample(std::size_t, double, std::int64_t, std::span<const double>,
                                              const normdyn::CheckpointView&) override {
    ++samples;
    return std::nullopt;
  }
};
}  // namespace

int main() {
  using namespace normdyn;
  const RunConfig c = parse_config("[model]\nn = 8\nd = 3\n[solver]\nt_end = 1.0\n[output]\nsamples = 5\n", "consumer");
  DynamicsSpec spec;
  spec.scheme = c.model.scheme;
  spec.beta = c.model.beta;
  spec.kernel.threads = 1;
  AttentionDynamics dynamics(spec, QkvSource::identity(), c.model.n, c.model.d);
  std::vector<double> x0(dynamics.layout().size());
  dynamics.layout().pack(uniform_tokens(c.model.n, c.model.d, c.init.r0, c.init.seed), x0.data());
  Count count;
  const auto times = c.output.sample_times(c.solver.t_end);
  const IntegrationResult r = integrate(dynamics, x0, 0.0, times, integrator_options(c.solver), count);
  std::printf("status %s, %zu samples, %lld steps\n", std::string(to_string(r.status)).c_str(), count.samples,
              static_cast<long long>(r.counters.accepted_steps));
  // The same configuration through the experiment library, in memory only.
  MemoryRecorder memory;
  ExperimentOptions options;
  options.write_file = false;
  const RunSummary s = run_experiment(c, options, {&memory});
  std::printf("experiment: status %s, %zu frames in memory\n", std::string(to_string(s.status)).c_str(),
              memory.frames());
  const bool ok = r.status == RunStatus::ok && count.samples == times.size();
  return ok && s.status == RunStatus::ok && memory.frames() == times.size() ? 0 : 1;
}
