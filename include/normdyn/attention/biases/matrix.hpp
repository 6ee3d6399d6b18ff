#pragma once
// A score bias given as a matrix: b_ij = B_ij for a fixed B [n, n] of the user's (T5-style buckets, a
// sliding window, block-sparse masks, any positional scheme a paper proposes). An entry -inf masks the
// key: w_ij = 0, as outside the mask's range (both apply); a row whose every allowed entry is -inf has
// A_i = 0. B comes from attention.bias_file (HDF5 dataset `bias` [n, n]) or from Python
// (normdyn.run(..., score_bias=B)); the run file keeps a copy (/parameters/score_bias) that
// attention.bias_digest names, so a run repeats from its file.
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "normdyn/attention/key_range.hpp"

namespace normdyn {

struct MatrixBias {
  static constexpr std::string_view key = "matrix";
  static constexpr std::string_view title = "score bias matrix";
  static constexpr std::string_view formula = "b_ij = B_ij (B [n, n] given; -inf masks the key)";
  std::string file;
  std::string digest;
  static constexpr std::array<ParamSpec<MatrixBias>, 2> params{
      {{"bias_file", &MatrixBias::file,
        "HDF5 file with the dataset bias [n, n] (read when the run starts; empty: the matrix is given from Python, "
        "score_bias=B); the run file keeps a copy in /parameters/score_bias"},
       {"bias_digest", &MatrixBias::digest,
        "digest of the matrix (FNV-1a of its values, set by normdyn when it reads or is given the matrix; the run "
        "file holds the matrix and is checked against it)"}}};
  // B, once read or given (shared by the copies of the configuration).
  std::shared_ptr<const RowMatrix> values;

  double bias(Index i, Index j, Index) const { return (*values)(i, j); }

  // An instance for the conformance suites (the default has no matrix): B_ij = cos(i + 2j) with every
  // seventh entry off the diagonal masked.
  static MatrixBias example(Index n) {
    auto b = std::make_shared<RowMatrix>(n, n);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j)
        (*b)(i, j) = i != j && (i + 3 * j) % 7 == 0 ? -std::numeric_limits<double>::infinity()
                                                    : std::cos(static_cast<double>(i + 2 * j));
    MatrixBias m;
    m.values = std::move(b);
    return m;
  }
  // A matrix of the user's ties the scores to the tokens' positions and need not be symmetric; the
  // energy observable does not include it. Each row needs only its own row of B: shardable.
  Traits traits() const {
    Traits t;
    t.exchangeable = t.symmetric = t.has_energy = t.meanfield = false;
    return t;
  }
};

}  // namespace normdyn
