"""The user's terms of the block output (normdyn.run(..., terms=[...])): U_i = A_i + F_i + f_i(t, theta, r).

A term is a Python callable f(t, theta, r) -> array [n, d], or a compiled callback with the C signature

    void f(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user)

(a numba cfunc, a ctypes function pointer, a scipy.LowLevelCallable), each optionally wrapped in
normdyn.Term to name it and record its parameters. This module brings every entry to the dict that
_core takes (python/_terms.cpp) and computes the digest the run file records.
"""
from __future__ import annotations

import ctypes
import hashlib
import inspect
import json
import numbers
import warnings


class TermError(ValueError):
    """A term of the user's failed (returned NaN or Inf, or the wrong shape): the run ended with
    status user_term_failed. `dataset` holds the frames recorded before."""


class Term:
    """A term of the block output U_i = A_i + F_i + f_i(t, theta, r), named in the run file.

    f: a Python callable f(t, theta, r) -> array [n, d] (theta [n, d] the unit directions and r [n]
      the radii, read-only views valid during the call), or a compiled callback with the C signature
      void f(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user)
      (row-major; `out` is zeroed and the term adds into it): a numba cfunc, a ctypes function
      pointer, or a scipy.LowLevelCallable (its user_data is `user`). Compiled callbacks run without
      the GIL, on the thread that evaluates the right-hand side.
    name: the term's name in the run file (default: the function's __name__); resume and repeats match
      terms by it.
    params: a dict of parameters, recorded with the run (JSON). A compiled callback without user data
      of its own receives its numbers, in order, as a double array through `user`.
    rows: True declares that row i of the output depends on token i only, so that the term may be
      called on a block of tokens (row ranges, sharded runs); False: always on every token.
    """

    def __init__(self, f, *, name=None, params=None, rows=False):
        if f is None:
            raise ValueError("normdyn.Term: expected a callable or a compiled callback, got None")
        self.f = f
        self.kind = _kind(f)
        self.name = name if name is not None else _default_name(f)
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"normdyn.Term: name: expected a non-empty string, got {self.name!r}")
        self.params = dict(params or {})
        try:
            self.params_json = json.dumps(self.params, sort_keys=False)
        except TypeError as e:
            raise ValueError(f"normdyn.Term '{self.name}': params must be JSON (numbers, strings, lists): {e}") from None
        self.rows = bool(rows)

    def __repr__(self):
        return f"normdyn.Term({self.name!r}, kind={_kind(self.f)!r}, params={self.params!r}, rows={self.rows})"


def _default_name(f):
    for attr in ("__name__", "name"):
        name = getattr(f, attr, None)
        if isinstance(name, str) and name and name != "<lambda>":
            return name
    py = _python_function(f)
    if py is not None and getattr(py, "__name__", "<lambda>") != "<lambda>":
        return py.__name__
    raise ValueError("normdyn.Term: give the term a name (name=...): it has none of its own")


def _is_low_level_callable(f):
    return type(f).__name__ == "LowLevelCallable" and type(f).__module__.startswith("scipy")


def _kind(f):
    if hasattr(f, "address") and hasattr(f, "ctypes") or isinstance(f, ctypes._CFuncPtr) or _is_low_level_callable(f):
        return "compiled"
    if callable(f):
        return "python"
    raise ValueError(f"a term must be a callable f(t, theta, r) or a compiled callback, got {type(f).__name__}")


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]


def _pointer(value, what):
    """An address as an int from a capsule, a ctypes pointer or an int (0 for None)."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if type(value).__name__ == "PyCapsule":
        return _capsule_pointer(value, _capsule_name(value))
    if isinstance(value, ctypes._Pointer) or isinstance(value, (ctypes.c_void_p, ctypes._CFuncPtr)):
        return ctypes.cast(value, ctypes.c_void_p).value or 0
    raise ValueError(f"{what}: expected a capsule, a ctypes pointer or an integer address, got {type(value).__name__}")


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text else ""


def _python_function(f):
    """The Python function of a numba cfunc (or dispatcher), else None."""
    return getattr(f, "py_func", None) or getattr(f, "_pyfunc", None)


def _source(f):
    target = _python_function(f) or f
    try:
        return inspect.getsource(target)
    except (OSError, TypeError):
        return ""


def _numbers(term):
    values = []
    for key, value in term.params.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None
        values.append(float(value))
    return values


def entries(terms):
    """The dicts of _core for terms=[...] (a list of callables, compiled callbacks or normdyn.Term)."""
    if terms is None:
        return None
    if isinstance(terms, (Term,)) or callable(terms) and not isinstance(terms, (list, tuple)):
        terms = [terms]
    if not isinstance(terms, (list, tuple)):
        raise ValueError(f"terms: expected a list of terms (callables, compiled callbacks or normdyn.Term), "
                         f"got {type(terms).__name__}")
    out, names = [], set()
    for entry in terms:
        term = entry if isinstance(entry, Term) else Term(entry)
        if term.name in names:
            raise ValueError(f"terms: two terms are named {term.name!r} (name them with normdyn.Term(f, name=...))")
        names.add(term.name)
        kind = _kind(term.f)
        source = _source(term.f)
        item = {"name": term.name, "kind": kind, "params": term.params_json, "rows": term.rows,
                "source": source, "digest": _digest(source), "term": term}
        if kind == "python":
            item["function"] = term.f
        else:
            item.update(_compiled(term))
        out.append(item)
    return out


def _compiled(term):
    f = term.f
    user_owner = None
    if _is_low_level_callable(f):
        address = _pointer(f.function, f"the term '{term.name}'")
        user = _pointer(f.user_data, f"the term '{term.name}': user_data")
    elif isinstance(f, ctypes._CFuncPtr):
        address, user = ctypes.cast(f, ctypes.c_void_p).value or 0, 0
    else:  # numba cfunc
        address, user = int(f.address), 0
    if user == 0 and term.params:
        values = _numbers(term)
        if values is not None:
            # The parameters, in order, as the callback's `user`: double* p = (double*) user.
            user_owner = (ctypes.c_double * len(values))(*values)
            user = ctypes.addressof(user_owner)
    if not address:
        raise ValueError(f"terms: the term '{term.name}' has a null function pointer")
    return {"address": address, "user": user, "owner": (f, user_owner)}


def recorded_text(entries):
    """The Dataset's attrs["terms"] of a run with these entries: JSON [{name, kind, params, digest, rows}],
    as load() reads it from the run file."""
    return json.dumps([{"name": e["name"], "kind": e["kind"], "params": json.loads(e["params"]), "digest": e["digest"],
                        "rows": e["rows"]} for e in entries])


def match(recorded_terms, supplied):
    """The supplied term entries in the recorded order; refuses a recorded term not supplied and a
    supplied one the run did not use; warns where a digest differs."""
    given = {e["name"]: e for e in (supplied or [])}
    for name in given:
        if name not in {r["name"] for r in recorded_terms}:
            used = ", ".join(repr(r["name"]) for r in recorded_terms) or "none"
            raise ValueError(f"terms: the run has no term {name!r} (its terms: {used})")
    out = []
    for r in recorded_terms:
        if r.get("kind") == "library":
            continue
        e = given.get(r["name"])
        if e is None:
            raise ValueError(f"terms: this run used the term {r['name']!r}; pass terms=[...] "
                             f"(a normdyn.Term named {r['name']!r})")
        if r.get("digest") and e["digest"] and r["digest"] != e["digest"]:
            warnings.warn(f"the term {r['name']!r} differs from the one the run used (digest {e['digest']}, "
                          f"recorded {r['digest']})", stacklevel=3)
        out.append(e)
    return out


def finish(result, ds):
    """Warnings and the term's exception after a run: re-raises what a Python term raised (its
    traceback kept), or TermError for NaN or a wrong shape, with `dataset` = the frames kept."""
    for w in result.get("term_warnings", ()) or ():
        warnings.warn(w, stacklevel=3)
    error = result.get("term_exception")
    status = ds.attrs.get("status") if ds is not None else result.get("status")
    if error is not None:
        try:
            error.dataset = ds
        except AttributeError:
            pass
        raise error
    if status == "user_term_failed":
        message = ds.attrs.get("message", "") if ds is not None else result.get("message", "")
        err = TermError(message)
        err.dataset = ds
        raise err


__all__ = ["Term", "TermError", "entries", "match", "finish", "recorded_text"]
