#include "normdyn/given.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "normdyn/errors.hpp"
#include "normdyn/text_hash.hpp"

namespace normdyn {

std::string values_digest(std::initializer_list<std::span<const double>> arrays) {
  std::uint64_t h = kFnvOffset;
  for (const auto& a : arrays) h = fnv1a(a.data(), a.size() * sizeof(double), h);
  return hash_hex(h);
}

void give_qkv(RunConfig& config, std::span<const double> q, std::span<const double> k, std::span<const double> v,
              Index layers, Index heads, Index d, const std::string& name) {
  if (config.model.kind != ModelKind::particles) throw InputError(name, "applies only to model.kind = \"particles\"");
  if (d != config.model.d)
    throw InputError(name, "matrices of size " + std::to_string(d) + " x " + std::to_string(d) + " need model.d = " +
                               std::to_string(d) + " (it is " + std::to_string(config.model.d) + ")");
  if (heads != config.model.heads)
    throw InputError(name, std::to_string(heads) + " heads need model.heads = " + std::to_string(heads) + " (it is " +
                               std::to_string(config.model.heads) + ")");
  if (layers < 1 || heads < 1 || d < 1) throw InputError(name, "needs at least one layer, one head and d >= 1");
  const auto size = static_cast<std::size_t>(layers * heads * d * d);
  const std::span<const double> arrays[3] = {q, k, v};
  const char* names[3] = {"Q", "K", "V"};
  for (int m = 0; m < 3; ++m) {
    if (arrays[m].size() != size)
      throw InputError(name, std::string(names[m]) + " has " + std::to_string(arrays[m].size()) + " values, expected " +
                                 std::to_string(size) + " (layers x heads x d x d, as Q)");
    for (double x : arrays[m])
      if (!std::isfinite(x)) throw InputError(name, std::string(names[m]) + " has non-finite entries");
  }
  auto layers_out = std::make_shared<std::vector<AttentionMatrices>>(static_cast<std::size_t>(layers));
  const auto dd = static_cast<std::size_t>(d * d);
  for (Index l = 0; l < layers; ++l) {
    AttentionMatrices& layer = (*layers_out)[static_cast<std::size_t>(l)];
    layer.other_heads.resize(static_cast<std::size_t>(heads - 1));
    for (Index h = 0; h < heads; ++h) {
      AttentionMatrices& head = h == 0 ? layer : layer.other_heads[static_cast<std::size_t>(h - 1)];
      head.identity = false;
      RowMatrix* targets[3] = {&head.Q, &head.K, &head.V};
      for (int m = 0; m < 3; ++m) {
        targets[m]->resize(d, d);
        std::copy_n(arrays[m].begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l * heads + h) * dd), dd,
                    targets[m]->data());
      }
    }
  }
  config.model.qkv = QkvKind::given;
  config.model.given_qkv = std::move(layers_out);
  config.model.qkv_digest = values_digest({q, k, v});
}

void give_tokens(RunConfig& config, std::span<const double> rows, Index n, Index d, const std::string& name) {
  if (config.model.kind != ModelKind::particles) throw InputError(name, "applies only to model.kind = \"particles\"");
  if (n != config.model.n || d != config.model.d)
    throw InputError(name, "is [" + std::to_string(n) + ", " + std::to_string(d) +
                               "]; the configuration has model.n = " + std::to_string(config.model.n) +
                               ", model.d = " + std::to_string(config.model.d));
  if (rows.size() != static_cast<std::size_t>(n * d))
    throw InputError(name, "has " + std::to_string(rows.size()) + " values, expected n x d = " + std::to_string(n * d));
  auto given = std::make_shared<InitConfig::GivenTokens>();
  given->rows = Eigen::Map<const RowMatrix>(rows.data(), n, d);
  Tokens& tokens = given->tokens;
  tokens.theta = given->rows;
  tokens.r.resize(n);
  for (Index i = 0; i < n; ++i) {
    const double norm = tokens.theta.row(i).norm();
    if (!std::isfinite(norm) || !(norm > 0.0))
      throw InputError(name, "row " + std::to_string(i) + " is zero or not finite (a token needs a direction)");
    tokens.theta.row(i) /= norm;
    tokens.r(i) = norm;
  }
  config.init.kind = InitKind::given;
  config.init.given_tokens = std::move(given);
  config.init.tokens_digest = values_digest({rows});
}

void give_score_bias(RunConfig& config, std::span<const double> values, Index rows, Index cols,
                     const std::string& name) {
  if (config.model.kind != ModelKind::particles) throw InputError(name, "applies only to model.kind = \"particles\"");
  const Index n = config.model.n;
  if (rows != n || cols != n)
    throw InputError(name, "is [" + std::to_string(rows) + ", " + std::to_string(cols) +
                               "]; model.n = " + std::to_string(n) + " tokens need [" + std::to_string(n) + ", " +
                               std::to_string(n) + "]");
  if (values.size() != static_cast<std::size_t>(n * n))
    throw InputError(name,
                     "has " + std::to_string(values.size()) + " values, expected n x n = " + std::to_string(n * n));
  for (std::size_t e = 0; e < values.size(); ++e)
    if (std::isnan(values[e]) || values[e] == std::numeric_limits<double>::infinity())
      throw InputError(name, "entry [" + std::to_string(e / static_cast<std::size_t>(n)) + ", " +
                                 std::to_string(e % static_cast<std::size_t>(n)) +
                                 "] is NaN or +inf (entries are finite, or -inf to mask a key)");
  MatrixBias bias;
  if (const auto* chosen = std::get_if<MatrixBias>(&config.attention.bias)) bias.file = chosen->file;
  bias.values = std::make_shared<const RowMatrix>(Eigen::Map<const RowMatrix>(values.data(), n, n));
  bias.digest = values_digest({values});
  config.attention.bias = std::move(bias);
}

const RowMatrix* given_score_bias(const RunConfig& config) {
  const auto* chosen = std::get_if<MatrixBias>(&config.attention.bias);
  return chosen && chosen->values ? chosen->values.get() : nullptr;
}

std::optional<std::string> score_bias_digest(const RunConfig& config) {
  if (const auto* chosen = std::get_if<MatrixBias>(&config.attention.bias)) return chosen->digest;
  return std::nullopt;
}

std::vector<double> given_qkv_values(const ModelConfig& model) {
  std::vector<double> out;
  if (!model.given_qkv) return out;
  for (int m = 0; m < 3; ++m)
    for (const AttentionMatrices& layer : *model.given_qkv)
      for (std::size_t h = 0; h <= layer.other_heads.size(); ++h) {
        const AttentionMatrices& head = h == 0 ? layer : layer.other_heads[h - 1];
        const RowMatrix& matrix = m == 0 ? head.Q : m == 1 ? head.K : head.V;
        out.insert(out.end(), matrix.data(), matrix.data() + matrix.size());
      }
  return out;
}

void give_qkv_values(RunConfig& config, std::span<const double> values, const std::string& name) {
  const Index d = config.model.d, heads = config.model.heads;
  const auto per_layer = static_cast<std::size_t>(3 * heads * d * d);
  if (per_layer == 0 || values.size() % per_layer != 0)
    throw InputError(name,
                     "holds " + std::to_string(values.size()) + " values, not three [layers, heads, d, d] arrays");
  const std::size_t third = values.size() / 3;
  give_qkv(config, values.subspan(0, third), values.subspan(third, third), values.subspan(2 * third, third),
           static_cast<Index>(values.size() / per_layer), heads, d, name);
}

}  // namespace normdyn
