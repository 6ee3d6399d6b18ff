"""Stochastic runs from Python: a run is a pure function of its configuration (noise.seed included),
whatever the thread count; another seed gives another path; an ensemble over noise.seed gives the
statistics over seeds as over any axis; bad noise settings raise ValueError naming the key."""
import numpy as np
import pytest

import normdyn

CONFIG = {"model": {"scheme": "post", "n": 16, "d": 3, "beta": 1.0},
          "noise": {"kind": "independent", "sigma": 0.5},
          "solver": {"t_end": 2.0, "dt": 0.01}, "output": {"samples": 5}}


def test_a_noisy_run_is_a_function_of_its_seed():
    a = normdyn.run(CONFIG, threads=1)
    b = normdyn.run(CONFIG, threads=2)
    other = normdyn.run(CONFIG, threads=1, set={"noise.seed": 2})
    assert a.attrs["status"] == "ok"
    assert np.allclose(a.direction.values, b.direction.values, rtol=0, atol=1e-12)
    assert not np.allclose(a.direction.values[-1], other.direction.values[-1], atol=1e-3)
    assert a.direction.values.tobytes() == normdyn.run(CONFIG, threads=1).direction.values.tobytes()
    # The resolved configuration names the noise and the method chosen for it.
    config = a.attrs["config"]
    assert 'kind = "independent"' in config and "stratonovich_heun" in config


def test_an_ensemble_over_noise_seeds():
    ds = normdyn.ensemble(CONFIG, axes={"noise.seed": range(1, 7)}, over="noise.seed", threads=2)
    assert ds.one_minus_mean_cosine.dims == ("time",)
    assert ds.one_minus_mean_cosine_quantiles.dims == ("quantile", "time")
    assert ds.status.dims == ("seed",)
    assert (ds.status.values == "ok").all()
    q = ds.one_minus_mean_cosine_quantiles.values[:, -1]
    assert q[0] < q[-1]  # the seeds differ


@pytest.mark.parametrize("settings, key", [
    ({"noise.kind": "independent", "noise.sigma": None}, "noise.sigma"),
    ({"solver.method": "dopri5"}, "solver.method"),
    ({"noise.kind": "brownian"}, "noise.kind"),
])
def test_bad_noise_settings_raise_value_error_naming_the_key(settings, key):
    config = {k: dict(v) for k, v in CONFIG.items()}
    if settings.get("noise.sigma", 1) is None:
        del config["noise"]["sigma"]
        settings = {}
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        normdyn.run(config, threads=1, set=settings)


# ---- The feed-forward term from Python.

def test_feedforward_weights_are_stored_in_the_configuration(tmp_path):
    rng = np.random.default_rng(1)
    a, omega = rng.normal(size=(5, 3)), rng.normal(size=5)
    config = {"model": {"scheme": "pre", "n": 12, "d": 3, "beta": 2.0}, "solver": {"t_end": 2.0},
              "output": {"samples": 5}, "feedforward": {"activation": "tanh"}}
    given = normdyn.run(config, threads=1, feedforward=(a, omega), output=tmp_path / "ff.h5")
    plain = normdyn.run(config | {"feedforward": {}}, threads=1)
    assert given.attrs["status"] == "ok"
    assert 'weights = "inline"' in given.attrs["config"]
    assert not np.allclose(given.direction.values[-1], plain.direction.values[-1], atol=1e-3)
    # The stored configuration alone reproduces the run.
    again = normdyn.run(given.attrs["config"], threads=1)
    assert again.direction.values.tobytes() == given.direction.values.tobytes()
    import h5py
    with h5py.File(tmp_path / "ff.h5") as f:
        np.testing.assert_array_equal(f["/parameters/feedforward/a"][:], a)
        np.testing.assert_array_equal(f["/parameters/feedforward/omega"][:], omega)


@pytest.mark.parametrize("feedforward, message", [
    ((np.ones((2, 3)), np.ones(3)), "omega"),
    ((np.ones(3), np.ones(3)), "a: expected an array"),
    ((np.ones((2, 4)), np.ones(2)), "feedforward.a"),
    ((np.full((2, 3), np.nan), np.ones(2)), "finite"),
])
def test_bad_feedforward_weights_raise_value_error(feedforward, message):
    with pytest.raises(ValueError, match=message):
        normdyn.run({"model": {"d": 3}, "solver": {"t_end": 1.0}}, threads=1, feedforward=feedforward)
