// The user's terms of normdyn.run / ensemble / resume (terms=[...]) as the library's UserTermSpecs
// (normdyn/user_terms.hpp). The package (python/normdyn/_terms.py) has brought every entry to a dict:
// name, kind ("python" or "compiled"), params (JSON text), digest, source, rows, and either
// `function` (a Python callable) or `address` and `user` (a compiled callback's C function pointer
// and its user data, as integers) with `owner` (what keeps them alive).
//
// A Python callable runs through a trampoline with the C signature of every term: it takes the GIL,
// hands the callable read-only numpy views of θ and r (no copy), checks what it returns and adds it
// to `out`. What the callable raised is kept (the first exception of the run, traceback included)
// and re-raised by the package once the run has returned; the run itself ends with status
// user_term_failed through the failure hook, which reports the message of this thread's last call.
#include "terms_binding.hpp"

#include <pybind11/numpy.h>

#include <string>

#include "normdyn/errors.hpp"

namespace py = pybind11;

namespace normdyn::python {
namespace {

// Why this thread's last call of a Python term failed (empty: it did not).
thread_local std::string t_failure;

struct PythonTerm {
  py::object function;
  std::string name;
  std::shared_ptr<TermErrors> errors;
};

std::string shape_text(const py::array& a) {
  std::string out = "[";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) out += (i ? ", " : "") + std::to_string(a.shape(i));
  return out + "]";
}

void trampoline(double t, const double* theta, const double* r, double* out, std::int64_t n, std::int64_t d,
                void* user) {
  auto* term = static_cast<PythonTerm*>(user);
  t_failure.clear();
  py::gil_scoped_acquire gil;
  try {
    // Views of the integrator's own state, valid during the call.
    py::array_t<double> theta_view(
        {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(d)},
        {static_cast<py::ssize_t>(d * sizeof(double)), static_cast<py::ssize_t>(sizeof(double))}, theta, py::none());
    py::array_t<double> r_view({static_cast<py::ssize_t>(n)}, {static_cast<py::ssize_t>(sizeof(double))}, r,
                               py::none());
    theta_view.attr("setflags")(py::arg("write") = false);
    r_view.attr("setflags")(py::arg("write") = false);
    py::object result = term->function(t, theta_view, r_view);
    if (result.is_none()) {
      t_failure = "returned None, not an array [n, d] = [" + std::to_string(n) + ", " + std::to_string(d) + "]";
      return;
    }
    using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
    Array values = Array::ensure(result);
    if (!values) {
      PyErr_Clear();
      t_failure = "returned " + std::string(py::str(py::type::of(result).attr("__name__"))) +
                  ", not an array [n, d] = [" + std::to_string(n) + ", " + std::to_string(d) + "]";
      return;
    }
    if (values.ndim() != 2 || values.shape(0) != n || values.shape(1) != d) {
      t_failure = "returned shape " + shape_text(values) + ", expected [n, d] = [" + std::to_string(n) + ", " +
                  std::to_string(d) + "]";
      return;
    }
    const double* v = values.data();
    for (std::int64_t k = 0; k < n * d; ++k) out[k] += v[k];
  } catch (py::error_already_set& e) {
    t_failure = "raised " + std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
    if (!term->errors->first) {
      py::object value = e.value();
      if (e.trace()) PyException_SetTraceback(value.ptr(), e.trace().ptr());
      term->errors->first = value;
    }
  }
}

const char* failure(void*) { return t_failure.empty() ? nullptr : t_failure.c_str(); }

template <class T>
T item(const py::dict& entry, const char* key) {
  if (!entry.contains(key)) throw InputError("terms", std::string("internal: a term without '") + key + "'");
  return entry[key].cast<T>();
}

}  // namespace

TermErrors::~TermErrors() {
  if (first && Py_IsInitialized()) {
    py::gil_scoped_acquire gil;
    first = py::object();
  }
}

std::vector<UserTermSpec> user_terms(const py::object& terms, const std::shared_ptr<TermErrors>& errors) {
  std::vector<UserTermSpec> out;
  if (terms.is_none()) return out;
  for (const py::handle& h : terms) {
    const py::dict entry = py::reinterpret_borrow<py::dict>(h);
    UserTermSpec spec;
    spec.name = item<std::string>(entry, "name");
    spec.kind = item<std::string>(entry, "kind");
    spec.params = item<std::string>(entry, "params");
    spec.digest = item<std::string>(entry, "digest");
    spec.source = item<std::string>(entry, "source");
    spec.rows = item<bool>(entry, "rows");
    auto callback = std::make_shared<UserCallback>();
    // Python objects are released with the GIL, from whichever thread drops the last copy.
    auto hold = [](py::object object) {
      return std::shared_ptr<const void>(new py::object(std::move(object)), [](const void* p) {
        auto* o = static_cast<py::object*>(const_cast<void*>(p));
        if (Py_IsInitialized()) {
          py::gil_scoped_acquire gil;
          delete o;
        }
      });
    };
    if (spec.kind == "python") {
      auto* state = new PythonTerm{item<py::object>(entry, "function"), spec.name, errors};
      py::object owner = py::capsule(state, [](void* p) { delete static_cast<PythonTerm*>(p); });
      callback->function = &trampoline;
      callback->user = state;
      callback->failure = &failure;
      callback->owner = hold(std::move(owner));
    } else {
      const auto address = item<std::uintptr_t>(entry, "address");
      if (address == 0) throw InputError("terms", "the term '" + spec.name + "' has a null function pointer");
      callback->function = reinterpret_cast<UserCallback::Function>(address);
      callback->user = reinterpret_cast<void*>(item<std::uintptr_t>(entry, "user"));
      callback->owner = hold(item<py::object>(entry, "owner"));
    }
    spec.callback = std::move(callback);
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace normdyn::python
