"""Reads a sweep's index as a user would, with h5py and csv only, and checks it against the run files.

usage: check_sweep_index.py DIR

For every run: the CSV row equals the HDF5 row; the run file's stored configuration holds the
index's axis values; the final variance 1 - |mean direction|^2, the cluster count (single linkage of
cosine > 1 - cluster_epsilon) and the fraction of pairs with cosine > pair_cosine, recomputed here
from the last frame, equal the index's; the series of cluster counts ends with the final count; the
ensemble's mean cluster count is the mean over its group's successful runs. Prints "ok <runs>".
"""
import csv
import math
import os
import sys

import h5py
import numpy as np


def fail(msg):
    sys.exit(msg)


def clusters(theta, eps):
    n = len(theta)
    gram = theta @ theta.T
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for j in range(n):
        for k in range(j + 1, n):
            if gram[j, k] > 1 - eps:
                parent[find(j)] = find(k)
    return len({find(j) for j in range(n)})


def main():
    d = sys.argv[1]
    with h5py.File(os.path.join(d, "index.h5"), "r") as f:
        eps = float(f.attrs["cluster_epsilon"])
        pair_cos = float(f.attrs["pair_cosine"])
        axes = [k.decode() if isinstance(k, bytes) else k for k in f["axes/key"][()]]
        runs = f["runs"]
        names = runs["name"].asstr()[()]
        status = runs["status"].asstr()[()]
        files = runs["file"].asstr()[()]
        group = runs["group"][()]
        final_var = runs["final_variance"][()]
        final_count = runs["final_cluster_count"][()]
        final_pairs = runs["final_pair_fraction"][()]
        axis_values = {k: (runs[k].asstr()[()] if h5py.check_string_dtype(runs[k].dtype) else runs[k][()]) for k in axes}
        series_count = f["series/cluster_count"][()]
        ens_mean = f["ensemble/cluster_count"][()]
    with open(os.path.join(d, "index.csv"), newline="") as c:
        rows = list(csv.DictReader(c))
    if len(rows) != len(names):
        fail(f"index.csv has {len(rows)} rows, index.h5 {len(names)}")
    checked = 0
    for i, row in enumerate(rows):
        if row["name"] != names[i] or row["status"] != status[i]:
            fail(f"row {i}: csv {row['name']} {row['status']} vs h5 {names[i]} {status[i]}")
        for k in axes:
            a, b = row[k], axis_values[k][i]
            if isinstance(b, str):
                if a != b:
                    fail(f"row {i}: {k} csv {a} vs h5 {b}")
            elif not math.isclose(float(a), float(b), rel_tol=0, abs_tol=0):
                fail(f"row {i}: {k} csv {a} vs h5 {b}")
        if status[i] not in ("ok", "synchronized"):
            continue
        with h5py.File(os.path.join(d, files[i]), "r") as r:
            theta = r["particles/tokens/direction/value"][-1]
            model = r["parameters/model"].attrs
            init = r["parameters/init"].attrs
            stored = {"model." + k: model[k] for k in model}
            stored.update({"init." + k: init[k] for k in init})
        for k in axes:
            if k in stored:
                v = stored[k]
                v = v.decode() if isinstance(v, bytes) else v
                if str(v) != str(axis_values[k][i]) and not (
                        not isinstance(v, str) and math.isclose(float(v), float(axis_values[k][i]), rel_tol=0)):
                    fail(f"{files[i]}: stored {k} = {v}, index {axis_values[k][i]}")
        mean = theta.mean(axis=0)
        var = 1 - mean @ mean
        if not math.isclose(var, final_var[i], rel_tol=1e-9, abs_tol=1e-14):
            fail(f"{names[i]}: final variance {final_var[i]} in the index, {var} from the file")
        count = clusters(theta, eps)
        if count != final_count[i]:
            fail(f"{names[i]}: {final_count[i]} clusters in the index, {count} from the file")
        gram = theta @ theta.T
        n = len(theta)
        close = sum(1 for j in range(n) for k in range(j + 1, n) if gram[j, k] > pair_cos)
        if abs(close / (n * (n - 1) / 2) - final_pairs[i]) > 1e-12:
            fail(f"{names[i]}: pair fraction {final_pairs[i]} in the index, {close / (n * (n - 1) / 2)} from the file")
        last = series_count[i][~np.isnan(series_count[i])][-1]
        if last != count:
            fail(f"{names[i]}: series ends at {last}, final count {count}")
        checked += 1
    for g in np.unique(group):
        members = [i for i in range(len(names)) if group[i] == g and status[i] in ("ok", "synchronized")]
        if not members:
            continue
        expect = np.mean([series_count[i][-1] for i in members])
        got = ens_mean[g][~np.isnan(ens_mean[g])][-1]
        if not math.isclose(expect, got, rel_tol=1e-12):
            fail(f"group {g}: mean cluster count {got}, expected {expect}")
    print("ok", checked)


if __name__ == "__main__":
    main()
