#include "normdyn/attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>

namespace normdyn {

AttentionKernel::AttentionKernel(KernelOptions options)
    : options_(options), threads_(options.threads > 0 ? options.threads : omp_get_max_threads()) {
  // The kernel parallelizes over row blocks itself; nested Eigen threading would only contend.
  Eigen::setNbThreads(1);
  scores_.resize(static_cast<std::size_t>(threads_));
}

Index AttentionKernel::block_rows(Index n) const {
  if (options_.block_rows > 0) return options_.block_rows;
  // About 4 MiB of scores per block keeps a block in L2/L3 and memory flat for large n.
  constexpr Index kScoreBudget = Index{1} << 19;
  return std::clamp<Index>(kScoreBudget / std::max<Index>(n, 1), 8, 256);
}

void AttentionKernel::compute(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv,
                              double beta, const Vector& masses, Eigen::Ref<RowMatrix> attention) {
  const Index n = theta.rows();
  const Index d = theta.cols();
  assert(attention.rows() == n && attention.cols() == d);
  assert(masses.size() == 0 || masses.size() == n);

  const double* query_data = theta.data();
  const double* key_data = theta.data();
  const double* value_data = theta.data();
  if (!qkv.identity) {
    queries_.noalias() = theta * qkv.Q.transpose();
    keys_.noalias() = theta * qkv.K.transpose();
    values_.noalias() = theta * qkv.V.transpose();
    query_data = queries_.data();
    key_data = keys_.data();
    value_data = values_.data();
  }
  const Eigen::Map<const RowMatrix> queries(query_data, n, d);
  const Eigen::Map<const RowMatrix> keys(key_data, n, d);
  const Eigen::Map<const RowMatrix> values(value_data, n, d);

  const Index block = block_rows(n);
  const Index blocks = (n + block - 1) / block;
  const bool weighted = masses.size() == n;

  // A parallel region costs a wake-up and a barrier, which on a loaded machine can be a whole
  // scheduler time slice: use only as many threads as there are blocks.
  const int team = static_cast<int>(std::min<Index>(threads_, blocks));
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (Index b = 0; b < blocks; ++b) {
    const Index begin = b * block;
    const Index rows = std::min(block, n - begin);
    Vector& buffer = scores_[static_cast<std::size_t>(omp_get_thread_num())];
    if (buffer.size() < block * n) buffer.resize(block * n);
    Eigen::Map<RowMatrix> scores(buffer.data(), rows, n);
    scores.noalias() = beta * (queries.middleRows(begin, rows) * keys.transpose());
    for (Index i = 0; i < rows; ++i) {
      auto row = scores.row(i);
      const double row_max = row.maxCoeff();
      double sum = 0.0;
      for (Index k = 0; k < n; ++k) {
        double w = std::exp(row(k) - row_max);
        if (weighted) w *= masses(k);
        row(k) = w;
        sum += w;
      }
      row /= sum;
    }
    attention.middleRows(begin, rows).noalias() = scores * values;
  }
}

}  // namespace normdyn

// ---------------------------------------------------------------------------------------------
// [sweep] Rows [begin, end) only: the share of one process in a sharded run.
namespace normdyn {

void AttentionKernel::compute_rows(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                                   const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention) {
  const Index n = theta.rows();
  const Index d = theta.cols();
  const Index count = end - begin;
  assert(0 <= begin && begin <= end && end <= n);
  assert(attention.rows() == count && attention.cols() == d);
  assert(masses.size() == 0 || masses.size() == n);
  if (count == 0) return;

  // Workspaces live in the threads that use them (thread_local), so that this method adds no state to
  // the kernel and allocates nothing once warm.
  thread_local RowMatrix projected_queries, projected_keys, projected_values;
  const double* query_data = theta.data() + begin * d;
  const double* key_data = theta.data();
  const double* value_data = theta.data();
  if (!qkv.identity) {
    projected_queries.noalias() = theta.middleRows(begin, count) * qkv.Q.transpose();
    projected_keys.noalias() = theta * qkv.K.transpose();
    projected_values.noalias() = theta * qkv.V.transpose();
    query_data = projected_queries.data();
    key_data = projected_keys.data();
    value_data = projected_values.data();
  }
  const Eigen::Map<const RowMatrix> queries(query_data, count, d);
  const Eigen::Map<const RowMatrix> keys(key_data, n, d);
  const Eigen::Map<const RowMatrix> values(value_data, n, d);

  // About 4 MiB of scores per block, as compute() chooses for n keys.
  const Index block = std::clamp<Index>((Index{1} << 19) / std::max<Index>(n, 1), 8, 256);
  const Index blocks = (count + block - 1) / block;
  const bool weighted = masses.size() == n;

  const int team = static_cast<int>(std::min<Index>(threads_, blocks));
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (Index b = 0; b < blocks; ++b) {
    const Index first = b * block;
    const Index rows = std::min(block, count - first);
    thread_local Vector buffer;
    if (buffer.size() < block * n) buffer.resize(block * n);
    Eigen::Map<RowMatrix> scores(buffer.data(), rows, n);
    scores.noalias() = beta * (queries.middleRows(first, rows) * keys.transpose());
    for (Index i = 0; i < rows; ++i) {
      auto row = scores.row(i);
      const double row_max = row.maxCoeff();
      double sum = 0.0;
      for (Index k = 0; k < n; ++k) {
        double w = std::exp(row(k) - row_max);
        if (weighted) w *= masses(k);
        row(k) = w;
        sum += w;
      }
      row /= sum;
    }
    attention.middleRows(first, rows).noalias() = scores * values;
  }
}

}  // namespace normdyn
