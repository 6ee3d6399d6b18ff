#pragma once
// The user's terms given from Python (normdyn.run(..., terms=[...])): _terms.cpp.
#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "normdyn/user_terms.hpp"

namespace normdyn::python {

// The first exception a Python term raised during a run (with its traceback), for the package to
// raise once the run has returned. Touched only with the GIL held.
struct TermErrors {
  pybind11::object first;
  ~TermErrors();
};

// The package's term dicts as specs whose callbacks run the Python callables or the compiled
// functions; their exceptions go to `errors`.
std::vector<UserTermSpec> user_terms(const pybind11::object& terms, const std::shared_ptr<TermErrors>& errors);

}  // namespace normdyn::python
