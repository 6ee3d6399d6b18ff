"""normdyn from Python: run, resume and load experiments as labelled xarray Datasets.

    import normdyn
    ds = normdyn.run({"model": {"scheme": "pre", "n": 64}}, set={"model.beta": 4}, progress=True)
    ds.direction.sel(time=10.0)          # (token, component)
    ds.energy.plot()
    report = normdyn.analyze(ds)         # the JSON report of `normdyn analyze`, as a dict
    series = normdyn.observables(ds)     # its per-frame series, as a Dataset

The runs are the command line's: same configuration, validation, integrators and run files
(`normdyn.run(c, output="r.h5")` writes what `normdyn run c -o r.h5` writes); normdyn.ensemble
integrates a whole grid of configurations in one call and keeps their statistics. Bad input raises
ValueError with the command line's one-line message naming the key; file problems raise OSError;
a numerical failure is the Dataset's `status` attribute, not an exception.
"""
from __future__ import annotations

import os
import pathlib
import signal
import sys
import threading
from collections.abc import Mapping

# Passive OpenMP waiting unless the user chose a policy (as the command line does): libgomp reads
# OMP_WAIT_POLICY / GOMP_SPINCOUNT once, when it is loaded, i.e. by the import of _core below, and
# its default spinning makes the kernel many times slower when another process holds a core. A
# libgomp loaded earlier by another package keeps the policy it started with.
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "passive"

from . import _core, _toml  # noqa: E402
from ._dataset import from_core as _from_core, load as _load, open_in_this_process as _open_here
from ._sweep import load_sweep as _load_sweep
from . import _ensemble
from ._analysis import alternatives, analyze, analyze_options, observables, schemes
from ._warnings import FitWarning, ResolutionWarning, ResultWarning, warn_summary as _warn_summary
from ._terms import Term, TermError
from . import _terms

__version__ = _core.__version__
__all__ = ["run", "resume", "ensemble", "load", "verify", "load_sweep", "analyze", "observables", "analyze_options", "schemes",
           "alternatives", "config_reference", "to_toml", "ResultWarning", "ResolutionWarning", "FitWarning", "Term",
           "TermError"]


def to_toml(config: Mapping) -> str:
    """A configuration dict (nested sections, as the TOML file) as TOML text."""
    return _toml.dumps(config)


def _config_text(config):
    """(TOML text, source name) of the `config` argument of run()."""
    if config is None:
        return "", "defaults"
    if isinstance(config, Mapping):
        return _toml.dumps(config), "config"
    if isinstance(config, (pathlib.PurePath, os.PathLike)):
        return _read_config(os.fspath(config))
    if isinstance(config, str):
        # A string naming an existing file is a path; anything else is TOML text.
        if "\n" not in config and len(config) < 4096 and os.path.isfile(config):
            return _read_config(config)
        # One line with neither a key nor a table is not TOML: a path to a file that is not there.
        line = config.strip()
        if line and "\n" not in line and not line.startswith("#") and "=" not in line and "[" not in line:
            raise FileNotFoundError(f"{config}: no such configuration file")
        return config, "config"
    raise ValueError(f"config: expected a dict, a path or TOML text, got {type(config).__name__}")


def _read_config(path):
    # As the command line reads it: a regular file only, opened without blocking (a FIFO would
    # hang the call, /dev/zero fill the memory), at most 4 MiB (ValueError otherwise).
    if not os.path.lexists(path):
        raise FileNotFoundError(f"{path}: no such configuration file")
    return _core.read_text_file(os.fsencode(path), "configuration file"), path


def _force(force):
    """force= as a bool: any other value (force="no" is truthy) is refused, never taken for True."""
    if not isinstance(force, bool):
        raise TypeError(f"force: expected True or False, got {force!r}")
    return force


def _numeric(name, array):
    """`array` as given, refused unless it holds real numbers: the float conversion would drop the
    imaginary part of a complex array (numpy warns, once) and fail on strings without naming them."""
    import numpy as np
    a = np.asarray(array)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected an array of real numbers, got dtype {a.dtype} "
                        f"({'complex' if a.dtype.kind == 'c' else 'not numbers'})")
    return a


def _overrides(set):
    if set is None:
        return []
    if not isinstance(set, Mapping):
        raise ValueError(f"set: expected a dict of dotted keys, e.g. {{'model.beta': 4}}, got {type(set).__name__}")
    out = []
    for key, value in set.items():
        if not isinstance(key, str) or "." not in key:
            raise ValueError(f"set: {key!r}: expected a dotted key such as 'model.beta'")
        out.append(f"{key}={_toml.value(value, key)}")
    return out


def _feedforward(set, feedforward):
    """The overrides of run(feedforward=(a, omega)): the term's weights written into the configuration
    (feedforward.weights = "inline", feedforward.a row-major, feedforward.omega), so that the stored
    configuration reproduces the run alone."""
    if feedforward is None:
        return []
    import numpy as np
    if not isinstance(feedforward, (tuple, list)) or len(feedforward) != 2:
        raise ValueError("feedforward: expected a tuple (a, omega) of arrays [M, d] and [M]")
    a = np.ascontiguousarray(_numeric("feedforward: a", feedforward[0]), dtype=float)
    omega = np.ascontiguousarray(_numeric("feedforward: omega", feedforward[1]), dtype=float)
    if a.ndim != 2 or 0 in a.shape:
        raise ValueError(f"feedforward: a: expected an array [M, d], got shape {list(a.shape)}")
    if omega.shape != (a.shape[0],):
        raise ValueError(f"feedforward: omega: expected an array [M] = [{a.shape[0]}], got shape {list(omega.shape)}")
    if not (np.isfinite(a).all() and np.isfinite(omega).all()):
        raise ValueError("feedforward: the weights must be finite")
    for key in set or {}:
        if key.rstrip(":") in ("feedforward.weights", "feedforward.a", "feedforward.omega", "feedforward.file"):
            raise ValueError(f"set: {key!r} contradicts feedforward=(a, omega)")
    return _overrides({"feedforward.weights:": "inline", "feedforward.a": [float(v) for v in a.ravel()],
                       "feedforward.omega": [float(v) for v in omega]})


def _score_bias(score_bias):
    """The score bias of run(score_bias=) as an array [n, n] of floats (None: none)."""
    if score_bias is None:
        return None
    import numpy as np
    b = np.ascontiguousarray(score_bias, dtype=float)
    if b.ndim != 2 or b.shape[0] != b.shape[1] or 0 in b.shape:
        raise ValueError(f"score_bias: expected an array [n, n], got shape {list(b.shape)}")
    return b


def _given(text, source, overrides, set, qkv, tokens):
    """The arrays of run(qkv=, tokens=) in the shapes _core takes ([layers, heads, d, d] each; [n, d])
    and the overrides they imply: model.qkv = "given" and model.d (and model.heads for 4-D arrays),
    init.kind = "given", model.n and model.d, as set= would set them."""
    import numpy as np
    extra = {}
    if tokens is not None:
        tokens = np.ascontiguousarray(_numeric("tokens", tokens), dtype=float)
        if tokens.ndim != 2 or 0 in tokens.shape:
            raise ValueError(f"tokens: expected an array [n, d], got shape {list(tokens.shape)}")
        extra.update({"model.n": tokens.shape[0], "model.d": tokens.shape[1], "init.kind:": "given"})
    if qkv is not None:
        if not isinstance(qkv, (tuple, list)) or len(qkv) != 3:
            raise ValueError("qkv: expected a tuple (Q, K, V) of arrays [d, d], [heads, d, d], [layers, d, d] "
                             "or [layers, heads, d, d]")
        arrays = [np.ascontiguousarray(_numeric(f"qkv: {name}", a), dtype=float) for name, a in zip("QKV", qkv)]
        shape = arrays[0].shape
        for name, a in zip("QKV", arrays):
            if a.shape != shape:
                raise ValueError(f"qkv: {name} has shape {list(a.shape)}, Q has {list(shape)}")
        if not 2 <= len(shape) <= 4 or shape[-1] != shape[-2] or 0 in shape:
            raise ValueError(f"qkv: expected [d, d], [heads, d, d], [layers, d, d] or [layers, heads, d, d] "
                             f"(square matrices), got shape {list(shape)}")
        d = shape[-1]
        if tokens is not None and tokens.shape[1] != d:
            raise ValueError(f"qkv: matrices of size {d} x {d} do not fit tokens of dimension {tokens.shape[1]}")
        if len(shape) == 4:
            extra["model.heads"] = shape[1]
        elif len(shape) == 3:
            # [heads, d, d] when the configuration has several heads, else [layers, d, d].
            resolved = _core.resolve_config(text, os.fsencode(source), overrides + _overrides(extra))
            import tomllib
            heads = int(tomllib.loads(resolved).get("model", {}).get("heads", 1))
            if heads > 1 and shape[0] != heads:
                raise ValueError(f"qkv: {shape[0]} matrices with model.heads = {heads}: expected [heads, d, d] or "
                                 f"[layers, heads, d, d]")
            if heads == 1 and shape[0] > 1:
                import warnings
                warnings.warn(f"qkv: Q, K, V {list(shape)} read as {shape[0]} layers; set model.heads = {shape[0]} "
                              "for heads", stacklevel=3)
        arrays = [a.reshape((1, 1) + shape) if len(shape) == 2 else
                  a.reshape((1,) + shape) if len(shape) == 3 and heads > 1 else
                  a.reshape((shape[0], 1, d, d)) if len(shape) == 3 else a for a in arrays]
        qkv = tuple(arrays)
        extra.update({"model.d": d, "model.qkv:": "given"})
    for key, value in extra.items():
        mine = (set or {}).get(key.rstrip(":"))
        if mine is not None and mine != value:
            raise ValueError(f"set: {key.rstrip(':')} = {mine!r} contradicts the arrays given "
                             f"({'tokens' if key in ('model.n', 'init.kind:') else 'qkv'}: {value!r})")
    return qkv, tokens, _overrides(extra)


def _threads(threads):
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise ValueError(f"threads: expected an int (0: all cores), got {threads!r}")
    return threads


def _progress_listener(progress, description, members=False):
    """(callback, close) for progress=True/False/a callable; members: the bar of an ensemble."""
    if not progress:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    from ._progress import MembersBar, ProgressBar
    bar = (MembersBar if members else ProgressBar)(description)
    return bar.update, bar.close


def _main_thread():
    return threading.current_thread() is threading.main_thread()


class _TerminateAsInterrupt:
    """Under an MPI launcher Ctrl-C reaches the processes as SIGTERM (Open MPI's mpirun forwards it
    so), whose Python default ends a process without a word. For the call, SIGTERM raises
    KeyboardInterrupt as SIGINT does, unless the script handles SIGTERM itself."""

    def __init__(self, active, output):
        self.active = active and _main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        kept = ("nothing was kept (no output file)" if output is None else
                f"the members done are in {output}.journal; the same call continues")
        self.message = f"SIGTERM (Ctrl-C to the MPI launcher): {kept}"

    def _raise(self, signum, frame):
        raise KeyboardInterrupt(self.message)

    def __enter__(self):
        if self.active:
            self.previous = signal.signal(signal.SIGTERM, self._raise)

    def __exit__(self, *exc):
        if self.active:
            signal.signal(signal.SIGTERM, self.previous)


def _command_line(call):
    return f"{call} (Python {sys.version.split()[0]}, normdyn {__version__})"


def _from_dataset(ds, set, qkv, tokens, feedforward, score_bias, terms):
    """run(ds): the configuration a Dataset ran with, its given arrays and its feed-forward weights as
    run (for a run file), and the supplied terms matched by name to those it recorded."""
    import json
    import numpy as np
    if "config" not in ds.attrs:
        raise ValueError("config: a Dataset without the configuration it ran with (attrs['config'])")
    text = ds.attrs["config"]
    if qkv is None and "qkv_Q" in ds:
        qkv = tuple(np.asarray(ds[f"qkv_{m}"].values) for m in "QKV")
    if tokens is None and "initial_tokens" in ds:
        tokens = np.asarray(ds["initial_tokens"].values)
    if score_bias is None and "score_bias" in ds:
        score_bias = np.asarray(ds["score_bias"].values)
    if feedforward is None and ds.attrs.get("source") and 'weights = "file"' in text:
        import h5py
        with h5py.File(ds.attrs["source"], "r") as f:
            if "parameters/feedforward" in f:
                g = f["parameters/feedforward"]
                feedforward = (np.asarray(g["a"][()]), np.asarray(g["omega"][()]))
    recorded = json.loads(ds.attrs.get("terms", "[]"))
    entries = _terms.entries(terms)
    if recorded or entries:
        entries = _terms.match(recorded, entries) if recorded else entries
    return text, "the Dataset's configuration", set, qkv, tokens, feedforward, score_bias, entries


def run(config=None, *, set=None, output=None, force=False, threads=None, progress=False, qkv=None, tokens=None,
        feedforward=None, score_bias=None, terms=None):
    """Runs one experiment and returns its xarray Dataset.

    config: a dict of sections ({"model": {"scheme": "pre"}}), a pathlib.Path or a string naming
      an existing TOML file, or any other string (TOML text); None: every default.
    set: dotted keys applied like `--set` ({"model.beta": 4}), values written as TOML values; a key
      ending in ":" ({"solver.method:": "discrete"}) is `--set KEY:=VALUE`: it also drops the keys of
      the base that conflict with it (here solver.rtol, atol).
    output: also write the run file (as `normdyn run -o output`); refuses an existing file unless
      force=True (True or False: any other value raises TypeError). normdyn.resume(output)
      continues an interrupted run.
    threads: threads of the attention kernel (overrides solver.threads; 0: all cores).
    progress: True shows a progress bar (tqdm: a widget in a notebook, a line on a terminal); a
      callable receives every progress event (a dict: t, t_end, steps, frames, fraction, ...).
    qkv: your own attention matrices, a tuple (Q, K, V) of numpy arrays of real numbers (complex,
      string and object arrays raise TypeError, as for tokens and feedforward), each [d, d], [layers, d, d]
      (layer k on depths [k, k + 1), the last held), [heads, d, d] (when model.heads > 1) or
      [layers, heads, d, d]: sets model.qkv = "given", model.d (and model.heads for 4-D arrays).
    tokens: your own initial tokens, an array [n, d] of rows x_j (direction x_j / norm(x_j), radius
      norm(x_j)): sets init.kind = "given", model.n and model.d. The Dataset holds both (qkv_Q, qkv_K,
      qkv_V, initial_tokens), and so does the run file (/parameters/qkv, /parameters/initial_tokens);
      the configuration names them by digest (model.qkv_digest, init.tokens_digest), which load,
      analyze and resume check, so that they need nothing else.
    feedforward: the feed-forward term F(x) = sum_m omega_m sigma(<a_m, x>) a_m added to the
      attention, a tuple (a, omega) of arrays [M, d] and [M] (sigma: feedforward.activation): sets
      feedforward.weights = "inline", feedforward.a and feedforward.omega, so that the configuration
      stored with the run holds the weights.
    score_bias: a fixed additive score bias B, an array [n, n] (entries finite, or -inf to mask the
      key): scores beta <Q x_i, K x_j> + B_ij; sets attention.bias = "matrix". It composes with
      attention.mask and attention.normalizer (a key outside the mask or at -inf weighs 0). The
      Dataset holds it (score_bias), the run file too (/parameters/score_bias), the configuration its
      digest (attention.bias_digest).
    terms: your own terms of the block output, U_i = A_i + F_i + f_i(t, theta, r): a list of Python
      callables f(t, theta, r) -> array [n, d], compiled callbacks (numba cfunc, ctypes, scipy
      LowLevelCallable) or normdyn.Term (see its help). The run file records each (name, kind, params,
      digest, source). A term that raises ends the run (status user_term_failed) and its exception
      is raised here, traceback kept, with the frames so far as `exc.dataset` (and in `output`);
      NaN or a wrong shape raises normdyn.TermError naming the term.
    config may also be a Dataset (normdyn.load(file), or a run's): the run it holds is repeated with
      its configuration, given arrays and feed-forward weights, frame for frame; a run that used terms
      needs them again (terms=[...], matched by name; a term whose source changed is a warning).

    Ctrl-C ends the run (the file, if any, stays complete and resumable) and raises
    KeyboardInterrupt. A numerical failure (diverged, step_underflow, max_steps) is
    ds.attrs["status"] with every frame up to it. A result the run flags as doubtful (a mean-field
    run whose clusters became narrower than a grid cell: under_resolved) is ds.attrs["warnings"]
    and emits a normdyn.ResolutionWarning (a normdyn.ResultWarning, a UserWarning).
    """
    force = _force(force)
    if _is_dataset(config):
        text, source, set, qkv, tokens, feedforward, score_bias, entries = _from_dataset(
            config, set, qkv, tokens, feedforward, score_bias, terms)
    else:
        text, source = _config_text(config)
        entries = _terms.entries(terms)
    overrides = _overrides(set) + _feedforward(set, feedforward)
    qkv, tokens, given = _given(text, source, overrides, set, qkv, tokens)
    overrides += given
    score_bias = _score_bias(score_bias)
    if output is not None:
        output = os.fspath(output)
        if force and _open_here(output):
            raise OSError(f"{output}: open in this process (close the Dataset of normdyn.load first: ds.close())")
    callback, close = _progress_listener(progress, "normdyn.run")
    try:
        # The file the configuration came from: the run file never replaces it.
        config_file = source if isinstance(config, (str, os.PathLike)) and source == os.fspath(config) else ""
        # Paths as bytes: any name the OS accepts (str holds other encodings as surrogates).
        path = None if output is None else os.fsencode(output)
        # The configuration file's name as bytes too (a name of another encoding holds surrogates).
        result = _core.run(text, os.fsencode(source), overrides, path, force, _threads(threads), callback, 0.2,
                           _main_thread(), _command_line("normdyn.run"), os.fsencode(config_file), qkv, tokens,
                           score_bias, entries)
    finally:
        close()
    ds = _from_core(result, source=output, qkv=qkv, tokens=tokens, score_bias=score_bias)
    if entries:
        ds.attrs["terms"] = _terms.recorded_text(entries)
    _warn_layers(ds.attrs.get("message", ""))
    _terms.finish(result, ds)
    _warn_summary(ds.attrs, output, stacklevel=2)
    return ds


def _is_dataset(value):
    return type(value).__name__ == "Dataset" and type(value).__module__.startswith("xarray")


def _warn_layers(message):
    # The summary's note on Q, K, V [k, d, d] of model.qkv_file read as layers.
    if "read as" in message and "model.heads" in message:
        import warnings
        warnings.warn(message[message.index("Q, K, V"):], stacklevel=3)


def ensemble(config=None, *, axes, over="init.seed", set=None, output=None, force=False, pair_cosine=0.999,
             cluster_epsilon=1e-3, quantiles=(0.1, 0.5, 0.9), trajectories=None, threads=0, progress=False,
             member_figures=True, qkv=None, tokens=None, feedforward=None, score_bias=None, terms=None):
    """Integrates every point of `axes` (their Cartesian product over `config`) in this process and
    returns the ensemble statistics as an xarray Dataset (what `normdyn ensemble` writes).

    config, set: as for run(). axes: dotted keys to lists of values, e.g. {"model.beta": [1, 4],
      "init.seed": range(1, 2049)}; the points are numbered in nested loops, the last axis fastest.
    over: the axis of repetitions (None: every point is its own group). Dimensions: one per axis
      other than `over` (named as load_sweep names them) and `time`; per member also `over`'s.
    Variables per (axes, time): pair_fraction (mean fraction of token pairs with cosine >
      pair_cosine), sync_probability, cluster_count (mean; clusters join at cosine > 1 -
      cluster_epsilon), one_minus_mean_cosine and mean_radius (means; *_quantiles at `quantiles`);
      per member: status, t_sync, final_cluster_count, t_reached, steps.
    output: also write the ensemble file (HDF5, opens in xarray). An existing output holding this
      ensemble is returned without integrating anything; one holding a part of it (fewer seeds,
      fewer values of an axis) is extended: its members are read back, the others integrated, and
      the file replaced by the whole (the same statistics as the ensemble run at once, bit for bit);
      one holding members this call lacks is refused (ValueError) unless force=True, which starts
      over. The output is never the configuration file the ensemble was read from (nor its
      members' input files), even with force=True. Per member the file keeps its figures per time (member_pair_fraction and three more)
      and a digest of its configuration (member_config), by which it is recognized;
      member_figures=False leaves the figures out (about 1.4 kB per member at 200 sample times: a
      much smaller file for large ensembles, which a later call can then neither return nor
      extend). Interrupted (Ctrl-C: KeyboardInterrupt, whose message names the journal
      OUTPUT.journal of the members done), the same call continues where it stopped.
    trajectories: point indices whose full trajectories (direction, radius) are kept.
    threads: members integrated at once (0: every core); each member is single-threaded and equals
      normdyn.run of its configuration with solver.threads = 1, bit for bit.
    progress: True shows a bar of members ("37/120 members", rate and ETA; tqdm: a widget in a
      notebook, a line on a terminal); a callable receives every event (a dict: frames = members
      finished, total_frames = members in all, done = the last event).
    Under an MPI launcher (`mpirun -n P python3 script.py`, every process making the same call) the
      members are spread over the processes as by `mpirun normdyn ensemble`, with the same
      statistics: rank 0 returns the Dataset (and writes `output`), the other processes return None.
      Ctrl-C to the launcher raises KeyboardInterrupt on every process (it arrives as SIGTERM, which
      raises it during the call unless the script has a SIGTERM handler of its own). An ensemble
      stopped on rank 0 alone (its progress callback raised) raises KeyboardInterrupt on the others.
    qkv, tokens: your own matrices and initial tokens, as for run(), given to every member (an axis
      over model.n, model.d or model.heads then does not fit them: ValueError); the Dataset and the
      file hold them (qkv_Q, qkv_K, qkv_V, initial_tokens), the configurations their digests.
    feedforward: the feed-forward term (a, omega), as for run(), in every member's configuration.
    score_bias: the score bias matrix B [n, n], as for run(), given to every member.
    terms: your own terms, as for run(), in every member. Compiled callbacks run on the members' threads
      at once; Python callables take the GIL in turn. The first exception a Python term raised is
      raised here once the ensemble has returned. Under an MPI launcher the process where it was
      raised raises it, and the others normdyn.TermError naming that process (rank 0's with the
      ensemble as `dataset`); the members it ended have status user_term_failed.
    """
    force = _force(force)
    text, source = _config_text(config)
    overrides = _overrides(set) + _feedforward(set, feedforward)
    qkv, tokens, given = _given(text, source, overrides, set, qkv, tokens)
    score_bias = _score_bias(score_bias)
    resolved = _core.resolve_config(text, os.fsencode(source), overrides + given)
    sweep = _ensemble.sweep_text(resolved, axes, over, pair_cosine, cluster_epsilon)
    if output is not None:
        output = os.fspath(output)
    try:
        quantiles = [float(q) for q in quantiles]
    except (TypeError, ValueError):
        raise ValueError(f"quantiles: expected a sequence of numbers in [0, 1], got {quantiles!r}") from None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise ValueError(f"threads: expected an int (0: all cores), got {threads!r}")
    points = [] if trajectories is None else [int(p) for p in trajectories]
    if any(p < 0 for p in points):
        raise ValueError(f"trajectories: point indices are >= 0, got {points}")
    callback, close = _progress_listener(progress, "normdyn.ensemble", members=True)
    try:
        with _TerminateAsInterrupt(_core.processes() > 1, output):
            # The file the configuration came from: the ensemble's output never replaces it.
            config_file = source if isinstance(config, (str, os.PathLike)) and source == os.fspath(config) else ""
            path = None if output is None else os.fsencode(output)
            result = _core.ensemble(sweep, "normdyn.ensemble", path, force, threads, quantiles, points,
                                    bool(member_figures), callback, 0.2, _main_thread(), _command_line("normdyn.ensemble"),
                                    qkv, tokens, score_bias, os.fsencode(config_file), _terms.entries(terms))
    except KeyboardInterrupt as e:
        journal = None if output is None else output + ".journal"
        if journal is None or journal in str(e) or not os.path.exists(journal):
            raise
        said = f"{e}: " if str(e) else ""
        raise KeyboardInterrupt(f"{said}the members done are in {journal}; the same call (same configuration, "
                                "axes and output) continues from there") from e
    finally:
        close()
    if result is not None and result.get("term_exception") is not None:
        raise result["term_exception"]
    if result is not None and result.get("term_raised_on") is not None:
        # Under an MPI launcher: a Python term raised on another process, which raises it.
        error = _terms.TermError(f"a term of the user's raised on MPI process {result['term_raised_on']} "
                                 "(its exception is raised there); the members it ended have status user_term_failed")
        error.dataset = _ensemble.dataset(result) if "variables" in result else None
        raise error
    return None if result is None else _ensemble.dataset(result)


def resume(path, *, threads=None, progress=False, terms=None):
    """Continues an interrupted or killed run file from its last checkpoint and returns
    normdyn.load(path). The frames are those the uninterrupted run would have written.

    terms: the terms the run used (as for run()), matched by name; a run that used terms is not
    resumed without them, and a term whose source differs from the recorded one is a warning."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such run file")
    if _open_here(path):
        raise OSError(f"{path}: open in this process (close the Dataset of normdyn.load first: ds.close())")
    callback, close = _progress_listener(progress, "normdyn.resume")
    try:
        result = _core.resume(os.fsencode(path), _threads(threads), callback, 0.2, _main_thread(),
                              _command_line("normdyn.resume"), _terms.entries(terms))
    finally:
        close()
    ds = _load(path)
    _terms.finish(result, ds)
    _warn_summary(ds.attrs, path, stacklevel=2)
    return ds


def load(path, verify=True):
    """The Dataset of a run file (particles or mean field), read lazily: selecting frames or tokens
    reads only those. A file still being written is opened as a SWMR reader (call again to see new
    frames); a killed run's file loads with every flushed frame. The file stays open until
    ds.close() (or `with normdyn.load(path) as ds:`); close it before resuming or overwriting it
    from the same process.

    verify: first check the file as `normdyn verify` does (the same check of the C++ core): every
    frame against the file's checksums (one CRC-32 per frame), which must cover the frames the run
    recorded, raising OSError at the first frame whose bytes changed since they were written or
    naming the damage. This reads the file once;
    verify=False skips it, to open a large archive without reading it (normdyn.verify checks later).

    A run the program flagged as doubtful (its /summary@warnings, e.g. under_resolved) emits a
    normdyn.ResultWarning (normdyn.ResolutionWarning for under_resolved), as normdyn.run does. Values
    read after the file is closed raise ValueError: load again, or ds.load() them while it is open."""
    if verify:
        _verify_before_load(path)
    ds = _load(path)
    _warn_summary(ds.attrs, os.fspath(path), stacklevel=2)
    return ds


def verify(path):
    """Checks every complete frame of a run file against its checksums (the CRC-32 of each frame's
    rows, /checksums/frames), by the rules of `normdyn verify`. Returns how many frames it checked, or
    None for a file written before normdyn stored checksums; raises OSError naming the first frame
    that does not match or the damage, ValueError for a file that is not a run file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    return _core.verify_frames(path)


def _verify_before_load(path):
    # Only a readable run file can mismatch; load describes the others in its own words.
    mismatch = _core.frame_checksum_mismatch(os.fspath(path))
    if mismatch:
        raise OSError(mismatch)


def load_sweep(directory):
    """The index of a `normdyn sweep` directory as a Dataset: the sweep's axes as dimensions (named
    by the last part of each key, the full key where two collide; the key is in each coordinate's
    attributes), the per-run results and series, and the ensemble statistics. Failed points hold
    NaN and their status."""
    return _load_sweep(directory)


def config_reference():
    """Every configuration key: a list of dicts with key, type, default, description."""
    return _core.config_reference()


def __getattr__(name):
    # Figures load matplotlib only when asked for.
    if name == "plots":
        import importlib
        try:
            module = importlib.import_module(".plots", __name__)
        except ModuleNotFoundError as e:
            if e.name == f"{__name__}.plots":
                raise AttributeError(f"module {__name__!r} has no attribute 'plots'") from None
            raise
        globals()["plots"] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
