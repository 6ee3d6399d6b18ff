#include "normdyn/studies/symmetric.hpp"

#include <cmath>
#include <type_traits>

#include "normdyn/analysis/theorems.hpp"
#include "normdyn/errors.hpp"

namespace normdyn::studies {

std::vector<Scheme> symmetric_study_schemes(const SymmetricStudyRequest& request) {
  std::vector<Scheme> out;
  for_each_scheme([&](auto scheme) {
    using S = decltype(scheme);
    if constexpr (std::is_same_v<S, NGPT>) scheme.alpha = request.alpha;
    if constexpr (std::is_same_v<S, MixLN>) scheme.tau = request.tau;
    out.emplace_back(scheme);
  });
  return out;
}

SymmetricStudy symmetric_study(const SymmetricStudyRequest& request) {
  if (!(request.n >= 2.0) || request.n != std::floor(request.n)) throw InputError("--n", "needs an integer >= 2");
  if (!(request.beta > 0.0) || !std::isfinite(request.beta)) throw InputError("--beta", "needs a positive number");
  if (!(request.t_end > 0.0) || !std::isfinite(request.t_end)) throw InputError("--t-end", "needs a positive number");
  if (request.samples < 1) throw InputError("--samples", "needs at least 1");
  if (!(request.r0 > 0.0)) throw InputError("--r0", "needs a positive number");
  if (!(request.alpha > 0.0)) throw InputError("--alpha", "needs a positive number");
  if (!(request.tau >= 0.0)) throw InputError("--tau", "needs a number >= 0");
  if (request.log_samples) {
    if (!(request.log_t0 > 0.0 && request.log_t0 < request.t_end))
      throw InputError("--log-times", "T0 must satisfy 0 < T0 < --t-end");
    if (request.log_samples < 2) throw InputError("--log-times", "K must be at least 2");
  }
  SymmetricStudy study;
  study.request = request;
  std::vector<double> times;
  if (request.log_samples) {
    // t = 0 (the start), then T0 (T/T0)^{i/(K-1)}, i = 0..K-1, the last exactly T.
    times.push_back(0.0);
    for (int i = 0; i < request.log_samples; ++i)
      times.push_back(i + 1 == request.log_samples ? request.t_end
                                                   : request.log_t0 * std::pow(request.t_end / request.log_t0,
                                                                               double(i) / (request.log_samples - 1)));
  } else {
    times = analysis::linear_times(request.t_end, request.samples);
  }
  const analysis::SymmetricOdeParameters p{request.n, request.beta, request.r0, request.step};
  for (const Scheme& scheme : symmetric_study_schemes(request)) {
    const std::string key(scheme_key(scheme));
    study.schemes[key] = analysis::symmetric_trajectory(scheme, p, times);
    study.initial_slope_theory[key] = analysis::initial_slope_theory(scheme, request.n, request.beta, request.r0);
  }
  return study;
}

nlohmann::json to_json(const SymmetricStudy& study) {
  const SymmetricStudyRequest& r = study.request;
  nlohmann::json j;
  j["parameters"] = {
      {"n", r.n},
      {"beta", r.beta},
      {"t_end", r.t_end},
      {"samples", r.samples},
      {"log_times",
       r.log_samples ? nlohmann::json{{"t0", r.log_t0}, {"t1", r.t_end}, {"count", r.log_samples}} : nlohmann::json()},
      {"r0", r.r0},
      {"alpha", r.alpha},
      {"tau", r.tau},
      {"rk4_step", r.step},
      {"start", "orthonormal tokens, equal radii r0, Q = K = V = I (Theorem 4.1)"}};
  nlohmann::json schemes = nlohmann::json::object();
  for (const auto& [key, tr] : study.schemes)
    schemes[key] = {{"t", tr.t},
                    {"gamma", tr.gamma},
                    {"one_minus_gamma", tr.one_minus_gamma},
                    {"dgamma_dt", tr.dgamma_dt},
                    {"r", tr.r},
                    {"initial_slope_theory", study.initial_slope_theory.at(key)}};
  j["schemes"] = schemes;
  return j;
}

}  // namespace normdyn::studies
