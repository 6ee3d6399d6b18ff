#pragma once
// The block output as a list of terms (docs/ARCHITECTURE.md, "Lists of alternatives"): U_i = A_i plus
// the contribution of every term, and the scheme applies to U_i as it does to A_i. A term is one
// header in include/normdyn/terms/ and one entry in the list below, with
//
//   void add(theta rows, out rows) const      out.row(i) += its contribution at θ_i
//   double potential(theta rows) const        Σ_i Φ(θ_i) for a term F = ∇Φ
//
// and the traits it breaks. A term that needs more than θ row by row (the user's terms,
// terms/user.hpp) has instead
//
//   void add(t, theta, r, out) const          out += its contribution at (t, θ, r)
//   bool rows                                 whether row i depends on token i only
//
// and is called on every token at once unless it declares `rows`.
#include <variant>
#include <vector>

#include "normdyn/terms/feedforward.hpp"
#include "normdyn/terms/user.hpp"

namespace normdyn {

using Term = std::variant<FeedForward, UserTerm>;

// Whether a term may be called on a block of tokens (row i of its output depends on token i only).
template <class T>
bool term_is_row_local(const T& term) {
  if constexpr (requires { term.rows; })
    return term.rows;
  else
    return true;
}

// How the discrete layer maps combine attention and terms (feedforward.block): one map of step h
// with U = A + F (parallel: x + a(x) + g(x)), or two maps, attention then the terms at the state
// the attention left (serial: x + a(x) + g(x + a(x)), each sublayer with the scheme's normalization).
enum class TermsBlock { parallel, serial };

struct BlockTerms {
  std::vector<Term> terms;
  TermsBlock block = TermsBlock::parallel;

  bool empty() const { return terms.empty(); }
  // out += the contributions of the row-local terms (`row_local`) or of the others, at (t, θ, r):
  // the rows of the whole system from token `first_token` for the first, every token for the others.
  void add(double t, Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, Eigen::Ref<RowMatrix> out,
           Index first_token = 0, bool row_local = true) const {
    for (const Term& term : terms)
      std::visit(
          [&](const auto& a) {
            if (term_is_row_local(a) != row_local) return;
            if constexpr (requires { a.add(t, theta, r, out, first_token); })
              a.add(t, theta, r, out, first_token);
            else
              a.add(theta, out);
          },
          term);
  }
  // Whether some term must see every token at once.
  bool has_whole_terms() const {
    for (const Term& term : terms)
      if (std::visit([](const auto& a) { return !term_is_row_local(a); }, term)) return true;
    return false;
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
