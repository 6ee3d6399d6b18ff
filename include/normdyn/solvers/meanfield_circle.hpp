#pragma once
// The mean-field equation on the circle (spec section 5, d = 2, θ = (cos φ, sin φ)):
//
//   ∂_t μ + ∂_φ( μ · <θ^⊥, A[μ]> / s ) + ∂_r( μ · ρ ) = 0,     θ^⊥ = (−sin φ, cos φ),
//
// with the speed factor s and radial rate ρ of the scheme (scheme.hpp, through TokenContext), as a
// conservative finite-volume method of lines integrated by the one odeint wrapper (integrator.hpp).
//
// Attention. For matrices that commute with rotations, Q^T K = a I + b J and V = c I + e J
// (J the rotation by π/2; see circle_attention), the attention field is a ratio of convolutions
// over the angular marginal ρ(φ):
//
//   Z = G * ρ,  C = (G cos) * ρ,  S = (G sin) * ρ,    G(x) = exp(β (a cos x + b sin x)),
//   <θ, A> = (c C + e S) / Z,   <θ^⊥, A> = (e C − c S) / Z,   |A| = sqrt(c² + e²) sqrt(C² + S²) / Z,
//
// computed by FFT (FFTW r2c/c2r, O(M log M)). The cell averages are deconvolved (÷ sinc(kh/2)) so
// that the convolutions are spectrally accurate at any point; they are evaluated at the cell faces
// (velocities) and, with a radius, at the cell centres (radial rates).
//
// Grid and fluxes. M equal cells [i h, (i+1) h), h = 2π/M; the unknowns are cell averages; the
// flux at a face is velocity × the upwind face value of a limited linear reconstruction (van Leer,
// minmod, or none = first-order upwind). Flux form: the total mass is conserved to round-off; the
// limited face values lie between neighbouring averages, so the density stays >= 0 for small steps,
// and `retract` clips any negative value left by a large adaptive step, rescaling to keep the mass.
//
// Schemes with a radius (pre, mix, peri). The measure lives on (φ, r). The velocity in φ depends on
// r (s = r, r|A|) and the radial rate on φ, so the radial distribution at a given φ is not a point
// mass in general (a graph r = R(φ) folds in finite time) and the moments of 1/r do not close: the
// radius is resolved on a grid. The grid is a band [r_lo(t), r_hi(t)] that moves with the support,
//   r_lo' = min ρ(φ, r_lo),  r_hi' = max ρ(φ, r_hi)  (over occupied columns),
// with M_r equal cells in η = (r − r_lo) / (r_hi − r_lo) ∈ [0, 1]. In (φ, η) the flow has velocity
// (φ', (ρ − r_lo' − η (r_hi' − r_lo')) / (r_hi − r_lo)), which points into the band at η = 0 and 1:
// no flux leaves it, and the same finite volumes apply in both directions.
//
// State. Without a radius: the M cell averages ρ_i of the density per radian. With a radius: the
// M × M_r averages ν_ij (φ-major) of the density per radian per unit η, then r_lo, r_hi.
//
// Noise (the Fokker-Planck equation of the particles' Stratonovich SDE with independent noise,
// dθ = (1/s) P_θ ∘ (A dt + σ dW)). On the circle P_θ dW = θ^⊥ dB with B a standard 1-D Brownian
// motion, so dφ = <θ^⊥, A>/s dt + (σ/s) ∘ dB. When s does not depend on the attention (post, cod:
// s(t); pre, mix: s(t, r), and the noise does not move r) the coefficient does not depend on φ, the
// Itô and Stratonovich readings agree, and the density gains the diffusion (σ²/(2 s²)) ∂²_φ μ at
// each radius. The diffusion is exact (a multiplier e^{−k² ∫σ²/(2s²)} of the cell averages' DFT,
// column by column in r) in the split step (own_step); `rhs` carries it explicitly (−k² σ²/(2 s²),
// stiff: for the method of lines at small M only).
//
// Normalizer. Softmax (the default) divides by Z = G * ρ; the uniform normalizer (unnormalized
// self-attention) does not: A = ∫ e^{β <Qθ, Kθ'>} V θ' dμ(θ') (the factor e^{β R} that G drops is
// put back).
#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "normdyn/attention_matrices.hpp"
#include "normdyn/ode_system.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/solvers/limiter.hpp"
#include "normdyn/solvers/meanfield_method.hpp"

namespace normdyn {

// Q^T K = a I + b J and V = c I + e J, J = [[0, −1], [1, 0]]: the 2×2 attention matrices that commute
// with rotations, i.e. those for which attention is a convolution on the circle.
struct CircleAttention {
  double a = 1.0, b = 0.0;  // Q^T K
  double c = 1.0, e = 0.0;  // V
};
// The circle form of d = 2 matrices, or nothing when Q^T K or V does not commute with rotations
// (relative tolerance `tolerance`).
std::optional<CircleAttention> circle_attention(const AttentionMatrices& m, double tolerance = 1e-12);

struct MeanFieldSpec {
  Scheme scheme = PostLN{};
  double beta = 1.0;
  std::int64_t grid = 512;
  std::int64_t radial_grid = 32;  // schemes with a radius
  Limiter limiter = Limiter::van_leer;
  std::vector<CircleAttention> layers{CircleAttention{}};  // layer k on [k, k + 1), the last held after
  double r0 = 1.0;                  // schemes without a radius: the constant radius passed to the scheme
  double sigma = 0.0;               // independent noise: the diffusion σ²/(2 s²) ∂²_φ
  bool uniform_normalizer = false;  // attention.normalizer = "uniform"
  // The transport of the split step (own_step); the method of lines (rhs) is the finite volumes.
  // semi_lagrangian: schemes without a radius only (the constructor throws std::invalid_argument).
  MeanFieldMethod method = MeanFieldMethod::finite_volume;
};

class MeanFieldCircle final : public OdeSystem {
 public:
  explicit MeanFieldCircle(MeanFieldSpec spec);
  ~MeanFieldCircle() override;
  MeanFieldCircle(const MeanFieldCircle&) = delete;
  MeanFieldCircle& operator=(const MeanFieldCircle&) = delete;

  const MeanFieldSpec& spec() const { return spec_; }
  bool has_radius() const { return has_radius_; }
  std::int64_t cells() const { return spec_.grid; }
  std::int64_t radial_cells() const { return has_radius_ ? spec_.radial_grid : 1; }
  // Cell centres (i + 1/2) h in φ.
  const std::vector<double>& phi() const { return phi_; }

  // The state for angular cell averages `rho` (per radian, M values) and, with a radius, radii uniform
  // on [r0 − width/2, r0 + width/2] independently of φ.
  std::vector<double> initial_state(const std::vector<double>& rho, double r0, double width) const;

  // Views of a state.
  std::vector<double> angular_density(const double* x) const;  // ρ_i per radian (M)
  // The density per radian (M) or per radian per unit radius (M × M_r, φ-major).
  std::vector<double> density(const double* x) const;
  std::vector<double> radial_centres(const double* x) const;  // M_r cell centres in r (radius schemes)
  double mass(const double* x) const;                         // ∫ density, 1 at the start

  // OdeSystem
  std::size_t size() const override { return size_; }
  void rhs(const double* x, double* dxdt, double t) override;
  std::vector<double> breakpoints(double t0, double t1) const override;
  void enter_piece(double t_begin, double t_end) override;
  // The split step (solver.method = "split"): Strang splitting D(h/2) T(h) D(h/2) of the exact
  // diffusion D and the transport T of spec().method:
  //  * finite_volume: one step of the third-order strong-stability-preserving Runge-Kutta method
  //    (Shu-Osher) of the finite volumes (explicit: its steps need the CFL condition h |v| < 2π/M);
  //  * semi_lagrangian: a flux-form semi-Lagrangian step (below). The new mass of cell i is the mass of
  //    the limited linear reconstruction between the departure points of its two faces, so the mass is
  //    conserved to round-off and the density stays >= 0 while the departure points keep their order
  //    (h |∂_φ v| < 1: a bound on the step set by the flow, not by the grid). The departure point of a
  //    face is the midpoint rule x_f − h v(x_f − h v(x_f)/2) with v the velocity at t + h/2, which
  //    comes from a predictor half step with the velocity at t: second order in time, two attention
  //    fields per step. Face velocities are interpolated linearly between faces.
  bool has_own_step() const override { return true; }
  int own_step(const double* x, double t, double h, double* out) override;
  // Clips negative densities to 0 and rescales the rest to the same mass. Returns the largest
  // negative value found, relative to the largest value (0 when none).
  double retract(double* x) const override;

  // Attention at the cell centres of angular cell averages `rho`, layer in force at t_regime:
  // <θ, A>, <θ^⊥, A>, |A| (tests and diagnostics).
  struct Field {
    std::vector<double> theta_dot_a, tangent, norm;
  };
  Field attention_at_centres(const std::vector<double>& rho, double t_regime);

 private:
  // The causal mean field (meanfield_causal.hpp) drives one MeanFieldCircle slice by slice: the field of
  // a slice comes from another density (its cursor average) than the one it transports.
  friend class MeanFieldCausal;
  struct Fft;
  // The finite-volume flux divergence of angular cell averages `rho` with the face velocities face_u_.
  void face_flux_divergence(const double* rho, double* dxdt);
  std::size_t layer_at(double t_regime) const;
  void convolve(const double* rho, std::size_t layer, bool centres, bool faces);
  template <class S>
  void rhs_angular(const S& scheme, const double* x, double* dxdt, double t, double t_regime);
  template <class S>
  void rhs_radial(const S& scheme, const double* x, double* dxdt, double t, double t_regime);
  void transport_rhs(const double* x, double* dxdt, double t);
  void finite_volume_step(double* u, double t, double h);
  void semi_lagrangian_step(double* u, double t, double h);
  // The face velocities of angular cell averages `rho` at time t, into face_u_.
  void face_velocities(const double* rho, double t);
  // out = the flux-form semi-Lagrangian transport of rho over h with the face velocities face_u_.
  void semi_lagrangian_transport(const double* rho, double h, double* out);
  // The diffusion of the density part of a state, column by column in r: with `rate`, adds
  // −k² σ²/(2 s(t0)²) x̂_k to out (the right-hand side); otherwise out = x with each mode multiplied by
  // e^{−k² ∫_{t0}^{t1} σ²/(2 s²)} (the exact flow). `out` may be `x`.
  void diffuse(const double* x, double* out, double t0, double t1, bool rate);
  // ∫_{t0}^{t1} 1/s(τ, r)² dτ, or 1/s(t0, r)² when t1 == t0.
  double inverse_square_speed(double t0, double t1, double r) const;

  MeanFieldSpec spec_;
  bool has_radius_ = false;
  std::size_t size_ = 0;
  std::vector<double> phi_;
  std::unique_ptr<Fft> fft_;
  double piece_middle_ = 0.0;
  bool in_piece_ = false;
  // Workspaces: attention at faces and centres; fluxes and slopes.
  std::vector<double> marginal_;
  std::vector<double> face_tda_, face_tangent_, face_norm_;
  std::vector<double> centre_tda_, centre_tangent_, centre_norm_;
  std::vector<double> slope_, flux_, row_flux_, radii_;
  std::vector<double> stage_, stage_rate_;  // the split step's stages
  std::vector<double> face_u_, departure_;  // semi-Lagrangian: face velocities, departure points (cells)
};

// ---- Linear stability of the uniform density (docs/meanfield.md derives these) ---------------------

// Radii of the base state at t = 0: uniform on [r0 − width/2, r0 + width/2] (width 0: all r0).
struct RadialLaw {
  double r0 = 1.0;
  double width = 0.0;
};

// The rate λ_k(t) of the Fourier mode k >= 1 of the angular density about the uniform density at time t:
// a perturbation ε e^{ikφ} evolves as ε exp(∫ λ_k) e^{ikφ} to first order in ε. Re λ is the growth rate,
// −Im λ / k the phase speed. Closed form in the Bessel functions I_m(β sqrt(a² + b²)). Throws
// std::domain_error for a radius scheme whose uniform state drifts in φ (V not aligned with Q^T K),
// where radial perturbations couple in and the mode is no longer closed.
//
// `sigma`: independent noise adds −k² (σ²/2) / s² (schemes whose speed does not depend on the radius;
// throws std::domain_error where it does and σ > 0: the mode's radial displacement then couples in,
// see docs/meanfield.md). `uniform_normalizer`: the field is not divided by
// Z = I_0(β R) (1 + perturbation): for Post-LN with Q = K = V = I, λ_k = k² (I_k(β)/(β Z) − σ²/2)
// with Z = I_0(β) (softmax) or 1 (uniform).
std::complex<double> uniform_state_rate(const Scheme& scheme, double beta, const CircleAttention& attention, int k,
                                        double t, const RadialLaw& law = {}, double sigma = 0.0,
                                        bool uniform_normalizer = false);
// ∫_0^t λ_k(s) ds (Gauss–Legendre on the smooth pieces between the scheme's breakpoints).
std::complex<double> uniform_state_log_amplification(const Scheme& scheme, double beta,
                                                     const CircleAttention& attention, int k, double t,
                                                     const RadialLaw& law = {}, double sigma = 0.0,
                                                     bool uniform_normalizer = false);
// I_m(x) / I_0(x) for m = 0..m_max (backward recurrence; no overflow for large x).
std::vector<double> bessel_ratios(double x, int m_max);

// L1 distance (per radian, over the circle) between angular cell averages on a fine grid, averaged
// down to the coarse grid, and those of a coarse grid whose cell count divides the fine one: the
// error measure of a grid-refinement study.
double restricted_l1_distance(const std::vector<double>& fine, const std::vector<double>& coarse);

}  // namespace normdyn
