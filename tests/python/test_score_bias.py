"""normdyn.run(score_bias=B): a fixed additive score bias against a numpy integration of the same
model; the same run from attention.bias_file; composed with a mask; stored in the run file (resume,
an edit found); refused when it does not fit."""
import h5py
import numpy as np
import pytest

import normdyn

N, D, BETA, DT, STEPS = 12, 3, 2.0, 0.01, 50
CONFIG = {"model": {"n": N, "d": D, "beta": BETA},
          "solver": {"method": "rk4", "dt": DT, "t_end": DT * STEPS, "project": False},
          "output": {"samples": 6}}


def window_bias(n, width=4, slope=0.3):
    """A causal sliding window of `width` keys with a distance penalty inside it; -inf outside."""
    i, j = np.indices((n, n))
    return np.where((j <= i) & (j > i - width), -slope * (i - j), -np.inf)


def numpy_rhs(x, bias, causal=False):
    """Post-LN: d theta_i/dt = P_theta_i A_i, A_i = sum_j w_ij x_j, w_ij = softmax_j(beta <x_i, x_j> + B_ij)."""
    s = BETA * x @ x.T + bias
    if causal:
        s = np.where(np.tri(len(x), dtype=bool), s, -np.inf)
    top = s.max(axis=1, keepdims=True)
    keyless = np.isneginf(top[:, 0])  # every key masked: A_i = 0
    w = np.exp(s - np.where(np.isneginf(top), 0.0, top))
    a = (w @ x) / np.where(keyless[:, None], 1.0, w.sum(axis=1, keepdims=True))
    return a - np.sum(a * x, axis=1, keepdims=True) * x


def numpy_run(x0, bias, causal=False):
    x = x0.copy()
    frames = [x.copy()]
    every = STEPS // 5
    for step in range(1, STEPS + 1):
        k1 = numpy_rhs(x, bias, causal)
        k2 = numpy_rhs(x + DT / 2 * k1, bias, causal)
        k3 = numpy_rhs(x + DT / 2 * k2, bias, causal)
        k4 = numpy_rhs(x + DT * k3, bias, causal)
        x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if step % every == 0:
            frames.append(x.copy())
    return np.array(frames)


def start():
    x = np.random.default_rng(4).normal(size=(N, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
def test_a_score_bias_matches_numpy(causal):
    x0, bias = start(), window_bias(N)
    bias[5, :] = -np.inf  # a row that keeps only its own key
    bias[5, 5] = 0.0
    bias[7, :] = -np.inf  # a row without a key: A_7 = 0
    set_ = {"attention.mask": "causal"} if causal else {}
    ds = normdyn.run(CONFIG, set=set_, threads=1, tokens=x0, score_bias=bias)
    assert ds.attrs["status"] == "ok"
    assert 'bias = "matrix"' in ds.attrs["config"] and "bias_digest" in ds.attrs["config"]
    expected = numpy_run(x0, bias, causal)
    got = ds.direction.values
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert np.array_equal(ds.score_bias.values, bias)
    # Row 5 attends to itself alone (P_theta theta = 0) and row 7 to nothing: neither moves.
    assert np.array_equal(got[-1, 5], x0[5]) and np.array_equal(got[-1, 7], x0[7])


def test_the_file_gives_the_same_run_and_the_run_file_keeps_it(tmp_path):
    x0, bias = start(), window_bias(N)
    with h5py.File(tmp_path / "bias.h5", "w") as f:
        f["bias"] = bias
    given = normdyn.run(CONFIG, threads=1, tokens=x0, score_bias=bias)
    out = tmp_path / "run.h5"
    from_file = normdyn.run(CONFIG, threads=1, tokens=x0, output=out,
                            set={"attention.bias": "matrix", "attention.bias_file": str(tmp_path / "bias.h5")})
    assert from_file.direction.values.tobytes() == given.direction.values.tobytes()
    with h5py.File(out, "r") as f:
        assert np.array_equal(f["parameters/score_bias/value"][()], bias)
    loaded = normdyn.load(out)
    assert np.array_equal(loaded.score_bias.values, bias)
    # The analysis of the file needs neither the array nor the file.
    (tmp_path / "bias.h5").unlink()
    report = normdyn.analyze(out)
    assert 'attention.bias = "matrix"' in str(report)
    loaded.close()
    with h5py.File(out, "r+") as f:
        f["parameters/score_bias/value"][0, 0] += 1.0
    with pytest.raises(OSError, match="/parameters/score_bias was edited"):
        normdyn.analyze(out)


@pytest.mark.parametrize("bias, match", [
    (np.zeros((N, N + 1)), "score_bias: expected an array \\[n, n\\]"),
    (np.zeros((N + 1, N + 1)), "score_bias: is \\[13, 13\\]; model.n = 12"),
    (np.full((N, N), np.nan), "score_bias: entry \\[0, 0\\] is NaN or \\+inf"),
    (np.full((N, N), np.inf), "score_bias: entry \\[0, 0\\] is NaN or \\+inf"),
])
def test_a_bias_that_does_not_fit_is_refused_naming_the_argument(bias, match):
    with pytest.raises(ValueError, match=match):
        normdyn.run(CONFIG, score_bias=bias)


def test_a_matrix_without_its_matrix_is_refused():
    with pytest.raises(ValueError, match='attention.bias: "matrix" needs the matrix'):
        normdyn.run(CONFIG, set={"attention.bias": "matrix"})


def test_an_ensemble_gives_the_bias_to_every_member():
    x0, bias = start(), window_bias(N)
    ds = normdyn.ensemble(CONFIG, axes={"model.beta": [1.0, 2.0]}, over=None, tokens=x0, score_bias=bias, threads=1,
                          trajectories=[1])
    run = normdyn.run(CONFIG, threads=1, tokens=x0, score_bias=bias)
    # Point 1 (beta = 2) is the single run, bit for bit.
    assert ds.direction.values.squeeze().tobytes() == run.direction.values.tobytes()
    assert 'bias = "matrix"' in ds.attrs["config"]


def test_an_ensemble_file_keeps_the_bias_and_a_member_repeats_from_it(tmp_path):
    import xarray as xr
    x0, bias = start(), window_bias(N)
    out = tmp_path / "ens.h5"
    axes = {"model.beta": [1.0, 2.0]}
    ds = normdyn.ensemble(CONFIG, axes=axes, over=None, tokens=x0, score_bias=bias, threads=1, trajectories=[1],
                          output=out)
    assert np.array_equal(ds.score_bias.values, bias)
    with xr.open_dataset(out, engine="h5netcdf") as f:
        assert np.array_equal(f.score_bias.values, bias)
        # The file holds what the members ran: point 1 (beta = 2) repeats from it, bit for bit.
        again = normdyn.run(f, set={"model.beta": 2.0}, threads=1)
    assert again.direction.values.tobytes() == ds.direction.values.squeeze().tobytes()
    # The same call returns the file; another bias is another ensemble, refused without force=True.
    assert normdyn.ensemble(CONFIG, axes=axes, over=None, tokens=x0, score_bias=bias, threads=1, trajectories=[1],
                            output=out).attrs["identity"] == ds.attrs["identity"]
    other = bias.copy()
    other[0, 0] = -1.0
    with pytest.raises(ValueError):
        normdyn.ensemble(CONFIG, axes=axes, over=None, tokens=x0, score_bias=other, threads=1, trajectories=[1],
                         output=out)


def test_the_lists_are_listed():
    lists = normdyn.alternatives()
    assert [a["key"] for a in lists["attention.bias"]] == ["none", "alibi", "matrix"]
    slope = lists["attention.bias"][1]["parameters"][0]
    assert slope["key"] == "attention.alibi_slope" and slope["type"] == "float" and slope["lower"] == 0.0
    matrix = lists["attention.bias"][2]
    assert [p["type"] for p in matrix["parameters"]] == ["string", "string"]
    assert "exchangeable" in matrix["breaks"]
