#pragma once
// Theorem 4.2: max_j |A_j(0)| over a grid of (n, d) from uniform starts, against
// sqrt(log n / n) + log n / d, with the mean angular speed of every scheme at t = 0 (Post- and
// Pre-LN barely move, Peri-LN and nGPT move at unit speed). Q = K = V = I, or Gaussian matrices
// scaled to |Q^T K| = |V| = 1 (model.qkv = "gaussian_unit_norm", drawn from each start's seed).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/tokens.hpp"

namespace normdyn::studies {

struct AttentionStudyRequest {
  std::vector<Index> n{64, 256, 1024};
  std::vector<Index> d{16, 64, 256};
  int seeds = 3;
  std::uint64_t first_seed = 1;
  double beta = 1.0;
  double constant = 1.0;       // the C of the check
  bool unit_norm_qkv = false;  // Q, K, V: gaussian_unit_norm instead of the identity
  int threads = 0;
  std::optional<std::filesystem::path> json;
};

struct AttentionStudyRow {
  Index n = 0, d = 0;
  bool hypotheses = false;                      // e^sqrt(d) >= n log n >= d
  double max_attention_mean = 0.0;              // mean over seeds of max_j |A_j(0)|
  double max_attention_max = 0.0;               // largest over seeds
  double bound = 0.0;                           // sqrt(log n / n) + log n / d
  std::map<std::string, double> angular_speed;  // scheme key → mean over seeds of the mean angular speed
};

std::vector<AttentionStudyRow> attention_study(const AttentionStudyRequest& request);

}  // namespace normdyn::studies
