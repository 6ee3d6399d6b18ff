"""A small TOML writer for configuration values (the standard library's tomllib only reads).

Only what a normdyn configuration holds: tables of tables, strings, booleans, integers, floats
(including inf and nan), and arrays of these. Anything else is a ValueError naming the key.
"""
from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name: str) -> str:
    if not isinstance(name, str):
        raise ValueError(f"{name!r}: configuration keys are strings")
    return name if _BARE_KEY.match(name) else _string(name)


def _string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def value(v, key: str = "value") -> str:
    """One Python value as a TOML value (the right-hand side of `key = ...`)."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "true" if bool(v) else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        text = repr(x)  # shortest representation that reads back to the same double
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(v, str):
        return _string(v)
    if hasattr(v, "__fspath__"):
        return _string(str(v))
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {value(x, f'{key}.{k}')}" for k, x in v.items()) + "}"
    if hasattr(v, "tolist") and not isinstance(v, (bytes, bytearray)):  # numpy arrays and scalars
        return value(v.tolist(), key)
    if isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray)):
        return "[" + ", ".join(value(x, f"{key}[{i}]") for i, x in enumerate(v)) + "]"
    raise ValueError(f"{key}: cannot write a {type(v).__name__} as a TOML value")


def dumps(config: Mapping) -> str:
    """A nested dict (sections → keys → values) as TOML text."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config: expected a dict of sections, got {type(config).__name__}")
    lines: list[str] = []
    _table(config, [], lines)
    return "\n".join(lines) + "\n"


def _table(table: Mapping, path: list[str], lines: list[str]) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    if path and (scalars or not tables):
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for k, v in scalars:
        lines.append(f"{_key(k)} = {value(v, '.'.join(path + [str(k)]))}")
    for k, v in tables:
        _table(v, path + [k], lines)
