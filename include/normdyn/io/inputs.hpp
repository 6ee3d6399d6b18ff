#pragma once
// Inputs read from HDF5 files named in the configuration: initial tokens and attention matrices.
// Shapes are checked against the configuration; a mismatch is an InputError naming the key.
#include <optional>
#include <vector>

#include "normdyn/attention_matrices.hpp"
#include "normdyn/config.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

// init.kind = "file": directions from init.dataset ([n, d] or [frames, n, d], frame init.frame),
// rows normalized; radii from init.radius_dataset, else the run file's radii, else init.r0.
Tokens read_initial_tokens(const InitConfig& init, Index n, Index d);

// init.kind = "file" with model.kind = "meanfield": a density on equal cells of the circle
// from init.dataset, [M'] or [frames, M'] (frame init.frame): values >= 0, not all 0 (any M'; the
// caller remaps it conservatively to the grid).
std::vector<double> read_initial_density(const InitConfig& init);

// model.qkv = "file": datasets Q, K, V, each [d, d] (one layer) or [layers, d, d]; with heads > 1,
// [heads, d, d] or [layers, heads, d, d].
std::vector<AttentionMatrices> read_attention_matrices(const std::filesystem::path& file, Index d, Index heads = 1);

// attention.bias = "matrix" with attention.bias_file and no matrix yet: the dataset `bias` [n, n] of the
// file, given to the configuration (give_score_bias); nothing otherwise. A run reads it once, when it
// starts: the run file keeps the matrix, which a resume reads back.
void read_score_bias(RunConfig& config);
// Whether read_score_bias has a file to read.
bool score_bias_to_read(const RunConfig& config);

// The feed-forward term of the configuration (feedforward.weights = "inline" or "file": datasets a
// [M, d] and omega [M], finite); nothing without one.
std::optional<FeedForward> read_feedforward(const RunConfig& config);

}  // namespace normdyn
