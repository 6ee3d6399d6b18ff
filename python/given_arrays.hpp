#pragma once
// Arrays given with a run from Python (normdyn.run / normdyn.ensemble (qkv=, tokens=, score_bias=)),
// attached to its configuration. The Python layer has already brought Q, K, V to [layers, heads, d, d],
// tokens to [n, d] and the score bias to [n, n].
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <vector>

#include "normdyn/errors.hpp"
#include "normdyn/given.hpp"

namespace normdyn::python {

// The arrays copied into C++ values while the GIL is held, and a function that gives them to any
// configuration later (an ensemble gives them to every point, without the GIL).
inline std::function<void(RunConfig&)> arrays_giver(const pybind11::object& qkv, const pybind11::object& tokens,
                                                    const pybind11::object& score_bias = pybind11::none()) {
  namespace py = pybind11;
  using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
  const auto copy = [](const Array& a) { return std::vector<double>(a.data(), a.data() + a.size()); };
  struct Given {
    bool has_qkv = false, has_tokens = false, has_bias = false;
    std::vector<double> q, k, v, x, bias;
    Index layers = 0, heads = 0, d = 0, n = 0, token_d = 0, bias_rows = 0, bias_cols = 0;
  } g;
  if (!qkv.is_none()) {
    const py::tuple t = qkv.cast<py::tuple>();
    const Array q = Array::ensure(t[0]), k = Array::ensure(t[1]), v = Array::ensure(t[2]);
    if (!q || !k || !v || q.ndim() != 4) throw InputError("qkv", "expected three arrays [layers, heads, d, d]");
    g.has_qkv = true;
    g.q = copy(q), g.k = copy(k), g.v = copy(v);
    g.layers = static_cast<Index>(q.shape(0)), g.heads = static_cast<Index>(q.shape(1)),
    g.d = static_cast<Index>(q.shape(2));
  }
  if (!tokens.is_none()) {
    const Array x = Array::ensure(tokens);
    if (!x || x.ndim() != 2) throw InputError("tokens", "expected an array [n, d]");
    g.has_tokens = true;
    g.x = copy(x);
    g.n = static_cast<Index>(x.shape(0)), g.token_d = static_cast<Index>(x.shape(1));
  }
  if (!score_bias.is_none()) {
    const Array b = Array::ensure(score_bias);
    if (!b || b.ndim() != 2) throw InputError("score_bias", "expected an array [n, n]");
    g.has_bias = true;
    g.bias = copy(b);
    g.bias_rows = static_cast<Index>(b.shape(0)), g.bias_cols = static_cast<Index>(b.shape(1));
  }
  if (!g.has_qkv && !g.has_tokens && !g.has_bias) return {};
  return [g = std::move(g)](RunConfig& config) {
    if (g.has_qkv) give_qkv(config, g.q, g.k, g.v, g.layers, g.heads, g.d);
    if (g.has_tokens) give_tokens(config, g.x, g.n, g.token_d);
    if (g.has_bias) give_score_bias(config, g.bias, g.bias_rows, g.bias_cols);
  };
}

inline void give_arrays(RunConfig& config, const pybind11::object& qkv, const pybind11::object& tokens,
                        const pybind11::object& score_bias = pybind11::none()) {
  if (const auto give = arrays_giver(qkv, tokens, score_bias)) give(config);
}

}  // namespace normdyn::python
