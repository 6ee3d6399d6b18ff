// normdyn._core: the Python binding of the experiment API (experiment/experiment.hpp) and of the
// configuration, scheme registry and analysis. The package normdyn (python/normdyn/) builds its
// xarray Datasets on top of the plain dicts and numpy arrays returned here.
//
// Threads and signals: the GIL is released while a run integrates, so runs in several Python
// threads proceed at once. The experiment polls stop_requested after every step; on the main thread
// it takes the GIL at most every kStopPollInterval to let Python run its signal handlers
// (PyErr_CheckSignals), so that Ctrl-C ends the run as `interrupted` (file complete and resumable)
// and the handler's exception (KeyboardInterrupt) is raised once the run has returned.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/ensemble.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/io/text_file.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/status.hpp"
#include "normdyn/sweep.hpp"
#include "normdyn/version.hpp"
#include "given_arrays.hpp"
#include "terms_binding.hpp"

namespace py = pybind11;
using namespace normdyn;

// normdyn.analyze, observables, analyze_options and schemes (_analyze.cpp).
void bind_analysis(py::module_& m);

namespace {

// How often the main thread's run looks at pending signals: well inside the 0.2 s a user waits for
// Ctrl-C, and rare enough that taking the GIL costs nothing measurable.
constexpr auto kStopPollInterval = std::chrono::milliseconds(50);

// The vector becomes the array's buffer: the capsule owns it, nothing is copied.
template <class T>
py::array_t<T> adopt(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), owned->data(), owner);
}

py::dict summary_dict(const RunSummary& s) {
  py::dict d;
  d["status"] = std::string(to_string(s.status));
  d["message"] = s.message;
  d["t_reached"] = s.t_reached;
  d["frames"] = s.frames;
  d["accepted_steps"] = s.accepted_steps;
  d["rejected_steps"] = s.rejected_steps;
  d["rhs_evaluations"] = s.rhs_evaluations;
  d["wall_seconds"] = s.wall_seconds;
  d["max_norm_drift"] = s.max_norm_drift;
  for (const auto& [key, value] : s.extra) d[py::str(key)] = value;
  if (!s.warnings.empty()) d["warnings"] = s.warnings;
  return d;
}

py::dict event_dict(const ProgressEvent& e) {
  py::dict d;
  d["t"] = e.t;
  d["t_start"] = e.t_start;
  d["t_begin"] = e.t_begin;
  d["t_end"] = e.t_end;
  d["steps"] = e.steps;
  d["session_steps"] = e.session_steps;
  d["session_seconds"] = e.session_seconds;
  d["frames"] = e.frames;
  d["total_frames"] = e.total_frames;
  d["done"] = e.done;
  d["fraction"] = e.fraction();
  return d;
}

// Signals, progress callbacks and the exceptions they raise, for one run. Every member that holds a
// Python object is touched only with the GIL held.
class PythonSession {
 public:
  PythonSession(py::object progress, bool main_thread) : progress_(std::move(progress)), main_thread_(main_thread) {}

  void attach(ExperimentOptions& options) {
    options.stop_requested = [this] { return stop_requested(); };
    if (!progress_.is_none()) options.progress = [this](const ProgressEvent& e) { on_progress(e); };
  }

  // With the GIL held, after the run: re-raises what a signal handler or the callback raised.
  void rethrow_pending() {
    if (pending_) {
      py::error_already_set error = std::move(*pending_);
      pending_.reset();
      throw error;
    }
  }

 private:
  int stop_requested() {
    if (stop_) return SIGINT;
    if (!main_thread_) return 0;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < kStopPollInterval) return 0;
    last_poll_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      pending_.emplace();  // fetches the handler's exception
      stop_ = true;
      return SIGINT;
    }
    return 0;
  }

  void on_progress(const ProgressEvent& e) {
    if (stop_) return;
    py::gil_scoped_acquire gil;
    try {
      progress_(event_dict(e));
    } catch (py::error_already_set& error) {
      pending_.emplace(std::move(error));
      stop_ = true;
    }
  }

  py::object progress_;
  bool main_thread_;
  bool stop_ = false;
  std::chrono::steady_clock::time_point last_poll_ = std::chrono::steady_clock::now();
  std::optional<py::error_already_set> pending_;
};

py::dict provenance_dict(const Provenance& p) {
  py::dict d;
  d["command_line"] = p.command_line;
  d["threads"] = p.threads;
  d["ranks"] = p.ranks;
  return d;
}

py::dict version_dict() {
  py::dict d;
  d["version"] = std::string(version());
  d["revision"] = std::string(revision());
  d["compiler"] = std::string(compiler());
  d["build_type"] = std::string(build_type());
  return d;
}

// The recorder's buffers, moved into numpy arrays.
py::dict memory_result(MemoryRecorder& rec) {
  py::dict out;
  const auto frames = static_cast<py::ssize_t>(rec.frames());
  out["config"] = rec.config_toml;
  out["provenance"] = provenance_dict(rec.provenance);
  out["particles"] = rec.has_particles;
  out["time"] = adopt(std::move(rec.times), {frames});
  out["step"] = adopt(std::move(rec.steps), {frames});
  if (rec.has_particles) {
    const auto n = static_cast<py::ssize_t>(rec.n), d = static_cast<py::ssize_t>(rec.d);
    rec.direction.resize(static_cast<std::size_t>(frames * n * d));
    rec.radius.resize(static_cast<std::size_t>(frames * n));
    out["direction"] = adopt(std::move(rec.direction), {frames, n, d});
    out["radius"] = adopt(std::move(rec.radius), {frames, n});
    if (!rec.mass.empty()) out["mass"] = adopt(std::move(rec.mass), {n});
    py::dict observables;
    for (std::size_t i = 0; i < rec.observable_names.size() && i < rec.observables.size(); ++i)
      observables[py::str(rec.observable_names[i])] = adopt(std::move(rec.observables[i]), {frames});
    out["observables"] = observables;
  }
  py::list fields;
  for (auto& f : rec.fields) {
    py::dict field;
    field["name"] = f.spec.name;
    field["description"] = f.spec.description;
    field["unit"] = f.spec.unit;
    std::vector<py::ssize_t> shape{frames};
    py::list axes;
    std::size_t moving = 0;
    for (const auto& a : f.spec.axes) {
      shape.push_back(static_cast<py::ssize_t>(a.cells));
      py::dict axis;
      axis["name"] = a.name;
      axis["unit"] = a.unit;
      axis["description"] = a.description;
      axis["moving"] = a.moving;
      if (a.moving) {
        auto& values = f.moving.at(moving++);
        axis["centres"] = adopt(std::move(values), {frames, static_cast<py::ssize_t>(a.cells)});
      } else {
        axis["centres"] = adopt(std::vector<double>(a.centres), {static_cast<py::ssize_t>(a.cells)});
      }
      axes.append(axis);
    }
    field["axes"] = axes;
    field["value"] = adopt(std::move(f.values), std::move(shape));
    fields.append(field);
  }
  out["fields"] = fields;
  if (rec.summary) out["summary"] = summary_dict(*rec.summary);
  out["versions"] = version_dict();
  return out;
}

// The user's terms given with a run, after the configuration's own ([[terms]]); names are unique.
void give_terms(RunConfig& config, std::vector<UserTermSpec> terms) {
  for (UserTermSpec& t : terms) {
    for (const UserTermSpec& other : config.terms)
      if (other.name == t.name) throw InputError("terms", "two terms are named '" + t.name + "'");
    config.terms.push_back(std::move(t));
  }
}

// What the package needs of the terms after a run: the first exception a Python term raised (None),
// and the warnings of terms that may differ from those the run recorded.
void term_outcome(py::dict& out, const RunConfig& config, const python::TermErrors& errors) {
  out["term_exception"] = errors.first ? errors.first : py::none();
  out["term_warnings"] = user_term_warnings(config.terms);
}

RunConfig parse(const std::string& toml_text, const std::string& source, const std::vector<std::string>& overrides) {
  return parse_config(toml_text, source, overrides);
}

py::dict run(const std::string& toml_text, const std::string& source, const std::vector<std::string>& overrides,
             std::optional<std::string> output, bool force, std::optional<int> threads, py::object progress,
             double progress_interval, bool main_thread, const std::string& command_line,
             const std::string& config_file, const py::object& qkv, const py::object& tokens,
             const py::object& score_bias, const py::object& terms) {
  RunConfig config = parse(toml_text, source, overrides);
  python::give_arrays(config, qkv, tokens, score_bias);
  const auto errors = std::make_shared<python::TermErrors>();
  give_terms(config, python::user_terms(terms, errors));
  if (threads) {
    if (*threads < 0) throw InputError("threads", "must be >= 0 (0: all cores), got " + std::to_string(*threads));
    config.solver.threads = *threads;
  }
  ExperimentOptions options;
  options.write_file = output.has_value();
  if (output) config.output.path = *output;
  options.force = force;
  options.force_name = "force=True";
  options.config_file = config_file;
  options.command_line = command_line;
  options.resume_hint = output ? "normdyn.resume(\"" + *output + "\")" : "";
  options.progress_interval = progress_interval;
  PythonSession session(std::move(progress), main_thread);
  session.attach(options);
  MemoryRecorder recorder;
  {
    py::gil_scoped_release release;
    run_experiment(config, options, {&recorder});
  }
  session.rethrow_pending();
  py::dict out = memory_result(recorder);
  term_outcome(out, config, *errors);
  return out;
}

py::dict resume(const std::string& path, std::optional<int> threads, py::object progress, double progress_interval,
                bool main_thread, const std::string& command_line, const py::object& terms) {
  ExperimentOptions options;
  const auto errors = std::make_shared<python::TermErrors>();
  options.terms = python::user_terms(terms, errors);
  options.command_line = command_line;
  options.resume_hint = "normdyn.resume(\"" + path + "\")";
  options.progress_interval = progress_interval;
  PythonSession session(std::move(progress), main_thread);
  session.attach(options);
  RunConfig config;
  RunSummary summary;
  {
    py::gil_scoped_release release;
    summary = resume_experiment(path, threads, options, config);
  }
  session.rethrow_pending();
  py::dict out;
  out["summary"] = summary_dict(summary);
  out["config"] = to_toml(config);
  term_outcome(out, config, *errors);
  return out;
}

py::list reference() {
  py::list out;
  for (const auto& k : config_reference()) {
    py::dict d;
    d["key"] = k.key;
    d["type"] = k.type;
    d["default"] = k.default_value;
    d["description"] = k.doc;
    out.append(d);
  }
  return out;
}

py::object grid_values(const GridValues& v, std::vector<py::ssize_t> shape) {
  return std::visit(
      [&](const auto& values) -> py::object {
        using T = std::decay_t<decltype(values)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          py::list out;
          for (const auto& s : values) out.append(s);
          return out;
        } else {
          std::vector<typename T::value_type> copy(values.begin(), values.end());  // owned or borrowed
          return adopt(std::move(copy), std::move(shape));
        }
      },
      v);
}

py::dict grid_attributes(const std::vector<std::pair<std::string, TableAttribute>>& attributes) {
  py::dict d;
  for (const auto& [name, value] : attributes)
    std::visit([&, &name = name](const auto& x) { d[py::str(name)] = x; }, value);
  return d;
}

// The processes of an MPI launch (`mpirun -n P python3 script.py`), or this process alone. Made at
// the first ensemble; MPI (when launched) is finalized at exit.
Team& process_team() {
  static int argc = 0;
  static char** argv = nullptr;
  static Team team(argc, argv);
  return team;
}

// The ensemble of a sweep text (the package builds it from config and axes) as the grid of its file;
// None on the processes other than rank 0 of an MPI launch (which share the members).
py::object ensemble(const std::string& sweep_text, const std::string& source, std::optional<std::string> output,
                    bool force, int threads, const std::vector<double>& quantiles,
                    const std::vector<std::size_t>& trajectories, bool member_figures, py::object progress,
                    double progress_interval, bool main_thread, const std::string& command_line, const py::object& qkv,
                    const py::object& tokens, const py::object& score_bias, const std::string& config_file,
                    const py::object& terms) {
  if (threads < 0) throw InputError("threads", "must be >= 0 (0: all cores), got " + std::to_string(threads));
  const SweepSpec spec = parse_sweep(sweep_text, source);
  EnsembleOptions options;
  if (!config_file.empty()) options.inputs = {config_file};
  options.give = python::arrays_giver(qkv, tokens, score_bias);
  const auto errors = std::make_shared<python::TermErrors>();
  if (std::vector<UserTermSpec> given = python::user_terms(terms, errors); !given.empty())
    options.give = [arrays = options.give, given = std::move(given)](RunConfig& config) {
      if (arrays) arrays(config);
      give_terms(config, given);
    };
  if (output) options.output = *output;
  options.force = force;
  options.output_name = "output";
  options.force_name = "force=True";
  options.threads = threads;
  options.quantiles = quantiles;
  options.trajectories = trajectories;
  options.member_figures = member_figures;
  options.command_line = command_line;
  options.progress_interval = progress_interval;
  // Signals and progress as for a run: the calling thread polls, with the GIL.
  PythonSession session(progress, main_thread);
  ExperimentOptions relay;
  session.attach(relay);
  options.stop_requested = relay.stop_requested;
  if (!progress.is_none())
    options.progress = [&relay](const EnsembleProgress& e) {
      ProgressEvent p;
      p.t = static_cast<double>(e.done);
      p.t_end = static_cast<double>(e.total);
      p.frames = e.done;
      p.total_frames = e.total;
      p.session_seconds = e.seconds;
      p.done = e.finished;
      relay.progress(p);
    };
  Team& team = process_team();
  options.team = &team;
  if (team.size() > 1 && !team.is_root()) options.progress = nullptr;
  EnsembleOutcome outcome;
  int raised_on = 0;  // 1 + the lowest rank whose Python term raised (0: none)
  {
    py::gil_scoped_release release;
    // As the command line does: a process that fails before the team has agreed on this ensemble
    // agrees with its error code (the others then stop with PeerFailure); a failure after that
    // ends every process.
    const int agreements = team.agreements();
    try {
      outcome = run_ensemble(spec, options);
    } catch (const PeerFailure& e) {
      throw std::runtime_error("normdyn.ensemble: another MPI process failed (exit code " +
                               std::to_string(e.exit_code) + "); its error is on its standard error");
    } catch (const InputError& e) {
      team.fail_collective(static_cast<int>(ExitCode::bad_input), e.what(), agreements);
      throw;
    } catch (const std::exception& e) {
      team.fail_collective(static_cast<int>(ExitCode::io_failure), e.what(), agreements);
      throw;
    }
    // A Python term that raised in a member on some processes only: every process learns it, so
    // that all of them raise rather than some returning as if nothing had failed.
    if (team.size() > 1) {
      const int top = team.max(errors->first ? team.size() - team.rank() : 0);
      raised_on = top == 0 ? 0 : team.size() - top + 1;
    } else if (errors->first) {
      raised_on = 1;
    }
  }
  session.rethrow_pending();
  // Stopped without a Python exception pending here: by another process (rank 0's progress callback
  // raised, or a signal reached rank 0 alone), or by a stop that left no exception.
  if (outcome.status == RunStatus::interrupted) {
    PyErr_SetString(PyExc_KeyboardInterrupt, outcome.message.c_str());
    throw py::error_already_set();
  }
  if (team.size() > 1 && !team.is_root()) {
    if (raised_on == 0) return py::none();
    py::dict out;  // no statistics here: they are rank 0's
    out["term_exception"] = errors->first ? errors->first : py::none();
    out["term_raised_on"] = raised_on - 1;
    return out;
  }
  const GridFile grid = ensemble_grid(outcome.result);
  py::dict out;
  out["attrs"] = grid_attributes(grid.attributes);
  py::list dims;
  std::map<std::string, py::ssize_t> sizes;
  for (const auto& d : grid.dimensions) {
    const auto n = static_cast<py::ssize_t>(std::visit([](const auto& x) { return x.size(); }, d.coordinate));
    sizes[d.name] = n;
    dims.append(py::make_tuple(d.name, grid_values(d.coordinate, {n}), grid_attributes(d.attributes)));
  }
  out["dims"] = dims;
  py::list vars;
  for (const auto& v : grid.variables) {
    std::vector<py::ssize_t> shape;
    for (const auto& d : v.dimensions) shape.push_back(sizes.at(d));
    vars.append(py::make_tuple(v.name, v.dimensions, grid_values(v.values, shape), grid_attributes(v.attributes)));
  }
  out["variables"] = vars;
  out["status"] = std::string(to_string(outcome.status));
  out["message"] = outcome.message;
  out["seconds"] = outcome.seconds;
  out["resumed"] = outcome.resumed;
  out["term_exception"] = errors->first ? errors->first : py::none();
  out["term_raised_on"] = raised_on == 0 ? py::object(py::none()) : py::object(py::int_(raised_on - 1));
  return out;
}

}  // namespace

namespace {
// The messages name files, whose names may be in any encoding the OS accepts: decoded as Python
// decodes file names (surrogateescape), so that a name that is not UTF-8 reads as os.fsdecode gives it.
void set_error(PyObject* type, const char* message) {
  if (PyObject* text = PyUnicode_DecodeFSDefault(message)) {
    PyErr_SetObject(type, text);
    Py_DECREF(text);
  } else {
    PyErr_Clear();
    PyErr_SetString(type, message);
  }
}
}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "normdyn's C++ core: runs, resumes, analysis, configuration (use the package normdyn)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      set_error(PyExc_ValueError, e.what());
    } catch (const IoError& e) {
      set_error(PyExc_OSError, e.what());
    }
  });
  m.def("run", &run, py::arg("toml"), py::arg("source"), py::arg("overrides"), py::arg("output"), py::arg("force"),
        py::arg("threads"), py::arg("progress"), py::arg("progress_interval"), py::arg("main_thread"),
        py::arg("command_line"), py::arg("config_file") = "", py::arg("qkv") = py::none(),
        py::arg("tokens") = py::none(), py::arg("score_bias") = py::none(), py::arg("terms") = py::none());
  m.def("resume", &resume, py::arg("path"), py::arg("threads"), py::arg("progress"), py::arg("progress_interval"),
        py::arg("main_thread"), py::arg("command_line"), py::arg("terms") = py::none());
  m.def("ensemble", &ensemble, py::arg("sweep_text"), py::arg("source"), py::arg("output"), py::arg("force"),
        py::arg("threads"), py::arg("quantiles"), py::arg("trajectories"), py::arg("member_figures"),
        py::arg("progress"), py::arg("progress_interval"), py::arg("main_thread"), py::arg("command_line"),
        py::arg("qkv") = py::none(), py::arg("tokens") = py::none(), py::arg("score_bias") = py::none(),
        py::arg("config_file") = "", py::arg("terms") = py::none());
  m.def(
      "processes", [] { return process_team().size(); },
      "the processes of this launch (1 without an MPI launcher); starts MPI under one");
  m.def(
      "recovery_needed",
      [](const std::string& path) {
        switch (recovery_needed(path)) {
          case Recovery::killed_plain_session:
            return std::string("killed_plain_session");
          case Recovery::failed_write:
            return std::string("failed_write");
          case Recovery::none:
            break;
        }
        return std::string();
      },
      "why `path` is unreadable until a resume recovers it (\"\" if it is not): \"killed_plain_session\" or "
      "\"failed_write\"");
  m.def(
      "verify_frames",
      [](const std::string& path) -> std::optional<std::size_t> { return verify_run_file(path, "path"); },
      "checks every complete frame of a run file against its checksums, by the rules of `normdyn verify` (OSError "
      "for a damaged file or the first frame that does not match); how many it checked, None for a file written "
      "before checksums");
  m.def(
      "frame_checksum_mismatch",
      [](const std::string& path) {
        try {
          (void)verify_run_file(path, "path");
        } catch (const InputError&) {
          // Not a run file (or none at all): normdyn.load says why in its own words.
        } catch (const IoError& e) {
          // A file a resume must first recover: normdyn.load says so, naming normdyn.resume.
          if (recovery_needed(path) == Recovery::none) return std::string(e.what());
        }
        return std::string();
      },
      "what `normdyn verify` finds wrong with `path` (a damaged file, or the first frame that does not match "
      "its checksum): \"\" if nothing, or if the file is not a run file or needs a resume to recover it");
  m.def(
      "limit_swmr_read_attempts",
      [](const std::string& path, std::int64_t file_access_list) {
        return limit_swmr_read_attempts(path, file_access_list);
      },
      "with no live writer of `path`, few metadata read attempts on h5py's file-access list (its id)");
  bind_analysis(m);
  // Paths as bytes (os.fsencode), so that any name the OS accepts passes.
  m.def(
      "read_text_file",
      [](const std::string& path, const std::string& noun) { return read_text_file(path, path, noun); },
      "the text of a regular file of at most 4 MiB, opened without blocking (ValueError for a FIFO, a "
      "device, a directory or a larger file)");
  m.def(
      "require_input_file",
      [](const std::string& path, const std::string& noun) { require_input_file(path, path, noun); },
      "ValueError unless `path` is a regular file (checked without blocking: a FIFO would hang h5py's open)");
  m.def("config_reference", &reference);
  m.def("resolve_config",
        [](const std::string& toml_text, const std::string& source, const std::vector<std::string>& overrides) {
          return to_toml(parse(toml_text, source, overrides));
        });
  m.def("versions", &version_dict);
  m.attr("__version__") = std::string(version());
}
