#include "normdyn/qkv.hpp"

#include <Eigen/SVD>
#include <cmath>
#include <span>

#include "normdyn/counter_random.hpp"
#include "normdyn/random.hpp"

namespace normdyn {
namespace {
std::int64_t layer_index(double t) { return t <= 0.0 ? 0 : static_cast<std::int64_t>(std::floor(t)); }
}  // namespace

QkvSource QkvSource::identity(Index heads) {
  QkvSource s;
  s.heads_ = heads;
  s.layers_.push_back(AttentionMatrices::identity_matrices(heads));
  return s;
}

namespace {

// Entries N(0, 1/d) from one stream.
AttentionMatrices draw_head(Index d, Random rng) {
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

// Q and K scaled by one factor to |Q^T K| = 1 (largest singular value), V to |V| = 1 or set to I.
void scale_to_unit_norm(AttentionMatrices& m, bool identity_value) {
  const Index d = m.Q.rows();
  const double qk = Eigen::BDCSVD<RowMatrix>(m.Q.transpose() * m.K).singularValues()(0);
  const double qk_factor = 1.0 / std::sqrt(qk);
  m.Q *= qk_factor;
  m.K *= qk_factor;
  if (identity_value)
    m.V = RowMatrix::Identity(d, d);
  else
    m.V /= Eigen::BDCSVD<RowMatrix>(m.V).singularValues()(0);
}

}  // namespace

AttentionMatrices QkvSource::draw(Index d, std::uint64_t seed, bool per_layer, std::uint64_t layer, Index heads) {
  AttentionMatrices m = draw_head(
      d,
      Random(seed, per_layer ? RandomStream::attention_matrices_per_layer : RandomStream::attention_matrices, layer));
  for (Index h = 1; h < heads; ++h)
    m.other_heads.push_back(
        draw_head(d, Random(seed, per_layer ? RandomStream::attention_heads_per_layer : RandomStream::attention_heads,
                            layer * kMaxHeads + static_cast<std::uint64_t>(h))));
  return m;
}

QkvSource QkvSource::gaussian(Index d, std::uint64_t seed, Index heads) {
  QkvSource s;
  s.kind_ = Kind::fixed_layers;
  s.d_ = d;
  s.heads_ = heads;
  s.seed_ = seed;
  s.layers_.push_back(draw(d, seed, false, 0, heads));
  return s;
}

QkvSource QkvSource::gaussian_unit_norm(Index d, std::uint64_t seed, bool identity_value, Index heads) {
  AttentionMatrices m = draw(d, seed, false, 0, heads);
  scale_to_unit_norm(m, identity_value);
  for (AttentionMatrices& h : m.other_heads) scale_to_unit_norm(h, identity_value);
  QkvSource s;
  s.kind_ = Kind::fixed_layers;
  s.d_ = d;
  s.heads_ = heads;
  s.seed_ = seed;
  s.layers_.push_back(std::move(m));
  return s;
}

QkvSource QkvSource::gaussian_per_layer(Index d, std::uint64_t seed, Index heads) {
  QkvSource s;
  s.kind_ = Kind::random_per_layer;
  s.d_ = d;
  s.heads_ = heads;
  s.seed_ = seed;
  return s;
}

QkvSource QkvSource::gaussian_per_map_layer(Index d, std::uint64_t seed, double sigma, double h, double t0) {
  QkvSource s;
  s.kind_ = Kind::random_per_map_layer;
  s.d_ = d;
  s.seed_ = seed;
  s.sigma_ = sigma;
  s.step_ = h;
  s.t0_ = t0;
  return s;
}

QkvSource QkvSource::layers(std::vector<AttentionMatrices> per_layer) {
  QkvSource s;
  s.kind_ = Kind::fixed_layers;
  s.layers_ = std::move(per_layer);
  return s;
}

bool QkvSource::time_dependent() const {
  return kind_ == Kind::random_per_layer || kind_ == Kind::random_per_map_layer ||
         (kind_ == Kind::fixed_layers && layers_.size() > 1);
}

const AttentionMatrices& QkvSource::at(double t_regime) {
  switch (kind_) {
    case Kind::identity:
      if (layers_.empty()) layers_.push_back(AttentionMatrices::identity_matrices(heads_));  // a default-made source
      return layers_.front();
    case Kind::fixed_layers: {
      const auto k = static_cast<std::size_t>(layer_index(t_regime));
      return layers_[std::min(k, layers_.size() - 1)];
    }
    case Kind::random_per_layer: {
      const std::int64_t k = layer_index(t_regime);
      if (k != cached_layer_) {
        layers_.assign(1, draw(d_, seed_, true, static_cast<std::uint64_t>(k), heads_));
        cached_layer_ = k;
      }
      return layers_.front();
    }
    case Kind::random_per_map_layer: {
      const auto k = static_cast<std::int64_t>(std::floor((t_regime - t0_) / step_));
      if (k != cached_layer_) {
        AttentionMatrices m;
        m.identity = false;
        m.Q = m.K = RowMatrix::Identity(d_, d_);
        m.V = RowMatrix(d_, d_);
        counter_normals(seed_, CounterStream::map_layer_values,
                        static_cast<std::uint64_t>(std::max<std::int64_t>(k, 0)), 0,
                        std::span<double>(m.V.data(), static_cast<std::size_t>(d_ * d_)));
        m.V *= sigma_ / std::sqrt(step_);
        m.V += RowMatrix::Identity(d_, d_);
        layers_.assign(1, std::move(m));
        cached_layer_ = k;
      }
      return layers_.front();
    }
  }
  return layers_.front();
}

std::vector<double> QkvSource::breakpoints(double t0, double t1) const {
  std::vector<double> out;
  if (!time_dependent()) return out;
  if (kind_ == Kind::random_per_map_layer) {
    for (auto k = static_cast<std::int64_t>(std::floor((t0 - t0_) / step_)) + 1;; ++k) {
      const double b = t0_ + static_cast<double>(k) * step_;
      if (b >= t1) break;
      if (b > t0) out.push_back(b);
    }
    return out;
  }
  const double last = kind_ == Kind::fixed_layers ? static_cast<double>(layers_.size() - 1) : t1;
  for (double k = std::floor(t0) + 1.0; k < t1 && k <= last; k += 1.0)
    if (k > t0) out.push_back(k);
  return out;
}

}  // namespace normdyn
