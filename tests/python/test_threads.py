"""The GIL is released while integrating: two runs in two Python threads make progress at once.

Shown by instrumentation, not timing: each run reports progress events into one shared list. If a
run held the GIL, the other thread could not even start its run before the first had returned, so
all events of one run would precede all events of the other; interleaved events prove overlap.
"""
import threading

import normdyn


def test_two_threads_integrate_at_the_same_time(monkeypatch):
    events = []  # (run, t, done), in the order the callbacks ran
    lock = threading.Lock()
    barrier = threading.Barrier(2)
    results = {}

    def one(name, beta):
        def progress(event):
            with lock:
                events.append((name, event["t"], event["done"]))
        barrier.wait()
        config = {"model": {"n": 48, "beta": beta}, "solver": {"t_end": 150.0, "threads": 1},
                  "output": {"samples": 51}}
        results[name] = normdyn._dataset.from_core(normdyn._core.run(
            normdyn._toml.dumps(config), "config", [], None, False, 1, progress, 0.01, False, "test"))

    threads = [threading.Thread(target=one, args=(name, beta)) for name, beta in (("a", 1.0), ("b", 2.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["a"].attrs["status"] == results["b"].attrs["status"] == "ok"
    order = [name for name, _, done in events if not done]
    first = {n: order.index(n) for n in "ab"}
    last = {n: len(order) - 1 - order[::-1].index(n) for n in "ab"}
    # Each run reported progress while the other was between its first and last event.
    assert first["a"] < last["b"] and first["b"] < last["a"], order
    switches = sum(1 for x, y in zip(order, order[1:]) if x != y)
    print(f"{len(order)} events, {switches} switches between the runs")
    assert switches >= 2


def test_a_thread_other_than_main_runs_too():
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("ds", normdyn.run({"model": {"n": 5}, "solver": {"t_end": 1.0}})))
    t.start()
    t.join()
    assert out["ds"].attrs["status"] == "ok"
