#pragma once
// Spherical-harmonic transforms on a Gauss–Legendre grid of S^2 (libsharp, used only in
// solvers/sphere_transform.cpp).
//
// Coefficients. A real function f = Σ_{l <= L} Σ_{|m| <= l} f_lm Y_lm in the orthonormal complex
// harmonics (∫ |Y_lm|² dA = 1, Y_l,−m = (−1)^m conj(Y_lm)) is held by its coefficients with m >= 0,
// packed as reals m-major: m = 0: Re f_l0 for l = 0..L; then for each m = 1..L and l = m..L the pair
// (Re f_lm, Im f_lm). (L + 1)² reals in all. The mass ∫ f dA is f_00 sqrt(4π).
//
// Grid. `latitudes` rings at the Gauss–Legendre colatitudes ϑ_i (north to south), `longitudes`
// equally spaced points φ_j = 2π j / longitudes on each; values ring-major, index i·longitudes + j.
// Analysis is the quadrature Σ w_i (2π/longitudes) f(ϑ_i, φ_j) conj(Y_lm): exact for polynomials of
// degree <= 2·latitudes − 1 in cos ϑ and |m| < longitudes − L.
//
// Tangent fields are given by their components along the unit vectors e_ϑ (south) and e_φ (east).
#include <cstddef>
#include <memory>
#include <vector>

namespace normdyn {

class SphereTransform {
 public:
  // Throws std::invalid_argument unless 0 <= lmax, latitudes >= lmax + 1, longitudes >= 2 lmax + 1.
  SphereTransform(int lmax, int latitudes, int longitudes);
  ~SphereTransform();
  SphereTransform(const SphereTransform&) = delete;
  SphereTransform& operator=(const SphereTransform&) = delete;

  int lmax() const { return lmax_; }
  int latitudes() const { return latitudes_; }
  int longitudes() const { return longitudes_; }
  std::size_t coefficients() const { return static_cast<std::size_t>(lmax_ + 1) * static_cast<std::size_t>(lmax_ + 1); }
  std::size_t points() const { return static_cast<std::size_t>(latitudes_) * static_cast<std::size_t>(longitudes_); }
  // Ring colatitudes ϑ_i (north to south) and the area weight of each point of ring i (Σ = 4π).
  const std::vector<double>& colatitudes() const { return colatitudes_; }
  const std::vector<double>& point_areas() const { return point_areas_; }

  // The packed index of Re f_lm (m >= 0; Im f_lm follows it when m > 0).
  std::size_t index(int l, int m) const;

  // grid = Σ f_lm Y_lm.
  void synthesize(const double* coefficients, double* grid) const;
  // coefficients = the quadrature of grid against conj(Y_lm), l <= L.
  void analyze(const double* grid, double* coefficients) const;
  // The surface gradient of Σ f_lm Y_lm: its e_ϑ component ∂_ϑ f and e_φ component (1/sin ϑ) ∂_φ f.
  void gradient(const double* coefficients, double* e_theta, double* e_phi) const;
  // The coefficients (l <= L) of the surface divergence of the tangent field (e_theta, e_phi), from
  // its gradient part (the curl part has none): div = −sqrt(l(l+1)) × the spin-1 gradient coefficient.
  void divergence(const double* e_theta, const double* e_phi, double* coefficients) const;

 private:
  struct Plan;
  int lmax_ = 0, latitudes_ = 0, longitudes_ = 0;
  std::vector<double> colatitudes_, point_areas_;
  std::unique_ptr<Plan> plan_;
};

}  // namespace normdyn
