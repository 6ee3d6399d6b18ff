#pragma once
// What the paper proves of a scheme (Karagodin, Ge, Polyanskiy, Rigollet, "Normalization in
// Attention Dynamics", arXiv:2510.22026), stated for a scheme with given parameters: from its
// header's theory() (the law of 1 − γ at the symmetric start and its parameter, Theorem 4.3's radial
// growth, the Corollary of Theorem 3.1) and its speed factor. normdyn.schemes() lists these; the
// analysis' theorem checks test them on runs.
#include <string>
#include <vector>

#include "normdyn/schemes.hpp"

namespace normdyn {

struct TheoryStatement {
  std::string theorem;    // "Theorem 4.1", ...
  std::string statement;  // what it says of this scheme, in words and formulas
  // Laws of 1 − γ(t) (Theorem 4.1): "exponential" (C e^{−λ t}), "power" (C t^{−p}),
  // "stretched_exponential" (C e^{−κ sqrt t}); empty for a statement that is no such law.
  std::string law;
  std::string parameter_name;  // "lambda", "p" or "kappa"
  double parameter = 0.0;      // its value at the scheme's parameters
  std::vector<std::string> hypotheses;
};

// Every statement of the paper about `scheme` with its parameters; empty for a scheme that
// declares no theory (beyond Theorems 3.1 and 4.3, which hold for every scheme in the list).
std::vector<TheoryStatement> theory_statements(const Scheme& scheme);

}  // namespace normdyn
