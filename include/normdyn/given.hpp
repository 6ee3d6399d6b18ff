#pragma once
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/config.hpp"

namespace normdyn {

// Arrays given with a run instead of drawn or read from a file (Python's normdyn.run(qkv=, tokens=)):
// they set model.qkv = "given" (Q, K, V per layer, `heads` heads each: values [layers, heads, d, d]
// row-major) or init.kind = "given" (rows x_i of [n, d]: direction x_i/|x_i|, radius |x_i|), after
// checking their shapes against model.d, model.heads and model.n, and set model.qkv_digest or
// init.tokens_digest, so that the configuration names the arrays it ran with. `name` is the argument
// named in errors ("qkv", "tokens"). The run file stores them (/parameters/qkv, /parameters/initial_tokens).
void give_qkv(RunConfig& config, std::span<const double> q, std::span<const double> k, std::span<const double> v,
              Index layers, Index heads, Index d, const std::string& name = "qkv");
void give_tokens(RunConfig& config, std::span<const double> rows, Index n, Index d, const std::string& name = "tokens");

// A score bias matrix B [rows, cols] given with the run (Python's score_bias=B, or the dataset of
// attention.bias_file): sets attention.bias = "matrix" (keeping its attention.bias_file) with B and its
// digest attention.bias_digest, after checking that B is [model.n, model.n] with finite or -inf
// entries. The run file stores it (/parameters/score_bias).
void give_score_bias(RunConfig& config, std::span<const double> values, Index rows, Index cols,
                     const std::string& name = "score_bias");
// The given score bias matrix (none when attention.bias is not "matrix" or B is not there yet).
const RowMatrix* given_score_bias(const RunConfig& config);
// attention.bias_digest when attention.bias = "matrix" (none otherwise).
std::optional<std::string> score_bias_digest(const RunConfig& config);

// The given matrices as give_qkv takes them: Q, K and V one after the other, each [layers, heads, d, d]
// (empty when model.qkv is not "given").
std::vector<double> given_qkv_values(const ModelConfig& model);
// give_qkv of such values (layers from their count).
void give_qkv_values(RunConfig& config, std::span<const double> values, const std::string& name);

// The digest that model.qkv_digest and init.tokens_digest hold: FNV-1a over the bytes of the values,
// in order, as 16 hexadecimal digits.
std::string values_digest(std::initializer_list<std::span<const double>> arrays);

}  // namespace normdyn
