"""Bit-for-bit comparison of two HDF5 files (datasets and attributes), except named provenance."""
import h5py
import numpy as np

# Attributes that say when, where and how a file was made, not what it holds.
PROVENANCE = {"command_line", "created_utc", "host", "wall_seconds", "flush_seconds", "write_seconds", "flushes", "resume_log",
              "message", "threads"}


def _equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "SOU" or b.dtype.kind in "SOU":
        return a.shape == b.shape and a.astype(str).tolist() == b.astype(str).tolist()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# The build's git revision, baked in when each program was linked (the command line and the module
# may have been linked at different commits of a working tree).
REVISION = {("h5md/creator", "version"), ("parameters", "normdyn_revision")}


def differences(path_a, path_b, skip_attrs=PROVENANCE, skip_paths=("/checkpoint",)):
    out = []
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        names_a, names_b = [], []
        fa.visit(names_a.append)
        fb.visit(names_b.append)
        if sorted(names_a) != sorted(names_b):
            out.append(f"objects differ: {sorted(set(names_a) ^ set(names_b))}")
        for name in ["/"] + sorted(set(names_a) & set(names_b)):
            if any(name.lstrip("/").startswith(p.lstrip("/")) for p in skip_paths if p != "/"):
                continue
            oa, ob = fa[name], fb[name]
            for k in sorted(set(oa.attrs) | set(ob.attrs)):
                if k in skip_attrs or k in ("DIMENSION_LIST", "REFERENCE_LIST") or (name.strip("/"), k) in REVISION:
                    continue
                if k not in oa.attrs or k not in ob.attrs:
                    out.append(f"{name}@{k}: only in one file")
                elif not _equal(oa.attrs[k], ob.attrs[k]):
                    out.append(f"{name}@{k}: {oa.attrs[k]!r} != {ob.attrs[k]!r}")
            if isinstance(oa, h5py.Dataset) and not _equal(oa[()], ob[()]):
                out.append(f"{name}: values differ")
    return out
