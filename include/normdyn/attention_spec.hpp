#pragma once
// The attention of a model as a composition of alternatives, one from each list (docs/ARCHITECTURE.md,
// "Lists of alternatives"):
//
//   A_i = factor_i * sum_{j in keys(i)} m_j e^{s_ij - max_i} V x_j,   s_ij = beta <Q x_i, K x_j> + b_ij
//
// with keys(i) from the mask, b_ij from the score bias, Q x_i and K x_j rotated by the positional
// encoding, and factor_i from the normalizer (a row-local one; the Sinkhorn normalizer scales the whole
// matrix of weights instead). The default (no mask, no bias, no positions, softmax) is the model of
// the paper. To add an alternative: a header in
// include/normdyn/attention/<list>/ and one entry in its list below.
#include <string>
#include <variant>

#include "normdyn/attention/biases/alibi.hpp"
#include "normdyn/attention/biases/none.hpp"
#include "normdyn/attention/masks/causal.hpp"
#include "normdyn/attention/masks/none.hpp"
#include "normdyn/attention/masks/strictly_causal.hpp"
#include "normdyn/attention/normalizers/sinkhorn.hpp"
#include "normdyn/attention/normalizers/softmax.hpp"
#include "normdyn/attention/normalizers/uniform.hpp"
#include "normdyn/attention/positions/none.hpp"
#include "normdyn/attention/positions/rope.hpp"

// A build can append masks without editing this file (the recipe test of docs/ARCHITECTURE.md does):
// NORMDYN_EXTRA_ATTENTION_HEADER names a header defining them, NORMDYN_EXTRA_MASKS lists them with a
// leading comma.
#ifdef NORMDYN_EXTRA_ATTENTION_HEADER
#include NORMDYN_EXTRA_ATTENTION_HEADER
#endif
#ifndef NORMDYN_EXTRA_MASKS
#define NORMDYN_EXTRA_MASKS
#endif

namespace normdyn {

using AttentionMask = std::variant<NoMask, CausalMask, StrictlyCausalMask NORMDYN_EXTRA_MASKS>;
using ScoreBias = std::variant<NoBias, Alibi>;
using AttentionPositions = std::variant<NoPositions, Rope>;
using AttentionNormalizer = std::variant<Softmax, Uniform, Sinkhorn>;

struct AttentionSpec {
  AttentionMask mask = NoMask{};
  ScoreBias bias = NoBias{};
  AttentionPositions positions = NoPositions{};
  AttentionNormalizer normalizer = Softmax{};

  // The model of the paper: every key, no bias, no positions, the softmax.
  bool is_default() const {
    return std::holds_alternative<NoMask>(mask) && std::holds_alternative<NoBias>(bias) &&
           std::holds_alternative<NoPositions>(positions) && std::holds_alternative<Softmax>(normalizer);
  }
  // What the composition preserves: what all its parts preserve.
  Traits traits() const {
    return alternative_traits(mask) & alternative_traits(bias) & alternative_traits(positions) &
           alternative_traits(normalizer);
  }
  // The configuration setting that breaks `trait`, e.g. `attention.mask = "causal"`; empty if none does.
  std::string breaking_setting(bool Traits::*trait) const;
};

// The configuration settings of the specification that differ from the default, e.g.
// `attention.mask = "causal", attention.alibi = 2`; empty for the default.
std::string describe(const AttentionSpec& spec);

}  // namespace normdyn
