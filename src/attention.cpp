#include "normdyn/attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <variant>

#include "normdyn/thread_team.hpp"

#ifdef NORMDYN_OPENBLAS
// OpenBLAS's own entry point (not part of the BLAS interface): its pthread pool would otherwise
// run under our OpenMP threads and oversubscribe the cores.
extern "C" void openblas_set_num_threads(int num_threads);
#endif

namespace normdyn {
namespace {

// Below this much work (n² (d + cost of one exponential), in flops) a call runs on one thread: waking
// the team costs more than it saves. The result is the same either way.
constexpr Index kSerialWork = Index{1} << 18;
// The general path keeps about this many scores (4 MiB) per block.
constexpr Index kScoreBudget = Index{1} << 19;
constexpr Index kMinBlock = 8, kMaxGeneralBlock = 256;
// A mask's blocks may score at most this fraction more entries than the mask allows (each block
// scores its rows against the union of their key ranges): the block size follows the mask's shape.
constexpr double kMaskedExcess = 1.0 / 16.0;
// ... but no block smaller than this: below it a block's two GEMMs are too thin to run at speed.
constexpr Index kMinMaskedBlock = 16;

// The keys a block of rows [first, first + rows) scores: the union of its rows' ranges under the
// mask ({0, 0} when no row has a key). Both the block-size choice and the blocks themselves use it,
// so that the work the choice counts is the work the blocks do.
KeyRange block_key_union(const AttentionMask& mask, Index first, Index rows, Index n) {
  Index lo = n, hi = 0;
  for (Index i = first; i < first + rows; ++i) {
    const KeyRange k = std::visit([&](const auto& m) { return m.keys(i, n); }, mask);
    if (k.first < k.last) {
      lo = std::min(lo, k.first);
      hi = std::max(hi, k.last);
    }
  }
  return lo < hi ? KeyRange{lo, hi} : KeyRange{0, 0};
}
// The symmetric path's tiles: at most this side (a 512 KiB tile stays in L2 with its operands); up
// to kSingleTile tokens one tile covers everything, which is cheaper than any schedule.
constexpr Index kMaxTile = 256;
constexpr Index kSingleTile = 128;
// Relative weight of the least weighted token that the symmetric path accepts: its normalizers
// stay within e^-30 of 1, far from underflow.
constexpr double kMaxHalfNormSpread = 30.0;
// Up to this dimension the symmetric path forms its tiles row by row instead of by GEMM (measured
// with bench/run.sh: README, Performance).
constexpr Index kFusedMaxDim = 4;

}  // namespace

const char* gemm_backend() {
#ifdef NORMDYN_OPENBLAS
  return "openblas";
#else
  return "eigen";
#endif
}

AttentionKernel::AttentionKernel(KernelOptions options, AttentionSpec spec)
    : options_(options),
      spec_(std::move(spec)),
      threads_(options.threads > 0 ? options.threads : omp_get_max_threads()) {
  // The kernel parallelizes over blocks itself; nested GEMM threading would only contend.
  Eigen::setNbThreads(1);
#ifdef NORMDYN_OPENBLAS
  openblas_set_num_threads(1);
#endif
  scratch_.resize(static_cast<std::size_t>(threads_));
  row_scratch_.resize(static_cast<std::size_t>(threads_));
  block_sums_.resize(static_cast<std::size_t>(threads_));
}

Index AttentionKernel::block_rows(Index n, KernelPath path) const {
  if (options_.block_rows > 0) return options_.block_rows;
  if (path == KernelPath::general) {
    const Index unmasked = std::clamp<Index>(kScoreBudget / std::max<Index>(n, 1), kMinBlock, kMaxGeneralBlock);
    if (is_first_alternative(spec_.mask) || spec_.matrix_normalizer()) return unmasked;
    return masked_block_rows(n, unmasked);
  }
  if (n <= kSingleTile) return std::max<Index>(n, 1);
  // A multiple of 4 blocks: every round of the schedule then has an even number of tiles, which
  // keeps two threads equally busy. Depends on n only, so that the result never depends on threads.
  const Index blocks = 4 * ((n + 4 * kMaxTile - 1) / (4 * kMaxTile));
  return (n + blocks - 1) / blocks;
}

// Entries a mask's blocks of `block` rows score (each block's rows against the union of their key
// ranges), and (block = 1) the entries the mask allows.
Index AttentionKernel::masked_scored(Index n, Index block) const {
  Index scored = 0;
  for (Index first = 0; first < n; first += block) {
    const Index rows = std::min(block, n - first);
    const KeyRange u = block_key_union(spec_.mask, first, rows, n);
    scored += rows * (u.last - u.first);
  }
  return scored;
}

// The largest block, halving from the unmasked path's, whose blocks score at most kMaskedExcess more
// entries than the mask allows: a causal mask at n = 1024 gets blocks of 64 rows (16 blocks whose work
// grows with their index, instead of 4), a sliding window of w keys blocks of about 16 w rows, so that
// its cost is O(n w d) rather than O(n block d). Depends on n and the mask alone, never on the threads
// or the rows asked for: every process of a sharded run cuts the same blocks. Kept per n.
Index AttentionKernel::masked_block_rows(Index n, Index unmasked) const {
  if (n == masked_block_n_) return masked_block_;
  const double allowed = static_cast<double>(masked_scored(n, 1));
  Index block = unmasked;
  while (block / 2 >= kMinMaskedBlock && static_cast<double>(masked_scored(n, block)) > (1.0 + kMaskedExcess) * allowed)
    block /= 2;
  masked_block_n_ = n;
  masked_block_ = block;
  return block;
}

int AttentionKernel::threads_for(Index rows, Index n, Index d, Index parallel_tasks) const {
  if (rows * n * (d + 16) < kSerialWork) return 1;
  return static_cast<int>(std::clamp<Index>(parallel_tasks, 1, threads_));
}

void AttentionKernel::compute(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                              const Vector& masses, Eigen::Ref<RowMatrix> attention) {
  compute_rows(theta, qkv, beta, masses, 0, theta.rows(), attention);
}

void AttentionKernel::compute_rows(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                                   const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention) {
  assert(0 <= begin && begin <= end && end <= theta.rows());
  assert(attention.rows() == end - begin && attention.cols() == theta.cols());
  assert(masses.size() == 0 || masses.size() == theta.rows());
  if (begin == end) return;
  compute_head(theta, qkv, beta, masses, begin, end, attention);
  add_other_heads(qkv, attention, [&](const AttentionMatrices& h, Eigen::Ref<RowMatrix> out) {
    compute_head(theta, h, beta, masses, begin, end, out);
  });
}

// Heads of Q = K = V = I are the first head H times; other heads are computed one by one and added.
template <class Head>
void AttentionKernel::add_other_heads(const AttentionMatrices& qkv, Eigen::Ref<RowMatrix> attention, Head&& head) {
  if (qkv.other_heads.empty()) return;
  if (qkv.all_identity()) {
    attention *= static_cast<double>(qkv.heads());
    return;
  }
  head_.resize(attention.rows(), attention.cols());
  for (const AttentionMatrices& h : qkv.other_heads) {
    head(h, head_);
    attention += head_;
  }
}

KernelPath AttentionKernel::path_for(const AttentionMatrices& qkv) const {
  return qkv.identity && options_.symmetric && spec_.is_default() ? KernelPath::symmetric : KernelPath::general;
}

void AttentionKernel::compute_head(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                                   const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention) {
  if (path_for(qkv) == KernelPath::symmetric) {
    half_norms_.noalias() = (0.5 * beta) * theta.rowwise().squaredNorm();
    if (half_norms_.maxCoeff() - half_norms_.minCoeff() <= kMaxHalfNormSpread) {
      last_path_ = KernelPath::symmetric;
      last_scored_ = 0;
      compute_symmetric(theta, beta, masses, begin, end, attention);
      return;
    }
  }
  last_path_ = KernelPath::general;
  last_scored_ = 0;
  compute_general(theta, qkv, beta, masses, begin, end, attention);
}

// Rows [begin, end) of A, each against all n keys; `attention` holds those rows. The blocks are those
// of the whole matrix (block b holds rows [b·block, (b + 1)·block)), computed whole and kept where they
// meet [begin, end): a row's bits never depend on the range it was asked with.
void AttentionKernel::compute_general(Eigen::Ref<const RowMatrix> theta, const AttentionMatrices& qkv, double beta,
                                      const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention) {
  const Index n = theta.rows();
  const Index d = theta.cols();
  const bool weighted = masses.size() == n;

  // Values carry the masses, and a last column holding the masses alone: one GEMM then yields
  // each row's weighted sum and its normalizer. Queries of every row, whatever the range: one
  // product of the same shape in every process of a sharded run.
  values_.resize(n, d + 1);
  if (qkv.identity) {
    values_.leftCols(d) = theta;
  } else {
    queries_.noalias() = theta * qkv.Q.transpose();
    keys_.noalias() = theta * qkv.K.transpose();
    values_.leftCols(d).noalias() = theta * qkv.V.transpose();
  }
  // A positional encoding rotates queries and keys by position, so they are formed even for Q = K = I.
  const bool positions = !is_first_alternative(spec_.positions);
  if (positions) {
    if (qkv.identity) {
      queries_ = theta;
      keys_ = theta;
    }
    rotate_by_position(queries_);
    rotate_by_position(keys_);
  }
  const bool scores_from_theta = qkv.identity && !positions;
  if (spec_.matrix_normalizer()) {
    assert(begin == 0 && end == n);  // the configuration refuses to shard it
    matrix_attention(theta, scores_from_theta, beta, attention);
    return;
  }
  if (weighted) {
    values_.leftCols(d).array().colwise() *= masses.array();
    values_.col(d) = masses;
  } else {
    values_.col(d).setOnes();
  }
  if (!spec_.is_default()) {
    composed_blocks(theta, scores_from_theta, beta, masses, begin, end, attention);
    return;
  }

  const Index block = block_rows(n, KernelPath::general);
  const Index first_block = begin / block;
  const Index blocks = (end + block - 1) / block - first_block;
  const int threads = threads_for(end - begin, n, d, blocks);
  last_scored_ = (std::min(n, (first_block + blocks) * block) - first_block * block) * n;
  // Identity: queries and keys are θ itself, read through a map.
  const Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>> theta_map(theta.data(), n, d,
                                                                       Eigen::OuterStride<>(theta.outerStride()));

  auto run_blocks = [&] {
#pragma omp for schedule(dynamic, 1)
    for (Index b = 0; b < blocks; ++b) {
      const Index first = (first_block + b) * block;  // a row of the whole matrix
      const Index rows = std::min(block, n - first);
      const auto thread = static_cast<std::size_t>(omp_get_thread_num());
      Vector& buffer = scratch_[thread];
      if (buffer.size() < block * n) buffer.resize(block * n);
      Eigen::Map<RowMatrix> scores(buffer.data(), rows, n);
      if (qkv.identity)
        scores.noalias() = theta_map.middleRows(first, rows) * theta_map.transpose();
      else
        scores.noalias() = queries_.middleRows(first, rows) * keys_.transpose();
      for (Index i = 0; i < rows; ++i) {
        const double row_max = scores.row(i).maxCoeff();
        scores.row(i) = (beta * (scores.row(i).array() - row_max)).exp();
      }
      RowMatrix& sums = block_sums_[thread];
      sums.noalias() = scores * values_;
      for (Index i = std::max(first, begin); i < std::min(first + rows, end); ++i)
        attention.row(i - begin) = sums.row(i - first).head(d) / sums(i - first, d);
    }
  };
  run_in_team(threads, run_blocks);
}

// The general path's blocks under a mask, a bias or another normalizer. Row i (global index) has the
// keys [first_i, last_i); a block computes its scores against the union of its rows' ranges only,
// and the entries of a row outside its own range get weight 0.
void AttentionKernel::composed_blocks(Eigen::Ref<const RowMatrix> theta, bool scores_from_theta, double beta,
                                      const Vector& masses, Index begin, Index end, Eigen::Ref<RowMatrix> attention) {
  const Index n = theta.rows();
  const Index d = theta.cols();
  const bool weighted = masses.size() == n;
  const bool biased = !is_first_alternative(spec_.bias);
  const bool needs_reference = std::visit(
      [](const auto& z) {
        if constexpr (RowNormalizer<std::decay_t<decltype(z)>>)
          return z.needs_reference_sum;
        else
          return false;
      },
      spec_.normalizer);
  const auto range = [&](Index i) { return std::visit([&](const auto& m) { return m.keys(i, n); }, spec_.mask); };
  const auto bias = [&](Index i, Index j) {
    return std::visit([&](const auto& b) { return b.bias(i, j, n); }, spec_.bias);
  };
  // The reference sums Z_i = Σ_{j ∈ keys(i)} m_j e^{b_ij} depend on the masses and positions only:
  // computed once per token count and masses, not at every call (O(n²) exponentials with a bias).
  if (needs_reference && (reference_.size() != n || reference_masses_.size() != masses.size() ||
                          (weighted && reference_masses_ != masses))) {
    reference_.resize(n);
    for (Index i = 0; i < n; ++i) {
      const KeyRange k = range(i);
      double z = 0.0;
      for (Index j = k.first; j < k.last; ++j)
        z += (weighted ? masses(j) : 1.0) * (biased ? std::exp(bias(i, j)) : 1.0);
      reference_(i) = z;
    }
    reference_masses_ = masses;
  }
  tabulate_distance_bias(n);
  const Index block = block_rows(n, KernelPath::general);
  const Index first_block = begin / block;
  const Index blocks = (end + block - 1) / block - first_block;
  // Each block's keys (the union of its rows' ranges), then the blocks by decreasing work: under a
  // causal mask the last blocks cost the most, and taken first they leave the cheap ones to balance
  // the threads. The order decides only which thread computes a block, never its bits.
  block_keys_.resize(static_cast<std::size_t>(blocks));
  block_order_.resize(static_cast<std::size_t>(blocks));
  Index scored = 0;
  for (Index b = 0; b < blocks; ++b) {
    const Index first = (first_block + b) * block, rows = std::min(block, n - first);
    const KeyRange& u = block_keys_[static_cast<std::size_t>(b)] = block_key_union(spec_.mask, first, rows, n);
    scored += rows * (u.last - u.first);
    block_order_[static_cast<std::size_t>(b)] = b;
  }
  last_scored_ = scored;
  std::stable_sort(block_order_.begin(), block_order_.end(), [&](Index a, Index c) {
    const KeyRange &ka = block_keys_[static_cast<std::size_t>(a)], &kc = block_keys_[static_cast<std::size_t>(c)];
    return ka.last - ka.first > kc.last - kc.first;
  });
  const int threads = threads_for(end - begin, n, d, blocks);
  const Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>> theta_map(theta.data(), n, d,
                                                                       Eigen::OuterStride<>(theta.outerStride()));

  auto run_blocks = [&] {
#pragma omp for schedule(dynamic, 1)
    for (Index task = 0; task < blocks; ++task) {
      const Index b = block_order_[static_cast<std::size_t>(task)];
      const Index first = (first_block + b) * block;  // a row of the whole matrix, as in compute_general
      const Index rows = std::min(block, n - first);
      const Index keep_first = std::max(first, begin), keep_last = std::min(first + rows, end);
      const Index key_first = block_keys_[static_cast<std::size_t>(b)].first;
      const Index keys = block_keys_[static_cast<std::size_t>(b)].last - key_first;
      if (keys == 0) {  // no row of the block has a key
        attention.middleRows(keep_first - begin, keep_last - keep_first).setZero();
        continue;
      }
      const auto thread = static_cast<std::size_t>(omp_get_thread_num());
      Vector& buffer = scratch_[thread];
      if (buffer.size() < block * n) buffer.resize(block * n);
      Eigen::Map<RowMatrix> scores(buffer.data(), rows, keys);
      if (scores_from_theta)
        scores.noalias() = theta_map.middleRows(first, rows) * theta_map.middleRows(key_first, keys).transpose();
      else
        scores.noalias() = queries_.middleRows(first, rows) * keys_.middleRows(key_first, keys).transpose();
      // Each row's maximum score, kept for the normalizer after the product.
      Vector& row_max = row_scratch_[thread];
      row_max.resize(rows);
      for (Index i = 0; i < rows; ++i) row_max(i) = composed_row(scores.row(i), first + i, key_first, n, beta);
      RowMatrix& sums = block_sums_[thread];
      sums.noalias() = scores * values_.middleRows(key_first, keys);
      for (Index g = keep_first; g < keep_last; ++g) {
        const Index i = g - first;
        const KeyRange k = range(g);
        if (k.first >= k.last || row_max(i) == -std::numeric_limits<double>::infinity()) {
          attention.row(g - begin).setZero();
          continue;
        }
        const double factor = std::visit(
            [&](const auto& z) -> double {
              using Z = std::decay_t<decltype(z)>;
              if constexpr (RowNormalizer<Z>)
                return z.factor(row_max(i), sums(i, d), needs_reference ? reference_(g) : 0.0);
              else if constexpr (MatrixNormalizer<Z>)
                return 0.0;  // never reaches the blocks (compute_general)
              else
                static_assert(MatrixNormalizer<Z>, "a normalizer is row-local or of the whole matrix");
            },
            spec_.normalizer);
        attention.row(g - begin) = factor * sums.row(i).head(d);
      }
    }
  };
  run_in_team(threads, run_blocks);
}

// Row g of a composed block, whose scores against keys [key_first, key_first + row.size()) are in
// `row`: the scores of g's own keys become beta <q, k> + b_gj and then the normalizer's numerators,
// the other entries 0. Returns the row's largest score (-inf when g has no key, or a bias masked
// them all: the row is then 0). The bias is looked up once per row, so that its formula inlines into
// the loop; without a bias the row is scaled as a vector.
double AttentionKernel::composed_row(Eigen::Ref<Eigen::RowVectorXd> row, Index g, Index key_first, Index n,
                                     double beta) const {
  const KeyRange k = std::visit([&](const auto& m) { return m.keys(g, n); }, spec_.mask);
  const Index keys = row.size();
  const Index lo = std::clamp<Index>(k.first - key_first, 0, keys), hi = std::clamp<Index>(k.last - key_first, 0, keys);
  constexpr double none = -std::numeric_limits<double>::infinity();
  if (lo >= hi) {
    row.setZero();
    return none;
  }
  auto own = row.segment(lo, hi - lo);
  double top = none;
  if (is_first_alternative(spec_.bias)) {
    own *= beta;
    top = own.maxCoeff();
  } else if (distance_bias_n_ == n) {
    // Keys before g have distances g - key_first - j (decreasing in j), the others j + key_first - g.
    const Index split = std::clamp<Index>(g - key_first, lo, hi);
    if (split > lo)
      row.segment(lo, split - lo) = beta * row.segment(lo, split - lo) +
                                    distance_bias_.segment(g - key_first - split + 1, split - lo).reverse().transpose();
    if (hi > split)
      row.segment(split, hi - split) =
          beta * row.segment(split, hi - split) + distance_bias_.segment(key_first + split - g, hi - split).transpose();
    top = own.maxCoeff();
  } else {
    std::visit(
        [&](const auto& b) {
          for (Index j = lo; j < hi; ++j) {
            row(j) = beta * row(j) + b.bias(g, key_first + j, n);
            top = std::max(top, row(j));
          }
        },
        spec_.bias);
  }
  row.head(lo).setZero();
  row.tail(keys - hi).setZero();
  if (top == none) {  // a bias masked every allowed key
    row.setZero();
    return none;
  }
  std::visit(
      [&](const auto& z) {
        if constexpr (RowNormalizer<std::decay_t<decltype(z)>>) z.numerators(own, top);
      },
      spec_.normalizer);
  return top;
}

// A bias of the distance alone, b(|i - j|, n) for every distance below n: the composed rows add it by
// segments of this table instead of evaluating it per entry (a division each for ALiBi).
void AttentionKernel::tabulate_distance_bias(Index n) {
  if (distance_bias_n_ == n) return;
  std::visit(
      [&](const auto& b) {
        if constexpr (DistanceBias<std::decay_t<decltype(b)>>) {
          distance_bias_.resize(n);
          for (Index k = 0; k < n; ++k) distance_bias_(k) = b.distance_bias(k, n);
          distance_bias_n_ = n;
        }
      },
      spec_.bias);
}

// Rotates the rows of queries or keys by their positions. A rotation of coordinate planes uses its
// table of cos and sin, the same at every call: their n d / 2 evaluations cost more than the scores'
// GEMM at d = 64. Another encoding rotates by its own rotate().
void AttentionKernel::rotate_by_position(RowMatrix& rows) {
  std::visit(
      [&](const auto& p) {
        if constexpr (PlaneRotation<std::decay_t<decltype(p)>>) {
          const Index n = rows.rows(), d = rows.cols(), planes = d / 2;
          if (rotation_cos_.rows() != n || rotation_cos_.cols() != planes || rotation_d_ != d) {
            rotation_cos_.resize(n, planes);
            rotation_sin_.resize(n, planes);
            for (Index r = 0; r < n; ++r)
              for (Index k = 0; k < planes; ++k) {
                const double angle = p.plane_angle(r, k, d);
                rotation_cos_(r, k) = std::cos(angle);
                rotation_sin_(r, k) = std::sin(angle);
              }
            rotation_d_ = d;
          }
          for (Index r = 0; r < n; ++r)
            for (Index k = 0; k < planes; ++k) {
              const double c = rotation_cos_(r, k), s = rotation_sin_(r, k);
              const double a = rows(r, 2 * k), b = rows(r, 2 * k + 1);
              rows(r, 2 * k) = c * a - s * b;
              rows(r, 2 * k + 1) = s * a + c * b;
            }
        } else {
          p.rotate(rows, 0);
        }
      },
      spec_.positions);
}

// A normalizer of the whole matrix (Sinkhorn): the whole matrix of kernel weights (each row scaled by
// its largest entry, which a row scaling absorbs), scaled by the normalizer (Sinkhorn: to a doubly
// stochastic matrix), times the values. The token masses are absorbed by a column scaling, so they are
// not applied. A scaling that fails gives NaN velocities: the run then ends as a numerical failure
// with its frames kept.
void AttentionKernel::matrix_attention(Eigen::Ref<const RowMatrix> theta, bool scores_from_theta, double beta,
                                       Eigen::Ref<RowMatrix> attention) {
  const Index n = theta.rows();
  const Index d = theta.cols();
  const bool biased = !is_first_alternative(spec_.bias);
  weights_.resize(n, n);
  last_scored_ = n * n;
  if (scores_from_theta)
    weights_.noalias() = theta * theta.transpose();
  else
    weights_.noalias() = queries_ * keys_.transpose();
  for (Index i = 0; i < n; ++i) {
    auto row = weights_.row(i);
    for (Index j = 0; j < n; ++j)
      row(j) = beta * row(j) + (biased ? std::visit([&](const auto& b) { return b.bias(i, j, n); }, spec_.bias) : 0.0);
    row = (row.array() - row.maxCoeff()).exp();
  }
  const int scaled = std::visit(
      [&](const auto& z) -> int {
        if constexpr (MatrixNormalizer<std::decay_t<decltype(z)>>)
          return z.scale(weights_);
        else
          return -1;  // a row-local normalizer never comes here (compute_general)
      },
      spec_.normalizer);
  if (scaled < 0) {
    attention.setConstant(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  attention.noalias() = weights_ * values_.leftCols(d);
}

// Round-robin ("circle method") pairing of the blocks: every round is a matching, so the tasks of a
// round never touch the same rows, and every pair of blocks meets in exactly one round. Round 0
// also computes each block's diagonal tile (first); the last round also normalizes each block's
// rows (its sums are complete then). A block without a partner in a round (odd count) gets a task
// of its own in those two rounds. This needs rounds - 1 barriers, the fewest for this schedule.
const std::vector<AttentionKernel::Task>& AttentionKernel::tile_schedule(Index blocks) {
  if (blocks == schedule_blocks_) return schedule_;
  schedule_.clear();
  round_begin_.assign(1, 0);
  if (blocks == 1) {
    schedule_.push_back({0, 0, true, true});
    round_begin_.push_back(schedule_.size());
  }
  const Index m = blocks + (blocks % 2);  // with a "bye" block when the count is odd
  for (Index r = 0; blocks > 1 && r + 1 < m; ++r) {
    const bool first = r == 0, last = r + 2 == m;
    auto add = [&](Index a, Index c) {
      if (a < blocks && c < blocks) schedule_.push_back({std::min(a, c), std::max(a, c), first, last});
      const Index alone = a < blocks ? a : c;  // the partner of the bye
      if ((a >= blocks || c >= blocks) && (first || last)) schedule_.push_back({alone, alone, first, last});
    };
    add(r, m - 1);
    for (Index k = 1; k < m / 2; ++k) add((r + k) % (m - 1), (r - k + m - 1) % (m - 1));
    round_begin_.push_back(schedule_.size());
  }
  schedule_blocks_ = blocks;
  return schedule_;
}

// Rows [begin, end) only: the tasks that touch a row block meeting the range, in the same rounds as
// for all rows, so each of those rows adds the same tiles in the same order as compute() does.
void AttentionKernel::compute_symmetric(Eigen::Ref<const RowMatrix> theta, double beta, const Vector& masses,
                                        Index begin, Index end, Eigen::Ref<RowMatrix> attention) {
  const Index n = theta.rows();
  const Index d = theta.cols();
  const bool weighted = masses.size() == n;

  // Column weights m_k exp(β h_k - β max h) ≤ m_k fold the factor of k that does not cancel.
  // Small d keeps tokens, values and sums transposed (one row per component) for the fused tiles.
  const bool fused = d <= (options_.fused_max_dim >= 0 ? options_.fused_max_dim : kFusedMaxDim);
  const double top = half_norms_.maxCoeff();
  if (fused) {
    theta_t_ = theta.transpose();
    values_.resize(d + 1, n);
    sums_.setZero(d + 1, n);
  } else {
    values_.resize(n, d + 1);
    sums_.setZero(n, d + 1);
  }
  for (Index k = 0; k < n; ++k) {
    const double weight = std::exp(half_norms_(k) - top) * (weighted ? masses(k) : 1.0);
    if (fused) {
      values_.col(k).head(d) = weight * theta.row(k).transpose();
      values_(d, k) = weight;
    } else {
      values_.row(k).head(d) = weight * theta.row(k);
      values_(k, d) = weight;
    }
  }

  const Index block = block_rows(n, KernelPath::symmetric);
  const Index blocks = (n + block - 1) / block;
  const auto& schedule = tile_schedule(blocks);
  const Index rounds = static_cast<Index>(round_begin_.size()) - 1;
  const int threads = threads_for(n, n, d, std::max<Index>(blocks / 2, 1));
  const Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>> theta_map(theta.data(), n, d,
                                                                       Eigen::OuterStride<>(theta.outerStride()));

  // Tile (b, c) of G, added into the sums of block b and, off the diagonal, of block c.
  auto tile = [&](Index b, Index c) {
    Vector& buffer = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
    if (buffer.size() < block * block) buffer.resize(std::max<Index>(block * block, n));
    const Index b0 = b * block, c0 = c * block;
    const Index rb = std::min(block, n - b0), rc = std::min(block, n - c0);
    if (fused) {
      fused_tile(b0, rb, c0, rc, b != c, beta, buffer);
      return;
    }
    Eigen::Map<RowMatrix> g(buffer.data(), rb, rc);
    g.noalias() = theta_map.middleRows(b0, rb) * theta_map.middleRows(c0, rc).transpose();
    const Eigen::Map<const Eigen::ArrayXd> hc(half_norms_.data() + c0, rc);
    for (Index i = 0; i < rb; ++i) g.row(i) = (beta * g.row(i).array() - hc.transpose() - half_norms_(b0 + i)).exp();
    sums_.middleRows(b0, rb).noalias() += g * values_.middleRows(c0, rc);
    if (b != c) sums_.middleRows(c0, rc).noalias() += g.transpose() * values_.middleRows(b0, rb);
  };
  auto wanted = [&](Index b) { return b * block < end && std::min(n, (b + 1) * block) > begin; };
  auto normalize = [&](Index b) {
    for (Index j = std::max(begin, b * block); j < std::min(end, (b + 1) * block); ++j) {
      if (fused)
        attention.row(j - begin) = sums_.col(j).head(d).transpose() / sums_(d, j);
      else
        attention.row(j - begin) = sums_.row(j).head(d) / sums_(j, d);
    }
  };
  auto run_tiles = [&] {
    for (Index r = 0; r < rounds; ++r) {
      const auto first = static_cast<Index>(round_begin_[static_cast<std::size_t>(r)]);
      const auto last = static_cast<Index>(round_begin_[static_cast<std::size_t>(r) + 1]);
      // The implicit barrier at the end of each round orders the additions into every row block.
#pragma omp for schedule(dynamic, 1)
      for (Index task = first; task < last; ++task) {
        const Task& t = schedule[static_cast<std::size_t>(task)];
        const bool want_b = wanted(t.b), want_c = t.c != t.b && wanted(t.c);
        if (!want_b && !want_c) continue;
        if (t.diagonals) {
          if (want_b) tile(t.b, t.b);
          if (want_c) tile(t.c, t.c);
        }
        if (t.c != t.b) tile(t.b, t.c);
        if (t.finalize) {
          if (want_b) normalize(t.b);
          if (want_c) normalize(t.c);
        }
      }
    }
  };
  run_in_team(threads, run_tiles);
}

// One tile for small d, without GEMM: a GEMM with an inner dimension of 3 spends its time packing
// operands, so each row of the tile is formed, exponentiated and used at once, in vector
// operations over the tile's columns. `both`: the tile also adds its transpose into block c.
void AttentionKernel::fused_tile(Index b0, Index rb, Index c0, Index rc, bool both, double beta, Vector& buffer) {
  using ConstSpan = Eigen::Map<const Eigen::ArrayXd>;
  using TileArray = Eigen::Map<Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  const Index d = theta_t_.rows();
  TileArray g(buffer.data(), rb, rc);
  const ConstSpan hc(half_norms_.data() + c0, rc);
  for (Index i = b0; i < b0 + rb; ++i) {
    auto row = g.row(i - b0).transpose();
    row = -hc - half_norms_(i);
    for (Index k = 0; k < d; ++k) row += (beta * theta_t_(k, i)) * ConstSpan(&theta_t_(k, c0), rc);
  }
  // One exponential pass over the whole tile, then matrix-vector products per component: short
  // rows leave too little work between the calls otherwise (n = 32 is a single 32 × 32 tile).
  g = g.exp();
  const auto gm = g.matrix();
  for (Index k = 0; k <= d; ++k) {
    sums_.row(k).segment(b0, rb).transpose().noalias() += gm * values_.row(k).segment(c0, rc).transpose();
    if (both)
      sums_.row(k).segment(c0, rc).transpose().noalias() += gm.transpose() * values_.row(k).segment(b0, rb).transpose();
  }
}

}  // namespace normdyn
