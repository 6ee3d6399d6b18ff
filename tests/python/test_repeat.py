"""A run made with the user's own arrays repeats from its file: normdyn.run(normdyn.load(f)) and
`normdyn run --from FILE` read Q, K, V, the tokens and the feed-forward weights stored in it and give
the same frames bit for bit; Q, K, V [k, d, d] with one head are read as k layers, aloud."""
import numpy as np
import pytest

import normdyn
from conftest import run_cli


def own_arrays():
    rng = np.random.default_rng(5)
    d = 3
    q, k, v = (np.eye(d) + 0.3 * rng.standard_normal((d, d)) for _ in range(3))
    tokens = rng.standard_normal((9, d))
    a, omega = rng.standard_normal((4, d)), rng.standard_normal(4)
    return (q, k, v), tokens, (a, omega)


CONFIG = {"model": {"scheme": "peri", "beta": 2.0}, "solver": {"t_end": 2.0}, "output": {"samples": 5}}


def test_run_of_a_loaded_file_repeats_it_bit_for_bit(tmp_path):
    qkv, tokens, ff = own_arrays()
    first = normdyn.run(CONFIG, qkv=qkv, tokens=tokens, feedforward=ff, output=tmp_path / "a.h5")
    with normdyn.load(tmp_path / "a.h5") as ds:
        again = normdyn.run(ds)
    np.testing.assert_array_equal(again.direction.values, first.direction.values)
    np.testing.assert_array_equal(again.radius.values, first.radius.values)
    # The in-memory Dataset repeats too.
    np.testing.assert_array_equal(normdyn.run(first).direction.values, first.direction.values)


def test_run_from_reads_the_stored_arrays(tmp_path):
    qkv, tokens, ff = own_arrays()
    normdyn.run(CONFIG, qkv=qkv, tokens=tokens, feedforward=ff, output=tmp_path / "a.h5")
    run_cli("run", "--from", tmp_path / "a.h5", "-o", tmp_path / "b.h5", "-q")
    with normdyn.load(tmp_path / "a.h5") as a, normdyn.load(tmp_path / "b.h5") as b:
        np.testing.assert_array_equal(a.direction.values, b.direction.values)
        np.testing.assert_array_equal(a.radius.values, b.radius.values)


def test_feedforward_weights_of_a_file_are_those_run(tmp_path):
    import h5py
    _, _, (a, omega) = own_arrays()
    with h5py.File(tmp_path / "w.h5", "w") as f:
        f["a"], f["omega"] = a, omega
    c = {**CONFIG, "feedforward": {"weights": "file", "file": str(tmp_path / "w.h5")}}
    first = normdyn.run(c, output=tmp_path / "a.h5")
    with h5py.File(tmp_path / "w.h5", "w") as f:  # the weights file changes afterwards
        f["a"], f["omega"] = 2 * a, omega
    with normdyn.load(tmp_path / "a.h5") as ds:
        again = normdyn.run(ds)
    np.testing.assert_array_equal(again.direction.values, first.direction.values)
    run_cli("run", "--from", tmp_path / "a.h5", "-o", tmp_path / "b.h5", "-q")
    with normdyn.load(tmp_path / "b.h5") as b:
        np.testing.assert_array_equal(b.direction.values, first.direction.values)


def test_qkv_of_k_matrices_with_one_head_are_layers_said_aloud(tmp_path):
    import h5py
    rng = np.random.default_rng(2)
    q = np.eye(3) + 0.1 * rng.standard_normal((2, 3, 3))
    with pytest.warns(UserWarning, match=r"read as 2 layers; set model.heads = 2 for heads"):
        normdyn.run(CONFIG, qkv=(q, q, q))
    with h5py.File(tmp_path / "m.h5", "w") as f:
        f["Q"], f["K"], f["V"] = q, q, q
    c = {**CONFIG, "model": {**CONFIG["model"], "qkv": "file", "qkv_file": str(tmp_path / "m.h5")}}
    (tmp_path / "c.toml").write_text(normdyn.to_toml(c))
    p = run_cli("run", tmp_path / "c.toml", "-o", tmp_path / "r.h5")
    assert "read as 2 layers; set model.heads = 2 for heads" in p.stderr
    with pytest.warns(UserWarning, match="read as 2 layers"):
        normdyn.run(c)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        normdyn.run(c, set={"model.heads": 2})
