"""A progress bar over the library's progress events: a widget in a notebook, a line on a
terminal (tqdm.auto chooses), silent when neither is attached. Without ipywidgets (Debian's
python3-ipywidgets, not among the quickstart's packages) a notebook gets the line too."""
from __future__ import annotations

import importlib.util
import sys


def _tqdm_class():
    # tqdm.auto would fall back to the line as well, but with a warning on every first bar.
    if importlib.util.find_spec("ipywidgets") is None:
        from tqdm.std import tqdm
        return tqdm
    from tqdm.auto import tqdm
    return tqdm


class ProgressBar:
    def __init__(self, description):
        self._bar = None
        self._tqdm = _tqdm_class()
        self._description = description

    def update(self, event):
        if self._bar is None:
            self._bar = self._tqdm(total=event["t_end"], initial=event["t_begin"], desc=self._description,
                                   unit="t", unit_scale=False, dynamic_ncols=True, file=sys.stderr,
                                   bar_format="{desc}: {percentage:3.0f}%|{bar}| t = {n:.4g}/{total:.4g} "
                                              "[{elapsed}<{remaining}{postfix}]")
        self._bar.n = min(event["t"], event["t_end"])
        rate = event["session_steps"] / event["session_seconds"] if event["session_seconds"] > 0 else 0.0
        self._bar.set_postfix_str(f"{event['steps']} steps, {rate:.3g} steps/s", refresh=False)
        self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()


class MembersBar(ProgressBar):
    """The bar of an ensemble: members finished of all (those kept from the journal included), with
    the rate and the ETA of this session's members."""

    def update(self, event):
        # The ensemble's events count members in frames / total_frames.
        if self._bar is None:
            self._bar = self._tqdm(total=event["total_frames"], initial=event["frames"], desc=self._description,
                                   unit=" members", dynamic_ncols=True, file=sys.stderr,
                                   bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} members "
                                              "[{elapsed}<{remaining}, {rate_fmt}]")
        self._bar.n = event["frames"]
        self._bar.refresh()
