"""normdyn.analyze, observables, analyze_options and schemes: the analysis of the command line, from
files and Datasets, particles and mean field, with no temporary file; one option table for the
command line's flags and Python's keywords."""
import json
import os
import re
import tempfile

import numpy as np
import pytest

import normdyn
from conftest import run_cli

MEANFIELD = {"model": {"kind": "meanfield", "scheme": "post", "beta": 16.0}, "meanfield": {"grid": 256},
             "init": {"kind": "von_mises", "centers": [0.5, 1.6, 2.9, 4.0, 5.3], "kappa": [1.0],
                      "weights": [1.0, 0.7, 1.3, 0.9, 1.1]},
             "solver": {"t_end": 20.0}, "output": {"samples": 41}}


def cli_report(tmp_path, run, *flags):
    out = tmp_path / "cli.json"
    run_cli("analyze", run, "--no-write", "--json", out, "-q", *flags)
    return json.loads(out.read_text())


def without_file(report):
    report = json.loads(json.dumps(report))
    report["run"]["file"] = None
    return report


def test_meanfield_file_and_dataset_as_the_command_line(tmp_path, monkeypatch):
    # Python writes no temporary file: one would land in this folder or beside the run.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TMPDIR", str(scratch))
    path = tmp_path / "mf.h5"
    ds = normdyn.run(MEANFIELD, output=path)
    cli = cli_report(tmp_path, path)
    files = sorted(os.listdir(tmp_path))
    assert cli["schema"] == "normdyn.analysis.meanfield/1"
    assert [w["code"] for w in cli["warnings"]] == ["under_resolved"]
    assert normdyn.analyze(path) == cli
    with normdyn.load(path) as loaded:
        assert normdyn.analyze(loaded) == cli  # the whole file: analyzed from it
        # A selection of frames is analyzed from its arrays, as the file cut to those frames would be.
        part = normdyn.analyze(loaded.isel(time=slice(0, 21)))
    assert part["run"]["file"] is None and part["run"]["frames"] == 21
    assert part["clusters"] == cli["clusters"][:21]
    assert normdyn.analyze(ds) == cli  # normdyn.run's Dataset of the file it wrote
    # In memory (no file): the same report but for the file's name.
    assert normdyn.analyze(normdyn.run(MEANFIELD)) == without_file(cli)
    assert list(scratch.iterdir()) == []
    assert sorted(os.listdir(tmp_path)) == files
    # Options reach the mean-field analysis too.
    assert len(normdyn.analyze(normdyn.run(MEANFIELD), modes=3)["modes"]) == 3
    assert normdyn.analyze(path, modes=3) == cli_report(tmp_path, path, "--modes", "3")


def test_particle_dataset_as_the_command_line(small_config, tmp_path):
    path = tmp_path / "p.h5"
    run_cli("run", small_config, "-o", path, "--quiet")
    cli = cli_report(tmp_path, path, "--threads", "1")
    with normdyn.load(path) as loaded:
        assert normdyn.analyze(loaded, threads=1) == cli
    memory = normdyn.run(small_config)
    assert normdyn.analyze(memory, threads=1) == without_file(cli)
    assert normdyn.analyze(memory, threads=1, law="power", fit_window=(1.0, 3.0)) == without_file(
        cli_report(tmp_path, path, "--threads", "1", "--law", "power", "--fit-window", "1:3"))


def test_one_option_table_for_flags_and_keywords(small_config, tmp_path):
    path = tmp_path / "p.h5"
    run_cli("run", small_config, "-o", path, "--quiet")
    options = normdyn.analyze_options()
    help_text = run_cli("analyze", "--help").stdout
    help_flags = set(re.findall(r"(--[a-z][a-z-]*)", help_text)) - {"--help"}
    # Every row is a flag, and the command line has no flag that is not a row.
    assert help_flags == {o["flag"] for o in options}
    assert normdyn.analyze.__doc__.count("\n      ") >= sum(o["python"] for o in options)

    # Every row open to Python is a keyword that takes a value of its type ...
    sample = {"float": None, "integer": None, "flag": False, "choice": None, "window": (0.5, 2.5),
              "path": None}
    for o in options:
        if not o["python"]:
            with pytest.raises(TypeError, match=o["name"]):
                normdyn.analyze(path, **{o["name"]: True})
            continue
        value = sample[o["type"]]
        if o["type"] == "float":
            value = float(o["default"])
        elif o["type"] == "integer":
            value = 1 if o["default"] == "auto" else int(o["default"])
        elif o["type"] == "choice":
            value = o["choices"][-1]
        elif o["type"] == "path":
            value = tmp_path / f"{o['name']}.out"
        kwargs = {"threads": 1, o["name"]: value}
        assert isinstance(normdyn.analyze(path, **kwargs), dict), o["name"]
        assert o["name"] in normdyn.analyze.__doc__
        if o["type"] != "flag":
            with pytest.raises(TypeError, match=o["name"]):
                normdyn.analyze(path, **{o["name"]: object()})
    # ... and nothing else is.
    with pytest.raises(TypeError, match="no_such_option"):
        normdyn.analyze(path, no_such_option=1)
    with pytest.raises(TypeError, match="'quiet'"):
        normdyn.analyze(path, quiet=True)
    # Values are checked by the table, once, for both: the same bound in both messages.
    with pytest.raises(ValueError, match=r"cluster_epsilon: must be in \[0, 2\], got 5"):
        normdyn.analyze(path, cluster_epsilon=5)
    bad = run_cli("analyze", path, "--cluster-epsilon", "5", check=False)
    assert bad.returncode == 2 and "--cluster-epsilon: must be in [0, 2], got 5" in bad.stderr
    with pytest.raises(TypeError, match="threads"):
        normdyn.analyze(path, threads=1.5)
    with pytest.raises(ValueError, match="fit_window"):
        normdyn.analyze(path, fit_window="5:1")
    # A Dataset in memory has no run file for an observables file to describe.
    with pytest.raises(ValueError, match="no_write"):
        normdyn.analyze(normdyn.run(small_config), no_write=False)


def test_observables_are_the_reports_series(small_config, tmp_path):
    ds = normdyn.run(small_config)
    report = normdyn.analyze(ds, threads=1)
    obs = normdyn.observables(ds, threads=1)
    assert obs.time.values.tolist() == ds.time.values.tolist()
    for name in ("energy", "variance", "mean_cosine", "diameter", "effective_rank", "mean_angular_speed", "cluster_count"):
        assert obs[name].dims == ("time",), name
        assert obs[name].attrs["units"] and obs[name].attrs["long_name"], name
    assert report["observables"]["series"] == []  # nothing written
    final = report["final"]
    for name in ("variance", "diameter", "energy", "mean_radius", "effective_rank"):
        assert obs[name].values[-1] == pytest.approx(final[name], rel=0, abs=0), name
    assert obs.cluster_count.values[-1] == final["cluster_count"]
    # The run's own observables (energy, variance, min_cosine) are the analysis' recomputed ones.
    np.testing.assert_allclose(obs.variance.values, ds.variance.values, rtol=1e-13, atol=0)
    with pytest.raises(TypeError, match="json"):
        normdyn.observables(ds, json=tmp_path / "x.json")

    mf = normdyn.run(MEANFIELD)
    m = normdyn.observables(mf)
    r = normdyn.analyze(mf)
    assert m.mode_amplitude.dims == ("time", "mode") and m.mode.values.tolist() == list(range(1, 9))
    assert m.mode_amplitude.values[-1].tolist() == r["final"]["mode_amplitude"]
    assert m.density_cluster_count.values.tolist() == [c["count"] for c in r["clusters"]]
    assert np.array_equal(m.narrowest_cluster_cells.values, mf.narrowest_cluster_cells.values)
    first = r["warnings"][0]["frames"][0]
    assert m.narrowest_cluster_cells.values[first] < 1 <= m.narrowest_cluster_cells.values[first - 1]


def test_schemes_state_their_theory():
    schemes = {s["key"]: s for s in normdyn.schemes()}

    def law(entry, **params):
        statements = entry["theory_at"](**params) if params else entry["theory"]
        return [(t["law"], t["parameter"]) for t in statements if t["law"]]

    assert law(schemes["post"]) == [("exponential", 2.0)]
    assert law(schemes["pre"]) == [("power", 2.0)]
    assert law(schemes["cod"]) == [("stretched_exponential", 4.0)]
    assert law(schemes["ngpt"], alpha=0.5) == [("exponential", 1.0)]
    assert law(schemes["ngpt"], alpha=0.5, alpha_decay=1.0) == [("power", 1.0)]
    assert law(schemes["ngpt"], alpha_decay=0.3) == []  # none of the named laws
    theorems = {t["theorem"] for t in schemes["pre"]["theory"]}
    assert {"Theorem 3.1", "Corollary of Theorem 3.1", "Theorem 4.1", "Theorem 4.3"} <= theorems
    for entry in schemes.values():
        for t in entry["theory"]:
            assert t["statement"] and t["hypotheses"], (entry["key"], t)
    with pytest.raises(TypeError, match="beta"):
        schemes["ngpt"]["theory_at"](beta=2.0)
    with pytest.raises(ValueError, match="alpha"):
        schemes["ngpt"]["theory_at"](alpha=-1.0)
