"""The warnings of results the program itself flags as doubtful, raised where the user looks: by
normdyn.run, normdyn.load (the run file's /summary@warnings) and normdyn.analyze (the report's
warnings). Theorem checks skipped for a reason are not warnings: they stay in the report."""
from __future__ import annotations

import math
import warnings


class ResultWarning(UserWarning):
    """A result normdyn itself flags as doubtful (its code is the warning's `code` attribute). Turn
    them into errors with ``warnings.simplefilter("error", normdyn.ResultWarning)``."""

    code = "result"


class ResolutionWarning(ResultWarning):
    """`under_resolved`: a mean-field run's clusters became narrower than a grid cell, so merges and
    cluster counts after that time may be grid artifacts (rerun with a finer meanfield.grid)."""

    code = "under_resolved"


class FitWarning(ResultWarning):
    """`inconclusive_fit`: the analysis fitted a decay rate that is not one to cite (the report's
    rate_fit.problem says why)."""

    code = "inconclusive_fit"


_CLASSES = {cls.code: cls for cls in (ResolutionWarning, FitWarning)}


def _emit(code, message, where, stacklevel):
    cls = _CLASSES.get(code, ResultWarning)
    text = f"{where}: {code}: {message}" if where else f"{code}: {message}"
    warnings.warn(cls(text), stacklevel=stacklevel + 1)


def summary_warnings(attrs):
    """(code, message) of a run's /summary@warnings (lines "code: message"); for files written
    before that attribute, the under_resolved of @under_resolved_since."""
    text = attrs.get("warnings")
    if isinstance(text, bytes):
        text = text.decode()
    if isinstance(text, str) and text:
        out = []
        for line in text.splitlines():
            code, _, message = line.partition(": ")
            out.append((code.strip(), message.strip()))
        return out
    since = attrs.get("under_resolved_since")
    try:
        if since is not None and math.isfinite(float(since)):
            return [("under_resolved", f"clusters narrower than a grid cell from t = {float(since):g}")]
    except (TypeError, ValueError):
        pass
    return []


def warn_summary(attrs, where=None, stacklevel=2):
    """Emits the warnings of a run's summary (run and load)."""
    for code, message in summary_warnings(attrs):
        _emit(code, message, where, stacklevel + 1)


def warn_report(report, stacklevel=2):
    """Emits the warnings of an analysis report (analyze)."""
    where = (report.get("run") or {}).get("file")
    for w in report.get("warnings") or []:
        _emit(w.get("code", "result"), w.get("message", ""), where, stacklevel + 1)
