"""Bad input raises ValueError with the command line's one-line message; files raise OSError."""
import pytest

import normdyn
from conftest import run_cli


@pytest.mark.parametrize("config, set, key", [
    ({"model": {"bta": 1.0}}, None, "model.bta"),
    ({"model": {"beta": -1.0}}, None, "model.beta"),
    (None, {"solver.rtol": "x"}, "solver.rtol"),
    ("[model]\nscheme = \"nope\"\n", None, "model.scheme"),
    ({"solver": {"method": "rk99"}}, None, "solver.method"),
])
def test_value_error_names_the_key(config, set, key, tmp_path):
    with pytest.raises(ValueError) as error:
        normdyn.run(config, set=set, output=tmp_path / "x.h5")
    message = str(error.value)
    assert key in message and "\n" not in message
    assert not (tmp_path / "x.h5").exists()


def test_same_message_as_the_command_line(tmp_path):
    (tmp_path / "c.toml").write_text("[model]\nbta = 1.0\n")
    cli = run_cli("run", tmp_path / "c.toml", "-o", tmp_path / "x.h5", check=False)
    assert cli.returncode == 2
    with pytest.raises(ValueError) as error:
        normdyn.run(tmp_path / "c.toml")
    assert cli.stderr.strip() == f"normdyn: error: {error.value}"


def test_python_arguments(tmp_path):
    with pytest.raises(ValueError, match="set"):
        normdyn.run(set={"beta": 1})
    with pytest.raises(ValueError, match="threads"):
        normdyn.run(threads="2")
    with pytest.raises(ValueError, match="config"):
        normdyn.run(3.5)


def test_files(tmp_path):
    with pytest.raises(OSError):
        normdyn.run(tmp_path / "missing.toml")
    # A string naming a file that is not there is not parsed as TOML.
    with pytest.raises(FileNotFoundError, match="missing.toml: no such configuration file"):
        normdyn.run(str(tmp_path / "missing.toml"))
    with pytest.raises(OSError):
        normdyn.load(tmp_path / "missing.h5")
    (tmp_path / "junk.h5").write_text("not hdf5")
    with pytest.raises(OSError):
        normdyn.load(tmp_path / "junk.h5")
    with pytest.raises(OSError):
        normdyn.run({"model": {"n": 4}}, output=tmp_path / "no" / "such" / "dir" / "r.h5")


def test_existing_output_is_not_overwritten(tmp_path):
    out = tmp_path / "r.h5"
    normdyn.run({"model": {"n": 4}, "solver": {"t_end": 1.0}}, output=out)
    before = out.read_bytes()
    with pytest.raises((ValueError, OSError)) as error:
        normdyn.run({"model": {"n": 5}, "solver": {"t_end": 1.0}}, output=out)
    # In Python's words: the keyword, not the command line's flag.
    assert "pass force=True to overwrite it" in str(error.value) and "--force" not in str(error.value)
    assert out.read_bytes() == before
    with pytest.raises(ValueError, match="not a regular file; force=True replaces only regular files"):
        normdyn.run({"model": {"n": 4}, "solver": {"t_end": 1.0}}, output=tmp_path, force=True)
    ds = normdyn.run({"model": {"n": 5}, "solver": {"t_end": 1.0}}, output=out, force=True)
    assert normdyn.load(out).sizes["token"] == 5 == ds.sizes["token"]


def test_resume_refuses_a_finished_run(tmp_path):
    normdyn.run({"model": {"n": 4}, "solver": {"t_end": 1.0}}, output=tmp_path / "r.h5")
    with pytest.raises(ValueError):
        normdyn.resume(tmp_path / "r.h5")


def test_a_damaged_object_header_fails_at_once(tmp_path):
    import h5py
    run = tmp_path / "r.h5"
    normdyn.run({"model": {"n": 8, "d": 3}, "solver": {"t_end": 2.0}, "output": {"samples": 11}}, output=run)
    with h5py.File(run, "r") as f:
        header = h5py.h5o.get_info(f["parameters"].id).addr
    data = bytearray(run.read_bytes())
    data[header + 40] ^= 0x01  # inside /parameters' object header, under its checksum
    damaged = tmp_path / "damaged.h5"
    damaged.write_bytes(bytes(data))
    # A SWMR reader would retry the failing read for minutes; load reads finished files plainly.
    with pytest.raises(OSError, match="damaged run file"):
        normdyn.load(damaged)
    cli = run_cli("analyze", damaged, "-q", "--no-write", check=False)
    assert cli.returncode == 3, cli.stderr


def test_a_damaged_file_left_by_a_killed_writer_fails_at_once(tmp_path):
    """A file flagged as being written by a SWMR writer that no longer lives is read by a SWMR reader;
    a metadata block failing its checksum there is damage, and load says so within seconds instead of
    retrying it a hundred times with doubling sleeps."""
    import subprocess
    import sys
    import h5py
    run = tmp_path / "r.h5"
    normdyn.run({"model": {"n": 8, "d": 3}, "solver": {"t_end": 2.0}, "output": {"samples": 11}}, output=run)
    with h5py.File(run, "r") as f:
        header = h5py.h5o.get_info(f["parameters"].id).addr
    # A writer in SWMR mode that dies: the file keeps the write and SWMR flags.
    died = subprocess.run([sys.executable, "-c", f"import h5py, os; f = h5py.File({str(run)!r}, 'r+', libver='latest'); "
                           "f.swmr_mode = True; f.flush(); os._exit(9)"], timeout=60)
    assert died.returncode == 9
    with pytest.raises(OSError):
        h5py.File(run, "r")  # a plain reader cannot open it
    assert normdyn.load(run).sizes["token"] == 8  # undamaged, it loads
    data = bytearray(run.read_bytes())
    data[header + 40] ^= 0x01  # inside /parameters' object header, under its checksum
    damaged = tmp_path / "damaged.h5"
    damaged.write_bytes(bytes(data))
    child = subprocess.run([sys.executable, "-c", f"import normdyn; normdyn.load({str(damaged)!r})"], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode != 0
    assert "damaged run file" in child.stderr.splitlines()[-1], child.stderr


def test_resume_of_a_damaged_killed_file_fails_at_once(tmp_path):
    """normdyn.resume holds the file's writer lock while it inspects the file; it must not take that
    lock for a live writer's and retry damaged metadata as half-written (minutes in HDF5's sleeps)."""
    import subprocess
    import sys
    import h5py
    run = tmp_path / "r.h5"
    normdyn.run({"model": {"n": 8, "d": 3}, "solver": {"t_end": 2.0}, "output": {"samples": 11}}, output=run)
    with h5py.File(run, "r+") as f:
        f["summary"].attrs["status"] = "interrupted"
        header = h5py.h5o.get_info(f["h5md/modules"].id).addr
    # Left by a SWMR writer that died: the file keeps the write and SWMR flags.
    died = subprocess.run([sys.executable, "-c", f"import h5py, os; f = h5py.File({str(run)!r}, 'r+', libver='latest'); "
                           "f.swmr_mode = True; f.flush(); os._exit(9)"], timeout=60)
    assert died.returncode == 9
    data = bytearray(run.read_bytes())
    data[header + 20] ^= 0xff  # inside /h5md/modules' object header, under its checksum
    run.write_bytes(bytes(data))
    child = subprocess.run([sys.executable, "-c", f"import normdyn; normdyn.resume({str(run)!r})"], capture_output=True,
                           text=True, timeout=60)
    assert child.returncode != 0
    assert "r.h5: damaged run file" in child.stderr.splitlines()[-1], child.stderr
