#pragma once
// The registry of per-frame observables: one list of what each scalar per-frame series is called,
// its unit, what computing it needs and what it means. The run recorder (the series written while a
// run goes: `during_run`), the run file (/observables/<name>), `normdyn analyze`, the plots and the
// README's table all take names and descriptions from here.
//
// Data only (no function of the analysis library is named here), so that the I/O layer can read
// the list without linking the analysis. The functions that compute each entry are in
// analysis/observables.cpp, in a table keyed by the same names; a test checks that every entry has
// one and that README.md lists every entry.
//
// Adding an observable: one entry here and its function in that table.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace normdyn {

// What an observable needs beyond the frame's directions θ_j.
enum class ObservableNeed : std::uint8_t {
  directions,  // the directions of one frame
  radii,       // also the radii r_j
  dynamics,    // the run's velocity field and attention vectors at the frame (rebuilt from its config)
  trajectory,  // earlier frames (differences between frames, integrals over time)
  density,     // the density of a mean-field run (kDensityObservables)
};

struct ObservableInfo {
  std::string_view name;
  std::string_view unit;
  ObservableNeed need;
  bool needs_dynamics = false;  // trajectory observables that also need the velocity field
  bool integer = false;         // stored as int64
  bool during_run = false;      // written by the run recorder into the run file as the run goes
  bool discrete_only = false;   // defined for `solver.method = "discrete"` runs only
  std::string_view description;
};

inline constexpr std::array<ObservableInfo, 20> kFrameObservables{{
    {"energy", "1", ObservableNeed::directions, false, false, true, false,
     "E = sum_jk exp(beta <theta_j, theta_k>), plus 2 beta n sum_j Phi(theta_j) with a feed-forward term F = grad Phi "
     "(inf if it overflows)"},
    {"normalized_energy", "1", ObservableNeed::directions, false, false, false, false,
     "E / (n^2 e^beta), in (0, 1] without terms"},
    {"variance", "1", ObservableNeed::directions, false, false, true, false,
     "Var = (1/n) sum_j |theta_j - mean|^2 = 1 - |mean|^2"},
    {"one_minus_mean_cosine", "1", ObservableNeed::directions, false, false, false, false,
     "1 - mean of <theta_j, theta_k> over pairs j != k, computed as n/(n-1) Var (no cancellation)"},
    {"mean_cosine", "1", ObservableNeed::directions, false, false, false, false,
     "gamma: mean of <theta_j, theta_k> over pairs j != k"},
    {"one_minus_min_cosine", "1", ObservableNeed::directions, false, false, false, false,
     "max over pairs of |theta_j - theta_k|^2 / 2 = 1 - min cosine"},
    {"min_cosine", "1", ObservableNeed::directions, false, false, true, false,
     "min over pairs j != k of <theta_j, theta_k>"},
    {"diameter", "rad", ObservableNeed::directions, false, false, false, false,
     "largest geodesic distance between two tokens"},
    {"effective_rank", "1", ObservableNeed::directions, false, true, false, false,
     "eigenvalues of (1/n) sum_j theta_j theta_j^T above rank_threshold x trace"},
    {"mean_radius", "1", ObservableNeed::radii, false, false, false, false, "mean of r_j"},
    {"min_radius_growth", "1", ObservableNeed::trajectory, false, false, false, false, "min_j (r_j(t) - r_j(t_0))"},
    {"mean_angular_speed", "rad/t", ObservableNeed::dynamics, false, false, false, false,
     "mean over tokens of |d theta_j/dt| (attribute method: velocity or finite_difference)"},
    {"mean_cosine_rate", "1/t", ObservableNeed::dynamics, false, false, false, false,
     "d gamma/dt = 2n/(n-1) <mean theta, mean d theta/dt>, from the velocity field"},
    {"min_radial_alignment", "1", ObservableNeed::dynamics, false, false, false, false, "min_j <theta_j, A_j>"},
    {"max_attention_norm", "1", ObservableNeed::dynamics, false, false, false, false, "max_j |A_j|"},
    {"min_radial_speed", "1/t", ObservableNeed::dynamics, false, false, false, false,
     "min_j dr_j/dt (the radial rate of the scheme; discrete runs: (r_j(t) - r_j(t_prev)) / (t - t_prev))"},
    {"clock_min", "t", ObservableNeed::trajectory, true, false, false, false,
     "min over tokens of the Post-LN clock int_0^t 1/s_j dt (trapezoid over frames)"},
    {"clock_median", "t", ObservableNeed::trajectory, true, false, false, false,
     "median over tokens of the Post-LN clock int_0^t 1/s_j dt (trapezoid over frames)"},
    {"layer_angle", "rad/layer", ObservableNeed::trajectory, false, false, false, true,
     "mean over tokens of the angle moved since the previous frame, per layer: 2 asin(|d theta_j|/2) / layers"},
    {"mean_cosine_layer_rate", "1/layer", ObservableNeed::trajectory, false, false, false, true,
     "d gamma per layer since the previous frame: (gamma(t) - gamma(t_prev)) / layers"},
}};

// The per-frame series `normdyn analyze` writes for a mean-field run (a density on the circle).
inline constexpr std::array<ObservableInfo, 4> kDensityObservables{{
    {"mode_amplitude", "1", ObservableNeed::density, false, false, false, false,
     "[frames, K]: |int rho e^{-ik phi}| / int rho for k = 1..K (0: uniform, 1: a point mass)"},
    {"density_cluster_count", "1", ObservableNeed::density, false, true, false, false,
     "arcs where the density exceeds cluster_level x uniform, each holding at least cluster_min_mass"},
    {"w1_to_uniform", "rad", ObservableNeed::density, false, false, false, false,
     "1-Wasserstein distance on the circle to the uniform density"},
    {"max_density", "1/rad", ObservableNeed::density, false, false, false, false,
     "largest cell average of the normalized density"},
}};

// The per-frame series of ensembles: per run in the sweep index's /series (with final_<name> in
// /runs), and over the runs of a group in /ensemble (<name>: the mean over the runs; <name>_std,
// _min, _max where the statistics have them) and in `normdyn ensemble`. Names shared with
// kFrameObservables mean the same.
struct EnsembleSeriesInfo {
  std::string_view name;
  bool per_run = true;  // also a series of each run (else a statistic of the group only)
  std::string_view description;
};

inline constexpr std::array<EnsembleSeriesInfo, 5> kEnsembleSeries{{
    {"cluster_count", true, "clusters: groups of tokens with cosine > 1 - cluster_epsilon (mean over runs)"},
    {"pair_fraction", true, "fraction of token pairs with cosine > pair_cosine (mean over runs)"},
    {"sync_probability", false, "fraction of the runs with every pair synchronized by t"},
    {"variance", true, "Var = 1 - |mean direction|^2"},
    {"one_minus_mean_cosine", true, "1 - mean of <theta_j, theta_k> over pairs j != k"},
}};

inline constexpr std::optional<ObservableInfo> find_observable(std::string_view name) {
  for (const auto& o : kFrameObservables)
    if (o.name == name) return o;
  return std::nullopt;
}

}  // namespace normdyn
