// The one translation unit that includes Random123.
#include "normdyn/counter_random.hpp"

#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace normdyn {

namespace {

// The four standard normals of one Philox block: its four 64-bit words, two pairs for the
// Box-Muller transform.
void philox_block_normals(const r123::Philox4x64::key_type& key, const r123::Philox4x64::ctr_type& counter,
                          double (&z)[4]) {
  const r123::Philox4x64::ctr_type words = r123::Philox4x64()(counter, key);
  const r123::double2 a = r123::boxmuller(words[0], words[1]), b = r123::boxmuller(words[2], words[3]);
  z[0] = a.x, z[1] = a.y, z[2] = b.x, z[3] = b.y;
}

}  // namespace

void counter_normals(std::uint64_t seed, CounterStream stream, std::uint64_t step, std::uint64_t index,
                     std::span<double> out) {
  const r123::Philox4x64::key_type key{{seed, static_cast<std::uint64_t>(stream)}};
  r123::Philox4x64::ctr_type counter{{step, index, 0, 0}};
  for (std::size_t k = 0; k < out.size(); k += 4) {
    counter[2] = k / 4;
    double values[4];
    philox_block_normals(key, counter, values);
    for (std::size_t j = 0; j < 4 && k + j < out.size(); ++j) out[k + j] = values[j];
  }
}

namespace {

// The path of one cell of the tree, four components at a time (one Philox block gives four normals).
class TreeCell {
 public:
  TreeCell(std::uint64_t seed, CounterStream stream, std::uint64_t index, std::int64_t cell)
      : key_{{seed, static_cast<std::uint64_t>(stream)}}, index_(index), cell_(static_cast<std::uint64_t>(cell)) {}

  // W(cell + u) − W(cell) for u in [0, 1], components 4 block .. 4 block + 3.
  void point(double u, std::uint64_t block, double (&w)[4]) const {
    double wa[4] = {0, 0, 0, 0}, wb[4], z[4];
    if (u <= 0.0) {
      std::copy(wa, wa + 4, w);
      return;
    }
    normals(0, block, wb);  // the cell's total, N(0, 1)
    if (u >= 1.0) {
      std::copy(wb, wb + 4, w);
      return;
    }
    double a = 0.0, width = 1.0;
    std::uint64_t node = 1;  // the interval [a, a + width] in heap order
    for (int level = 1; level <= kTreeLevels; ++level) {
      const double mid = a + 0.5 * width, spread = 0.5 * std::sqrt(width);
      normals(node, block, z);
      double wm[4];
      for (int c = 0; c < 4; ++c) wm[c] = 0.5 * (wa[c] + wb[c]) + spread * z[c];
      if (u == mid) {
        std::copy(wm, wm + 4, w);
        return;
      }
      if (u < mid) {
        std::copy(wm, wm + 4, wb);
        node = 2 * node;
      } else {
        std::copy(wm, wm + 4, wa);
        a = mid;
        node = 2 * node + 1;
      }
      width *= 0.5;
    }
    const double f = (u - a) / width;
    for (int c = 0; c < 4; ++c) w[c] = wa[c] + f * (wb[c] - wa[c]);
  }

 private:
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
      cell.point(k == last ? t1 - kd : 1.0, block, w);
      for (int c = 0; c < 4; ++c) sum[c] += w[c];
      if (k == first) {
        cell.point(t0 - kd, block, w);
        for (int c = 0; c < 4; ++c) sum[c] -= w[c];
      }
    }
    for (std::size_t c = 0; c < count; ++c) out[4 * block + c] = sum[c];
  }
}

}  // namespace normdyn
