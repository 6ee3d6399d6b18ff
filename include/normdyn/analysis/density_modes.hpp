#pragma once
// Per-frame figures of a density on the circle (mean-field runs): its Fourier modes, its clusters
// (the density's peaks) and its 1-Wasserstein distance to the uniform density. The density is given
// as cell averages on M equal cells [i, i + 1) 2π/M (per radian), as the mean-field run file stores it.
// Pure functions, no I/O.
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace normdyn::analysis {

// Below this second-moment width, in grid cells, a cluster of a density on a grid is
// under-resolved. Measured on the example of data/configs/meanfield.toml (Post-LN, beta = 16, grids
// M = 256 .. 16384, every frame up to t = 40): wherever the narrowest cluster was at least one cell
// wide on the coarser grid M, the W1 distance between the densities at M and 2M fell by 2^p with
// p >= 1.8 per doubling of M (the limited scheme's second order); below one cell p fell (median 1.4
// at 0.5-0.75 cells, 0.6 once the cluster sits in one cell) and turned erratic (down to -1): the
// grid then sets the cluster's shape and slows its drift (merges come late). The study that
// measures it: tests/solvers/test_meanfield_circle.cpp, case resolution_threshold.
inline constexpr double kResolvedClusterCells = 1.0;

struct DensityOptions {
  int max_mode = 8;                // modes k = 1..max_mode
  double cluster_level = 2.0;      // a cluster: a connected arc where the density exceeds this × 1/(2π)
  double cluster_min_mass = 1e-2;  // ... holding at least this mass (of total mass 1)
};

// A cluster of a density on the circle: a maximal cyclic arc of cells whose average exceeds
// cluster_level × the uniform density, holding at least cluster_min_mass of the total mass.
struct DensityCluster {
  double mass = 0.0;    // fraction of the total mass
  double centre = 0.0;  // the centre of its densest cell, in [0, 2π)
  // The second-moment width of the piecewise-constant density over the arc, about its mean:
  // sqrt(Σ_i m_i ((φ_i − φ̄)² + h²/12) / Σ_i m_i) with m_i the cell masses, φ_i the cell centres
  // (unwrapped along the arc), h = 2π/M. In radians; a cluster in one cell has h/sqrt(12).
  double width = 0.0;
};
std::vector<DensityCluster> density_clusters(std::span<const double> cells, const DensityOptions& options = {});

// The width of the narrowest cluster in grid cells (width / h); +inf (the minimum over none) without
// clusters.
double narrowest_cluster_cells(std::span<const DensityCluster> clusters, std::size_t cells);

struct DensityFigures {
  // |∫ ρ e^{−ikφ} dφ| / ∫ ρ dφ for k = 1..max_mode: 0 for the uniform density, 1 for a point mass.
  // Exact for the piecewise-constant density (each cell integrated in closed form).
  std::vector<double> mode_amplitude;
  int cluster_count = 0;
  std::vector<double> cluster_mass;    // mass of each cluster, in the order of their arcs from φ = 0
  std::vector<double> cluster_centre;  // the angle of each cluster's peak cell centre
  std::vector<double> cluster_width;   // each cluster's second-moment width (DensityCluster), radians
  double narrowest_cluster_cells = std::numeric_limits<double>::infinity();  // +inf without clusters
  double w1_to_uniform = 0.0;  // W1 on the circle (circle_w1.hpp), radians
  double max_density = 0.0;    // per radian
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
