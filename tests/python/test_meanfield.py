"""Mean-field runs: the density on (time, phi), or (time, phi, radial cell) with moving centres r."""
import numpy as np

import normdyn


def test_density_on_the_circle(tmp_path):
    config = {"model": {"kind": "meanfield", "scheme": "post", "beta": 4.0},
              "meanfield": {"grid": 64}, "init": {"kind": "perturbed_uniform", "mode": 2, "amplitude": 0.3},
              "solver": {"t_end": 2.0}, "output": {"samples": 5}}
    ds = normdyn.run(config, output=tmp_path / "mf.h5")
    assert ds.attrs["status"] == "ok"
    assert ds.density.dims == ("time", "phi") and ds.density.shape == (5, 64)
    assert ds.phi.attrs["units"] == "rad" and ds.density.attrs["long_name"]
    assert "direction" not in ds
    # Mass is kept (finite volumes); the density is non-negative.
    dphi = 2 * np.pi / 64
    mass = ds.density.sum("phi").values * dphi
    assert np.allclose(mass, mass[0], rtol=0, atol=1e-12)
    assert (ds.density.values >= 0).all()
    loaded = normdyn.load(tmp_path / "mf.h5")
    for name in list(ds.data_vars) + list(ds.coords):
        assert loaded[name].dims == ds[name].dims and loaded[name].values.tobytes() == ds[name].values.tobytes(), name


def test_density_with_a_moving_radial_grid(tmp_path):
    config = {"model": {"kind": "meanfield", "scheme": "pre", "beta": 2.0},
              "meanfield": {"grid": 32, "radial_grid": 8},
              "init": {"kind": "perturbed_uniform", "radius_width": 0.1}, "solver": {"t_end": 1.0},
              "output": {"samples": 3}}
    ds = normdyn.run(config, output=tmp_path / "mf.h5")
    assert ds.density.dims == ("time", "phi", "radial_cell") and ds.density.shape == (3, 32, 8)
    assert ds.r.dims == ("time", "radial_cell")
    assert not np.array_equal(ds.r.values[0], ds.r.values[-1])  # the cells move
    loaded = normdyn.load(tmp_path / "mf.h5")
    assert loaded.r.values.tobytes() == ds.r.values.tobytes()
    assert loaded.density.values.tobytes() == ds.density.values.tobytes()
    for v in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[v].attrs and "long_name" in ds[v].attrs, v


def test_causal_density_on_the_sigma_phi_grid(tmp_path):
    config = {"model": {"kind": "meanfield", "scheme": "post", "beta": 1.0},
              "attention": {"mask": "causal", "bias": "alibi", "alibi_slope": 1.0, "normalizer": "uniform"},
              "meanfield": {"grid": 32, "cursor_grid": 6, "method": "semi_lagrangian"},
              "init": {"kind": "von_mises", "centers": [0.5, 3.0], "kappa": [4.0]},
              "solver": {"method": "split", "dt": 0.05, "t_end": 2.0}, "output": {"samples": 3}}
    ds = normdyn.run(config, output=tmp_path / "causal.h5")
    assert ds.attrs["status"] == "ok"
    assert ds.density.dims == ("time", "sigma", "phi") and ds.density.shape == (3, 6, 32)
    assert np.allclose(ds.sigma.values, (np.arange(6) + 0.5) / 6, rtol=0, atol=1e-15)
    assert ds.angular_density.dims == ("time", "phi")
    assert np.allclose(ds.angular_density.values, ds.density.mean("sigma").values, rtol=0, atol=1e-13)
    # Every cursor slice keeps its mass; the first one does not move.
    mass = ds.density.sum("phi").values * 2 * np.pi / 32
    assert np.allclose(mass, 1.0, rtol=0, atol=1e-12)
    assert np.array_equal(ds.density.values[-1, 0], ds.density.values[0, 0])
    assert not np.allclose(ds.density.values[-1, -1], ds.density.values[0, -1])
    with normdyn.load(tmp_path / "causal.h5") as loaded:
        assert loaded.density.dims == ("time", "sigma", "phi")
        assert loaded.density.values.tobytes() == ds.density.values.tobytes()
        assert loaded.sigma.attrs["long_name"]
    # The figure shows the density over (sigma, phi) of the last frame.
    from normdyn import plots
    fig = plots.meanfield_figure(plots.load_meanfield(tmp_path / "causal.h5"))
    assert any("sigma" in ax.get_xlabel() for ax in fig.axes)


def test_weighted_particles_carry_their_masses(tmp_path):
    config = {"model": {"n": 16, "d": 2}, "init": {"kind": "von_mises", "sampling": "weighted"},
              "solver": {"t_end": 1.0}, "output": {"samples": 3}}
    ds = normdyn.run(config, output=tmp_path / "w.h5")
    assert ds.mass.dims == ("token",) and abs(float(ds.mass.sum()) - 1.0) < 1e-12
    with normdyn.load(tmp_path / "w.h5") as loaded:
        assert loaded.mass.values.tobytes() == ds.mass.values.tobytes()
    assert "mass" not in normdyn.run({"model": {"n": 4}, "solver": {"t_end": 1.0}})


def test_density_on_the_sphere_loads_and_plots(tmp_path):
    config = {"model": {"kind": "meanfield", "d": 3, "scheme": "post", "beta": 3.0},
              "meanfield": {"degree": 24},
              "init": {"kind": "von_mises", "centers": [0.0, 2.5], "kappa": [3.0]},
              "solver": {"t_end": 1.0}, "output": {"samples": 3}}
    ds = normdyn.run(config, output=tmp_path / "s.h5")
    assert ds.attrs["status"] == "ok"
    rings = (3 * 24 + 2) // 2
    assert ds.density.dims == ("time", "theta", "phi") and ds.density.shape == (3, rings, 2 * rings)
    # The grid is described: Gauss-Legendre colatitudes and equally spaced longitudes; with the
    # Gauss-Legendre weights the density integrates to 1 in every frame.
    nodes, weights = np.polynomial.legendre.leggauss(rings)
    assert np.allclose(np.sort(np.cos(ds.theta.values)), np.sort(nodes), atol=1e-13)
    assert np.allclose(ds.phi.values, 2 * np.pi * np.arange(2 * rings) / (2 * rings), atol=1e-14)
    w = weights[np.argsort(nodes)][::-1]  # north (cos theta = 1) to south
    mass = np.einsum("tij,i->t", ds.density.values, w) * 2 * np.pi / (2 * rings)
    assert np.allclose(mass, 1.0, atol=1e-12)
    assert ds.spectral_tail.dims == ("time",) and (ds.spectral_tail.values < 1e-3).all()
    loaded = normdyn.load(tmp_path / "s.h5")
    assert loaded.density.values.tobytes() == ds.density.values.tobytes()
    from normdyn import plots
    fig = plots.meanfield_figure(plots.load_meanfield(str(tmp_path / "s.h5")))
    assert any(ax.name == "mollweide" for ax in fig.axes)
    plots.save(fig, str(tmp_path / "s.png"))
    assert (tmp_path / "s.png").stat().st_size > 0
