"""normdyn.ensemble: the grid of `normdyn ensemble`, a member is normdyn.run bit for bit, the output
file is resumable and opens in xarray, bad input raises the right exception, Ctrl-C gives
KeyboardInterrupt."""
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr

import normdyn
from conftest import run_cli

CONFIG = {"model": {"scheme": "pre", "n": 8, "d": 3}, "solver": {"t_end": 5.0}, "output": {"samples": 11}}
AXES = {"model.beta": [1.0, 4.0], "init.seed": range(1, 5)}


def test_dimensions_and_variables():
    ds = normdyn.ensemble(CONFIG, axes=AXES, over="init.seed", quantiles=(0.25, 0.75), threads=2)
    assert ds.pair_fraction.dims == ("beta", "time")
    assert ds.sync_probability.dims == ("beta", "time")
    assert ds.cluster_count.dims == ("beta", "time")
    assert ds.t_sync.dims == ("beta", "seed")
    assert ds.status.dims == ("beta", "seed")
    assert ds.one_minus_mean_cosine_quantiles.dims == ("beta", "quantile", "time")
    assert list(ds.beta.values) == [1.0, 4.0]
    assert list(ds.seed.values) == [1, 2, 3, 4]
    assert list(ds["quantile"].values) == [0.25, 0.75]
    assert ds.sizes["time"] == 11
    assert set(ds.status.values.ravel()) == {"ok"}
    assert ((ds.pair_fraction >= 0) & (ds.pair_fraction <= 1)).all()


def test_a_member_is_the_single_run_bit_for_bit():
    ds = normdyn.ensemble(CONFIG, axes=AXES, over="init.seed", trajectories=[6], threads=2)
    # Point 6: β = 4 (second value), seed 3 (third): the last axis varies fastest.
    single = normdyn.run(CONFIG, set={"model.beta": 4.0, "init.seed": 3})
    assert np.array_equal(ds.direction.sel(trajectory=6).values, single.direction.values)
    assert int(ds.accepted_steps.sel(beta=4.0, seed=3)) == single.attrs["accepted_steps"]


def test_output_is_resumable_and_opens_as_a_grid(tmp_path):
    out = tmp_path / "e.h5"
    ds = normdyn.ensemble(CONFIG, axes=AXES, output=out, threads=1)
    with xr.open_dataset(out, engine="h5netcdf") as f:
        assert f.pair_fraction.dims == ("beta", "time")
        np.testing.assert_array_equal(f.pair_fraction.values, ds.pair_fraction.values)
        np.testing.assert_array_equal(f.t_sync.values, ds.t_sync.values)
        assert "config" in f.attrs and "normdyn_version" in f.attrs
    again = normdyn.ensemble(CONFIG, axes=AXES, output=out, force=True)
    np.testing.assert_array_equal(again.cluster_count.values, ds.cluster_count.values)


def same_data(a, b):
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)


def test_an_existing_output_is_returned_extended_or_refused(tmp_path):
    out = tmp_path / "e.h5"
    whole = normdyn.ensemble(CONFIG, axes=AXES, threads=2)
    part_axes = {"model.beta": [1.0], "init.seed": range(1, 3)}
    part = normdyn.ensemble(CONFIG, axes=part_axes, output=out, threads=2)
    before = out.read_bytes()
    events = []
    # The same call: returned, nothing integrated, the file untouched.
    again = normdyn.ensemble(CONFIG, axes=part_axes, output=out, progress=events.append)
    same_data(again, part)
    assert out.read_bytes() == before
    assert events[-1]["frames"] == events[-1]["total_frames"] == 2
    # More seeds and a new beta: the two members are read back, the file becomes the whole ensemble.
    grown = normdyn.ensemble(CONFIG, axes=AXES, output=out, threads=2)
    same_data(grown, whole)
    with xr.open_dataset(out, engine="h5netcdf") as f:
        np.testing.assert_array_equal(f.member_one_minus_mean_cosine.values, whole.member_one_minus_mean_cosine.values)
        assert f.member_config.dims == ("beta", "seed")
    # The part again would lose six members: refused, the file kept.
    grown_bytes = out.read_bytes()
    with pytest.raises(ValueError, match="holds another ensemble \\(6 of its 8 members are not members here\\); "
                                         "force=True replaces it"):
        normdyn.ensemble(CONFIG, axes=part_axes, output=out)
    assert out.read_bytes() == grown_bytes
    same_data(normdyn.ensemble(CONFIG, axes=part_axes, output=out, force=True), part)


def test_the_command_line_writes_the_same_file(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text('[set]\n"model.scheme" = "pre"\n"model.n" = 8\n"model.d" = 3\n"solver.t_end" = 5.0\n'
                     '"output.samples" = 11\n[axes]\n"model.beta" = [1.0, 4.0]\n"init.seed" = [1, 2, 3, 4]\n')
    run_cli("ensemble", sweep, "-o", tmp_path / "cli.h5", "--threads", "2", "-q")
    ds = normdyn.ensemble(CONFIG, axes=AXES)
    with xr.open_dataset(tmp_path / "cli.h5", engine="h5netcdf") as f:
        np.testing.assert_array_equal(f.sync_probability.values, ds.sync_probability.values)
        np.testing.assert_array_equal(f.one_minus_mean_cosine.values, ds.one_minus_mean_cosine.values)
    p = run_cli("ensemble", sweep, "-o", tmp_path / "cli.h5")
    assert "already holds this ensemble" in p.stderr
    sweep.write_text(sweep.read_text().replace("[1, 2, 3, 4]", "[1, 2]"))
    p = run_cli("ensemble", sweep, "-o", tmp_path / "cli.h5", check=False)
    assert p.returncode == 2 and "-o: " in p.stderr and "--force replaces it" in p.stderr


def test_bad_input_raises():
    with pytest.raises(ValueError, match="over"):
        normdyn.ensemble(CONFIG, axes=AXES, over="model.alpha")
    with pytest.raises(ValueError, match="quantiles"):
        normdyn.ensemble(CONFIG, axes=AXES, quantiles=(0.5, 2.0))
    with pytest.raises(ValueError, match="model.bta"):
        normdyn.ensemble(CONFIG, axes={"model.bta": [1.0], "init.seed": [1, 2]})
    with pytest.raises(ValueError, match="axes"):
        normdyn.ensemble(CONFIG, axes={})
    with pytest.raises(ValueError, match="threads"):
        normdyn.ensemble(CONFIG, axes=AXES, threads=-1)
    with pytest.raises(OSError):
        normdyn.ensemble(CONFIG, axes=AXES, output="/nonexistent-dir/e.h5")


CHILD = textwrap.dedent("""
    import sys, normdyn
    try:
        normdyn.ensemble({"model": {"n": 16, "d": 3}, "solver": {"t_end": 40.0}}, axes={"init.seed": range(1, 3001)},
                         output=sys.argv[1], threads=1, progress=lambda e: print("started", flush=True) if e["frames"] else None)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
""")


def test_ctrl_c_raises_keyboard_interrupt_and_keeps_the_members_done(tmp_path):
    out = tmp_path / "long.h5"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert child.stdout.readline().strip() == "started"
    child.send_signal(signal.SIGINT)
    lines = child.stdout.read().split()
    child.wait(timeout=60)
    assert "KeyboardInterrupt" in lines, lines
    assert not out.exists()
    assert os.path.getsize(str(out) + ".journal") > 0


def test_an_interrupted_ensemble_continues_to_the_same_file(tmp_path):
    from h5compare import differences
    whole = tmp_path / "whole.h5"
    normdyn.ensemble(CONFIG, axes=AXES, output=whole, threads=1)

    class Stop(Exception):
        pass

    def stop_after_three(event):
        if event["frames"] >= 3:
            raise Stop()
    parts = tmp_path / "parts.h5"
    with pytest.raises(Stop):
        normdyn.ensemble(CONFIG, axes=AXES, output=parts, threads=1, progress=stop_after_three)
    assert not parts.exists() and os.path.exists(str(parts) + ".journal")
    normdyn.ensemble(CONFIG, axes=AXES, output=parts, threads=1)
    assert not os.path.exists(str(parts) + ".journal")
    assert differences(whole, parts) == []


def test_an_interrupt_names_the_journal_of_the_members_done(tmp_path):
    def interrupt_after_two(event):
        if event["frames"] >= 2:
            raise KeyboardInterrupt()
    out = tmp_path / "e.h5"
    with pytest.raises(KeyboardInterrupt, match=re.escape(f"the members done are in {out}.journal; the same call")):
        normdyn.ensemble(CONFIG, axes=AXES, output=out, threads=1, progress=interrupt_after_two)
    # Without an output nothing was kept, and the interrupt stays as it was raised.
    with pytest.raises(KeyboardInterrupt, match="^$"):
        normdyn.ensemble(CONFIG, axes=AXES, threads=1, progress=interrupt_after_two)


def test_the_progress_bar_counts_members(capsys):
    normdyn.ensemble(CONFIG, axes=AXES, threads=1, progress=True)
    err = capsys.readouterr().err
    assert re.search(r"normdyn.ensemble: 100%\|.*\| 8/8 members \[", err), err


def test_the_output_never_replaces_what_is_not_an_ensembles(tmp_path):
    run = tmp_path / "run.h5"
    normdyn.run(CONFIG, output=run)
    before = run.read_bytes()
    with pytest.raises(ValueError, match="is a normdyn run file, which an ensemble never replaces"):
        normdyn.ensemble(CONFIG, axes=AXES, output=run, force=True)
    assert run.read_bytes() == before
    link = tmp_path / "link.h5"
    link.symlink_to(run)
    with pytest.raises(ValueError, match="not a regular file"):
        normdyn.ensemble(CONFIG, axes=AXES, output=link, force=True)
    assert link.is_symlink() and run.read_bytes() == before
    fifo = tmp_path / "fifo.h5"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        normdyn.ensemble(CONFIG, axes=AXES, output=fifo, force=True)
    # An earlier ensemble's file is replaced with force=True.
    out = tmp_path / "e.h5"
    normdyn.ensemble(CONFIG, axes=AXES, output=out, threads=1)
    normdyn.ensemble(CONFIG, axes=AXES, output=out, threads=1, force=True, set={"model.beta": 3.0})


def test_two_ensembles_on_one_output_the_second_is_refused(tmp_path):
    out = tmp_path / "e.h5"
    script = textwrap.dedent(f"""
        import sys
        import normdyn
        config = {{"model": {{"n": 16, "d": 3, "beta": 2.0}}, "output": {{"samples": 11}},
                  "solver": {{"method": "rk4", "dt": 0.01, "t_end": 400.0}}}}
        def progress(event):
            print("started", flush=True)
            sys.stdin.readline()  # holds the ensemble (and its lock) until the test answers
            raise KeyboardInterrupt()
        normdyn.ensemble(config, axes={{"init.seed": range(4)}}, output=sys.argv[1], threads=1, progress=progress)
    """)
    first = subprocess.Popen([sys.executable, "-c", script, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        assert first.stdout.readline() == "started\n"
        with pytest.raises(OSError, match=re.escape(str(out))):
            normdyn.ensemble(CONFIG, axes=AXES, output=out, threads=1)
    finally:
        first.communicate("\n", timeout=120)
    assert not out.exists()


def test_over_none_makes_every_point_its_own_group():
    ds = normdyn.ensemble(CONFIG, axes={"model.beta": [1.0, 4.0], "init.seed": [1, 2]}, over=None)
    assert ds.pair_fraction.dims == ("beta", "seed", "time")
    assert ds.t_sync.dims == ("beta", "seed", "member")
    assert set(ds.sync_probability.values.ravel()) <= {0.0, 1.0}
    by_beta = normdyn.ensemble(CONFIG, axes={"init.seed": [1, 2], "model.beta": [1.0, 4.0]}, over="model.beta")
    assert by_beta.pair_fraction.dims == ("seed", "time")


def test_a_numerical_failure_is_the_members_status_and_the_exit_code(tmp_path):
    ds = normdyn.ensemble(CONFIG, axes=AXES, set={"solver.max_steps": 3})
    assert set(ds.status.values.ravel()) == {"max_steps"}
    assert ds.attrs["status"] == "max_steps" and ds.attrs["failed_members"] == 8
    assert (ds.t_reached < 5.0).all()
    # Contributing up to its end: the first frames have statistics, the last none.
    assert ds.members_at.isel(time=0).values.tolist() == [4, 4]
    assert np.isnan(ds.pair_fraction.isel(time=-1)).all()
    sweep = tmp_path / "s.toml"
    sweep.write_text('[set]\n"model.n" = 8\n"solver.t_end" = 5.0\n"solver.max_steps" = 3\n'
                     '[axes]\n"init.seed" = [1, 2]\n')
    p = run_cli("ensemble", sweep, "-o", tmp_path / "f.h5", check=False)
    assert p.returncode == 1 and "numerical failure" in p.stderr
    assert (tmp_path / "f.h5").exists()


def test_per_member_rate_fits_say_whether_they_are_citable():
    config = {"model": {"scheme": "post", "n": 8, "d": 2}, "solver": {"t_end": 30.0}, "output": {"samples": 61}}
    ds = normdyn.ensemble(config, axes={"model.beta": [1.0], "init.seed": range(1, 5)}, over="init.seed")
    for name in ("rate_law", "rate_parameter", "rate_stderr", "rate_problem"):
        assert ds[name].dims == ("beta", "seed")
    problems = set(ds.rate_problem.values.ravel())
    assert problems <= {"citable", "too_short", "no_decay", "metastable", "noisy", "law_ambiguous", "unstable",
                        "not_positive"}
    assert set(ds.rate_law.values.ravel()) <= {"none", "exponential", "power", "stretched_exponential"}
    # No fit: no number.
    assert np.isnan(ds.rate_parameter.values[ds.rate_law.values == "none"]).all()
    fitted = ds.rate_law.values != "none"
    assert np.isfinite(ds.rate_parameter.values[fitted]).all()


def test_the_file_says_which_overrides_made_it(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text('[set]\n"model.n" = 8\n"output.samples" = 11\n"solver.t_end" = 5.0\n'
                     '[axes]\n"init.seed" = [1, 2]\n')
    run_cli("ensemble", sweep, "-o", tmp_path / "set.h5", "--set", "model.beta=3.5", "-q")
    with xr.open_dataset(tmp_path / "set.h5", engine="h5netcdf") as f:
        assert f.attrs["set"] == "model.beta=3.5\n"
        assert "--set 'model.beta=3.5'" in f.attrs["reproduce"]
        assert "beta = 3.5" in f.attrs["config"]


# With a second argument, each process also writes its outcome to a file of its own in that folder:
# mpirun forwards the processes' stdout in chunks of its choosing, so two lines printed at the same
# moment can arrive interleaved mid-line.
MPI_SCRIPT = f"""
import os
import sys
import normdyn
def report(line):
    print(line, flush=True)
    if len(sys.argv) > 2:
        with open(os.path.join(sys.argv[2], str(os.getpid())), "w") as f:
            f.write(line)
try:
    ds = normdyn.ensemble({CONFIG!r}, axes={{"model.beta": [1.0, 4.0], "init.seed": range(1, 5)}},
                          output=sys.argv[1], threads=1)
except Exception as e:
    # One line per process: mpirun interleaves the processes' tracebacks, written piecewise.
    report(f"{{type(e).__name__}}: {{e}}")
    sys.exit(1)
report("none" if ds is None else "dataset " + ds.attrs["message"])
"""


@pytest.mark.skipif(not os.environ.get("NORMDYN_MPIEXEC"), reason="built without MPI (no NORMDYN_MPIEXEC)")
def test_under_mpirun_rank_0_returns_the_one_process_ensemble(tmp_path):
    from h5compare import differences
    whole = tmp_path / "whole.h5"
    normdyn.ensemble(CONFIG, axes=AXES, output=whole, threads=1)
    shared = tmp_path / "shared.h5"
    outcomes = tmp_path / "outcomes"
    outcomes.mkdir()
    p = subprocess.run([*os.environ["NORMDYN_MPIEXEC"].split(), "-n", "2", sys.executable, "-c", MPI_SCRIPT, str(shared),
                        str(outcomes)],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1"))
    assert p.returncode == 0, p.stderr
    lines = sorted(f.read_text() for f in outcomes.iterdir())
    assert len(lines) == 2 and lines[1] == "none", p.stdout
    assert lines[0].startswith("dataset ") and "on 2 processes" in lines[0], lines
    assert differences(whole, shared) == []


@pytest.mark.skipif(not os.environ.get("NORMDYN_MPIEXEC"), reason="built without MPI (no NORMDYN_MPIEXEC)")
def test_under_mpirun_bad_input_is_one_exception_per_process(tmp_path):
    out = tmp_path / "exists.h5"
    out.write_bytes(b"")
    p = subprocess.run([*os.environ["NORMDYN_MPIEXEC"].split(), "-n", "2", sys.executable, "-c", MPI_SCRIPT, str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    # Rank 0 names the problem; rank 1 says another process failed; nobody waits forever.
    assert "ValueError: output: " in p.stdout and "exists and is not an ensemble's file; force=True replaces it" in p.stdout, p.stdout
    assert "RuntimeError: normdyn.ensemble: another MPI process failed (exit code 2)" in p.stdout, p.stdout
    assert out.read_bytes() == b""


# Ctrl-C to mpirun reaches the processes as SIGTERM, which normdyn.ensemble turns into
# KeyboardInterrupt on every process; the members rank 0 received are in the journal.
MPI_INTERRUPTED = """
import sys
import normdyn

started = []
def progress(event):
    if not started and event["frames"] >= 1:
        started.append(1)
        print("started", flush=True)
        if len(sys.argv) > 3 and sys.argv[3] == "raise":  # progress runs on rank 0 alone
            raise KeyboardInterrupt("raised by the progress callback")
config = {"model": {"n": 16, "d": 3, "beta": 2.0}, "output": {"samples": 11},
          "solver": {"method": "rk4", "dt": 0.01, "t_end": float(sys.argv[2])}}
try:
    ds = normdyn.ensemble(config, axes={"init.seed": range(16)}, output=sys.argv[1], threads=1, progress=progress)
except KeyboardInterrupt as e:
    print(f"KeyboardInterrupt: {e}", flush=True)
    sys.exit(130)
print("none" if ds is None else "dataset", flush=True)
"""


@pytest.mark.skipif(not os.environ.get("NORMDYN_MPIEXEC"), reason="built without MPI (no NORMDYN_MPIEXEC)")
def test_under_mpirun_ctrl_c_is_keyboard_interrupt_on_every_process_and_the_script_continues(tmp_path):
    from h5compare import differences
    mpirun = [*os.environ["NORMDYN_MPIEXEC"].split(), "-n", "2", sys.executable, "-c", MPI_INTERRUPTED]
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1")
    out = tmp_path / "parts.h5"
    # About 3 s of fixed steps at t_end = 400; an ensemble that ends before the signal arrives (mpirun
    # forwards it within about two seconds) is repeated four times longer.
    for t_end in (400.0, 1600.0, 6400.0):
        child = subprocess.Popen([*mpirun, str(out), str(t_end)], stdout=subprocess.PIPE, text=True, env=env)
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGINT)
        # mpirun forwards the two processes' lines without keeping them whole: one line can end
        # inside another, so the messages are counted in the whole output.
        text = child.stdout.read()
        child.wait(timeout=120)
        print(f"t_end = {t_end}: {text!r}")
        if "dataset" not in text:
            break
        out.unlink()
    expected = f"KeyboardInterrupt: SIGTERM (Ctrl-C to the MPI launcher): the members done are in {out}.journal;" \
               " the same call continues"
    assert text.count(expected) == 2 and not text.replace(expected, "").split(), text
    assert child.returncode != 0
    assert not out.exists() and os.path.getsize(str(out) + ".journal") > 0
    # The same script again continues from the journal to the file one process writes.
    again = subprocess.run([*mpirun, str(out), str(t_end)], capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stderr
    # mpirun forwards the two processes' lines without keeping them whole ("datasetnone" happens under load).
    assert again.stdout.replace("started", "").split() in (["dataset", "none"], ["none", "dataset"], ["datasetnone"],
                                                           ["nonedataset"]), again.stdout
    assert not os.path.exists(str(out) + ".journal")
    whole = tmp_path / "whole.h5"
    subprocess.run([sys.executable, "-c", MPI_INTERRUPTED, str(whole), str(t_end)], check=True, capture_output=True,
                   timeout=300)
    assert differences(whole, out) == []


@pytest.mark.skipif(not os.environ.get("NORMDYN_MPIEXEC"), reason="built without MPI (no NORMDYN_MPIEXEC)")
def test_under_mpirun_a_stop_on_rank_0_alone_is_keyboard_interrupt_on_the_other_processes_too(tmp_path):
    from h5compare import differences
    mpirun = [*os.environ["NORMDYN_MPIEXEC"].split(), "-n", "2", sys.executable, "-c", MPI_INTERRUPTED]
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1")
    out = tmp_path / "parts.h5"
    # The callback raises after rank 0's first member, of 16 taking about 3 s in all.
    p = subprocess.run([*mpirun, str(out), "400", "raise"], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode != 0
    # mpirun forwards the two processes' lines without keeping them whole: one line can end inside
    # another, so each message is looked for in the whole output.
    text = p.stdout.replace("started", "")
    rank0 = (f"KeyboardInterrupt: raised by the progress callback: the members done are in {out}.journal; the same"
             " call (same configuration, axes and output) continues from there")
    rank1 = (r"KeyboardInterrupt: rank 1: \d+ members integrated; the ensemble was interrupted; those done are kept in"
             rf" {re.escape(str(out))}\.journal \(rank 0's\): run the same command again to continue")
    assert text.count(rank0) == 1, p.stdout
    assert len(re.findall(rank1, text)) == 1, p.stdout
    assert len(text.replace(rank0, "").replace(re.search(rank1, text).group(0), "").split()) == 0, p.stdout
    assert not out.exists() and os.path.getsize(str(out) + ".journal") > 0
    again = subprocess.run([*mpirun, str(out), "400"], capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stderr
    # mpirun forwards the two processes' lines without keeping them whole ("datasetnone" happens under load).
    assert again.stdout.replace("started", "").split() in (["dataset", "none"], ["none", "dataset"], ["datasetnone"],
                                                           ["nonedataset"]), again.stdout
    whole = tmp_path / "whole.h5"
    subprocess.run([sys.executable, "-c", MPI_INTERRUPTED, str(whole), "400"], check=True, capture_output=True,
                   timeout=300)
    assert differences(whole, out) == []


def test_sigterm_is_an_interrupt_only_under_a_launcher_and_only_without_a_handler_of_the_script():
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with normdyn._TerminateAsInterrupt(False, None):
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with normdyn._TerminateAsInterrupt(True, "e.h5"):
        with pytest.raises(KeyboardInterrupt, match="e.h5.journal"):
            os.kill(os.getpid(), signal.SIGTERM)
    with normdyn._TerminateAsInterrupt(True, None):
        with pytest.raises(KeyboardInterrupt, match=r"nothing was kept \(no output file\)"):
            os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

    def own(signum, frame):
        pass
    signal.signal(signal.SIGTERM, own)
    try:
        with normdyn._TerminateAsInterrupt(True, "e.h5"):
            assert signal.getsignal(signal.SIGTERM) is own
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
