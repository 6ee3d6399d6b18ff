"""The GIL is released while integrating: two runs in two Python threads make progress at once.

Shown by instrumentation, not timing: at its first progress event each run waits (up to 60 s,
releasing the GIL) until the other run has reported progress too. If a run held the GIL while it
integrates, the other could not start its run before the first had returned, the wait would run
out and the test fail; when both integrate at once, each sees the other's progress while it is
itself still running, however fast or slow the machine is.
"""
import threading

import normdyn


def test_two_threads_integrate_at_the_same_time(monkeypatch):
    events = []  # (run, t, done), in the order the callbacks ran
    lock = threading.Lock()
    barrier = threading.Barrier(2)
    results = {}
    reported = {"a": threading.Event(), "b": threading.Event()}
    saw_other_while_running = {}

    def one(name, beta):
        other = "b" if name == "a" else "a"

        def progress(event):
            with lock:
                events.append((name, event["t"], event["done"]))
            if event["done"]:
                return
            reported[name].set()
            if name not in saw_other_while_running:
                saw_other_while_running[name] = reported[other].wait(timeout=60)
        barrier.wait()
        config = {"model": {"n": 48, "beta": beta}, "solver": {"t_end": 150.0, "threads": 1},
                  "output": {"samples": 51}}
        results[name] = normdyn._dataset.from_core(normdyn._core.run(
            normdyn._toml.dumps(config), "config", [], None, False, 1, progress, 0.0, False, "test"))

    threads = [threading.Thread(target=one, args=(name, beta)) for name, beta in (("a", 1.0), ("b", 2.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["a"].attrs["status"] == results["b"].attrs["status"] == "ok"
    order = [name for name, _, done in events if not done]
    switches = sum(1 for x, y in zip(order, order[1:]) if x != y)
    print(f"{len(order)} events, {switches} switches between the runs")
    # Each run, still integrating, saw the other report progress.
    assert saw_other_while_running == {"a": True, "b": True}, order


def test_a_thread_other_than_main_runs_too():
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("ds", normdyn.run({"model": {"n": 5}, "solver": {"t_end": 1.0}})))
    t.start()
    t.join()
    assert out["ds"].attrs["status"] == "ok"



def _spin_count_at_import(**settings):
    """The spin count libgomp starts with (OMP_DISPLAY_ENV=verbose; 0 is passive waiting) when a fresh
    interpreter imports normdyn with `settings` and neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT otherwise."""
    import os
    import re
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(settings, OMP_DISPLAY_ENV="verbose")
    p = subprocess.run([sys.executable, "-c", "import normdyn"], env=env, capture_output=True, text=True, check=True)
    found = re.search(r"GOMP_SPINCOUNT = '(\d+)'", p.stderr)
    assert found, p.stderr
    return int(found.group(1))


def test_import_defaults_to_passive_waiting_and_keeps_the_users_choice():
    assert _spin_count_at_import() == 0
    assert _spin_count_at_import(OMP_WAIT_POLICY="active") > 0
    assert _spin_count_at_import(GOMP_SPINCOUNT="1000") == 1000
