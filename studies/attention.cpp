#include "normdyn/studies/attention.hpp"

#include <algorithm>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/analysis/theorems.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/qkv.hpp"

namespace normdyn::studies {

std::vector<AttentionStudyRow> attention_study(const AttentionStudyRequest& request) {
  std::vector<AttentionStudyRow> rows;
  for (Index n : request.n)
    for (Index d : request.d) {
      AttentionStudyRow row;
      row.n = n;
      row.d = d;
      row.bound = analysis::attention_bound(double(n), double(d));
      row.hypotheses = analysis::attention_bound_hypotheses(double(n), double(d));
      double sum = 0.0;
      for (int s = 0; s < request.seeds; ++s) {
        const std::uint64_t seed = request.first_seed + static_cast<std::uint64_t>(s);
        const Tokens x = uniform_tokens(n, d, 1.0, seed);
        const QkvSource qkv = request.unit_norm_qkv ? QkvSource::gaussian_unit_norm(d, seed) : QkvSource::identity();
        bool first_scheme = true;
        for_each_scheme([&](auto scheme) {
          DynamicsSpec spec;
          spec.scheme = scheme;
          spec.beta = request.beta;
          spec.kernel.threads = request.threads;
          AttentionDynamics dyn(spec, qkv, n, d);
          RowMatrix velocity(n, d);
          Vector dr(n);
          dyn.velocity(x.theta, x.r, 0.0, 0.0, velocity, dr);
          if (first_scheme) {
            const double m = analysis::max_row_norm(dyn.attention(x.theta, 0.0));
            sum += m;
            row.max_attention_max = std::max(row.max_attention_max, m);
            first_scheme = false;
          }
          row.angular_speed[std::string(decltype(scheme)::key)] +=
              analysis::mean_angular_speed(x.theta, velocity) / request.seeds;
        });
      }
      row.max_attention_mean = sum / request.seeds;
      rows.push_back(std::move(row));
    }
  return rows;
}

}  // namespace normdyn::studies
