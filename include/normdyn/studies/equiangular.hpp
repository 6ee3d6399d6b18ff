#pragma once
// `normdyn study equiangular`: the equiangular model. n tokens with every pairwise cosine rho stay
// equiangular under Post-LN with Q = K = V = I, and rho solves
//   softmax:  rho' = 2 e^{beta rho} (1 - rho) ((n - 1) rho + 1) / (e^beta + (n - 1) e^{beta rho}),
//   uniform:  rho' = (2/n) e^{beta rho} (1 - rho) ((n - 1) rho + 1)   (USA),
// so 1 - rho decays at the rates 2 and 2 e^beta. The study integrates this equation and the particle
// system from init.kind = "equiangular" side by side. JSON:
//   {"parameters": {...}, "t": [...], "rho_theory": [...], "rho_particles": [...], "spread": [...],
//    "max_deviation": x, "rate_theory": x, "rate_fitted": x or null}
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normdyn/tokens.hpp"

namespace normdyn::studies {

struct EquiangularStudyRequest {
  Index n = 16;
  Index d = 0;  // dimension of the particles (0: n, the least that holds n equiangular tokens)
  double beta = 1.0;
  double rho0 = 0.0;
  std::string normalizer = "softmax";  // softmax | uniform
  double t_end = 10.0;
  int samples = 100;  // output intervals: times 0, T/K, ..., T
  int threads = 0;
};

struct EquiangularStudy {
  EquiangularStudyRequest request;
  std::vector<double> t, rho_theory, rho_particles, spread;  // spread: max |cos_jk - rho| over pairs
  double max_deviation = 0.0;                                // max |rho_particles - rho_theory|
  double rate_theory = 0.0;                                  // 2 (softmax) or 2 e^beta (uniform)
  double rate_fitted = 0.0;  // of the particles' 1 - rho where it lies in [1e-10, 1e-5]; NaN if it never does
  int rate_frames = 0;
  std::string status;  // the particle run's
};

// rho' of the closed form, and rho(t) at `times` by RK4 with steps of at most 1e-4.
double equiangular_rate(bool softmax, double n, double beta, double rho);
std::vector<double> equiangular_theory(bool softmax, double n, double beta, double rho0,
                                       const std::vector<double>& times);

// What the particles' frames say against the closed form at the same times: the mean cosines, their
// largest distance to the theory and the spread of the pairwise cosines, and the rate of 1 - rho
// fitted over the frames where it lies in [1e-10, 1e-5] (NaN with fewer than 3 of them).
struct EquiangularMeasurement {
  std::vector<double> rho, spread;
  double max_deviation = 0.0, max_spread = 0.0;
  double rate_fitted = 0.0;
  int rate_frames = 0;
};
EquiangularMeasurement measure_equiangular(const std::vector<Tokens>& frames, const std::vector<double>& times,
                                           const std::vector<double>& theory);

// Throws InputError naming the flag for bad parameters.
EquiangularStudy equiangular_study(const EquiangularStudyRequest& request);
nlohmann::json to_json(const EquiangularStudy& study);

}  // namespace normdyn::studies
