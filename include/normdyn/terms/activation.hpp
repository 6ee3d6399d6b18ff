#pragma once
// The activations of the feed-forward term (terms/feedforward.hpp): a list of alternatives, each
// one header in include/normdyn/terms/activations/ with `value(u)` = σ(u) and `antiderivative(u)` =
// S(u), S' = σ, S(0) = 0 (the potential of the term).
#include <variant>

#include "normdyn/terms/activations/gelu.hpp"
#include "normdyn/terms/activations/relu.hpp"
#include "normdyn/terms/activations/tanh.hpp"

namespace normdyn {

using Activation = std::variant<Relu, Tanh, Gelu>;

}  // namespace normdyn
