// The analysis in normdyn._core: normdyn.analyze, normdyn.observables, normdyn.analyze_options and
// the schemes' theory for normdyn.schemes. A run is given as a path or as the arrays of a Dataset
// (viewed without a copy); the analysis is the library's (include/normdyn/analyze/), the same code
// as `normdyn analyze`; keyword arguments are checked against its option table.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "given_arrays.hpp"
#include "normdyn/analyze/outputs.hpp"
#include "normdyn/analyze/theory.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/attention_spec.hpp"
#include "normdyn/noise.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/terms/activation.hpp"
#include "normdyn/status.hpp"

namespace py = pybind11;
using namespace normdyn;

namespace {

using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IntArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// A run to analyze: a run file, or the arrays of a run in memory kept alive with the source that
// views them.
class Source {
 public:
  explicit Source(const py::handle& run) {
    if (py::isinstance<py::str>(run)) {
      path_ = run.cast<std::string>();
      return;
    }
    const py::dict d = run.cast<py::dict>();
    RunConfig config = parse_config(d["config"].cast<std::string>(), "the Dataset's config attribute");
    python::give_arrays(config, d.contains("qkv") ? py::object(d["qkv"]) : py::object(py::none()),
                        d.contains("tokens") ? py::object(d["tokens"]) : py::object(py::none()),
                        d.contains("score_bias") ? py::object(d["score_bias"]) : py::object(py::none()));
    std::optional<RunSummary> summary;
    if (!d["summary"].is_none()) summary = summary_of(d["summary"].cast<py::dict>());
    const std::string revision = d["revision"].cast<std::string>();
    const DoubleArray& time = keep(d["time"]);
    const IntArray& step = steps_.emplace_back(IntArray::ensure(d["step"]));
    if (!step) throw py::type_error("step: expected an array of integers");
    const std::span<const double> t(time.data(), static_cast<std::size_t>(time.size()));
    const std::span<const std::int64_t> s(step.data(), static_cast<std::size_t>(step.size()));
    if (!d["direction"].is_none()) {
      const DoubleArray& direction = keep(d["direction"]);
      const DoubleArray& radius = keep(d["radius"]);
      if (direction.ndim() != 3) throw InputError("direction", "expected [time, token, component]");
      MemorySource::Particles p{{direction.data(), static_cast<std::size_t>(direction.size())},
                                {radius.data(), static_cast<std::size_t>(radius.size())},
                                static_cast<Index>(direction.shape(1)),
                                static_cast<Index>(direction.shape(2))};
      memory_.emplace(std::move(config), t, s, p, std::move(summary), revision, "ds_or_path");
      return;
    }
    std::map<std::string, MemorySource::Field> fields;
    for (auto [name, values] : d["fields"].cast<py::dict>()) {
      const DoubleArray& a = keep(values);
      const auto frames = static_cast<std::size_t>(time.size());
      const std::size_t cells = frames ? static_cast<std::size_t>(a.size()) / frames : 0;
      fields[name.cast<std::string>()] = {{a.data(), static_cast<std::size_t>(a.size())}, cells};
    }
    memory_.emplace(std::move(config), t, s, std::move(fields), std::move(summary), revision, "ds_or_path");
  }

  // The analysis of this source as `request` asks (the file's outputs checked before it is read).
  AnalysisOutcome analyze(AnalyzeRequest request) const {
    if (path_) {
      request.run_file = *path_;
      return analyze_file(request);
    }
    return analyze_and_write(*memory_, request);
  }

 private:
  const DoubleArray& keep(const py::handle& values) {
    const DoubleArray& a = arrays_.emplace_back(DoubleArray::ensure(values));
    if (!a) throw py::type_error("expected an array of numbers");
    return a;
  }

  static RunSummary summary_of(const py::dict& d) {
    RunSummary s;
    const auto status = run_status_from_string(d["status"].cast<std::string>());
    if (!status) throw InputError("ds_or_path", "unknown run status \"" + d["status"].cast<std::string>() + "\"");
    s.status = *status;
    auto get = [&](const char* key, auto fallback) {
      return d.contains(key) ? d[key].cast<decltype(fallback)>() : fallback;
    };
    s.message = get("message", std::string());
    s.t_reached = get("t_reached", 0.0);
    s.frames = get("frames", std::int64_t{0});
    s.accepted_steps = get("accepted_steps", std::int64_t{0});
    s.rejected_steps = get("rejected_steps", std::int64_t{0});
    s.rhs_evaluations = get("rhs_evaluations", std::int64_t{0});
    s.wall_seconds = get("wall_seconds", 0.0);
    s.max_norm_drift = get("max_norm_drift", 0.0);
    return s;
  }

  std::optional<std::string> path_;
  std::deque<DoubleArray> arrays_;  // a deque: references stay valid as it grows
  std::deque<IntArray> steps_;
  std::optional<MemorySource> memory_;
};

py::object own(const py::handle& v) { return py::reinterpret_borrow<py::object>(v); }

bool is_bool(const py::handle& v) {
  return PyBool_Check(v.ptr()) || py::type::of(v).attr("__name__").cast<std::string>() == "bool_";
}
bool is_integer(const py::handle& v) { return !is_bool(v) && PyIndex_Check(v.ptr()); }
bool is_real(const py::handle& v) { return !is_bool(v) && (PyFloat_Check(v.ptr()) || is_integer(v)); }

[[noreturn]] void wrong_type(const std::string& key, const char* expected, const py::handle& v) {
  throw py::type_error(key + ": expected " + expected + ", got " +
                       py::type::of(v).attr("__name__").cast<std::string>() + " " + py::repr(v).cast<std::string>());
}

// A keyword argument as a value of its option.
OptionValue value_of(const AnalyzeOption& o, const std::string& key, const py::handle& v) {
  switch (o.type) {
    case OptionType::real:
      if (!is_real(v)) wrong_type(key, "a number", v);
      return py::float_(own(v)).cast<double>();
    case OptionType::integer:
      if (!is_integer(v)) wrong_type(key, "an integer", v);
      return py::int_(own(v)).cast<std::int64_t>();
    case OptionType::flag:
      if (!is_bool(v)) wrong_type(key, "True or False", v);
      return py::bool_(own(v)).cast<bool>();
    case OptionType::choice:
      if (!py::isinstance<py::str>(v)) wrong_type(key, "a string", v);
      return v.cast<std::string>();
    case OptionType::path:
      if (!py::isinstance<py::str>(v) && !py::hasattr(v, "__fspath__")) wrong_type(key, "a path", v);
      return py::module_::import("os").attr("fspath")(v).cast<std::string>();
    case OptionType::window: {
      if (py::isinstance<py::str>(v)) return parse_option_text(o, v.cast<std::string>(), key);
      if (!py::isinstance<py::sequence>(v) || py::len(v) != 2) wrong_type(key, "(t0, t1) or \"T0:T1\"", v);
      const py::sequence pair = v.cast<py::sequence>();
      if (!is_real(pair[0]) || !is_real(pair[1])) wrong_type(key, "(t0, t1) with numbers", v);
      return analysis::TimeWindow{py::float_(own(pair[0])).cast<double>(), py::float_(own(pair[1])).cast<double>()};
    }
  }
  wrong_type(key, "a value", v);
}

// The keyword arguments of normdyn.analyze / normdyn.observables as a request: every key must be a
// row of the option table open to Python (TypeError naming it otherwise, as Python does for an
// unknown keyword); values are applied in the table's order.
AnalyzeRequest request_of(const py::dict& kwargs, const char* function, bool outputs) {
  AnalyzeRequest request = AnalyzeRequest::python();
  for (auto [k, v] : kwargs) {
    const std::string key = k.cast<std::string>();
    const AnalyzeOption* o = find_analyze_option(key);
    if (!o || o->scope != OptionScope::everywhere)
      throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + key + "'" +
                           (o ? " (" + option_flag(*o) + " is an option of the command line only)" : ""));
    if (!outputs && (o->type == OptionType::path || key == "no_write"))
      throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + key +
                           "' (it writes nothing; normdyn.analyze writes files)");
  }
  for (const AnalyzeOption& o : analyze_options()) {
    const std::string key(o.name);
    if (!kwargs.contains(key)) continue;
    apply_option(request, o, value_of(o, key, kwargs[py::str(key)]), key);
  }
  return request;
}

std::string analyze(const py::handle& run, const py::dict& options) {
  const AnalyzeRequest request = request_of(options, "analyze", true);
  const Source source(run);
  py::gil_scoped_release release;
  return source.analyze(request).report;
}

// The per-frame series: (name, values [frames, ...], inner dimension names, unit, description).
py::list observables(const py::handle& run, const py::dict& options) {
  const AnalyzeRequest request = request_of(options, "observables", false);
  const Source source(run);
  std::vector<ObservableSeriesOut> series;
  {
    py::gil_scoped_release release;
    series = observable_series(source.analyze(request).analysis, false);
  }
  py::list out;
  for (auto& s : series) {
    const std::size_t per_frame = [&] {
      std::size_t n = 1;
      for (auto v : s.inner) n *= v;
      return n;
    }();
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(per_frame ? s.values.size() / per_frame : 0)};
    for (auto v : s.inner) shape.push_back(static_cast<py::ssize_t>(v));
    py::array values;
    if (s.integer)
      values = py::array_t<std::int64_t>(shape, std::vector<std::int64_t>(s.values.begin(), s.values.end()).data());
    else
      values = py::array_t<double>(shape, s.values.data());
    out.append(py::make_tuple(s.name, values, s.inner_names, s.unit, s.description));
  }
  return out;
}

py::list option_table() {
  py::list out;
  for (const AnalyzeOption& o : analyze_options()) {
    py::dict d;
    d["name"] = std::string(o.name);
    d["flag"] = option_flag(o);
    d["type"] = std::string(to_string(o.type));
    d["python"] = o.scope == OptionScope::everywhere;
    d["description"] = std::string(o.doc);
    d["domain"] = option_domain(o);
    d["default"] = option_default(o);
    if (o.choices) d["choices"] = o.choices();
    out.append(d);
  }
  return out;
}

// The theory of a scheme with given parameters (keyword arguments: the scheme's parameters).
template <class S>
py::list theory_of_parameters(const py::kwargs& kwargs) {
  S s{};
  for (auto [k, v] : kwargs) {
    const auto key = py::cast<std::string>(k);
    bool found = false;
    for (std::size_t i = 0; i < S::params.size(); ++i) {
      const auto& p = S::params[i];
      if (p.key != key) continue;
      found = true;
      if (!is_real(v)) wrong_type(key, "a number", v);
      const double value = py::float_(own(v)).cast<double>();
      if (!std::isfinite(value)) throw InputError(key, "must be finite, got " + std::to_string(value));
      const std::string problem =
          parameter_problem(p, ParamValue(value), [](double x) { return parameter_text(ParamValue(x)); });
      if (!problem.empty()) throw InputError(key, problem);
      set_parameter(s, i, ParamValue(value));
    }
    if (!found) throw py::type_error(std::string(S::key) + " has no parameter '" + key + "'");
  }
  py::list out;
  for (const TheoryStatement& t : theory_statements(Scheme{s})) {
    py::dict d;
    d["theorem"] = t.theorem;
    d["statement"] = t.statement;
    d["law"] = t.law.empty() ? py::object(py::none()) : py::object(py::str(t.law));
    d["parameter_name"] = t.parameter_name.empty() ? py::object(py::none()) : py::object(py::str(t.parameter_name));
    d["parameter"] = t.law.empty() ? py::object(py::none()) : py::object(py::float_(t.parameter));
    d["hypotheses"] = t.hypotheses;
    out.append(d);
  }
  return out;
}

// The parameters of alternative `a` as dicts: key (<table>.<param key>), type, default, description,
// bounds.
template <class A>
py::list parameters_of(const A& a, const std::string& table) {
  py::list params;
  for (std::size_t i = 0; i < A::params.size(); ++i) {
    const auto& p = A::params[i];
    py::dict param;
    param["key"] = table + "." + std::string(p.key);
    param["type"] = std::string(p.type());
    param["default"] = std::visit([](const auto& x) { return py::cast(x); }, parameter_value(a, i));
    param["description"] = std::string(p.doc);
    param["lower"] = p.lower;
    param["lower_inclusive"] = p.lower_inclusive;
    param["upper"] = p.upper;
    param["upper_inclusive"] = p.upper_inclusive;
    params.append(param);
  }
  return params;
}

// Every alternative of a list: key, title, formula, parameters and the traits it breaks.
template <class List>
py::list alternatives_of(const std::string& table) {
  py::list out;
  for_each_alternative<List>([&](auto a) {
    using A = decltype(a);
    py::dict d;
    d["key"] = std::string(A::key);
    d["title"] = std::string(A::title);
    d["formula"] = std::string(A::formula);
    d["parameters"] = parameters_of(a, table);
    py::list breaks;
    const Traits t = traits_of_alternative(a);
    for (const auto& [member, name] : kTraitNames)
      if (!(t.*member)) breaks.append(std::string(name));
    d["breaks"] = breaks;
    out.append(d);
  });
  return out;
}

// The lists of alternatives other than the schemes, by their choosing key.
py::dict alternatives() {
  py::dict out;
  for_each_attention_list([&](const AttentionListInfo& list, auto member) {
    using List = std::decay_t<decltype(AttentionSpec{}.*member)>;
    out[py::str("attention." + std::string(list.name))] = alternatives_of<List>("attention");
  });
  out["noise.kind"] = alternatives_of<NoiseKind>("noise");
  out["feedforward.activation"] = alternatives_of<Activation>("feedforward");
  return out;
}

py::list schemes() {
  py::list out;
  for_each_scheme([&](auto s) {
    using S = decltype(s);
    py::dict d;
    d["key"] = std::string(S::key);
    d["title"] = std::string(S::title);
    py::dict formulas;
    formulas["speed"] = std::string(S::speed_formula);
    formulas["radial_rate"] = std::string(S::radial_formula);
    formulas["layer_map"] = std::string(S::layer_formula);
    d["formulas"] = formulas;
    d["has_radius"] = S::has_radius;
    d["parameters"] = parameters_of(s, "model");
    d["theory"] = theory_of_parameters<S>(py::kwargs());
    d["theory_at"] = py::cpp_function(&theory_of_parameters<S>,
                                      py::doc("the theory with other parameters, e.g. theory_at(alpha=0.5)"));
    out.append(d);
  });
  return out;
}

}  // namespace

void bind_analysis(py::module_& m) {
  m.def("analyze", &analyze, py::arg("run"), py::arg("options"));
  m.def("observables", &observables, py::arg("run"), py::arg("options"));
  m.def("analyze_options", &option_table);
  m.def("analyze_options_markdown", &analyze_options_markdown);
  m.def("schemes", &schemes);
  m.def("alternatives", &alternatives);
}
