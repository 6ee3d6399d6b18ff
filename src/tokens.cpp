#include "normdyn/tokens.hpp"

#include <algorithm>
#include <cmath>

namespace normdyn {

double normalize_rows(Eigen::Ref<RowMatrix> theta) {
  double drift = 0.0;
  for (Index j = 0; j < theta.rows(); ++j) {
    const double norm = theta.row(j).norm();
    drift = std::max(drift, std::abs(norm - 1.0));
    theta.row(j) /= norm;
  }
  return drift;
}

}  // namespace normdyn
