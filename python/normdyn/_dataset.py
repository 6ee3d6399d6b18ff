"""xarray Datasets of runs: from the in-memory result of normdyn.run, and from run files (lazily).

Both paths build the same Dataset through `_assemble`, so that `normdyn.run(c)` and
`normdyn.load(file of the same run)` differ only in where the arrays live.
"""
from __future__ import annotations

import os
import threading

import numpy as np
import xarray as xr
from xarray.backends import BackendArray
from xarray.core import indexing

# units and descriptions of the variables normdyn writes (time t is depth, dimensionless). The
# long_name is short (SHORT_NAMES), since xarray's .plot() writes it on the axes; the sentence is
# the `description` attribute.
_PARTICLE_ATTRS = {
    "time": ("1", "time t (depth of the network)"),
    "step": ("1", "accepted integrator steps before the frame (layers for the discrete method)"),
    "token": ("1", "token index j"),
    "component": ("1", "component of R^d"),
    "direction": ("1", "unit direction theta_j on the sphere S^(d-1)"),
    "radius": ("1", "radius r_j = |x_j|"),
    "mass": ("1", "mass of each token (weighted particles; the masses sum to 1)"),
}
_OBSERVABLE_ATTRS = {
    "energy": ("1", "energy E = sum_jk exp(beta <theta_j, theta_k>) (+ 2 beta n sum_j Phi(theta_j) with a "
               "feed-forward term)"),
    "variance": ("1", "variance 1 - |mean direction|^2"),
    "min_cosine": ("1", "smallest pairwise cosine <theta_j, theta_k>"),
    "diameter": ("rad", "largest geodesic distance between two tokens"),
    "mean_angular_speed": ("1/time", "mean over tokens of |d theta_j/dt|"),
}
SHORT_NAMES = {
    "time": "time t", "step": "steps", "token": "token j", "component": "component", "direction": "direction θ_j",
    "radius": "radius r_j", "mass": "mass m_j", "energy": "energy E", "variance": "Var", "min_cosine": "min cosine",
    "diameter": "diameter", "mean_angular_speed": "angular speed", "mean_cosine": "mean cosine γ",
    "one_minus_mean_cosine": "1 − γ", "normalized_energy": "E/(n² e^β)", "cluster_count": "clusters",
    "mean_radius": "mean radius", "density": "density ρ", "angular_density": "angular density ρ", "phi": "angle φ",
    "r": "radius r", "narrowest_cluster_cells": "narrowest cluster (cells)", "mode_amplitude": "|c_k|/c_0",
    "w1_to_uniform": "W1 to uniform", "density_cluster_count": "clusters", "max_density": "max density",
    "initial_tokens": "initial tokens", "qkv_Q": "Q", "qkv_K": "K", "qkv_V": "V",
}


def short_name(name):
    """The long_name of a variable: a few words (xarray writes it on the axes of .plot())."""
    return SHORT_NAMES.get(name, name.replace("_", " "))
# Extra axes of observables that `normdyn analyze` adds ([frames, ...]).
_OBSERVABLE_DIMS = {
    "cluster_label": ("token",),
    "cluster_id": ("cluster",),
    "cluster_size": ("cluster",),
    "cluster_centre": ("cluster", "component"),
}
_SUMMARY_COUNTERS = ("status", "message", "t_reached", "frames", "accepted_steps", "rejected_steps",
                     "rhs_evaluations", "wall_seconds", "max_norm_drift", "flushes", "flush_seconds")


def _attrs(units, description, name=None):
    """units, a short long_name (of `name`) and the description sentence."""
    out = {"units": units, "long_name": short_name(name) if name else description}
    if name and description and description != out["long_name"]:
        out["description"] = description
    return out


def _radial_dim(axis_name):
    return "radial_cell" if axis_name == "r" else f"{axis_name}_cell"


def _assemble(*, particles, time, step, direction=None, radius=None, mass=None, observables=(),
              fields=(), attrs, qkv=None, tokens=None, score_bias=None):
    """observables: (name, array, extra dims, units, long_name); fields: dicts as _core returns;
    qkv, tokens: the arrays of model.qkv = "given" ([layers, heads, d, d] each) and init.kind = "given"."""
    t_units, t_name = _PARTICLE_ATTRS["time"]
    coords = {
        "time": ("time", time, _attrs(t_units, t_name, "time")),
        "step": ("time", step, _attrs(*_PARTICLE_ATTRS["step"], "step")),
    }
    data_vars = {}
    if particles:
        n, d = direction.shape[1], direction.shape[2]
        coords["token"] = ("token", np.arange(n), _attrs(*_PARTICLE_ATTRS["token"], "token"))
        coords["component"] = ("component", np.arange(d), _attrs(*_PARTICLE_ATTRS["component"], "component"))
        data_vars["direction"] = (("time", "token", "component"), direction,
                                  _attrs(*_PARTICLE_ATTRS["direction"], "direction"))
        data_vars["radius"] = (("time", "token"), radius, _attrs(*_PARTICLE_ATTRS["radius"], "radius"))
        if mass is not None:
            data_vars["mass"] = (("token",), mass, _attrs(*_PARTICLE_ATTRS["mass"], "mass"))
    for name, values, dims, units, long_name in observables:
        data_vars[name] = (("time",) + tuple(dims), values, _attrs(units, long_name, name))
    for field in fields:
        dims = ["time"]
        for axis in field["axes"]:
            if axis["moving"]:
                dim = _radial_dim(axis["name"])
                dims.append(dim)
                coords[axis["name"]] = (("time", dim), axis["centres"],
                                        _attrs(axis["unit"] or "1", axis["description"], axis["name"]))
            else:
                dims.append(axis["name"])
                coords[axis["name"]] = ((axis["name"],), axis["centres"],
                                        _attrs(axis["unit"] or "1", axis["description"], axis["name"]))
        data_vars[field["name"]] = (tuple(dims), field["value"],
                                    _attrs(field["unit"] or "1", field["description"], field["name"]))
    if qkv is not None:
        for name, values in zip("QKV", qkv):
            data_vars[f"qkv_{name}"] = (("qkv_layer", "head", "qkv_row", "qkv_column"), values,
                                        _attrs("1", f"given {name} of each layer and head (model.qkv = \"given\")",
                                               f"qkv_{name}"))
    if tokens is not None:
        data_vars["initial_tokens"] = (("token", "component"), tokens,
                                       _attrs("1", "given initial tokens x_j = r_j theta_j (init.kind = \"given\")",
                                              "initial_tokens"))
    if score_bias is not None:
        data_vars["score_bias"] = (("bias_row", "bias_column"), score_bias,
                                   _attrs("1", "score bias B added to the scores (attention.bias = \"matrix\"; -inf masks)",
                                          "score_bias"))
    return xr.Dataset(data_vars=data_vars, coords=coords, attrs=attrs)


def given_arrays(h5):
    """(qkv, tokens, score_bias) stored in a run file for model.qkv / init.kind = "given" and
    attention.bias = "matrix" (None where absent)."""
    p = h5["parameters"]
    qkv = tuple(np.asarray(p[f"qkv/{m}"][()]) for m in "QKV") if "qkv" in p else None
    tokens = np.asarray(p["initial_tokens/value"][()]) if "initial_tokens" in p else None
    score_bias = np.asarray(p["score_bias/value"][()]) if "score_bias" in p else None
    return qkv, tokens, score_bias


def recorded_terms(h5):
    """{"terms": JSON list of the user's terms the run recorded (name, kind, params, digest, rows)} or {}."""
    import json
    p = h5["parameters"]
    if "terms" not in p:
        return {}
    out = []
    for key in sorted(p["terms"].keys()):
        a = p["terms"][key].attrs
        out.append({"name": _text(a.get("name", key)), "kind": _text(a.get("kind", "")),
                    "params": json.loads(_text(a.get("params", "{}")) or "{}"), "digest": _text(a.get("digest", "")),
                    "rows": bool(a.get("rows", 0))})
    return {"terms": json.dumps(out)}


def _run_attrs(config, summary, versions, provenance=None, source=None):
    attrs = {"config": config}
    summary = dict(summary or {})
    attrs["status"] = summary.pop("status", "running")
    for k, v in summary.items():
        attrs[k] = v
    attrs.update({"version": versions.get("version", ""), "revision": versions.get("revision", "")})
    if provenance:
        attrs["threads"] = provenance.get("threads")
        attrs["command_line"] = provenance.get("command_line", "")
    if source is not None:
        attrs["source"] = os.fspath(source)
    return {k: v for k, v in attrs.items() if v is not None}


def from_core(result, source=None, qkv=None, tokens=None, score_bias=None):
    """The Dataset of normdyn.run from the dict of normdyn._core.run (arrays adopted, not copied)."""
    observables = []
    for name, values in (result.get("observables") or {}).items():
        units, long_name = _OBSERVABLE_ATTRS.get(name, ("1", name))
        observables.append((name, values, (), units, long_name))
    attrs = _run_attrs(result["config"], result.get("summary"), result["versions"], result.get("provenance"), source)
    return _assemble(particles=result["particles"], time=result["time"], step=result["step"],
                     direction=result.get("direction"), radius=result.get("radius"), mass=result.get("mass"),
                     observables=observables, fields=result.get("fields", ()), attrs=attrs, qkv=qkv,
                     tokens=tokens, score_bias=score_bias)


# ---- run files, lazily ----

class _H5File:
    """One h5py file shared by the lazy arrays of a Dataset: a finished file opened as a plain reader,
    a file being written (which a plain reader cannot open) as a SWMR reader."""

    def __init__(self, path, noun="run file"):
        import h5py
        self.path = os.fspath(path)
        self.lock = threading.Lock()
        from . import _core
        # A regular file only, checked without blocking: h5py's open of a FIFO would hang.
        _core.require_input_file(os.fsencode(self.path), noun)
        try:
            # Plain first, as the command line reads: a SWMR reader retries a metadata read that
            # fails its checksum a hundred times with growing sleeps, so a damaged file took minutes
            # to be reported instead of failing at once.
            self.file = h5py.File(self.path, "r")
        except OSError:
            # Flagged as being written: a SWMR reader. With no live writer (a killed one's file),
            # a metadata read that fails its checksum is damage, not a half-written block, and the
            # attempts are limited as the command line's readers limit them.
            from . import _core
            fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
            _core.limit_swmr_read_attempts(self.path, fapl.id)
            fid = h5py.h5f.open(os.fsencode(self.path), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ, fapl=fapl)
            self.file = h5py.File(fid)

    def __getitem__(self, name):
        return self.file[name]


class _H5Array(BackendArray):
    """An h5py dataset (its first `frames` frames) as an xarray backend array: indexing reads only
    the selected part of the file."""

    def __init__(self, h5, name, frames=None):
        self.h5 = h5
        self.name = name
        ds = h5[name]
        shape = ds.shape
        if frames is not None:
            shape = (min(frames, shape[0]),) + shape[1:]
        self.shape = shape
        self.dtype = ds.dtype

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.OUTER_1VECTOR,
                                                  self._raw)

    def _raw(self, key):
        key = tuple(key)
        with self.h5.lock:
            if not self.h5.file:
                # h5py's own words ("Not a location (invalid location ID)") do not say what happened.
                raise ValueError(f"{self.h5.path}: the Dataset's file is closed (ds.close(), or the end of `with "
                                 f"normdyn.load(...) as ds:`); load it again with normdyn.load({self.h5.path!r}), or "
                                 f"call ds.load() while it is open to keep its values in memory")
            ds = self.h5[self.name]
            # h5py reads increasing index lists only; the adapter hands us slices and sorted arrays.
            full = key + (slice(None),) * (len(self.shape) - len(key))
            if len(self.shape) and self.shape[0] != ds.shape[0] and isinstance(full[0], slice):
                full = (slice(*full[0].indices(self.shape[0])),) + full[1:]
            return np.asarray(ds[full])


def _lazy(h5, name, frames=None):
    return indexing.LazilyIndexedArray(_H5Array(h5, name, frames))


def _text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return value


def _plain(value):
    value = _text(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def open_in_this_process(path):
    """Whether h5py holds `path` open in this process (HDF5 then refuses to open it for writing)."""
    import h5py
    if not os.path.exists(path):
        return False
    for fid in h5py.h5f.get_obj_ids(types=h5py.h5f.OBJ_FILE):
        try:
            if os.path.samefile(fid.name.decode(), path):
                return True
        except (OSError, ValueError):
            continue
    return False


def load(path):
    """The Dataset of a run file, read lazily (see normdyn.load)."""
    import h5py
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    try:
        h5 = _H5File(path)
    except OSError as e:
        from . import _core
        why = _core.recovery_needed(path)
        if why == "failed_write":
            raise OSError(f"{path}: its last write failed (the file ends before the end HDF5 recorded: a full disk or a"
                          f" file-size limit, or a truncated copy); no process is writing it: normdyn.resume({path!r})"
                          " recovers it if the rest is intact") from None
        if why:
            raise OSError(f"{path}: left by a writer killed while it wrote outside SWMR mode (its summary, or the start"
                          f" of a resume); no process is writing it: normdyn.resume({path!r}) recovers it, unless the"
                          " session had begun its final writes") from None
        raise OSError(f"{path}: cannot open as an HDF5 run file ({e})") from None
    try:
        return _from_file(h5, path)
    except (KeyError, RuntimeError, OSError) as e:
        # h5py's errors for metadata that fails its checksum or points nowhere.
        h5.file.close()
        raise OSError(f"{path}: damaged run file ({e})") from None


def _checksummed(f):
    """[frames with their checksum written], or [] for a file written before frame checksums: a frame
    counts once its checksum is in the file, as for normdyn's own readers."""
    return [f["checksums/frames"].shape[0]] if "checksums" in f and "frames" in f["checksums"] else []


def _from_file(h5, path):
    """The Dataset of an open run file (load's body once the file is open)."""
    import h5py
    f = h5.file
    if "parameters" not in f or "config" not in f["parameters"].attrs:
        h5.file.close()
        raise ValueError(f"{path}: not a normdyn run file (no /parameters@config)")
    params = f["parameters"].attrs
    summary = {}
    if "summary" in f:
        for k in _SUMMARY_COUNTERS:
            if k in f["summary"].attrs:
                summary[k] = _plain(f["summary"].attrs[k])
        for k, v in f["summary"].attrs.items():
            if k not in summary:
                summary[k] = _plain(v)
    if not summary.get("status"):
        summary["status"] = "running"
    versions = {"version": _plain(params.get("normdyn_version", "")), "revision": _plain(params.get("normdyn_revision", ""))}
    provenance = {"threads": _plain(params.get("threads")), "command_line": _plain(params.get("command_line", ""))}
    attrs = _run_attrs(_text(params["config"]), summary, versions, provenance, source=path)
    attrs.update(recorded_terms(f))

    if "particles" in f and "tokens" in f["particles"]:
        tokens = f["particles/tokens"]
        lengths = [tokens["direction/time"].shape[0], tokens["direction/value"].shape[0],
                   tokens["radius/value"].shape[0]]
        frames = min(lengths + _checksummed(f))
        time = tokens["direction/time"][:frames]
        step = tokens["direction/step"][:frames]
        observables = []

        def collect(source):
            present = {o[0] for o in observables}
            g_all = source.file["observables"] if "observables" in source.file else {}
            for name in list(g_all.keys()) if g_all else []:
                g = g_all[name]
                if name in present or not isinstance(g, h5py.Group) or "value" not in g:
                    continue
                ds = g["value"]
                if ds.shape[0] < frames:
                    continue  # an observable of another (shorter) set of frames: not on this time axis
                dims = _OBSERVABLE_DIMS.get(name) or tuple(f"{name}_{i}" for i in range(1, ds.ndim))
                units, long_name = _OBSERVABLE_ATTRS.get(name, ("1", None))
                units = _plain(ds.attrs.get("unit", g.attrs.get("unit", units)))
                long_name = long_name or _plain(g.attrs.get("description", ds.attrs.get("description", name)))
                observables.append((name, _lazy(source, f"observables/{name}/value", frames), dims[: ds.ndim - 1],
                                    units, long_name))

        collect(h5)
        # `normdyn analyze` writes its observables beside the run, into RUN.observables.h5.
        sibling = (path[:-3] if path.endswith(".h5") else path) + ".observables.h5"
        extra = None
        if os.path.exists(sibling):
            try:
                extra = _H5File(sibling, "observables file")
                collect(extra)
            except (OSError, ValueError):
                extra = None  # an unreadable sibling hides nothing of the run itself
        mass = _lazy(h5, "particles/tokens/mass") if "mass" in tokens else None
        qkv, given_tokens, score_bias = given_arrays(f)
        ds = _assemble(particles=True, time=time, step=step,
                       direction=_lazy(h5, "particles/tokens/direction/value", frames),
                       radius=_lazy(h5, "particles/tokens/radius/value", frames), mass=mass,
                       observables=observables, attrs=attrs, qkv=qkv, tokens=given_tokens, score_bias=score_bias)

        def close():
            h5.file.close()
            if extra is not None:
                extra.file.close()
        ds.set_close(close)
        return ds

    if "fields" in f:
        group = f["fields"]
        order = _text(group.attrs["order"]) if "order" in group.attrs else list(group.keys())
        if isinstance(order, str):
            order = [name for name in order.split(",") if name]
        else:
            order = [_text(x) for x in order]
        fields = []
        frames = min([group[name]["time"].shape[0] for name in order] + _checksummed(f))
        first = group[order[0]]
        for name in order:
            g = group[name]
            value = g["value"]
            axes_names = [_text(a) for a in value.attrs["axes"]] if "axes" in value.attrs else []
            axes_names = [a for a in axes_names if a != "time"]
            axes = []
            for a in axes_names:
                ds = g[a]
                moving = ds.ndim == 2
                axes.append({
                    "name": a, "moving": moving,
                    "unit": _plain(ds.attrs.get("unit", "")), "description": _plain(ds.attrs.get("description", "")),
                    "centres": _lazy(h5, f"fields/{name}/{a}", frames) if moving else ds[:],
                })
            fields.append({"name": name, "unit": _plain(value.attrs.get("unit", "")),
                           "description": _plain(value.attrs.get("description", g.attrs.get("description", ""))),
                           "axes": axes, "value": _lazy(h5, f"fields/{name}/value", frames)})
        ds = _assemble(particles=False, time=first["time"][:frames], step=first["step"][:frames],
                       fields=fields, attrs=attrs)
        ds.set_close(h5.file.close)
        return ds
    h5.file.close()
    raise ValueError(f"{path}: a run file without /particles/tokens or /fields")
