#pragma once
// The mean field of causal attention on the circle: the kinetic equation over the cursor σ ∈ (0, 1]
// (token i of n sits at σ = i / n) of Duerinckx, Geshkovski and Rossi,
//
//   ∂_t f(t, σ, ·) + ∂_φ( f · <θ^⊥, A_σ> / s ) = (σ_noise² / (2 s²)) ∂²_φ f,
//   A_σ(θ) = the attention of MeanFieldCircle (softmax or uniform normalizer) of the cursor average
//   g_σ = ∫_0^σ k_λ(σ, σ') f(t, σ', ·) dσ',   k_λ(σ, σ') = λ e^{−λ (σ − σ')} / (1 − e^{−λ σ}),
//
// the limit of the particles with attention.mask = "causal" or "strictly_causal" and the ALiBi bias
// b_ij = −λ |i − j| / n (λ = 0: no bias, k_0 = 1/σ). Every slice f(t, σ, ·) is a probability density in
// φ and keeps its mass. With the uniform normalizer and Q = K = V = I, the field of a slice is
// ∫ w_β'(φ − φ') g_σ(φ') dφ' / β with w_β(x) = e^{β cos x}: the paper's V[f] in time t / β.
//
// Grid. M_σ equal cursor cells ((j − 1)/M_σ, j/M_σ] (j = 1..M_σ) times the M cells in φ of
// MeanFieldCircle; the state is the M_σ slices of M cell averages, slice-major. A slice's cursor
// average is over the cells strictly before it (the left-point rule of the σ-integral, first order in
// 1/M_σ), computed for every slice at once by the recursion T_{j+1} = e^{−λ/M_σ} T_j + f_j,
// N_{j+1} = e^{−λ/M_σ} N_j + 1, g_j = T_j / N_j: the cost per step is M_σ attention fields,
// M_σ M log M. The first slice has nothing before it: it is stationary without noise (as the first
// token is: it attends to nothing, or to itself alone, which does not move it when V = I).
//
// Steps. The method of lines (rhs) and the split step (own_step) of MeanFieldCircle, slice by slice:
// the same finite volumes, flux-form semi-Lagrangian transport and exact diffusion. Schemes without a
// radius only (the constructor throws std::invalid_argument otherwise).
#include <cstdint>
#include <vector>

#include "normdyn/ode_system.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"

namespace normdyn {

struct CursorSpec {
  std::int64_t cells = 32;   // M_σ
  double alibi_slope = 0.0;  // λ >= 0 of b_ij = −λ |i − j| / n
};

class MeanFieldCausal final : public OdeSystem {
 public:
  MeanFieldCausal(MeanFieldSpec slice, CursorSpec cursor);

  const MeanFieldSpec& spec() const { return circle_.spec(); }
  const CursorSpec& cursor() const { return cursor_; }
  std::int64_t cells() const { return circle_.cells(); }
  std::int64_t cursor_cells() const { return cursor_.cells; }
  const std::vector<double>& phi() const { return circle_.phi(); }
  // Cursor cell centres (j − 1/2) / M_σ, j = 1..M_σ.
  const std::vector<double>& sigma() const { return sigma_; }

  // Every slice the angular cell averages `rho` (per radian, M values).
  std::vector<double> initial_state(const std::vector<double>& rho) const;
  // Slice j of a state (M values per radian).
  std::vector<double> slice(const double* x, std::size_t j) const;
  // ∫ f(σ, φ) dφ of every slice (1 at the start).
  std::vector<double> slice_masses(const double* x) const;
  // The mean over σ of the slices: the angular density of all tokens (M values per radian).
  std::vector<double> angular_density(const double* x) const;
  // ∫∫ f dφ dσ, 1 at the start.
  double mass(const double* x) const;
  // The cursor averages g_j of every slice (M_σ × M, slice-major; a slice with nothing before it is 0),
  // and whether slice j has anything before it.
  const std::vector<double>& cursor_averages(const double* x);
  bool attends(std::size_t j) const { return j > 0; }

  // OdeSystem
  std::size_t size() const override { return size_; }
  void rhs(const double* x, double* dxdt, double t) override;
  std::vector<double> breakpoints(double t0, double t1) const override { return circle_.breakpoints(t0, t1); }
  void enter_piece(double t_begin, double t_end) override { circle_.enter_piece(t_begin, t_end); }
  bool has_own_step() const override { return true; }
  int own_step(const double* x, double t, double h, double* out) override;
  // Clips negative densities to 0 and rescales each slice to its own mass. Returns the largest negative
  // value found, relative to the largest value of its slice (0 when none).
  double retract(double* x) const override;

 private:
  void transport_rhs(const double* x, double* dxdt, double t);
  void diffuse_slices(double* x, double t0, double t1);

  MeanFieldCircle circle_;
  CursorSpec cursor_;
  std::size_t m_ = 0, slices_ = 0, size_ = 0;
  std::vector<double> sigma_;
  std::vector<double> averages_, running_;
  std::vector<double> stage_, stage_rate_, start_;
};

}  // namespace normdyn
