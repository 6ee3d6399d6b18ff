#pragma once
// Metastability: the plateaus of a clustering trajectory. Pure functions over per-frame series.
//
// A plateau is a maximal stretch of consecutive frames in which the cluster count is constant and the
// energy is nearly flat: max E / min E ≤ 1 + energy_tolerance over the stretch, with E the
// normalized interaction energy (observables.hpp; any positive energy-like series works). Each
// maximal run of frames with one cluster count contributes at most one plateau: its longest such
// stretch (the earliest of equally long ones), if it has at least `min_frames` frames and lasts at
// least `min_duration` in t and `min_log_duration` in ln t (ln(t_end / t_start): metastable states
// live on times growing geometrically, so a plateau must last until t has grown by that factor,
// e^0.69 = 2 by default; a run that coarsens smoothly has counts that change on every such scale).
// The count at the start of the run (its first maximal run of one count, the unclustered or
// planted start) is not a plateau: nothing has settled into it. The rest of the run (clusters still forming at its start, clusters
// approaching each other before a merge at its end) is transient. Because E jumps by a relative
// 2 m_a m_b / Σ m_c² when clusters of sizes m_a, m_b merge (≥ 2/K for K equal clusters), a tolerance
// of 1e-2 separates the plateaus of up to ~100 clusters while ignoring the slow drift of E inside a
// metastable state. The energy is only sensitive to cluster structure for β ≫ 1/ε (ε the cluster
// threshold); at small β a "plateau" may just be the energy saturating before tokens join.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace normdyn::analysis {

struct PlateauOptions {
  double energy_tolerance = 1e-2;
  std::size_t min_frames = 3;
  double min_duration = 0.0;
  double min_log_duration = 0.69314718055994531;  // ln 2
  bool skip_start = true;                         // the first count of the run is not a plateau
};

struct Plateau {
  std::size_t first_frame = 0;
  std::size_t last_frame = 0;
  double t_start = 0.0;
  double t_end = 0.0;
  std::int64_t count = 0;
  double energy_start = 0.0;
  double energy_end = 0.0;

  double duration() const { return t_end - t_start; }
};

// `t`, `counts` and `energy` have one value per frame; t increasing.
std::vector<Plateau> find_plateaus(std::span<const double> t, std::span<const std::int64_t> counts,
                                   std::span<const double> energy, const PlateauOptions& options = {});

// One line: "32 [0, 0.8] → 9 [1.2, 14] → 5 [20, 310] → 3 [400, 5000]" (count [t_start, t_end]).
std::string staircase(const std::vector<Plateau>& plateaus);

}  // namespace normdyn::analysis
