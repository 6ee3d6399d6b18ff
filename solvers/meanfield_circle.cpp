#include "normdyn/solvers/meanfield_circle.hpp"

#include <fftw3.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace normdyn {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;
using Complex = std::complex<double>;

double sinc(double x) { return std::abs(x) < 1e-8 ? 1.0 - x * x / 6.0 : std::sin(x) / x; }

double limited_slope(Limiter limiter, double left, double right) {
  switch (limiter) {
    case Limiter::van_leer:
      return left * right > 0.0 ? 2.0 * left * right / (left + right) : 0.0;
    case Limiter::minmod:
      if (left * right <= 0.0) return 0.0;
      return left > 0.0 ? std::min(left, right) : std::max(left, right);
    case Limiter::upwind:
      return 0.0;
  }
  return 0.0;
}

// Slopes (per cell, in units of the cell value) of n values at stride `stride`; periodic, or with zero
// slope in the end cells.
void slopes(Limiter limiter, const double* v, std::size_t n, std::size_t stride, bool periodic, double* out) {
  if (limiter == Limiter::upwind) {
    for (std::size_t i = 0; i < n; ++i) out[i] = 0.0;
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const bool first = i == 0, last = i + 1 == n;
    if (!periodic && (first || last)) {
      out[i] = 0.0;
      continue;
    }
    const double prev = v[(first ? n - 1 : i - 1) * stride];
    const double next = v[(last ? 0 : i + 1) * stride];
    const double here = v[i * stride];
    out[i] = limited_slope(limiter, here - prev, next - here);
  }
}

// Upwind flux through the face between cells (here, next) with velocity u.
inline double upwind_flux(double u, double here, double here_slope, double next, double next_slope) {
  return u > 0.0 ? u * (here + 0.5 * here_slope) : u * (next - 0.5 * next_slope);
}

// 8-point Gauss–Legendre on [-1, 1].
constexpr std::array<double, 4> kNodes{0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363};
constexpr std::array<double, 4> kWeights{0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
                                         0.1012285362903763};

template <class T>
T gauss(const std::function<T(double)>& f, double a, double b, int pieces) {
  T sum{};
  const double w = (b - a) / pieces;
  for (int p = 0; p < pieces; ++p) {
    const double mid = a + (p + 0.5) * w;
    for (std::size_t q = 0; q < kNodes.size(); ++q)
      sum += kWeights[q] * (f(mid - 0.5 * w * kNodes[q]) + f(mid + 0.5 * w * kNodes[q])) * (0.5 * w);
  }
  return sum;
}

// ∫_0^t f over the smooth pieces between breakpoints.
template <class T>
T integrate_pieces(const std::function<T(double)>& f, double t, const std::vector<double>& breaks) {
  T sum{};
  double a = 0.0;
  std::vector<double> ends = breaks;
  ends.push_back(t);
  for (double b : ends) {
    if (b <= a) continue;
    sum += gauss<T>(f, a, b, 64);
    a = b;
  }
  return sum;
}

}  // namespace

std::optional<CircleAttention> circle_attention(const AttentionMatrices& m, double tolerance) {
  if (m.identity) return CircleAttention{};
  if (m.Q.rows() != 2 || m.Q.cols() != 2 || m.K.rows() != 2 || m.V.rows() != 2) return std::nullopt;
  const Eigen::Matrix2d qk = Eigen::Matrix2d(m.Q).transpose() * Eigen::Matrix2d(m.K);
  const Eigen::Matrix2d v = m.V;
  auto rotation_form = [&](const Eigen::Matrix2d& x) -> std::optional<std::pair<double, double>> {
    const double scale = std::max(1.0, x.cwiseAbs().maxCoeff());
    if (std::abs(x(0, 0) - x(1, 1)) > tolerance * scale || std::abs(x(0, 1) + x(1, 0)) > tolerance * scale)
      return std::nullopt;
    return std::pair{0.5 * (x(0, 0) + x(1, 1)), 0.5 * (x(1, 0) - x(0, 1))};
  };
  const auto a = rotation_form(qk);
  const auto c = rotation_form(v);
  if (!a || !c) return std::nullopt;
  return CircleAttention{a->first, a->second, c->first, c->second};
}

// ---------------------------------------------------------------------------------------------
// FFTW plans and buffers. FFTW_ESTIMATE plans are chosen without timing, so that a run repeats
// bit for bit (FFTW_MEASURE may pick different algorithms from run to run).
struct MeanFieldCircle::Fft {
  std::size_t m = 0, half = 0;
  double* real = nullptr;
  fftw_complex* spectrum = nullptr;
  fftw_complex* work = nullptr;
  std::array<double*, 3> out{};  // Z, C, S
  fftw_plan forward = nullptr, backward = nullptr;
  // multipliers[layer][kernel][shift]: shift 0 evaluates at cell centres, 1 at right faces.
  std::vector<std::array<std::array<std::vector<Complex>, 2>, 3>> multipliers;

  explicit Fft(std::size_t cells) : m(cells), half(cells / 2 + 1) {
    real = fftw_alloc_real(m);
    spectrum = fftw_alloc_complex(half);
    work = fftw_alloc_complex(half);
    for (auto& o : out) o = fftw_alloc_real(m);
    if (!real || !spectrum || !work || !out[0] || !out[1] || !out[2]) throw std::bad_alloc();
    const int n = static_cast<int>(m);
    forward = fftw_plan_dft_r2c_1d(n, real, spectrum, FFTW_ESTIMATE);
    backward = fftw_plan_dft_c2r_1d(n, work, out[0], FFTW_ESTIMATE);
    if (!forward || !backward) throw std::runtime_error("FFTW could not plan a transform of size " + std::to_string(m));
  }
  ~Fft() {
    fftw_destroy_plan(forward);
    fftw_destroy_plan(backward);
    fftw_free(real);
    fftw_free(spectrum);
    fftw_free(work);
    for (auto* o : out) fftw_free(o);
  }
  Fft(const Fft&) = delete;
  Fft& operator=(const Fft&) = delete;

  // Multipliers of one layer: convolution with G, G cos, G sin, from the sampled kernels.
  void add_layer(const CircleAttention& att, double beta) {
    const double h = kTwoPi / static_cast<double>(m);
    const double big_r = std::hypot(att.a, att.b);
    const double delta = std::atan2(att.b, att.a);
    std::array<std::vector<Complex>, 3> kernel_spectra;
    for (int kernel = 0; kernel < 3; ++kernel) {
      for (std::size_t i = 0; i < m; ++i) {
        const double x = static_cast<double>(i) * h;
        // exp(β R (cos(x − δ) − 1)): the constant factor exp(β R) cancels in every ratio.
        const double g = std::exp(beta * big_r * (std::cos(x - delta) - 1.0));
        real[i] = kernel == 0 ? g : kernel == 1 ? g * std::cos(x) : g * std::sin(x);
      }
      fftw_execute_dft_r2c(forward, real, spectrum);
      kernel_spectra[static_cast<std::size_t>(kernel)].resize(half);
      for (std::size_t k = 0; k < half; ++k)
        kernel_spectra[static_cast<std::size_t>(kernel)][k] = Complex(spectrum[k][0], spectrum[k][1]);
    }
    std::array<std::array<std::vector<Complex>, 2>, 3> layer;
    const double md = static_cast<double>(m);
    for (std::size_t kernel = 0; kernel < 3; ++kernel)
      for (int shift = 0; shift < 2; ++shift) {
        auto& mult = layer[kernel][static_cast<std::size_t>(shift)];
        mult.resize(half);
        for (std::size_t k = 0; k < half; ++k) {
          const double kk = static_cast<double>(k);
          const bool nyquist = m % 2 == 0 && k == m / 2;
          const Complex phase = std::polar(1.0, kk * 0.5 * h * shift);
          mult[k] =
              nyquist ? Complex(0.0) : kTwoPi * kernel_spectra[kernel][k] * phase / (md * md * sinc(0.5 * kk * h));
        }
      }
    multipliers.push_back(std::move(layer));
  }
};

MeanFieldCircle::MeanFieldCircle(MeanFieldSpec spec) : spec_(std::move(spec)) {
  assert(spec_.grid >= 2 && !spec_.layers.empty());
  has_radius_ = scheme_has_radius(spec_.scheme);
  const auto m = static_cast<std::size_t>(spec_.grid);
  const auto mr = static_cast<std::size_t>(radial_cells());
  size_ = has_radius_ ? m * mr + 2 : m;
  const double h = kTwoPi / static_cast<double>(m);
  phi_.resize(m);
  for (std::size_t i = 0; i < m; ++i) phi_[i] = (static_cast<double>(i) + 0.5) * h;
  fft_ = std::make_unique<Fft>(m);
  for (const auto& layer : spec_.layers) fft_->add_layer(layer, spec_.beta);
  marginal_.resize(m);
  for (auto* v : {&face_tda_, &face_tangent_, &face_norm_, &centre_tda_, &centre_tangent_, &centre_norm_}) v->resize(m);
  const std::size_t longest = std::max(m, mr) + 1;
  slope_.resize(std::max(m * mr, longest));
  if (has_radius_) {
    row_flux_.resize(m * mr);
    radii_.resize(mr);
  }
  flux_.resize(longest);
  stage_.resize(size_);
  stage_rate_.resize(size_);
  if (spec_.method == MeanFieldMethod::semi_lagrangian && has_radius_)
    throw std::invalid_argument(
        "MeanFieldCircle: the semi-Lagrangian transport is implemented for schemes "
        "without a radius");
  if (!has_radius_) {
    face_u_.resize(m);
    departure_.resize(m);
  }
}

MeanFieldCircle::~MeanFieldCircle() = default;

std::size_t MeanFieldCircle::layer_at(double t_regime) const {
  if (spec_.layers.size() == 1 || t_regime < 1.0) return 0;
  return std::min(spec_.layers.size() - 1, static_cast<std::size_t>(std::floor(t_regime)));
}

void MeanFieldCircle::convolve(const double* rho, std::size_t layer, bool centres, bool faces) {
  Fft& f = *fft_;
  std::copy(rho, rho + f.m, f.real);
  fftw_execute_dft_r2c(f.forward, f.real, f.spectrum);
  const CircleAttention& att = spec_.layers[layer];
  const double v_norm = std::hypot(att.c, att.e);
  for (int shift = 0; shift < 2; ++shift) {
    if ((shift == 0 && !centres) || (shift == 1 && !faces)) continue;
    for (std::size_t kernel = 0; kernel < 3; ++kernel) {
      const auto& mult = f.multipliers[layer][kernel][static_cast<std::size_t>(shift)];
      for (std::size_t k = 0; k < f.half; ++k) {
        const Complex product = mult[k] * Complex(f.spectrum[k][0], f.spectrum[k][1]);
        f.work[k][0] = product.real();
        f.work[k][1] = product.imag();
      }
      fftw_execute_dft_c2r(f.backward, f.work, f.out[kernel]);
    }
    double* tda = shift == 0 ? centre_tda_.data() : face_tda_.data();
    double* tangent = shift == 0 ? centre_tangent_.data() : face_tangent_.data();
    double* norm = shift == 0 ? centre_norm_.data() : face_norm_.data();
    // The uniform normalizer divides by a constant: e^{−β R}, the factor the sampled kernel dropped.
    const double uniform_scale = std::exp(spec_.beta * std::hypot(att.a, att.b));
    for (std::size_t i = 0; i < f.m; ++i) {
      const double c = f.out[1][i], s = f.out[2][i];
      const double inv_z = spec_.uniform_normalizer ? uniform_scale : 1.0 / f.out[0][i];
      tda[i] = (att.c * c + att.e * s) * inv_z;
      tangent[i] = (att.e * c - att.c * s) * inv_z;
      norm[i] = v_norm * std::hypot(c, s) * inv_z;
    }
  }
}

namespace {
// Velocity T / s, with 0 where the attention vanishes (its direction is undefined there).
template <class S>
inline double angular_velocity(const S& scheme, const TokenContext& c, double tangent) {
  if (!(c.a_norm > 1e-300)) return 0.0;
  const double s = scheme.speed(c);
  return s > 0.0 && std::isfinite(s) ? tangent / s : 0.0;
}
}  // namespace

template <class S>
void MeanFieldCircle::rhs_angular(const S& scheme, const double* x, double* dxdt, double t, double t_regime) {
  const auto m = static_cast<std::size_t>(spec_.grid);
  const double h = kTwoPi / static_cast<double>(m);
  convolve(x, layer_at(t_regime), false, true);
  slopes(spec_.limiter, x, m, 1, true, slope_.data());
  for (std::size_t f = 0; f < m; ++f) {
    const TokenContext c{t, t_regime, spec_.r0, face_tda_[f], face_norm_[f]};
    const double u = angular_velocity(scheme, c, face_tangent_[f]);
    const std::size_t next = f + 1 == m ? 0 : f + 1;
    flux_[f] = upwind_flux(u, x[f], slope_[f], x[next], slope_[next]);
  }
  for (std::size_t i = 0; i < m; ++i) dxdt[i] = -(flux_[i] - flux_[i == 0 ? m - 1 : i - 1]) / h;
}

template <class S>
void MeanFieldCircle::rhs_radial(const S& scheme, const double* x, double* dxdt, double t, double t_regime) {
  const auto m = static_cast<std::size_t>(spec_.grid);
  const auto mr = static_cast<std::size_t>(spec_.radial_grid);
  const double h = kTwoPi / static_cast<double>(m);
  const double deta = 1.0 / static_cast<double>(mr);
  const double r_lo = x[m * mr], r_hi = x[m * mr + 1];
  const double width = r_hi - r_lo;

  double largest_column = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < mr; ++j) sum += x[i * mr + j];
    marginal_[i] = sum * deta;
    largest_column = std::max(largest_column, marginal_[i]);
  }
  convolve(marginal_.data(), layer_at(t_regime), true, true);

  // Band edges: the slowest and fastest radial rates over occupied columns.
  const double occupied = 1e-12 * largest_column;
  double lo_rate = std::numeric_limits<double>::infinity(), hi_rate = -lo_rate;
  for (std::size_t i = 0; i < m; ++i) {
    if (!(marginal_[i] > occupied)) continue;
    lo_rate = std::min(lo_rate, scheme.radial_rate(TokenContext{t, t_regime, r_lo, centre_tda_[i], centre_norm_[i]}));
    hi_rate = std::max(hi_rate, scheme.radial_rate(TokenContext{t, t_regime, r_hi, centre_tda_[i], centre_norm_[i]}));
  }
  if (!std::isfinite(lo_rate) || !std::isfinite(hi_rate)) lo_rate = hi_rate = 0.0;

  // Fluxes in φ. The state is φ-major, so sweep whole rows of M_r radii at a time (contiguous):
  // slopes in φ of every cell, then the flux through each face for every radius.
  for (std::size_t i = 0; i < m; ++i) {
    const double* prev = x + (i == 0 ? m - 1 : i - 1) * mr;
    const double* here = x + i * mr;
    const double* next = x + (i + 1 == m ? 0 : i + 1) * mr;
    double* out = slope_.data() + i * mr;
    for (std::size_t j = 0; j < mr; ++j) out[j] = limited_slope(spec_.limiter, here[j] - prev[j], next[j] - here[j]);
  }
  for (std::size_t j = 0; j < mr; ++j) radii_[j] = r_lo + width * (static_cast<double>(j) + 0.5) * deta;
  const double inv_h = 1.0 / h;
  for (std::size_t f = 0; f < m; ++f) {
    const std::size_t nf = f + 1 == m ? 0 : f + 1;
    const double* here = x + f * mr;
    const double* next = x + nf * mr;
    const double* here_slope = slope_.data() + f * mr;
    const double* next_slope = slope_.data() + nf * mr;
    double* face = row_flux_.data() + f * mr;
    for (std::size_t j = 0; j < mr; ++j) {
      const TokenContext c{t, t_regime, radii_[j], face_tda_[f], face_norm_[f]};
      const double u = angular_velocity(scheme, c, face_tangent_[f]);
      face[j] = upwind_flux(u, here[j], here_slope[j], next[j], next_slope[j]);
    }
  }
  for (std::size_t i = 0; i < m; ++i) {
    const double* right = row_flux_.data() + i * mr;
    const double* left = row_flux_.data() + (i == 0 ? m - 1 : i - 1) * mr;
    for (std::size_t j = 0; j < mr; ++j) dxdt[i * mr + j] = -(right[j] - left[j]) * inv_h;
  }
  // Fluxes in η, column by column; none through the band's edges.
  for (std::size_t i = 0; i < m; ++i) {
    const double* column = x + i * mr;
    slopes(spec_.limiter, column, mr, 1, false, slope_.data());
    flux_[0] = 0.0;
    flux_[mr] = 0.0;
    for (std::size_t jf = 1; jf < mr; ++jf) {
      const double eta = static_cast<double>(jf) * deta;
      const double r = r_lo + width * eta;
      const double g = scheme.radial_rate(TokenContext{t, t_regime, r, centre_tda_[i], centre_norm_[i]});
      const double w = (g - lo_rate - eta * (hi_rate - lo_rate)) / width;
      flux_[jf] = upwind_flux(w, column[jf - 1], slope_[jf - 1], column[jf], slope_[jf]);
    }
    for (std::size_t j = 0; j < mr; ++j) dxdt[i * mr + j] -= (flux_[j + 1] - flux_[j]) / deta;
  }
  dxdt[m * mr] = lo_rate;
  dxdt[m * mr + 1] = hi_rate;
}

void MeanFieldCircle::rhs(const double* x, double* dxdt, double t) {
  transport_rhs(x, dxdt, t);
  if (spec_.sigma > 0.0) diffuse(x, dxdt, t, t, true);
}

int MeanFieldCircle::own_step(const double* x, double t, double h, double* out) {
  // Strang splitting: D(h/2) T(h) D(h/2). For the linearization about the uniform state both parts are
  // diagonal in the Fourier modes and commute, so the splitting adds no error to the modes' rates.
  const std::size_t n = size_;
  const bool noisy = spec_.sigma > 0.0;
  std::copy(x, x + n, out);
  if (noisy) diffuse(out, out, t, t + 0.5 * h, false);
  if (spec_.method == MeanFieldMethod::semi_lagrangian)
    semi_lagrangian_step(out, t, h);
  else
    finite_volume_step(out, t, h);
  if (noisy) diffuse(out, out, t + 0.5 * h, t + h, false);
  return spec_.method == MeanFieldMethod::semi_lagrangian ? 2 : 3;
}

void MeanFieldCircle::finite_volume_step(double* u, double t, double h) {
  // Shu-Osher SSP-RK3: u1 = u + h L(u); u2 = 3/4 u + 1/4 (u1 + h L(u1)); u' = 1/3 u + 2/3 (u2 + h L(u2)).
  const std::size_t n = size_;
  std::vector<double>& stage = stage_;
  std::vector<double>& rate = stage_rate_;
  transport_rhs(u, rate.data(), t);
  for (std::size_t i = 0; i < n; ++i) stage[i] = u[i] + h * rate[i];
  transport_rhs(stage.data(), rate.data(), t + h);
  for (std::size_t i = 0; i < n; ++i) stage[i] = 0.75 * u[i] + 0.25 * (stage[i] + h * rate[i]);
  transport_rhs(stage.data(), rate.data(), t + 0.5 * h);
  for (std::size_t i = 0; i < n; ++i) u[i] = (u[i] + 2.0 * (stage[i] + h * rate[i])) / 3.0;
}

void MeanFieldCircle::semi_lagrangian_step(double* u, double t, double h) {
  face_velocities(u, t);
  semi_lagrangian_transport(u, 0.5 * h, stage_.data());  // predictor: the density at t + h/2
  face_velocities(stage_.data(), t + 0.5 * h);
  std::copy(u, u + spec_.grid, stage_rate_.data());
  semi_lagrangian_transport(stage_rate_.data(), h, u);
}

void MeanFieldCircle::face_velocities(const double* rho, double t) {
  const double t_regime = in_piece_ ? piece_middle_ : t;
  convolve(rho, layer_at(t_regime), false, true);
  std::visit(
      [&](const auto& scheme) {
        for (std::size_t f = 0; f < face_u_.size(); ++f)
          face_u_[f] = angular_velocity(scheme, TokenContext{t, t_regime, spec_.r0, face_tda_[f], face_norm_[f]},
                                        face_tangent_[f]);
      },
      spec_.scheme);
}

void MeanFieldCircle::face_flux_divergence(const double* rho, double* dxdt) {
  const auto m = static_cast<std::size_t>(spec_.grid);
  const double h = kTwoPi / static_cast<double>(m);
  slopes(spec_.limiter, rho, m, 1, true, slope_.data());
  for (std::size_t f = 0; f < m; ++f) {
    const std::size_t next = f + 1 == m ? 0 : f + 1;
    flux_[f] = upwind_flux(face_u_[f], rho[f], slope_[f], rho[next], slope_[next]);
  }
  for (std::size_t i = 0; i < m; ++i) dxdt[i] = -(flux_[i] - flux_[i == 0 ? m - 1 : i - 1]) / h;
}

void MeanFieldCircle::semi_lagrangian_transport(const double* rho, double h, double* out) {
  const auto m = static_cast<std::int64_t>(spec_.grid);
  const double cells_per_radian = static_cast<double>(m) / kTwoPi;
  const auto wrap = [m](std::int64_t j) { return static_cast<std::size_t>(((j % m) + m) % m); };
  slopes(spec_.limiter, rho, static_cast<std::size_t>(m), 1, true, slope_.data());
  // Positions in cells: face f (the right face of cell f) sits at f + 1.
  const auto velocity_at = [&](double position) {
    const double y = position - 1.0, below = std::floor(y);
    const auto k = static_cast<std::int64_t>(below);
    const double w = y - below;
    return (1.0 - w) * face_u_[wrap(k)] + w * face_u_[wrap(k + 1)];
  };
  const double courant = h * cells_per_radian;
  for (std::int64_t f = 0; f < m; ++f) {
    const double face = static_cast<double>(f + 1);
    const double middle = face - 0.5 * courant * face_u_[static_cast<std::size_t>(f)];
    departure_[static_cast<std::size_t>(f)] = face - courant * velocity_at(middle);
  }
  // ∫_0^ξ of the reconstruction ρ_j + s_j (ξ − 1/2) of cell j, in cell widths.
  const auto partial = [&](std::size_t j, double xi) { return rho[j] * xi + 0.5 * slope_[j] * (xi * xi - xi); };
  const auto mass_between = [&](double a, double b) {  // a <= b, in cells
    const double fa = std::floor(a), fb = std::floor(b);
    const auto ja = static_cast<std::int64_t>(fa), jb = static_cast<std::int64_t>(fb);
    if (ja == jb) return partial(wrap(ja), b - fb) - partial(wrap(ja), a - fa);
    double sum = rho[wrap(ja)] - partial(wrap(ja), a - fa);
    for (std::int64_t j = ja + 1; j < jb; ++j) sum += rho[wrap(j)];
    return sum + partial(wrap(jb), b - fb);
  };
  double left = departure_[static_cast<std::size_t>(m - 1)] - static_cast<double>(m);
  for (std::int64_t i = 0; i < m; ++i) {
    const double right = departure_[static_cast<std::size_t>(i)];
    // Departure points out of order (a step too long for the flow) give a negative mass; the sum still
    // telescopes to the total, and the retraction clips it.
    out[i] = right >= left ? mass_between(left, right) : -mass_between(right, left);
    left = right;
  }
}

double MeanFieldCircle::inverse_square_speed(double t0, double t1, double r) const {
  return std::visit(
      [&](const auto& scheme) {
        // The speed factors that the configuration admits with noise do not depend on the attention.
        const auto inv2 = [&](double tau) {
          const double s = scheme.speed(TokenContext{tau, in_piece_ ? piece_middle_ : tau, r, 0.0, 1.0});
          return 1.0 / (s * s);
        };
        if (t1 == t0) return inv2(t0);
        return gauss<double>(std::function<double(double)>(inv2), t0, t1, 1);
      },
      spec_.scheme);
}

void MeanFieldCircle::diffuse(const double* x, double* out, double t0, double t1, bool rate) {
  Fft& f = *fft_;
  const std::size_t m = f.m, mr = static_cast<std::size_t>(radial_cells());
  const std::vector<double> radii = has_radius_ ? radial_centres(x) : std::vector<double>{spec_.r0};
  const double md = static_cast<double>(m);
  for (std::size_t j = 0; j < mr; ++j) {
    const double d = 0.5 * spec_.sigma * spec_.sigma * inverse_square_speed(t0, t1, radii[j]);
    for (std::size_t i = 0; i < m; ++i) f.real[i] = x[i * mr + j];
    fftw_execute_dft_r2c(f.forward, f.real, f.spectrum);
    for (std::size_t k = 0; k < f.half; ++k) {
      const double kk = static_cast<double>(k);
      const double factor = (rate ? -kk * kk * d : std::exp(-kk * kk * d)) / md;
      f.work[k][0] = f.spectrum[k][0] * factor;
      f.work[k][1] = f.spectrum[k][1] * factor;
    }
    fftw_execute_dft_c2r(f.backward, f.work, f.out[0]);
    for (std::size_t i = 0; i < m; ++i) {
      if (rate)
        out[i * mr + j] += f.out[0][i];
      else
        out[i * mr + j] = f.out[0][i];
    }
  }
}

void MeanFieldCircle::transport_rhs(const double* x, double* dxdt, double t) {
  const double t_regime = in_piece_ ? piece_middle_ : t;
  std::visit(
      [&](const auto& scheme) {
        if (has_radius_)
          rhs_radial(scheme, x, dxdt, t, t_regime);
        else
          rhs_angular(scheme, x, dxdt, t, t_regime);
      },
      spec_.scheme);
}

std::vector<double> MeanFieldCircle::breakpoints(double t0, double t1) const {
  std::vector<double> b = scheme_breakpoints(spec_.scheme, t0, t1);
  for (std::size_t k = 1; k < spec_.layers.size(); ++k)
    if (static_cast<double>(k) > t0 && static_cast<double>(k) < t1) b.push_back(static_cast<double>(k));
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

void MeanFieldCircle::enter_piece(double t_begin, double t_end) {
  piece_middle_ = 0.5 * (t_begin + t_end);
  in_piece_ = true;
}

double MeanFieldCircle::retract(double* x) const {
  const std::size_t n = static_cast<std::size_t>(spec_.grid) * static_cast<std::size_t>(radial_cells());
  double most_negative = 0.0, largest = 0.0, total = 0.0, positive = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    most_negative = std::min(most_negative, x[i]);
    largest = std::max(largest, x[i]);
    total += x[i];
    if (x[i] > 0.0) positive += x[i];
  }
  if (most_negative == 0.0) return 0.0;
  const double scale = total / positive;
  for (std::size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0 ? x[i] * scale : 0.0;
  return largest > 0.0 ? -most_negative / largest : 1.0;
}

std::vector<double> MeanFieldCircle::initial_state(const std::vector<double>& rho, double r0, double width) const {
  assert(rho.size() == static_cast<std::size_t>(spec_.grid));
  if (!has_radius_) return rho;
  const auto mr = static_cast<std::size_t>(spec_.radial_grid);
  std::vector<double> x(size_);
  for (std::size_t i = 0; i < rho.size(); ++i)
    for (std::size_t j = 0; j < mr; ++j) x[i * mr + j] = rho[i];  // uniform in η: per unit η = ρ_i
  x[rho.size() * mr] = r0 - 0.5 * width;
  x[rho.size() * mr + 1] = r0 + 0.5 * width;
  return x;
}

std::vector<double> MeanFieldCircle::angular_density(const double* x) const {
  const auto m = static_cast<std::size_t>(spec_.grid);
  if (!has_radius_) return std::vector<double>(x, x + m);
  const auto mr = static_cast<std::size_t>(spec_.radial_grid);
  std::vector<double> rho(m);
  for (std::size_t i = 0; i < m; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < mr; ++j) sum += x[i * mr + j];
    rho[i] = sum / static_cast<double>(mr);
  }
  return rho;
}

std::vector<double> MeanFieldCircle::density(const double* x) const {
  const std::size_t n = static_cast<std::size_t>(spec_.grid) * static_cast<std::size_t>(radial_cells());
  std::vector<double> out(x, x + n);
  if (has_radius_) {
    const double width = x[n + 1] - x[n];
    for (double& v : out) v /= width;
  }
  return out;
}

std::vector<double> MeanFieldCircle::radial_centres(const double* x) const {
  if (!has_radius_) return {};
  const auto mr = static_cast<std::size_t>(spec_.radial_grid);
  const std::size_t n = static_cast<std::size_t>(spec_.grid) * mr;
  std::vector<double> r(mr);
  for (std::size_t j = 0; j < mr; ++j)
    r[j] = x[n] + (x[n + 1] - x[n]) * (static_cast<double>(j) + 0.5) / static_cast<double>(mr);
  return r;
}

double MeanFieldCircle::mass(const double* x) const {
  const std::size_t n = static_cast<std::size_t>(spec_.grid) * static_cast<std::size_t>(radial_cells());
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  return sum * kTwoPi / static_cast<double>(spec_.grid) / static_cast<double>(radial_cells());
}

MeanFieldCircle::Field MeanFieldCircle::attention_at_centres(const std::vector<double>& rho, double t_regime) {
  assert(rho.size() == static_cast<std::size_t>(spec_.grid));
  convolve(rho.data(), layer_at(t_regime), true, false);
  return Field{centre_tda_, centre_tangent_, centre_norm_};
}

// ---------------------------------------------------------------------------------------------
// Linear stability of the uniform density (docs/meanfield.md).

std::vector<double> bessel_ratios(double x, int m_max) {
  std::vector<double> out(static_cast<std::size_t>(m_max) + 1, 0.0);
  out[0] = 1.0;
  if (x == 0.0) return out;
  // r_m = I_m / I_{m-1} = 1 / (2m/x + r_{m+1}), started far above both m_max and x.
  const int top = m_max + static_cast<int>(std::ceil(x)) + 64;
  double r = 0.0;
  std::vector<double> ratio(static_cast<std::size_t>(m_max) + 1, 0.0);
  for (int m = top; m >= 1; --m) {
    r = 1.0 / (2.0 * m / x + r);
    if (m <= m_max) ratio[static_cast<std::size_t>(m)] = r;
  }
  for (int m = 1; m <= m_max; ++m)
    out[static_cast<std::size_t>(m)] = out[static_cast<std::size_t>(m) - 1] * ratio[static_cast<std::size_t>(m)];
  return out;
}

namespace {

struct BaseState {
  double tda = 0.0, tangent = 0.0, norm = 0.0;  // <θ, A>, <θ^⊥, A>, |A| of the uniform density
  Complex tau, alpha;                           // ρ0 × (δT, δ|A|) per unit mode amplitude
};

BaseState base_state(double beta, const CircleAttention& att, int k, bool uniform_normalizer) {
  const double delta = std::atan2(att.b, att.a);
  const std::vector<double> ratio = bessel_ratios(beta * std::hypot(att.a, att.b), k + 1);
  auto g = [&](int m) { return std::polar(ratio[static_cast<std::size_t>(std::abs(m))], -m * delta); };
  BaseState b;
  const double c0 = ratio[1] * std::cos(delta), s0 = ratio[1] * std::sin(delta);
  const double v_norm = std::hypot(att.c, att.e);
  b.tda = att.c * c0 + att.e * s0;
  b.tangent = att.e * c0 - att.c * s0;
  b.norm = v_norm * ratio[1];
  const Complex dz = g(k);
  const Complex dc = 0.5 * (g(k - 1) + g(k + 1));
  const Complex ds = (g(k - 1) - g(k + 1)) / Complex(0.0, 2.0);
  b.tau = (att.e * dc - att.c * ds) - b.tangent * dz;
  b.alpha = v_norm * (std::cos(delta) * dc + std::sin(delta) * ds) - b.norm * dz;
  if (uniform_normalizer) {
    // No division by Z: the field is I_0(β R) times the normalized one, without the −(field) δZ terms.
    const double z = std::cyl_bessel_i(0.0, beta * std::hypot(att.a, att.b));
    b.tau = z * (b.tau + b.tangent * dz);
    b.alpha = z * (b.alpha + b.norm * dz);
    b.tda *= z;
    b.tangent *= z;
    b.norm *= z;
  }
  return b;
}

}  // namespace

std::complex<double> uniform_state_rate(const Scheme& scheme, double beta, const CircleAttention& att, int k, double t,
                                        const RadialLaw& law, double sigma, bool uniform_normalizer) {
  if (k < 1) throw std::domain_error("uniform_state_rate: the mode k must be >= 1");
  const BaseState b = base_state(beta, att, k, uniform_normalizer);
  return std::visit(
      [&](const auto& s) -> Complex {
        using S = std::decay_t<decltype(s)>;
        auto context = [&](double time, double r, double a_norm) { return TokenContext{time, time, r, b.tda, a_norm}; };
        auto speed = [&](double r) { return s.speed(context(t, r, b.norm)); };
        auto speed_slope_a = [&](double r) {  // ∂s/∂|A|, exact for the affine dependences of the schemes
          const double e = 1e-6 * b.norm;
          return (s.speed(context(t, r, b.norm + e)) - s.speed(context(t, r, b.norm - e))) / (2.0 * e);
        };
        // Radii at time t: the initial law shifted by ∫ ρ of the base state (the same for every token).
        double shift = 0.0;
        if constexpr (S::has_radius) {
          const std::function<double(double)> rate = [&](double u) {
            return s.radial_rate(context(u, law.r0, b.norm));
          };
          shift = integrate_pieces<double>(rate, t, scheme_breakpoints(scheme, 0.0, t));
          const double dr = 1e-6 * law.r0;
          const bool depends_on_r = speed(law.r0 + shift + dr) != speed(law.r0 + shift - dr);
          if (depends_on_r && std::abs(b.tangent) > 1e-13 * std::max(1.0, b.norm))
            throw std::domain_error(
                "uniform_state_rate: the uniform state drifts in phi and the speed depends on "
                "the radius; radial perturbations couple to the mode");
          // The diffusion σ²/(2 s(r)²) differs between radii, and the mode's radial displacement (from the
          // perturbed radial rate) feeds back into the marginal: no single rate.
          if (depends_on_r && sigma > 0.0)
            throw std::domain_error(
                "uniform_state_rate: with noise the diffusion depends on the radius and the "
                "mode's radial displacement couples to it");
        }
        // Averages over the radial law [r0 − w/2, r0 + w/2] + shift.
        auto average = [&](const std::function<double(double)>& f) {
          if (!S::has_radius || law.width == 0.0) return f(law.r0 + shift);
          return gauss<double>(f, law.r0 + shift - 0.5 * law.width, law.r0 + shift + 0.5 * law.width, 4) / law.width;
        };
        const double inv_speed = average([&](double r) { return 1.0 / speed(r); });
        const double slope_term = average([&](double r) { return speed_slope_a(r) / (speed(r) * speed(r)); });
        const Complex velocity = b.tangent * inv_speed + b.tau * inv_speed - b.tangent * b.alpha * slope_term;
        const double kk = static_cast<double>(k);
        const double diffusion = sigma == 0.0 ? 0.0 : 0.5 * sigma * sigma * average([&](double r) {
                                                        const double s_r = speed(r);
                                                        return 1.0 / (s_r * s_r);
                                                      });
        return Complex(0.0, -kk) * velocity - kk * kk * diffusion;
      },
      scheme);
}

std::complex<double> uniform_state_log_amplification(const Scheme& scheme, double beta, const CircleAttention& att,
                                                     int k, double t, const RadialLaw& law, double sigma,
                                                     bool uniform_normalizer) {
  const std::function<Complex(double)> rate = [&](double u) {
    return uniform_state_rate(scheme, beta, att, k, u, law, sigma, uniform_normalizer);
  };
  return integrate_pieces<Complex>(rate, t, scheme_breakpoints(scheme, 0.0, t));
}

double restricted_l1_distance(const std::vector<double>& fine, const std::vector<double>& coarse) {
  if (coarse.empty() || fine.size() % coarse.size() != 0)
    throw std::invalid_argument("restricted_l1_distance: the coarse cell count must divide the fine one");
  const std::size_t ratio = fine.size() / coarse.size();
  double sum = 0.0;
  for (std::size_t i = 0; i < coarse.size(); ++i) {
    double avg = 0.0;
    for (std::size_t j = 0; j < ratio; ++j) avg += fine[i * ratio + j];
    sum += std::abs(avg / static_cast<double>(ratio) - coarse[i]);
  }
  return sum * 2.0 * std::numbers::pi / static_cast<double>(coarse.size());
}

}  // namespace normdyn
