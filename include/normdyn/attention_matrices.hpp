#pragma once
// The matrices of the attention, apart from the kernel (attention.hpp), so that what only holds them
// (the sources of Q, K, V, the configuration) does not see the lists of the attention specification.
#include <vector>

#include "normdyn/tokens.hpp"

namespace normdyn {

// Q, K, V of the first head (`identity`: Q = K = V = I, the matrices not stored), and those of the
// other heads of a multi-head model, whose attention is the sum of its heads' (model.heads).
struct AttentionMatrices {
  bool identity = true;
  RowMatrix Q, K, V;
  std::vector<AttentionMatrices> other_heads;

  static AttentionMatrices identity_matrices(Index heads = 1) {
    AttentionMatrices m;
    m.other_heads.resize(static_cast<std::size_t>(heads - 1));
    return m;
  }
  Index heads() const { return 1 + static_cast<Index>(other_heads.size()); }
  // Every head is Q = K = V = I.
  bool all_identity() const {
    for (const auto& h : other_heads)
      if (!h.identity) return false;
    return identity;
  }
};

}  // namespace normdyn
