#include "normdyn/qkv.hpp"

#include <Eigen/SVD>
#include <cmath>

#include "normdyn/random.hpp"

namespace normdyn {
namespace {
std::int64_t layer_index(double t) { return t <= 0.0 ? 0 : static_cast<std::int64_t>(std::floor(t)); }
}  // namespace

QkvSource QkvSource::identity() { return QkvSource{}; }

AttentionMatrices QkvSource::draw(Index d, std::uint64_t seed, bool per_layer, std::uint64_t layer) {
  Random rng(seed, per_layer ? RandomStream::attention_matrices_per_layer : RandomStream::attention_matrices,
             layer);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  AttentionMatrices m;
  m.identity = false;
  for (RowMatrix* target : {&m.Q, &m.K, &m.V}) {
    target->resize(d, d);
    for (Index i = 0; i < d; ++i)
      for (Index j = 0; j < d; ++j) (*target)(i, j) = scale * rng.normal();
  }
  return m;
}

QkvSource QkvSource::gaussian(Index d, std::uint64_t seed) {
  QkvSource s;
  s.kind_ = Kind::fixed_layers;
  s.d_ = d;
  s.seed_ = seed;
  s.layers_.push_back(draw(d, seed, false, 0));
  return s;
}

QkvSource QkvSource::gaussian_unit_norm(Index d, std::uint64_t seed, bool identity_value) {
  AttentionMatrices m = draw(d, seed, false, 0);
  // Largest singular values; Q and K share the factor so that Q^T K is scaled by 1/|Q^T K|.
  const double qk = Eigen::BDCSVD<RowMatrix>(m.Q.transpose() * m.K).singularValues()(0);
  const double qk_factor = 1.0 / std::sqrt(qk);
  m.Q *= qk_factor;
  m.K *= qk_factor;
  if (identity_value) m.V = RowMatrix::Identity(d, d);
  else m.V /= Eigen::BDCSVD<RowMatrix>(m.V).singularValues()(0);
  QkvSource s;
  s.kind_ = Kind::fixed_layers;
  s.d_ = d;
  s.seed_ = seed;
  s.layers_.push_back(std::move(m));
  return s;
}

QkvSource QkvSource::gaussian_per_layer(Index d, std::uint64_t seed) {
  QkvSource s;
  s.kind_ = Kind::random_per_layer;
  s.d_ = d;
  s.seed_ = seed;
  return s;
}

QkvSource QkvSource::layers(std::vector<AttentionMatrices> per_layer) {
  QkvSource s;
  s.kind_ = Kind::fixed_layers;
  s.layers_ = std::move(per_layer);
  return s;
}

bool QkvSource::time_dependent() const {
  return kind_ == Kind::random_per_layer || (kind_ == Kind::fixed_layers && layers_.size() > 1);
}

const AttentionMatrices& QkvSource::at(double t_regime) {
  static const AttentionMatrices kIdentity = AttentionMatrices::identity_matrices();
  switch (kind_) {
    case Kind::identity:
      return kIdentity;
    case Kind::fixed_layers: {
      const auto k = static_cast<std::size_t>(layer_index(t_regime));
      return layers_[std::min(k, layers_.size() - 1)];
    }
    case Kind::random_per_layer: {
      const std::int64_t k = layer_index(t_regime);
      if (k != cached_layer_) {
        layers_.assign(1, draw(d_, seed_, true, static_cast<std::uint64_t>(k)));
        cached_layer_ = k;
      }
      return layers_.front();
    }
  }
  return kIdentity;
}

std::vector<double> QkvSource::breakpoints(double t0, double t1) const {
  std::vector<double> out;
  if (!time_dependent()) return out;
  const double last = kind_ == Kind::fixed_layers ? static_cast<double>(layers_.size() - 1) : t1;
  for (double k = std::floor(t0) + 1.0; k < t1 && k <= last; k += 1.0)
    if (k > t0) out.push_back(k);
  return out;
}

}  // namespace normdyn
