#include "normdyn/solvers/meanfield_causal.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace normdyn {

MeanFieldCausal::MeanFieldCausal(MeanFieldSpec slice, CursorSpec cursor) : circle_(std::move(slice)), cursor_(cursor) {
  if (circle_.has_radius())
    throw std::invalid_argument("MeanFieldCausal: the causal mean field is implemented for schemes without a radius");
  if (cursor_.cells < 1) throw std::invalid_argument("MeanFieldCausal: needs at least one cursor cell");
  if (!(cursor_.alibi_slope >= 0.0)) throw std::invalid_argument("MeanFieldCausal: the ALiBi slope must be >= 0");
  m_ = static_cast<std::size_t>(circle_.cells());
  slices_ = static_cast<std::size_t>(cursor_.cells);
  size_ = m_ * slices_;
  sigma_.resize(slices_);
  for (std::size_t j = 0; j < slices_; ++j) sigma_[j] = (static_cast<double>(j) + 0.5) / static_cast<double>(slices_);
  averages_.assign(size_, 0.0);
  running_.resize(m_);
  stage_.resize(size_);
  stage_rate_.resize(size_);
  start_.resize(m_);
}

std::vector<double> MeanFieldCausal::initial_state(const std::vector<double>& rho) const {
  if (rho.size() != m_) throw std::invalid_argument("MeanFieldCausal::initial_state: needs M cell averages");
  std::vector<double> x(size_);
  for (std::size_t j = 0; j < slices_; ++j)
    std::copy(rho.begin(), rho.end(), x.begin() + static_cast<std::ptrdiff_t>(j * m_));
  return x;
}

std::vector<double> MeanFieldCausal::slice(const double* x, std::size_t j) const {
  return std::vector<double>(x + j * m_, x + (j + 1) * m_);
}

std::vector<double> MeanFieldCausal::slice_masses(const double* x) const {
  std::vector<double> out(slices_);
  const double h = 2.0 * std::numbers::pi / static_cast<double>(m_);
  for (std::size_t j = 0; j < slices_; ++j) {
    double sum = 0.0;
    for (std::size_t i = 0; i < m_; ++i) sum += x[j * m_ + i];
    out[j] = sum * h;
  }
  return out;
}

std::vector<double> MeanFieldCausal::angular_density(const double* x) const {
  std::vector<double> out(m_, 0.0);
  for (std::size_t j = 0; j < slices_; ++j)
    for (std::size_t i = 0; i < m_; ++i) out[i] += x[j * m_ + i];
  for (double& v : out) v /= static_cast<double>(slices_);
  return out;
}

double MeanFieldCausal::mass(const double* x) const {
  const std::vector<double> masses = slice_masses(x);
  double sum = 0.0;
  for (double v : masses) sum += v;
  return sum / static_cast<double>(slices_);
}

const std::vector<double>& MeanFieldCausal::cursor_averages(const double* x) {
  // T_j = Σ_{j' < j} e^{−λ (j − 1 − j') / M_σ} f_{j'} and N_j the same sum of ones; the common factor
  // between these weights and k_λ cancels in g_j = T_j / N_j.
  const double decay = std::exp(-cursor_.alibi_slope / static_cast<double>(slices_));
  std::fill(running_.begin(), running_.end(), 0.0);
  double weight = 0.0;
  for (std::size_t j = 0; j < slices_; ++j) {
    double* g = averages_.data() + j * m_;
    if (weight > 0.0)
      for (std::size_t i = 0; i < m_; ++i) g[i] = running_[i] / weight;
    else
      std::fill(g, g + m_, 0.0);
    const double* f = x + j * m_;
    for (std::size_t i = 0; i < m_; ++i) running_[i] = decay * running_[i] + f[i];
    weight = decay * weight + 1.0;
  }
  return averages_;
}

void MeanFieldCausal::transport_rhs(const double* x, double* dxdt, double t) {
  cursor_averages(x);
  std::fill(dxdt, dxdt + m_, 0.0);  // the first slice attends to nothing
  for (std::size_t j = 1; j < slices_; ++j) {
    circle_.face_velocities(averages_.data() + j * m_, t);
    circle_.face_flux_divergence(x + j * m_, dxdt + j * m_);
  }
}

void MeanFieldCausal::rhs(const double* x, double* dxdt, double t) {
  transport_rhs(x, dxdt, t);
  if (circle_.spec().sigma > 0.0)
    for (std::size_t j = 0; j < slices_; ++j) circle_.diffuse(x + j * m_, dxdt + j * m_, t, t, true);
}

void MeanFieldCausal::diffuse_slices(double* x, double t0, double t1) {
  for (std::size_t j = 0; j < slices_; ++j) circle_.diffuse(x + j * m_, x + j * m_, t0, t1, false);
}

int MeanFieldCausal::own_step(const double* x, double t, double h, double* out) {
  // MeanFieldCircle::own_step on every slice at once (the fields couple the slices): Strang splitting
  // D(h/2) T(h) D(h/2).
  const bool noisy = circle_.spec().sigma > 0.0;
  std::copy(x, x + size_, out);
  if (noisy) diffuse_slices(out, t, t + 0.5 * h);
  if (circle_.spec().method == MeanFieldMethod::semi_lagrangian) {
    // Predictor: every slice to t + h/2 with the fields at t; corrector: over h with the fields of the
    // predicted state (midpoint rule).
    cursor_averages(out);
    std::copy(out, out + m_, stage_.data());
    for (std::size_t j = 1; j < slices_; ++j) {
      circle_.face_velocities(averages_.data() + j * m_, t);
      circle_.semi_lagrangian_transport(out + j * m_, 0.5 * h, stage_.data() + j * m_);
    }
    cursor_averages(stage_.data());
    for (std::size_t j = 1; j < slices_; ++j) {
      circle_.face_velocities(averages_.data() + j * m_, t + 0.5 * h);
      std::copy(out + j * m_, out + (j + 1) * m_, start_.data());
      circle_.semi_lagrangian_transport(start_.data(), h, out + j * m_);
    }
  } else {
    // Shu-Osher SSP-RK3, as MeanFieldCircle::finite_volume_step. The first slice does not move, and is
    // kept as it is (the stages' weights would round it).
    std::copy(out, out + m_, start_.data());
    transport_rhs(out, stage_rate_.data(), t);
    for (std::size_t i = 0; i < size_; ++i) stage_[i] = out[i] + h * stage_rate_[i];
    transport_rhs(stage_.data(), stage_rate_.data(), t + h);
    for (std::size_t i = 0; i < size_; ++i) stage_[i] = 0.75 * out[i] + 0.25 * (stage_[i] + h * stage_rate_[i]);
    transport_rhs(stage_.data(), stage_rate_.data(), t + 0.5 * h);
    for (std::size_t i = 0; i < size_; ++i) out[i] = (out[i] + 2.0 * (stage_[i] + h * stage_rate_[i])) / 3.0;
    std::copy(start_.begin(), start_.end(), out);
  }
  if (noisy) diffuse_slices(out, t + 0.5 * h, t + h);
  return circle_.spec().method == MeanFieldMethod::semi_lagrangian ? 2 : 3;
}

double MeanFieldCausal::retract(double* x) const {
  double worst = 0.0;
  for (std::size_t j = 0; j < slices_; ++j) worst = std::max(worst, circle_.retract(x + j * m_));
  return worst;
}

}  // namespace normdyn
