"""Ctrl-C: KeyboardInterrupt in Python, a complete file that normdyn.resume continues."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import normdyn
from conftest import run_cli
from h5compare import differences

# Long enough that SIGINT arrives mid-run (10 000 fixed steps, about a second on one thread), short
# enough to finish on resume.
LONG_RUN = {"model": {"scheme": "post", "n": 64, "d": 3, "beta": 4.0},
            "solver": {"method": "rk4", "dt": 0.01, "t_end": 100.0, "threads": 1},
            "output": {"samples": 401, "flush_seconds": 0.05}}

# What differs between a resumed run's file and an uninterrupted one's besides the run: its sessions
# (times, host, flushes, the resume log) and the output path in the stored configuration.
NOT_OF_THE_RUN = {"command_line", "created_utc", "host", "wall_seconds", "flush_seconds", "write_seconds", "flushes",
                  "config", "config_hash", "path", "resume_log", "message"}

CHILD = textwrap.dedent("""
    import sys, time, normdyn
    config = eval(sys.argv[1])
    started = []
    def progress(event):
        if not started and event["frames"] > 3:
            started.append(1)
            print("started", flush=True)
    try:
        normdyn.run(config, output=sys.argv[2], progress=progress)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt {time.monotonic():.6f}", flush=True)  # CLOCK_MONOTONIC: system-wide
""")


def stop_after_three_frames(out):
    """LONG_RUN into `out`, stopped by a KeyboardInterrupt from its progress callback."""
    import pytest

    def stop(event):
        if event["frames"] > 3:
            raise KeyboardInterrupt("stopped by the test")
    with pytest.raises(KeyboardInterrupt):
        normdyn.run(LONG_RUN, output=out, progress=stop)


def test_ctrl_c_raises_keyboard_interrupt_and_leaves_a_resumable_file(tmp_path):
    out = tmp_path / "long.h5"
    child = subprocess.Popen([sys.executable, "-c", CHILD, repr(LONG_RUN), str(out)], stdout=subprocess.PIPE,
                             text=True, env=os.environ)
    assert child.stdout.readline().strip() == "started"
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    line = child.stdout.readline().strip()
    child.wait(timeout=60)
    assert line.startswith("KeyboardInterrupt"), line
    # From the signal to the exception: one poll of the signal handlers (50 ms) and a step. Printed
    # for the log and bounded loosely only (tests are not timed; a loaded machine delays anything).
    latency = float(line.split()[1]) - sent
    print(f"SIGINT -> KeyboardInterrupt: {latency:.4f} s")
    assert latency < 5.0
    interrupted = normdyn.load(out)
    assert interrupted.attrs["status"] == "interrupted"
    frames = interrupted.sizes["time"]
    assert 0 < frames < 401
    assert "normdyn.resume" in interrupted.attrs["message"]
    import pytest
    with pytest.raises(OSError, match="close"):
        normdyn.resume(out)  # still open for reading here
    interrupted.close()

    resumed = normdyn.resume(out)
    assert resumed.attrs["status"] == "ok" and resumed.sizes["time"] == 401
    # ... and it is the file an uninterrupted run writes.
    (tmp_path / "long.toml").write_text(normdyn.to_toml(LONG_RUN))
    run_cli("run", tmp_path / "long.toml", "-o", tmp_path / "whole.h5", "--quiet")
    assert differences(tmp_path / "whole.h5", out, skip_attrs=NOT_OF_THE_RUN) == []


def test_a_file_left_by_a_writer_killed_outside_swmr_mode_is_named_and_resumed(tmp_path):
    """A writer killed in a plain session (the summary) leaves HDF5's write flag: load says so, and
    normdyn.resume clears it and completes the run."""
    import pytest
    out = tmp_path / "stopped.h5"
    stop_after_three_frames(out)
    # A plain session opens the file for writing (the flag is written at once) and its process dies.
    died = subprocess.run([sys.executable, "-c", f"import h5py, os; f = h5py.File({str(out)!r}, 'r+'); os._exit(9)"],
                          timeout=60)
    assert died.returncode == 9
    with pytest.raises(OSError, match=r"left by a writer killed while it wrote outside SWMR mode .*normdyn\.resume\("):
        normdyn.load(out)
    resumed = normdyn.resume(out)
    assert resumed.attrs["status"] == "ok"
    resumed.close()
    whole = tmp_path / "whole.h5"
    normdyn.run(LONG_RUN, output=whole)
    assert differences(whole, out, skip_attrs=NOT_OF_THE_RUN) == []


def test_a_file_cut_short_by_a_failed_resume_is_named_and_resumed(tmp_path):
    """A resume whose frame writes fail on a file-size limit leaves a file that ends before the end
    HDF5 recorded: load names the cause, and normdyn.resume restores the end and completes the run."""
    import resource
    import pytest
    out = tmp_path / "short.h5"
    stop_after_three_frames(out)
    limit = out.stat().st_size + 64 * 1024

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    failed = subprocess.run([str(os.environ["NORMDYN_BINARY"]), "run", "--resume", str(out), "-q", "--no-size-check"],
                            capture_output=True, text=True, preexec_fn=limited, timeout=120)
    assert failed.returncode == 3 and "File too large" in failed.stderr, failed.stderr
    with pytest.raises(OSError) as error:
        normdyn.load(out)
    if "left by a writer killed while it wrote outside SWMR mode" in str(error.value):
        # The failure hit a plain session (see the command line's test of the same case): the next
        # resume must fail cleanly, naming the file.
        with pytest.raises(OSError, match="short.h5"):
            normdyn.resume(out)
        return
    assert re.search(r"its last write failed .*normdyn\.resume\(", str(error.value)), str(error.value)
    resumed = normdyn.resume(out)
    assert resumed.attrs["status"] == "ok" and resumed.sizes["time"] == 401
    resumed.close()
    whole = tmp_path / "whole.h5"
    normdyn.run(LONG_RUN, output=whole)
    assert differences(whole, out, skip_attrs=NOT_OF_THE_RUN) == []
