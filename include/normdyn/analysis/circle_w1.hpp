#pragma once
// The 1-Wasserstein distance on the circle of circumference 2π, exact through cumulative
// distribution functions (Rabin, Delon, Gousseau 2011; Cabrelli and Molter 1995):
//
//   W1(μ, ν) = min_c ∫_0^{2π} | F_μ(φ) − F_ν(φ) − c | dφ,
//
// the minimum attained at a median c of F_μ − F_ν under dφ. Measures are probability measures made of
// atoms and/or a piecewise-constant density on equal cells [i 2π/M, (i+1) 2π/M) (the mean-field grid);
// between consecutive breakpoints F_μ − F_ν is linear, so the integral and the median are exact.
#include <vector>

namespace normdyn::analysis {

struct CircleMeasure {
  std::vector<double> atoms;   // angles (any real; taken mod 2π)
  std::vector<double> masses;  // one per atom (empty: equal masses)
  std::vector<double> cells;   // density per radian on equal cells starting at 0 (may be empty)
};

// Both measures are normalized to total mass 1 first.
double wasserstein1_circle(const CircleMeasure& a, const CircleMeasure& b);

}  // namespace normdyn::analysis
