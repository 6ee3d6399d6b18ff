#pragma once
// Strong Rényi centres (Karagodin, Polyanskiy and Rigollet 2024, section 5.1): the tokens farther
// than delta, in geodesic distance on the sphere, from every earlier token.
#include <algorithm>
#include <cmath>
#include <vector>

#include "normdyn/tokens.hpp"

namespace normdyn::studies {

template <class A, class B>
double geodesic_distance(const A& x, const B& y) {
  return std::acos(std::clamp(double(x.dot(y)) / (x.norm() * y.norm()), -1.0, 1.0));
}

// The indices (from 0) of the strong Rényi centres of the rows of theta, in order.
inline std::vector<Index> strong_renyi_centres(const RowMatrix& theta, double delta) {
  std::vector<Index> out;
  for (Index k = 0; k < theta.rows(); ++k) {
    bool far = true;
    for (Index i = 0; i < k && far; ++i) far = geodesic_distance(theta.row(k), theta.row(i)) > delta;
    if (far) out.push_back(k);
  }
  return out;
}

}  // namespace normdyn::studies
