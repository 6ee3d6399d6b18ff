#include "normdyn/sharded_dynamics.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <string>
#include <variant>

namespace normdyn {

RowRange row_share(Index n, int ranks, int rank, Index unit) {
  assert(ranks >= 1 && 0 <= rank && rank < ranks && unit >= 1);
  if ((n + unit - 1) / unit < ranks) unit = 1;  // every process gets rows rather than some none
  const Index units = (n + unit - 1) / unit;
  const Index base = units / ranks;
  const Index extra = units % ranks;
  const Index r = rank;
  const Index begin = r * base + std::min(r, extra);
  const Index end = begin + base + (r < extra ? 1 : 0);
  return RowRange{std::min(n, begin * unit), std::min(n, end * unit)};
}

ShardedDynamics::ShardedDynamics(AttentionDynamics& dynamics, RowExchange& exchange)
    : dynamics_(dynamics), exchange_(exchange) {
  const StateLayout& layout = dynamics_.layout();
  const int ranks = exchange_.size();
  // Shares of whole kernel blocks: no process then computes another's rows (attention.hpp).
  const Index unit = dynamics_.row_block();
  rows_ = row_share(layout.n, ranks, exchange_.rank(), unit);
  // MPI counts are int: the θ block of the whole state must fit (n·d < 2^31, i.e. 16 GiB of θ).
  if (layout.n * layout.d > std::numeric_limits<int>::max())
    throw std::length_error("sharded run: n·d exceeds the range of an MPI count");
  for (int p = 0; p < ranks; ++p) {
    const RowRange s = row_share(layout.n, ranks, p, unit);
    theta_counts_.push_back(static_cast<int>(s.size() * layout.d));
    theta_displs_.push_back(static_cast<int>(s.begin * layout.d));
    r_counts_.push_back(static_cast<int>(s.size()));
    r_displs_.push_back(static_cast<int>(s.begin));
  }
  for (const Term& term : dynamics_.spec().terms.terms)
    user_terms_ = user_terms_ || std::holds_alternative<UserTerm>(term);
}

void ShardedDynamics::gather(double* rows) {
  const StateLayout& layout = dynamics_.layout();
  exchange_.allgather(rows, theta_counts_, theta_displs_);
  exchange_.allgather(rows + layout.n * layout.d, r_counts_, r_displs_);
}

template <class Evaluate>
void ShardedDynamics::own_rows(Evaluate evaluate) {
  if (!user_terms_) {
    evaluate();
    return;
  }
  std::string failure;
  try {
    evaluate();
  } catch (const TermFailure& e) {
    failure = e.what();
    if (failure.empty()) failure = "a term of the user's failed";
  }
  if (const std::string first = exchange_.first_failure(failure); !first.empty()) throw TermFailure(first);
}

void ShardedDynamics::rhs(const double* x, double* dxdt, double t) {
  own_rows([&] { dynamics_.rhs_rows(x, dxdt, t, rows_.begin, rows_.end); });
  gather(dxdt);
}

void ShardedDynamics::increment(const double* x, double t, double h, const NoiseStep& step, double* dx) {
  own_rows([&] { dynamics_.increment_rows(x, t, h, step, dx, rows_.begin, rows_.end); });
  gather(dx);
}

}  // namespace normdyn
