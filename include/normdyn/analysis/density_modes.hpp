#pragma once
// Per-frame figures of a density on the circle (mean-field runs): its Fourier modes, its clusters
// (the density's peaks) and its 1-Wasserstein distance to the uniform density. The density is given
// as cell averages on M equal cells [i, i + 1) 2π/M (per radian), as the mean-field run file stores it.
// Pure functions, no I/O.
#include <span>
#include <string>
#include <vector>

namespace normdyn::analysis {

struct DensityOptions {
  int max_mode = 8;             // modes k = 1..max_mode
  double cluster_level = 2.0;   // a cluster: a connected arc where the density exceeds this × 1/(2π)
  double cluster_min_mass = 1e-2;  // ... holding at least this mass (of total mass 1)
};

struct DensityFigures {
  // |∫ ρ e^{−ikφ} dφ| / ∫ ρ dφ for k = 1..max_mode: 0 for the uniform density, 1 for a point mass.
  // Exact for the piecewise-constant density (each cell integrated in closed form).
  std::vector<double> mode_amplitude;
  int cluster_count = 0;
  std::vector<double> cluster_mass;    // mass of each cluster, in the order of their arcs from φ = 0
  std::vector<double> cluster_centre;  // the angle of each cluster's peak cell centre
  double w1_to_uniform = 0.0;          // W1 on the circle (circle_w1.hpp), radians
  double max_density = 0.0;            // per radian
};

DensityFigures density_figures(std::span<const double> cells, const DensityOptions& options = {});

// The growth rate of one mode in its linear regime: the slope of ln a_k(t) over the frames before
// a_k first exceeds `linear_limit` (and above `floor`), by least squares. NaN (and points = 0) with
// fewer than three such frames.
struct ModeRate {
  double rate = 0.0;
  std::size_t points = 0;
  double t_start = 0.0, t_end = 0.0;
};
ModeRate linear_mode_rate(std::span<const double> t, std::span<const double> amplitude, double linear_limit = 0.05,
                          double floor = 1e-12);

// The rates of modes 1..K together (amplitude[frame][k − 1]): the linear regime ends when any mode
// first exceeds `linear_limit`, and a mode whose quadratic forcing by the others,
// Σ_{i+j=k} a_i a_j + Σ_{j−i=k} a_i a_j, exceeds its own amplitude somewhere in that window grows by
// coupling, not at its linear rate: its `problem` says so ("driven: ..."); empty otherwise.
struct ModeRates {
  std::vector<ModeRate> rates;
  std::vector<std::string> problems;
};
ModeRates linear_mode_rates(std::span<const double> t, const std::vector<std::vector<double>>& amplitude,
                            double linear_limit = 0.05, double floor = 1e-12);

}  // namespace normdyn::analysis
