#include "normdyn/solvers/meanfield_sphere.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace normdyn {

std::optional<SphereAttention> sphere_attention(const AttentionMatrices& m, double tolerance) {
  if (!m.other_heads.empty()) return std::nullopt;
  if (m.identity) return SphereAttention{};
  if (m.Q.rows() != 3 || m.Q.cols() != 3 || m.K.rows() != 3 || m.K.cols() != 3 || m.V.rows() != 3 || m.V.cols() != 3)
    return std::nullopt;
  const Eigen::Matrix3d qk = Eigen::Matrix3d(m.Q).transpose() * Eigen::Matrix3d(m.K);
  const Eigen::Matrix3d v = m.V;
  // x = s I within the tolerance, relative to the largest entry.
  const auto multiple_of_identity = [&](const Eigen::Matrix3d& x) -> std::optional<double> {
    const double s = x.trace() / 3.0;
    const double scale = std::max(1.0, x.cwiseAbs().maxCoeff());
    if ((x - s * Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > tolerance * scale) return std::nullopt;
    return s;
  };
  const auto a = multiple_of_identity(qk);
  const auto c = multiple_of_identity(v);
  if (!a || !c) return std::nullopt;
  return SphereAttention{*a, *c};
}

ScaledSphericalBessel scaled_spherical_bessel(double x, int lmax) {
  ScaledSphericalBessel out;
  const auto n = static_cast<std::size_t>(lmax + 1);
  out.i.assign(n, 0.0);
  out.i_over_x.assign(n, 0.0);
  const double ax = std::abs(x);
  // e^{−x} i_0(x) = (1 − e^{−2x}) / (2x).
  const double i0 = ax > 0.0 ? -std::expm1(-2.0 * ax) / (2.0 * ax) : 1.0;
  out.i[0] = i0;
  out.i_over_x[0] = ax > 0.0 ? i0 / ax : std::numeric_limits<double>::infinity();
  if (lmax == 0) return out;
  // q_l = i_l / i_{l−1} = x / (2l + 1 + x q_{l+1}) (from i_{l−1} − i_{l+1} = (2l + 1) i_l / x), from
  // far above lmax, where i_l is negligible: the recurrence downwards is stable for i_l.
  const int start = lmax + 60 + 2 * static_cast<int>(std::ceil(std::min(ax, 1e6)));
  std::vector<double> q(static_cast<std::size_t>(start + 2), 0.0);
  for (int l = start; l >= 1; --l)
    q[static_cast<std::size_t>(l)] = ax / (2.0 * l + 1.0 + ax * q[static_cast<std::size_t>(l + 1)]);
  // i_1 / x = i_0 / (3 + x q_2): finite at x = 0 (= 1/3).
  double product = i0, product_over_x = i0 / (3.0 + ax * q[2]);
  for (int l = 1; l <= lmax; ++l) {
    const auto k = static_cast<std::size_t>(l);
    product *= q[k];
    if (l >= 2) product_over_x *= q[k];
    // i_l(−x) = (−1)^l i_l(x).
    const double parity = (x < 0.0 && l % 2 == 1) ? -1.0 : 1.0;
    out.i[k] = parity * product;
    out.i_over_x[k] = (x < 0.0 ? -parity : parity) * product_over_x;
  }
  return out;
}

std::vector<double> funk_hecke_exponential(double kappa, int lmax) {
  const ScaledSphericalBessel b = scaled_spherical_bessel(kappa, lmax);
  std::vector<double> out(b.i.size());
  const double scale = 4.0 * std::numbers::pi * std::exp(std::abs(kappa));
  for (std::size_t l = 0; l < out.size(); ++l) out[l] = scale * b.i[l];
  return out;
}

double sphere_uniform_state_rate(double beta, const SphereAttention& attention, int l, bool uniform_normalizer) {
  if (l < 1) return 0.0;
  const double kappa = beta * attention.a;
  const ScaledSphericalBessel b = scaled_spherical_bessel(kappa, l);
  const double ll = static_cast<double>(l) * (l + 1);
  const auto k = static_cast<std::size_t>(l);
  if (uniform_normalizer) return attention.c * ll * b.i_over_x[k] * std::exp(std::abs(kappa));
  return attention.c * ll * b.i_over_x[k] / b.i[0];
}

namespace {

// Gauss–Legendre rings exact for the degree-3L integrands of the quadratic term (see the header).
int sphere_rings_for(int degree) { return (3 * degree + 2) / 2; }

}  // namespace

MeanFieldSphere::MeanFieldSphere(SphereMeanFieldSpec spec) : spec_(std::move(spec)) {
  if (spec_.degree < 1) throw std::invalid_argument("MeanFieldSphere: degree must be >= 1");
  if (spec_.layers.empty()) spec_.layers.push_back(SphereAttention{});
  const int rings = sphere_rings_for(spec_.degree);
  transform_ = std::make_unique<SphereTransform>(spec_.degree, rings, 2 * rings);
  const auto n = static_cast<std::size_t>(spec_.degree + 1);
  for (const SphereAttention& layer : spec_.layers) {
    const double kappa = spec_.beta * layer.a;
    const ScaledSphericalBessel b = scaled_spherical_bessel(kappa, spec_.degree);
    // The uniform normalizer needs the true scale of the field (e^{|κ|} put back); softmax's cancels.
    const double scale = 4.0 * std::numbers::pi * (spec_.uniform_normalizer ? std::exp(std::abs(kappa)) : 1.0);
    std::vector<double> z(n), f(n, 0.0);
    for (std::size_t l = 0; l < n; ++l) {
      z[l] = scale * b.i[l];
      if (l >= 1) f[l] = scale * b.i_over_x[l];  // ∇_S kills l = 0
    }
    z_multiplier_.push_back(std::move(z));
    f_multiplier_.push_back(std::move(f));
  }
  coefficients_.assign(transform_->coefficients(), 0.0);
  mu_.assign(transform_->points(), 0.0);
  z_.assign(transform_->points(), 0.0);
  grad_theta_.assign(transform_->points(), 0.0);
  grad_phi_.assign(transform_->points(), 0.0);
}

MeanFieldSphere::~MeanFieldSphere() = default;

std::vector<double> MeanFieldSphere::initial_state(const std::vector<double>& grid_density) const {
  if (grid_density.size() != transform_->points())
    throw std::invalid_argument("MeanFieldSphere::initial_state: expected " + std::to_string(transform_->points()) +
                                " grid values, got " + std::to_string(grid_density.size()));
  std::vector<double> x(size());
  transform_->analyze(grid_density.data(), x.data());
  const double m = mass(x.data());
  if (!(m > 0.0) || !std::isfinite(m))
    throw std::invalid_argument("MeanFieldSphere::initial_state: mass is not positive");
  for (double& v : x) v /= m;
  return x;
}

std::vector<double> MeanFieldSphere::density(const double* x) const {
  std::vector<double> out(transform_->points());
  transform_->synthesize(x, out.data());
  return out;
}

double MeanFieldSphere::mass(const double* x) const { return x[0] * std::sqrt(4.0 * std::numbers::pi); }

double MeanFieldSphere::spectral_tail(const double* x) const {
  const int L = spec_.degree;
  double total = 0.0, tail = 0.0;
  for (int m = 0; m <= L; ++m)
    for (int l = m; l <= L; ++l) {
      const std::size_t k = transform_->index(l, m);
      // |μ_l|² counts m and −m: twice the stored pair for m > 0.
      const double e = m == 0 ? x[k] * x[k] : 2.0 * (x[k] * x[k] + x[k + 1] * x[k + 1]);
      total += e;
      if (3 * l > 2 * L) tail += e;
    }
  return total > 0.0 ? std::sqrt(tail / total) : 0.0;
}

std::size_t MeanFieldSphere::layer_at(double t) const {
  if (spec_.layers.size() == 1 || t < 1.0) return 0;
  return std::min(spec_.layers.size() - 1, static_cast<std::size_t>(std::floor(t)));
}

void MeanFieldSphere::rhs(const double* x, double* dxdt, double t) {
  const std::size_t layer = layer_at(in_piece_ ? piece_middle_ : t);
  const SphereTransform& tr = *transform_;
  const int L = spec_.degree;
  const auto multiply = [&](const std::vector<double>& by) {
    for (int m = 0; m <= L; ++m)
      for (int l = m; l <= L; ++l) {
        const std::size_t k = tr.index(l, m);
        coefficients_[k] = by[static_cast<std::size_t>(l)] * x[k];
        if (m > 0) coefficients_[k + 1] = by[static_cast<std::size_t>(l)] * x[k + 1];
      }
  };
  multiply(f_multiplier_[layer]);
  tr.gradient(coefficients_.data(), grad_theta_.data(), grad_phi_.data());
  tr.synthesize(x, mu_.data());
  const double c = spec_.layers[layer].c;
  if (spec_.uniform_normalizer) {
    for (std::size_t p = 0; p < mu_.size(); ++p) {
      grad_theta_[p] *= c * mu_[p];
      grad_phi_[p] *= c * mu_[p];
    }
  } else {
    multiply(z_multiplier_[layer]);
    tr.synthesize(coefficients_.data(), z_.data());
    for (std::size_t p = 0; p < mu_.size(); ++p) {
      const double w = c * mu_[p] / z_[p];
      grad_theta_[p] *= w;
      grad_phi_[p] *= w;
    }
  }
  tr.divergence(grad_theta_.data(), grad_phi_.data(), dxdt);
  for (std::size_t k = 0; k < size(); ++k) dxdt[k] = -dxdt[k];
  dxdt[0] = 0.0;  // the mass: exactly conserved
}

std::vector<double> MeanFieldSphere::breakpoints(double t0, double t1) const {
  std::vector<double> b;
  for (std::size_t k = 1; k < spec_.layers.size(); ++k)
    if (static_cast<double>(k) > t0 && static_cast<double>(k) < t1) b.push_back(static_cast<double>(k));
  return b;
}

void MeanFieldSphere::enter_piece(double t_begin, double t_end) {
  piece_middle_ = 0.5 * (t_begin + t_end);
  in_piece_ = true;
}

}  // namespace normdyn
