#pragma once
// The mean-field equation on the sphere S^2 (d = 3) for Post-LN, pseudo-spectral in spherical
// harmonics (docs/meanfield.md, "The sphere S^2", derives what follows):
//
//   ∂_t μ + div( μ v[μ] ) = 0,    v[μ](x) = P_x A[μ](x),
//   A[μ](x) = c ∫ e^{κ <x, y>} y dμ(y) / Z[μ](x),    κ = β a,
//
// for the rotation-invariant attention Q^T K = a I, V = c I; Z = ∫ e^{κ <x, y>} dμ(y) (softmax) or 1
// (uniform normalizer). With F(x) = ∫ G(<x, y>) dμ(y), G' = e^{κ t}, the field is A = c ∇F / Z, so
// v = c ∇_S F / Z (∇_S the surface gradient). F and Z are convolutions with zonal kernels, diagonal
// in the harmonics by the Funk–Hecke formula:
//
//   Z_lm = 4π i_l(κ) μ_lm,    (∇_S F)_lm = ∇_S of 4π (i_l(κ)/κ) μ_lm   (l >= 1),
//
// with i_l(κ) = sqrt(π/(2κ)) I_{l+1/2}(κ) the modified spherical Bessel function.
//
// Discretization. The state is the coefficients μ_lm, l <= L (sphere_transform.hpp's packing), of the
// density per unit area (mass ∫ μ dA = 1). The right-hand side synthesizes μ, Z and ∇_S F on the
// Gauss–Legendre grid, forms the flux μ v there, and takes its divergence in harmonic space (spin-1
// analysis), truncated to l <= L (a Galerkin projection). The grid has ⌈(3L + 1)/2⌉ rings and twice
// as many longitudes, so that the product of two fields of degree L, tested against a harmonic of
// degree L (degree 3L), is integrated exactly: the quadratic term has no aliasing (the 3/2 rule);
// the division by Z, a very smooth field (its coefficients fall as κ^l / (2l + 1)!!), adds only its
// own truncation. The l = 0 coefficient of a divergence is 0, so the mass is conserved to round-off.
// There is no filter: the linear rates hold at every degree, and a density that outgrows the
// resolution shows as energy in the top degrees (spectral_tail) and negative grid values.
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "normdyn/attention_matrices.hpp"
#include "normdyn/ode_system.hpp"
#include "normdyn/solvers/sphere_transform.hpp"

namespace normdyn {

// Q^T K = a I and V = c I: the 3×3 attention matrices for which attention commutes with every rotation.
struct SphereAttention {
  double a = 1.0;  // Q^T K
  double c = 1.0;  // V
};
// The sphere form of d = 3 matrices, or nothing unless Q^T K and V are multiples of the identity
// (relative tolerance `tolerance`) and there is one head.
std::optional<SphereAttention> sphere_attention(const AttentionMatrices& m, double tolerance = 1e-12);

// e^{−|x|} i_l(x) and e^{−|x|} i_l(x)/x for l = 0..lmax (the second's l = 0 entry is +inf at x = 0 and
// unused): backward recurrence of the ratios i_l/i_{l−1}, no overflow for large |x|.
struct ScaledSphericalBessel {
  std::vector<double> i, i_over_x;
};
ScaledSphericalBessel scaled_spherical_bessel(double x, int lmax);

// The Funk–Hecke coefficients of the zonal kernel e^{κ t}: ∫ e^{κ <x, y>} Y_lm(y) dA(y) = λ_l Y_lm(x),
// λ_l = 2π ∫_{−1}^{1} e^{κ t} P_l(t) dt = 4π i_l(κ), for l = 0..lmax.
std::vector<double> funk_hecke_exponential(double kappa, int lmax);

// The rate γ_l of every degree-l perturbation of the uniform density 1/(4π): ε Y_lm grows as e^{γ_l t}
// to first order in ε, γ_l = c l(l+1) (i_l(κ)/κ) / Z_0 with Z_0 = i_0(κ) (softmax) or 1 (uniform).
double sphere_uniform_state_rate(double beta, const SphereAttention& attention, int l, bool uniform_normalizer);

struct SphereMeanFieldSpec {
  double beta = 1.0;
  int degree = 32;                                         // L: harmonics of degree l <= L
  std::vector<SphereAttention> layers{SphereAttention{}};  // layer k on [k, k + 1), the last held after
  bool uniform_normalizer = false;
};

class MeanFieldSphere final : public OdeSystem {
 public:
  // Throws std::invalid_argument for degree < 1.
  explicit MeanFieldSphere(SphereMeanFieldSpec spec);
  ~MeanFieldSphere() override;
  MeanFieldSphere(const MeanFieldSphere&) = delete;
  MeanFieldSphere& operator=(const MeanFieldSphere&) = delete;

  const SphereMeanFieldSpec& spec() const { return spec_; }
  const SphereTransform& transform() const { return *transform_; }

  // The state of a density given on the grid (per unit area, or any positive multiple): its
  // coefficients, rescaled to mass 1.
  std::vector<double> initial_state(const std::vector<double>& grid_density) const;
  std::vector<double> density(const double* x) const;  // per unit area on the grid (points())
  double mass(const double* x) const;                  // ∫ μ dA
  // sqrt(Σ_{l > 2L/3} |μ_l|² / Σ_l |μ_l|²) (|μ_l|² = Σ_m |μ_lm|²): the share of the top third of the degrees.
  double spectral_tail(const double* x) const;

  // OdeSystem
  std::size_t size() const override { return transform_->coefficients(); }
  void rhs(const double* x, double* dxdt, double t) override;
  std::vector<double> breakpoints(double t0, double t1) const override;
  void enter_piece(double t_begin, double t_end) override;

 private:
  std::size_t layer_at(double t) const;

  SphereMeanFieldSpec spec_;
  std::unique_ptr<SphereTransform> transform_;
  // Per layer: the multipliers of μ_lm giving Z_lm and F_lm (scaled by e^{−|κ|} under softmax, where
  // the scale cancels).
  std::vector<std::vector<double>> z_multiplier_, f_multiplier_;
  double piece_middle_ = 0.0;
  bool in_piece_ = false;
  std::vector<double> coefficients_, mu_, z_, grad_theta_, grad_phi_;
};

}  // namespace normdyn
