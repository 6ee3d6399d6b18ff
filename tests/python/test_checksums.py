"""Frame checksums: the CRC-32 the file documents, computed here with Python's zlib, and a changed bit
found by every reader."""
import re
import zlib

import h5py
import numpy as np
import pytest

import normdyn

MOVING_GRID = {"model": {"kind": "meanfield", "scheme": "pre", "beta": 2.0},
               "meanfield": {"grid": 32, "radial_grid": 8},
               "init": {"kind": "perturbed_uniform", "radius_width": 0.1}, "solver": {"t_end": 1.0},
               "output": {"samples": 5}}


def crc_of_frames(path):
    """Each frame's CRC-32 as /checksums/frames@description says: its rows in the listed datasets."""
    with h5py.File(path) as f:
        c = f["checksums/frames"]
        covers = c.attrs["covers"].split("\n")
        assert c.attrs["algorithm"] == "crc32"
        stored = c[...]
        ours = [zlib.crc32(b"".join(np.ascontiguousarray(f[p][i]).tobytes() for p in covers)) for i in range(len(stored))]
        return covers, stored, np.array(ours, dtype=np.int64)


@pytest.mark.parametrize("kind", ["particles", "meanfield"])
def test_the_stored_checksums_are_the_documented_crc32(small_config, tmp_path, kind):
    out = tmp_path / "r.h5"
    ds = normdyn.run(small_config if kind == "particles" else MOVING_GRID, output=out, threads=1)
    covers, stored, ours = crc_of_frames(out)
    assert len(stored) == ds.sizes["time"]
    assert np.array_equal(stored, ours)
    if kind == "particles":
        assert covers[:3] == ["/particles/tokens/direction/value", "/particles/tokens/direction/time",
                              "/particles/tokens/direction/step"]
        assert "/observables/energy/value" in covers
    else:
        assert "/fields/density/r" in covers  # the moving radial cells are part of each frame
    assert normdyn.verify(out) == ds.sizes["time"]


def test_a_changed_bit_is_found_by_load_verify_and_analyze(small_config, tmp_path):
    out = tmp_path / "r.h5"
    normdyn.run(small_config, output=out, threads=1)
    with h5py.File(out, "r+") as f:
        v = f["particles/tokens/direction/value"]
        frame = v[4]
        frame.view(np.int64)[1, 2] ^= 1  # the last bit of one component: still finite, still on the sphere
        v[4] = frame
    pattern = r"r\.h5: damaged run file: frame 4 \(t = .*\) does not match its checksum in /checksums/frames"
    with pytest.raises(OSError, match=pattern):
        normdyn.load(out)
    with pytest.raises(OSError, match=pattern):
        normdyn.verify(out)
    with pytest.raises(OSError, match=pattern):
        normdyn.analyze(out)
    # Unchecked, the lazy load opens it (a large archive is browsed without reading it whole).
    with normdyn.load(out, verify=False) as ds:
        assert ds.sizes["time"] > 4


def _finished(small_config, tmp_path, name="r.h5"):
    out = tmp_path / name
    ds = normdyn.run(small_config, output=out, threads=1)
    return out, ds.sizes["time"]


@pytest.mark.parametrize("keep", [3, 0])
def test_checksums_cut_short_are_damage_for_load_and_verify(small_config, tmp_path, keep):
    """A /checksums/frames cut short is not a shorter run: the summary says how many frames were written."""
    out, frames = _finished(small_config, tmp_path)
    with h5py.File(out, "r+") as f:
        f["checksums/frames"].resize((keep,))
    pattern = (rf"r\.h5: damaged run file: /checksums/frames holds the checksums of {keep} frames, but "
               rf"/summary@frames says the run wrote {frames}")
    with pytest.raises(OSError, match=pattern):
        normdyn.load(out)
    with pytest.raises(OSError, match=pattern):
        normdyn.verify(out)


FORGED_CHECKSUMS = {
    "empty_covers": ("f['checksums/frames'].attrs['covers'] = ''", "@covers lists no datasets"),
    "missing_covers": ("del f['checksums/frames'].attrs['covers']", "@covers is missing"),
    "bogus_covers": ("f['checksums/frames'].attrs['covers'] = '/particles/tokens/direction/time'",
                     "@covers does not list the datasets of this file's frames"),
    "string_checksums": ("old = f['checksums/frames']; values = old[...]; covers = old.attrs['covers']; "
                         "del f['checksums/frames']; d = f.create_dataset('checksums/frames', "
                         "data=[str(v) for v in values], dtype=h5py.string_dtype()); d.attrs['covers'] = covers",
                         "has elements of the wrong type"),
    "soft_link_loop": ("del f['checksums/frames']; f['checksums/frames'] = h5py.SoftLink('/checksums/frames')",
                       "/checksums/frames is a soft link"),
}


@pytest.mark.parametrize("forgery", sorted(FORGED_CHECKSUMS))
def test_load_applies_the_rules_of_verify(small_config, tmp_path, forgery):
    """normdyn.load refuses exactly what `normdyn verify` refuses (one check in the C++ core)."""
    out, _ = _finished(small_config, tmp_path)
    code, message = FORGED_CHECKSUMS[forgery]
    with h5py.File(out, "r+") as f:
        exec(code, {"f": f, "h5py": h5py, "np": np})
    with pytest.raises(OSError, match=r"r\.h5: damaged run file: .*" + re.escape(message)):
        normdyn.verify(out)
    with pytest.raises(OSError, match=r"r\.h5: damaged run file: .*" + re.escape(message)):
        normdyn.load(out)


def test_a_changed_checkpoint_is_refused_by_resume_and_its_frames_still_load(small_config, tmp_path):
    out, frames = _finished(small_config, tmp_path)
    with h5py.File(out, "r+") as f:
        f["summary"].attrs["status"] = "interrupted"
        g = f["checkpoint/" + "ab"[f["checkpoint/current"][0]]]
        # Its checksum is the documented CRC-32 of state and record.
        assert g["checksum"][0] == zlib.crc32(g["state"][...].tobytes() + g["record"][...].tobytes())
        x = g["state"][...]
        x.view(np.int64)[4] ^= 1
        g["state"][...] = x
    with pytest.raises(OSError, match=r"r\.h5: damaged run file: checkpoint /checkpoint/[ab] does not match its "
                                      r"checksum"):
        normdyn.resume(out)
    assert normdyn.verify(out) == frames
    with normdyn.load(out) as ds:
        assert ds.sizes["time"] == frames
