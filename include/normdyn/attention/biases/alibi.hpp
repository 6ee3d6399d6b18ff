#pragma once
// ALiBi (Press, Smith and Lewis, "Train short, test long", ICLR 2022), with distances measured in units
// of the sequence length so that the n -> infinity limit keeps a bias: b_ij = -lambda |i - j| / n.
#include <cstdlib>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct Alibi {
  static constexpr std::string_view key = "alibi";
  static constexpr std::string_view title = "ALiBi";
  static constexpr std::string_view formula = "b_ij = -lambda |i - j| / n";
  double lambda = 1.0;
  static constexpr std::array<ParamSpec<Alibi>, 1> params{
      {{"alibi_slope", &Alibi::lambda, "slope lambda >= 0 of the distance penalty", 0.0, true}}};

  double bias(Index i, Index j, Index n) const { return distance_bias(std::abs(i - j), n); }
  // A function of the distance alone: the kernel tabulates it once per n.
  double distance_bias(Index distance, Index n) const {
    return -lambda * static_cast<double>(distance) / static_cast<double>(n);
  }
  // Symmetric in (i, j), so an energy exists (the biased interaction energy), but normdyn's energy
  // observable does not include the bias: has_energy is off until it does. The mean field: with a
  // causal mask (the kernel k_lambda of solvers/meanfield_causal; the configuration refuses it alone).
  Traits traits() const {
    Traits t;
    t.exchangeable = t.has_energy = false;
    return t;
  }
};

}  // namespace normdyn
