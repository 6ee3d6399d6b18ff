#pragma once
// Rotary position embedding (Su, Lu, Pan, Murtadha, Wen and Liu, "RoFormer", 2021): the query and the
// key of the token at position p are rotated by R_p, which turns the coordinate plane (2k, 2k + 1) by
// the angle p base^(-2k/d), so that s_ij = beta <R_{p_i} Q x_i, R_{p_j} K x_j> depends on the positions
// through p_j - p_i only. Needs an even d.
#include <cmath>
#include <string>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct Rope {
  static constexpr std::string_view key = "rope";
  static constexpr std::string_view title = "rotary position embedding (RoPE)";
  static constexpr std::string_view formula =
      "s_ij = beta <R_{p_i} Q x_i, R_{p_j} K x_j>, R_p: planes (2k, 2k+1) by p base^(-2k/d)";
  double base = 10000.0;
  static constexpr std::array<ParamSpec<Rope>, 1> params{
      {{"rope_base", &Rope::base, "base of the rotation frequencies base^(-2k/d)", 0.0, false}}};

  // The angle of plane k (coordinates 2k, 2k + 1) at position p: a function of (p, k, d) alone, so
  // the kernel tabulates its cos and sin once per (n, d).
  double plane_angle(Index position, Index k, Index d) const {
    return static_cast<double>(position) * std::pow(base, -2.0 * static_cast<double>(k) / static_cast<double>(d));
  }
  // Rotates row r of `rows` (queries or keys, d even) as the token at position first + r.
  template <class Rows>
  void rotate(Rows&& rows, Index first) const {
    const Index d = rows.cols();
    for (Index k = 0; 2 * k + 1 < d; ++k) {
      for (Index r = 0; r < rows.rows(); ++r) {
        const double angle = plane_angle(first + r, k, d);
        const double c = std::cos(angle), s = std::sin(angle);
        const double a = rows(r, 2 * k), b = rows(r, 2 * k + 1);
        rows(r, 2 * k) = c * a - s * b;
        rows(r, 2 * k + 1) = s * a + c * b;
      }
    }
  }

  // Why it cannot rotate tokens of dimension d (empty if it can).
  std::string not_for_dimension(Index d) const {
    if (d % 2 == 0) return {};
    return "needs an even model.d (it rotates coordinate planes (2k, 2k+1)); model.d = " + std::to_string(d);
  }

  // Positions break exchangeability, rotation equivariance and the symmetry of the scores (hence the
  // energy); the mean-field solver has no positions. Each row's rotation is its own: shardable.
  Traits traits() const {
    Traits t;
    t.exchangeable = t.rotation_equivariant = t.symmetric = t.has_energy = t.meanfield = false;
    return t;
  }
};

}  // namespace normdyn
