#pragma once
// The attention of a model as a composition of alternatives, one from each list (docs/ARCHITECTURE.md,
// "Lists of alternatives"):
//
//   A_i = factor_i * sum_{j in keys(i)} m_j u_ij V x_j,   s_ij = beta <Q x_i, K x_j> + b_ij
//
// with keys(i) from the mask, b_ij from the score bias, Q x_i and K x_j rotated by the positional
// encoding, and the numerators u_ij (e^{s_ij - max_i} for the softmax) and factor_i from a row-local
// normalizer, which sees the whole row of scores; a normalizer of the whole matrix (Sinkhorn) scales
// the n x n matrix of e^{s_ij} instead. The default (the first alternative of every list: no mask, no
// bias, no positions, softmax) is the model of the paper. To add an alternative: a header in
// include/normdyn/attention/<list>/ and one entry in its list below; nothing else names it.
#include <concepts>
#include <string>
#include <variant>

#include "normdyn/attention/biases/alibi.hpp"
#include "normdyn/attention/biases/matrix.hpp"
#include "normdyn/attention/biases/none.hpp"
#include "normdyn/attention/masks/causal.hpp"
#include "normdyn/attention/masks/none.hpp"
#include "normdyn/attention/masks/strictly_causal.hpp"
#include "normdyn/attention/normalizers/sinkhorn.hpp"
#include "normdyn/attention/normalizers/softmax.hpp"
#include "normdyn/attention/normalizers/uniform.hpp"
#include "normdyn/attention/positions/none.hpp"
#include "normdyn/attention/positions/rope.hpp"

// A build can append alternatives without editing this file (the recipe tests of docs/ARCHITECTURE.md
// do): NORMDYN_EXTRA_ATTENTION_HEADER and NORMDYN_EXTRA_NORMALIZER_HEADER name headers defining them,
// NORMDYN_EXTRA_MASKS, NORMDYN_EXTRA_BIASES, NORMDYN_EXTRA_POSITIONS and NORMDYN_EXTRA_NORMALIZERS list
// them, each with a leading comma.
#ifdef NORMDYN_EXTRA_ATTENTION_HEADER
#include NORMDYN_EXTRA_ATTENTION_HEADER
#endif
#ifdef NORMDYN_EXTRA_NORMALIZER_HEADER
#include NORMDYN_EXTRA_NORMALIZER_HEADER
#endif
#ifndef NORMDYN_EXTRA_MASKS
#define NORMDYN_EXTRA_MASKS
#endif
#ifndef NORMDYN_EXTRA_BIASES
#define NORMDYN_EXTRA_BIASES
#endif
#ifndef NORMDYN_EXTRA_POSITIONS
#define NORMDYN_EXTRA_POSITIONS
#endif
#ifndef NORMDYN_EXTRA_NORMALIZERS
#define NORMDYN_EXTRA_NORMALIZERS
#endif

namespace normdyn {

using AttentionMask = std::variant<NoMask, CausalMask, StrictlyCausalMask NORMDYN_EXTRA_MASKS>;
using ScoreBias = std::variant<NoBias, Alibi, MatrixBias NORMDYN_EXTRA_BIASES>;
using AttentionPositions = std::variant<NoPositions, Rope NORMDYN_EXTRA_POSITIONS>;
using AttentionNormalizer = std::variant<Softmax, Uniform, Sinkhorn NORMDYN_EXTRA_NORMALIZERS>;

// The contracts of the lists: what the kernel may ask of an alternative. A normalizer is one of two
// kinds, and the kernel dispatches on the kind, never on the type.
template <class M>
concept MaskContract = requires(const M& m) {
  { m.keys(Index{}, Index{}) } -> std::same_as<KeyRange>;
};
template <class B>
concept BiasContract = requires(const B& b) {
  { b.bias(Index{}, Index{}, Index{}) } -> std::convertible_to<double>;
};
template <class P>
concept PositionsContract = requires(const P& p, RowMatrix& rows) {
  p.rotate(rows, Index{});
};
// Optional capabilities, which the kernel uses for speed where an alternative has them (the contracts
// above stay the definition, and the conformance tests compare the kernel with them): a bias of the
// distance |i - j| and n alone (tabulated once per n), and positions that rotate the coordinate planes
// (2k, 2k + 1) by an angle of the position, the plane and d alone (cos and sin tabulated once per n, d).
template <class B>
concept DistanceBias = requires(const B& b) {
  { b.distance_bias(Index{}, Index{}) } -> std::convertible_to<double>;
};
template <class P>
concept PlaneRotation = requires(const P& p) {
  { p.plane_angle(Index{}, Index{}, Index{}) } -> std::convertible_to<double>;
};
// Row-local: from the scores of one row's allowed keys (the whole row, so a top-k or a sparsemax fits)
// and their maximum, the numerators u_ij >= 0 in place; A_i = factor * sum_j m_j u_ij V x_j, with the
// factor from the maximum, the weight sum sum_j m_j u_ij and, if needs_reference_sum, the reference
// sum Z_i = sum_{j in keys(i)} m_j e^{b_ij}.
template <class Z>
concept RowNormalizer = requires(const Z& z, Eigen::Ref<Eigen::RowVectorXd> row) {
  z.numerators(row, 0.0);
  { z.factor(0.0, 0.0, 0.0) } -> std::convertible_to<double>;
  { Z::needs_reference_sum } -> std::convertible_to<bool>;
};
// Of the whole matrix (Sinkhorn): scales the n x n matrix of e^{s_ij - max_i} in place; returns a
// negative number when it fails (the attention is then NaN, a numerical failure of the run).
template <class Z>
concept MatrixNormalizer = requires(const Z& z, RowMatrix& kernel) {
  { z.scale(kernel) } -> std::convertible_to<int>;
};

namespace detail {
template <class List, template <class> class Check>
constexpr bool every_alternative() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    return (Check<std::variant_alternative_t<I, List>>::value && ...);
  }
  (std::make_index_sequence<std::variant_size_v<List>>{});
}
template <class A>
struct IsMask : std::bool_constant<MaskContract<A>> {};
template <class A>
struct IsBias : std::bool_constant<BiasContract<A>> {};
template <class A>
struct IsPositions : std::bool_constant<PositionsContract<A>> {};
template <class A>
struct IsNormalizer : std::bool_constant<RowNormalizer<A> != MatrixNormalizer<A>> {};
}  // namespace detail
static_assert(detail::every_alternative<AttentionMask, detail::IsMask>(), "a mask needs KeyRange keys(i, n)");
static_assert(detail::every_alternative<ScoreBias, detail::IsBias>(), "a score bias needs double bias(i, j, n)");
static_assert(detail::every_alternative<AttentionPositions, detail::IsPositions>(),
              "a positional encoding needs rotate(rows, first)");
static_assert(detail::every_alternative<AttentionNormalizer, detail::IsNormalizer>(),
              "a normalizer is either row-local (numerators, factor, needs_reference_sum) or of the whole matrix "
              "(scale), not both and not neither");

struct AttentionSpec {
  AttentionMask mask = NoMask{};
  ScoreBias bias = NoBias{};
  AttentionPositions positions = NoPositions{};
  AttentionNormalizer normalizer = Softmax{};

  // The model of the paper: the first alternative of every list (every key, no bias, no positions,
  // the softmax).
  bool is_default() const {
    return is_first_alternative(mask) && is_first_alternative(bias) && is_first_alternative(positions) &&
           is_first_alternative(normalizer);
  }
  // Whether the normalizer scales the whole matrix (it then needs every row at once).
  bool matrix_normalizer() const {
    return std::visit([](const auto& z) { return MatrixNormalizer<std::decay_t<decltype(z)>>; }, normalizer);
  }
  // What the composition preserves: what all its parts preserve.
  Traits traits() const {
    return alternative_traits(mask) & alternative_traits(bias) & alternative_traits(positions) &
           alternative_traits(normalizer);
  }
  // The configuration setting that breaks `trait`, e.g. `attention.mask = "causal"`; empty if none does.
  std::string breaking_setting(bool Traits::*trait) const;
};

// One list of the attention: its configuration key attention.<name> and what the choice decides.
struct AttentionListInfo {
  std::string_view name;
  std::string_view doc;
};

// Calls f(info, member) for the lists of the attention in order, member the AttentionSpec member that
// holds the choice. The configuration's [attention] rows, describe() and `normdyn list attention`
// come from this table and the lists.
template <class F>
void for_each_attention_list(F&& f) {
  f(AttentionListInfo{"mask", "keys each token attends to, by position (its index in the initial tokens)"},
    &AttentionSpec::mask);
  f(AttentionListInfo{"bias", "score bias b_ij added to the scores beta <Q x_i, K x_j>, i and j the tokens' positions"},
    &AttentionSpec::bias);
  f(AttentionListInfo{"positions", "positional encoding of the queries and keys"}, &AttentionSpec::positions);
  f(AttentionListInfo{"normalizer", "how a row's weights are normalized"}, &AttentionSpec::normalizer);
}

// The configuration settings of the specification that differ from the default, each chosen
// alternative with all its parameters, e.g. `attention.mask = "causal", attention.bias = "alibi",
// attention.alibi_slope = 2`; empty for the default.
std::string describe(const AttentionSpec& spec);

}  // namespace normdyn
