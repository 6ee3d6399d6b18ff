#pragma once
// `normdyn study symmetric`: the reduced scalar ODE of the symmetric start (Theorem 4.1,
// analysis/symmetric_ode.hpp) for every scheme of the list, as a table and as JSON
//   {"parameters": {...}, "schemes": {KEY: {"t": [...], "gamma": [...], "dgamma_dt": [...], "r": [...]}}}
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "normdyn/analysis/symmetric_ode.hpp"

namespace normdyn::studies {

struct SymmetricStudyRequest {
  double n = 256.0;
  double beta = 5.0;
  double t_end = 50.0;
  int samples = 200;  // output times 0, T/K, ..., T
  // log_samples > 0: output times 0, then log_samples log-spaced times from log_t0 to T (instead of samples)
  double log_t0 = 0.0;
  int log_samples = 0;
  double r0 = 1.0;
  double alpha = 1.0;  // nGPT's α (constant schedule)
  double tau = 4.0;    // Mix-LN's switch time (the scheme's default)
  double step = 1e-3;  // largest RK4 step
};

// Every scheme of the list with the request's α (nGPT) and τ (Mix-LN), default parameters otherwise.
std::vector<Scheme> symmetric_study_schemes(const SymmetricStudyRequest& request);

struct SymmetricStudy {
  SymmetricStudyRequest request;
  std::map<std::string, analysis::SymmetricTrajectory> schemes;  // by key
  std::map<std::string, double> initial_slope_theory;            // (1/s_j + 1/s_k)/(e^β + n − 1)
};

// Throws InputError naming the flag for bad parameters.
SymmetricStudy symmetric_study(const SymmetricStudyRequest& request);
nlohmann::json to_json(const SymmetricStudy& study);

}  // namespace normdyn::studies
