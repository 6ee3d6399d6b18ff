"""normdyn.run(qkv=, tokens=): your own matrices and initial tokens from numpy, against the same
model read from files; stored in the Dataset and the run file; refused when they do not fit."""
import json

import h5py
import numpy as np
import pytest

import normdyn

CONFIG = {"model": {"scheme": "pre", "beta": 2.0}, "solver": {"t_end": 2.0}, "output": {"samples": 5}}


def matrices(shape, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(scale=0.5, size=shape) for _ in range(3))


def tokens(n, d, seed=3):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_given_arrays_equal_the_same_model_from_files(tmp_path):
    q, k, v = matrices((4, 4), 1)
    x = tokens(9, 4)
    with h5py.File(tmp_path / "qkv.h5", "w") as f:
        f["Q"], f["K"], f["V"] = q, k, v
    given = normdyn.run(CONFIG, threads=1, qkv=(q, k, v), tokens=x)
    with h5py.File(tmp_path / "x.h5", "w") as f:  # the directions and radii the run made of x
        f["x"] = given.direction.values[0]
        f["r"] = given.radius.values[0]
    from_files = normdyn.run(CONFIG, threads=1, set={
        "model.n": 9, "model.d": 4, "model.qkv": "file", "model.qkv_file": str(tmp_path / "qkv.h5"),
        "init.kind": "file", "init.file": str(tmp_path / "x.h5"), "init.dataset": "/x", "init.radius_dataset": "/r"})
    assert given.attrs["status"] == "ok"
    assert given.direction.values.tobytes() == from_files.direction.values.tobytes()
    assert given.radius.values.tobytes() == from_files.radius.values.tobytes()
    np.testing.assert_allclose((given.direction[0] * given.radius[0]).values, x, rtol=0, atol=1e-14)
    assert given.qkv_Q.dims == ("qkv_layer", "head", "qkv_row", "qkv_column")
    assert given.qkv_Q.shape == (1, 1, 4, 4) and np.array_equal(given.qkv_K.values[0, 0], k)
    assert np.array_equal(given.initial_tokens.values, x)


def test_the_run_file_stores_them_for_load_analyze_and_resume(tmp_path):
    q, k, v = matrices((2, 3, 4, 4), 2)  # [layers, heads, d, d]: two layers of three heads
    out = tmp_path / "given.h5"
    ds = normdyn.run(CONFIG, output=out, threads=1, qkv=(q, k, v), tokens=tokens(8, 4))
    assert 'heads = 3' in ds.attrs["config"] and 'qkv = "given"' in ds.attrs["config"]
    loaded = normdyn.load(out)
    assert np.array_equal(loaded.qkv_V.values, v)
    report = normdyn.analyze(out)
    memory = normdyn.analyze(normdyn.run(CONFIG, threads=1, qkv=(q, k, v), tokens=tokens(8, 4)))
    assert report["checks"] == memory["checks"]
    assert "model.heads = 3: the paper's theorems are stated for one attention head" in json.dumps(report)
    loaded.close()
    # An edit of the stored matrices is found: the file no longer says how it was made.
    with h5py.File(out, "r+") as f:
        f["parameters/qkv/Q"][0, 0, 0, 0] += 1.0
    with pytest.raises(OSError, match="damaged run file: /parameters/qkv was edited"):
        normdyn.analyze(out)


def test_heads_from_three_dimensional_arrays(tmp_path):
    q, k, v = matrices((2, 4, 4), 4)
    two_heads = normdyn.run(CONFIG, threads=1, set={"model.heads": 2}, qkv=(q, k, v), tokens=tokens(6, 4))
    two_layers = normdyn.run(CONFIG, threads=1, qkv=(q, k, v), tokens=tokens(6, 4))
    assert two_heads.qkv_Q.shape == (1, 2, 4, 4) and two_layers.qkv_Q.shape == (2, 1, 4, 4)
    assert not np.array_equal(two_heads.direction.values[-1], two_layers.direction.values[-1])


@pytest.mark.parametrize("kwargs, match", [
    ({"tokens": np.ones(5)}, "tokens: expected an array \\[n, d\\]"),
    ({"tokens": np.zeros((4, 3))}, "tokens: row 0 is zero"),
    ({"qkv": (np.eye(3), np.eye(3))}, "qkv: expected a tuple"),
    ({"qkv": (np.eye(3), np.eye(3), np.eye(4))}, "qkv: V has shape"),
    ({"qkv": (np.ones((3, 2)),) * 3}, "square matrices"),
    ({"qkv": (np.eye(4),) * 3, "tokens": np.ones((5, 3))}, "do not fit tokens of dimension 3"),
    ({"qkv": (np.eye(4),) * 3, "set": {"model.d": 3}}, "set: model.d = 3 contradicts"),
    ({"qkv": (np.full((3, 3), np.nan),) * 3}, "qkv: Q has non-finite entries"),
    ({"qkv": (np.ones((3, 2, 2)),) * 3, "set": {"model.heads": 2}}, "3 matrices with model.heads = 2"),
])
def test_arrays_that_do_not_fit_are_refused_naming_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        normdyn.run(CONFIG, **kwargs)


def test_an_ensemble_of_given_arrays(tmp_path):
    q, k, v = matrices((4, 4), 5)
    x = tokens(6, 4)
    out = tmp_path / "ens.h5"
    ds = normdyn.ensemble(CONFIG, axes={"init.seed": [1, 2], "model.beta": [1.0, 2.0]}, qkv=(q, k, v), tokens=x,
                          output=out, threads=1)
    assert np.array_equal(ds.qkv_K.values[0, 0], k) and np.array_equal(ds.initial_tokens.values, x)
    assert 'qkv_digest = "' in ds.attrs["config"] and 'tokens_digest = "' in ds.attrs["config"]
    # Every member starts from the given tokens and runs the given matrices: a member is the single run.
    run = normdyn.run(CONFIG, threads=1, set={"model.beta": 2.0}, qkv=(q, k, v), tokens=x)
    member = ds.member_one_minus_mean_cosine.sel(beta=2.0, seed=1).values
    np.testing.assert_allclose(member, 1 - _mean_cosine(run), rtol=1e-12, atol=1e-15)
    # The same call returns the file; other arrays are another ensemble, refused without force=True.
    again = normdyn.ensemble(CONFIG, axes={"init.seed": [1, 2], "model.beta": [1.0, 2.0]}, qkv=(q, k, v), tokens=x,
                             output=out, threads=1)
    assert again.attrs["identity"] == ds.attrs["identity"]
    with pytest.raises(ValueError):
        normdyn.ensemble(CONFIG, axes={"init.seed": [1, 2], "model.beta": [1.0, 2.0]}, qkv=(q, k, 2 * v), tokens=x,
                         output=out, threads=1)
    with pytest.raises(ValueError, match="qkv"):
        normdyn.ensemble(CONFIG, axes={"model.d": [4, 5]}, qkv=(q, k, v), over=None)


def _mean_cosine(ds):
    theta = ds.direction.values
    g = np.einsum("tic,tjc->tij", theta, theta)
    n = theta.shape[1]
    return (g.sum(axis=(1, 2)) - n) / (n * (n - 1))
