// The only libsharp user: spherical-harmonic transforms on a Gauss–Legendre grid.
#include "normdyn/solvers/sphere_transform.hpp"

#include <libsharp/sharp.h>
#include <libsharp/sharp_almhelpers.h>
#include <libsharp/sharp_geomhelpers.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

namespace normdyn {

// libsharp's geometry and coefficient layout, and complex buffers in its (triangular, m-major) order.
// The buffers make the const transforms non-reentrant: one SphereTransform per thread.
struct SphereTransform::Plan {
  sharp_geom_info* geometry = nullptr;
  sharp_alm_info* layout = nullptr;
  mutable std::vector<std::complex<double>> first, second;
  ~Plan() {
    if (geometry) sharp_destroy_geom_info(geometry);
    if (layout) sharp_destroy_alm_info(layout);
  }
};

SphereTransform::SphereTransform(int lmax, int latitudes, int longitudes)
    : lmax_(lmax), latitudes_(latitudes), longitudes_(longitudes), plan_(std::make_unique<Plan>()) {
  if (lmax < 0 || latitudes < lmax + 1 || longitudes < 2 * lmax + 1)
    throw std::invalid_argument(
        "SphereTransform: needs lmax >= 0, latitudes >= lmax + 1, longitudes >= 2 lmax + 1 (got " +
        std::to_string(lmax) + ", " + std::to_string(latitudes) + ", " + std::to_string(longitudes) + ")");
  sharp_make_gauss_geom_info(latitudes, longitudes, 0.0, 1, longitudes, &plan_->geometry);
  sharp_make_triangular_alm_info(lmax, lmax, 1, &plan_->layout);
  const auto count = static_cast<std::size_t>(sharp_alm_count(plan_->layout));
  plan_->first.assign(count, 0.0);
  plan_->second.assign(count, 0.0);
  colatitudes_.assign(static_cast<std::size_t>(latitudes), 0.0);
  point_areas_.assign(static_cast<std::size_t>(latitudes), 0.0);
  // Rings come in pairs symmetric about the equator (the second empty for an odd middle ring); the
  // offset of a ring is its index times `longitudes`.
  for (int p = 0; p < plan_->geometry->npairs; ++p)
    for (const sharp_ringinfo* ring : {&plan_->geometry->pair[p].r1, &plan_->geometry->pair[p].r2}) {
      if (ring->nph <= 0) continue;
      const auto i = static_cast<std::size_t>(ring->ofs / longitudes);
      colatitudes_[i] = ring->theta;
      point_areas_[i] = ring->weight;
    }
}

SphereTransform::~SphereTransform() = default;

std::size_t SphereTransform::index(int l, int m) const {
  const auto L = static_cast<std::size_t>(lmax_);
  if (m == 0) return static_cast<std::size_t>(l);
  // m = 0 takes L + 1 reals; each m' in 1..m−1 takes 2 (L − m' + 1).
  const auto mm = static_cast<std::size_t>(m);
  const std::size_t before = (L + 1) + 2 * ((mm - 1) * (L + 1) - (mm - 1) * mm / 2);
  return before + 2 * static_cast<std::size_t>(l - m);
}

namespace {

void unpack_sphere_coefficients(const SphereTransform& t, const sharp_alm_info* layout, const double* in,
                                std::complex<double>* out) {
  for (int m = 0; m <= t.lmax(); ++m)
    for (int l = m; l <= t.lmax(); ++l) {
      const std::size_t k = t.index(l, m);
      out[sharp_alm_index(layout, l, m)] =
          m == 0 ? std::complex<double>(in[k], 0.0) : std::complex<double>(in[k], in[k + 1]);
    }
}

void pack_sphere_coefficients(const SphereTransform& t, const sharp_alm_info* layout, const std::complex<double>* in,
                              double* out) {
  for (int m = 0; m <= t.lmax(); ++m)
    for (int l = m; l <= t.lmax(); ++l) {
      const std::size_t k = t.index(l, m);
      const std::complex<double> c = in[sharp_alm_index(layout, l, m)];
      out[k] = c.real();
      if (m > 0) out[k + 1] = c.imag();
    }
}

}  // namespace

void SphereTransform::synthesize(const double* coefficients, double* grid) const {
  unpack_sphere_coefficients(*this, plan_->layout, coefficients, plan_->first.data());
  void* alm[1] = {plan_->first.data()};
  void* map[1] = {grid};
  sharp_execute(SHARP_ALM2MAP, 0, alm, map, plan_->geometry, plan_->layout, SHARP_DP, nullptr, nullptr);
}

void SphereTransform::analyze(const double* grid, double* coefficients) const {
  void* alm[1] = {plan_->first.data()};
  void* map[1] = {const_cast<double*>(grid)};  // read only (analysis)
  sharp_execute(SHARP_MAP2ALM, 0, alm, map, plan_->geometry, plan_->layout, SHARP_DP, nullptr, nullptr);
  pack_sphere_coefficients(*this, plan_->layout, plan_->first.data(), coefficients);
}

void SphereTransform::gradient(const double* coefficients, double* e_theta, double* e_phi) const {
  unpack_sphere_coefficients(*this, plan_->layout, coefficients, plan_->first.data());
  void* alm[1] = {plan_->first.data()};
  void* map[2] = {e_theta, e_phi};
  sharp_execute(SHARP_ALM2MAP_DERIV1, 1, alm, map, plan_->geometry, plan_->layout, SHARP_DP, nullptr, nullptr);
}

void SphereTransform::divergence(const double* e_theta, const double* e_phi, double* coefficients) const {
  void* alm[2] = {plan_->first.data(), plan_->second.data()};
  void* map[2] = {const_cast<double*>(e_theta), const_cast<double*>(e_phi)};  // read only (analysis)
  sharp_execute(SHARP_MAP2ALM, 1, alm, map, plan_->geometry, plan_->layout, SHARP_DP, nullptr, nullptr);
  // libsharp's spin-1 gradient coefficient of ∇f is sqrt(l(l+1)) f_lm, and div ∇f = −l(l+1) f_lm.
  for (int m = 0; m <= lmax_; ++m)
    for (int l = std::max(m, 1); l <= lmax_; ++l)
      plan_->first[sharp_alm_index(plan_->layout, l, m)] *= -std::sqrt(static_cast<double>(l) * (l + 1));
  if (lmax_ >= 0) plan_->first[sharp_alm_index(plan_->layout, 0, 0)] = 0.0;
  pack_sphere_coefficients(*this, plan_->layout, plan_->first.data(), coefficients);
}

}  // namespace normdyn
