#pragma once
// Arrays given with a run from Python (normdyn.run(qkv=, tokens=)), attached to its configuration.
// The Python layer has already brought Q, K, V to [layers, heads, d, d] and tokens to [n, d].
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <span>
#include <string>

#include "normdyn/errors.hpp"
#include "normdyn/given.hpp"

namespace normdyn::python {

inline void give_arrays(RunConfig& config, const pybind11::object& qkv, const pybind11::object& tokens) {
  namespace py = pybind11;
  using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
  const auto values = [](const Array& a) { return std::span<const double>(a.data(), static_cast<std::size_t>(a.size())); };
  if (!qkv.is_none()) {
    const py::tuple t = qkv.cast<py::tuple>();
    const Array q = Array::ensure(t[0]), k = Array::ensure(t[1]), v = Array::ensure(t[2]);
    if (!q || !k || !v || q.ndim() != 4) throw InputError("qkv", "expected three arrays [layers, heads, d, d]");
    give_qkv(config, values(q), values(k), values(v), static_cast<Index>(q.shape(0)), static_cast<Index>(q.shape(1)),
             static_cast<Index>(q.shape(2)));
  }
  if (!tokens.is_none()) {
    const Array x = Array::ensure(tokens);
    if (!x || x.ndim() != 2) throw InputError("tokens", "expected an array [n, d]");
    give_tokens(config, values(x), static_cast<Index>(x.shape(0)), static_cast<Index>(x.shape(1)));
  }
}

}  // namespace normdyn::python
