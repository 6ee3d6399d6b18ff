#pragma once
// The block output as a list of terms (docs/ARCHITECTURE.md, "Lists of alternatives"): U_i = A_i plus
// the contribution of every term, and the scheme applies to U_i as it does to A_i. A term is one
// header in include/normdyn/terms/ and one entry in the list below, with
//
//   void add(theta rows, out rows) const      out.row(i) += its contribution at θ_i
//   double potential(theta rows) const        Σ_i Φ(θ_i) for a term F = ∇Φ
//
// and the traits it breaks.
#include <variant>
#include <vector>

#include "normdyn/terms/feedforward.hpp"

namespace normdyn {

using Term = std::variant<FeedForward>;

// How the discrete layer maps combine attention and terms (feedforward.block): one map of step h
// with U = A + F (parallel: x + a(x) + g(x)), or two maps, attention then the terms at the state
// the attention left (serial: x + a(x) + g(x + a(x)), each sublayer with the scheme's normalization).
enum class TermsBlock { parallel, serial };

struct BlockTerms {
  std::vector<Term> terms;
  TermsBlock block = TermsBlock::parallel;

  bool empty() const { return terms.empty(); }
  void add(Eigen::Ref<const RowMatrix> theta, Eigen::Ref<RowMatrix> out) const {
    for (const Term& t : terms) std::visit([&](const auto& term) { term.add(theta, out); }, t);
  }
  double potential(Eigen::Ref<const RowMatrix> theta) const {
    double sum = 0.0;
    for (const Term& t : terms) std::visit([&](const auto& term) { sum += term.potential(theta); }, t);
    return sum;
  }
  Traits traits() const {
    Traits all;
    for (const Term& t : terms) all = all & alternative_traits(t);
    return all;
  }
};

}  // namespace normdyn
