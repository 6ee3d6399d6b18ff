// The one translation unit that includes Random123 and xsimd.
#include "normdyn/counter_random.hpp"

#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>
#include <Random123/uniform.hpp>
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace normdyn {

namespace {

// The four standard normals of one Philox block (the Brownian trees' nodes): its four 64-bit
// words, two pairs for r123's scalar Box-Muller transform.
void philox_block_normals(const r123::Philox4x64::key_type& key, const r123::Philox4x64::ctr_type& counter,
                          double (&z)[4]) {
  const r123::Philox4x64::ctr_type words = r123::Philox4x64()(counter, key);
  const r123::double2 a = r123::boxmuller(words[0], words[1]), b = r123::boxmuller(words[2], words[3]);
  z[0] = a.x, z[1] = a.y, z[2] = b.x, z[3] = b.y;
}

}  // namespace

namespace {

// Box-Muller in SIMD form: the uniforms of many pairs are gathered first, then transformed a batch
// at a time. The pair of words (w0, w1) gives r sin(π u) and r cos(π u) with u = uneg11(w0) and
// r = sqrt(−2 ln u01(w1)), the transform of r123::boxmuller; only its round-off differs. Every
// pair goes through the same batch functions (a chunk's last batch is padded rather than finished
// by scalar code), and π u is first reduced exactly to |π w| <= π/4 so that xsimd's sincos takes
// the branch of its argument reduction that does not depend on the other lanes: a normal's bits
// never depend on which pairs were transformed with it.
using NormalBatch = xsimd::batch<double>;
constexpr std::size_t kBoxMullerChunk = 256;  // pairs per pass, a multiple of any batch size
static_assert(kBoxMullerChunk % NormalBatch::size == 0);

struct BoxMullerChunk {
  alignas(64) double u[kBoxMullerChunk];  // uneg11(w0); on return r sin(π u)
  alignas(64) double v[kBoxMullerChunk];  // u01(w1); on return r cos(π u)
  double* first[kBoxMullerChunk];         // where the pair's first normal goes
  bool second[kBoxMullerChunk];           // whether its second one is asked for
  std::size_t size = 0;

  void add(std::uint64_t w0, std::uint64_t w1, double* out, bool both) {
    u[size] = r123::uneg11<double>(w0);
    v[size] = r123::u01<double>(w1);
    first[size] = out;
    second[size] = both;
    ++size;
  }

  // Transforms the pairs gathered so far and writes them out.
  void flush() {
    const std::size_t padded = (size + NormalBatch::size - 1) / NormalBatch::size * NormalBatch::size;
    std::fill(u + size, u + padded, 0.0);
    std::fill(v + size, v + padded, 0.5);
    constexpr double kPi = 3.1415926535897932;  // r123::sincospi's π
    for (std::size_t i = 0; i < padded; i += NormalBatch::size) {
      const NormalBatch x = NormalBatch::load_aligned(u + i);
      // u = q/2 + w with q = round(2u) and |w| <= 1/4, exact; sin(π u), cos(π u) from the quadrant q.
      const NormalBatch q = xsimd::nearbyint(x + x);
      const auto [sw, cw] = xsimd::sincos(kPi * (x - 0.5 * q));
      const NormalBatch quarter = q - 4.0 * xsimd::floor(0.25 * q);  // q mod 4, in {0, 1, 2, 3}
      const auto odd = (quarter == NormalBatch(1.0)) | (quarter == NormalBatch(3.0));
      const auto negative = quarter >= NormalBatch(2.0);
      NormalBatch sine = xsimd::select(odd, cw, sw), cosine = xsimd::select(odd, sw, cw);
      sine = xsimd::select(negative, -sine, sine);
      cosine = xsimd::select((quarter == NormalBatch(1.0)) | (quarter == NormalBatch(2.0)), -cosine, cosine);
      const NormalBatch r = xsimd::sqrt(-2.0 * xsimd::log(NormalBatch::load_aligned(v + i)));
      (sine * r).store_aligned(u + i);
      (cosine * r).store_aligned(v + i);
    }
    for (std::size_t i = 0; i < size; ++i) {
      first[i][0] = u[i];
      if (second[i]) first[i][1] = v[i];
    }
    size = 0;
  }
};

}  // namespace

void counter_normals_rows(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t first_index,
                          std::size_t rows, std::size_t cols, std::span<double> out) {
  if (out.size() != rows * cols) throw std::invalid_argument("counter_normals_rows: out must hold rows * cols numbers");
  const r123::Philox4x64::key_type key{{seed, static_cast<std::uint64_t>(stream)}};
  BoxMullerChunk chunk;
  for (std::size_t row = 0; row < rows; ++row) {
    double* const line = out.data() + row * cols;
    r123::Philox4x64::ctr_type counter{{step, first_index + row, 0, 0}};
    for (std::size_t k = 0; k < cols; k += 4) {
      counter[2] = k / 4;
      const r123::Philox4x64::ctr_type words = r123::Philox4x64()(counter, key);
      // Only the pairs asked for: at d = 2 a row uses half of its block.
      for (std::size_t pair = 0; pair < 2 && k + 2 * pair < cols; ++pair) {
        chunk.add(words[2 * pair], words[2 * pair + 1], line + k + 2 * pair, k + 2 * pair + 1 < cols);
        if (chunk.size == kBoxMullerChunk) chunk.flush();
      }
    }
  }
  chunk.flush();
}

void counter_normals(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t index,
                     std::span<double> out) {
  counter_normals_rows(seed, stream, step, index, 1, out.size(), out);
}

namespace {

// The path of one cell of the tree, four components at a time (one Philox block gives four normals).
class TreeCell {
 public:
  TreeCell(std::uint64_t seed, CounterStream stream, std::uint64_t index, std::int64_t cell)
      : key_{{seed, static_cast<std::uint64_t>(stream)}}, index_(index), cell_(static_cast<std::uint64_t>(cell)) {}

  // W(cell + u) − W(cell) for u in [0, 1], components 4 block .. 4 block + 3.
  void point(double u, std::uint64_t block, double (&w)[4]) const {
    if (u <= 0.0) return zero(w);
    Interval s;
    normals(0, block, s.wb);  // the cell's total, N(0, 1)
    if (u >= 1.0) return copy(s.wb, w);
    descend(s, u, block, w);
  }

  // point(u0) and point(u1) with one descent for the levels where u0 and u1 share an interval (a
  // step's two ends are usually close), the same numbers as two calls.
  void points(double u0, double u1, std::uint64_t block, double (&w0)[4], double (&w1)[4]) const {
    if (u0 <= 0.0 || u1 <= 0.0) {
      point(u0, block, w0);
      point(u1, block, w1);
      return;
    }
    Interval s;
    normals(0, block, s.wb);
    if (u0 >= 1.0 || u1 >= 1.0) {
      u0 >= 1.0 ? copy(s.wb, w0) : descend(s, u0, block, w0);
      u1 >= 1.0 ? copy(s.wb, w1) : descend(s, u1, block, w1);
      return;
    }
    for (; s.level <= kTreeLevels; s.halve()) {
      const double mid = s.a + 0.5 * s.width;
      if (u0 != mid && u1 != mid && (u0 < mid) == (u1 < mid)) {
        double wm[4];
        midpoint(s, block, wm);
        s.enter(u0 < mid, mid, wm);
        continue;
      }
      // The ends part here: each finishes its own descent from this interval.
      descend(s, u0, block, w0);
      descend(s, u1, block, w1);
      return;
    }
    descend(s, u0, block, w0);  // both in one interval of the last level: linear in between
    descend(s, u1, block, w1);
  }

 private:
  // A dyadic interval [a, a + width] of the cell at `level`, its node in heap order, W at its ends.
  struct Interval {
    double a = 0.0, width = 1.0;
    std::uint64_t node = 1;
    int level = 1;
    double wa[4] = {0, 0, 0, 0}, wb[4];

    // Into the lower (`lower`) or upper half, whose other end is the midpoint `mid` with W = wm.
    void enter(bool lower, double mid, const double (&wm)[4]) {
      if (lower) {
        copy(wm, wb);
        node = 2 * node;
      } else {
        copy(wm, wa);
        a = mid;
        node = 2 * node + 1;
      }
    }
    void halve() {
      width *= 0.5;
      ++level;
    }
  };

  static void zero(double (&w)[4]) { std::fill(w, w + 4, 0.0); }
  static void copy(const double (&from)[4], double (&to)[4]) { std::copy(from, from + 4, to); }

  // W at the midpoint of s: the Brownian bridge between its ends.
  void midpoint(const Interval& s, std::uint64_t block, double (&wm)[4]) const {
    const double spread = 0.5 * std::sqrt(s.width);
    double z[4];
    normals(s.node, block, z);
    for (int c = 0; c < 4; ++c) wm[c] = 0.5 * (s.wa[c] + s.wb[c]) + spread * z[c];
  }

  // W(cell + u) from the interval s that holds u (0 < u < 1), down to the last level.
  void descend(Interval s, double u, std::uint64_t block, double (&w)[4]) const {
    for (; s.level <= kTreeLevels; s.halve()) {
      const double mid = s.a + 0.5 * s.width;
      double wm[4];
      midpoint(s, block, wm);
      if (u == mid) return copy(wm, w);
      s.enter(u < mid, mid, wm);
    }
    const double f = (u - s.a) / s.width;
    for (int c = 0; c < 4; ++c) w[c] = s.wa[c] + f * (s.wb[c] - s.wa[c]);
  }

  void normals(std::uint64_t node, std::uint64_t block, double (&z)[4]) const {
    philox_block_normals(key_, {{cell_, index_, node, block}}, z);
  }

  r123::Philox4x64::key_type key_;
  std::uint64_t index_, cell_;
};

}  // namespace

void tree_increments(std::uint64_t seed, CounterStream stream, std::uint64_t index, double t0, double t1,
                     std::span<double> out) {
  std::fill(out.begin(), out.end(), 0.0);
  if (!(t1 > t0)) return;
  // The cells of t0 and of t1 (a t1 on a cell boundary ends the cell before it).
  const auto first = static_cast<std::int64_t>(std::floor(t0));
  auto last = static_cast<std::int64_t>(std::floor(t1));
  if (static_cast<double>(last) == t1) --last;
  for (std::uint64_t block = 0; 4 * block < out.size(); ++block) {
    const std::size_t count = std::min<std::size_t>(4, out.size() - 4 * block);
    double sum[4] = {0, 0, 0, 0}, w[4];
    for (std::int64_t k = first; k <= last; ++k) {
      const TreeCell cell(seed, stream, index, k);
      const double kd = static_cast<double>(k);
      // Within the cell: W(min(t1, k + 1)) − W(max(t0, k)), on the cell's own clock.
      const double upper = k == last ? t1 - kd : 1.0;
      if (k == first) {
        double w0[4];
        cell.points(t0 - kd, upper, block, w0, w);
        for (int c = 0; c < 4; ++c) sum[c] += w[c];
        for (int c = 0; c < 4; ++c) sum[c] -= w0[c];
      } else {
        cell.point(upper, block, w);
        for (int c = 0; c < 4; ++c) sum[c] += w[c];
      }
    }
    for (std::size_t c = 0; c < count; ++c) out[4 * block + c] = sum[c];
  }
}

}  // namespace normdyn
