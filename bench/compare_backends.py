"""Compares the right-hand-side times of two builds (Eigen GEMM vs OpenBLAS through EIGEN_USE_BLAS).

Usage: compare_backends.py eigen1.json eigen2.json -- blas1.json blas2.json
Each file is Google Benchmark JSON output with median aggregates; the best median of each build
(over its runs, which bench/run.sh interleaves with the other build's) is compared.
"""
import json
import sys


def medians(files):
    best, units = {}, {}
    for path in files:
        with open(path) as f:
            for b in json.load(f)["benchmarks"]:
                if b.get("aggregate_name") != "median":
                    continue
                name = b["run_name"]
                best[name] = min(best.get(name, float("inf")), b["real_time"])
                units[name] = b["time_unit"]
    return best, units


def main():
    split = sys.argv.index("--")
    (eigen, units), (blas, _) = medians(sys.argv[1:split]), medians(sys.argv[split + 1:])
    print("\n== GEMM backend comparison: time per call (best median), ratio > 1: OpenBLAS slower")
    print(f"{'benchmark':40s} {'eigen':>12s} {'openblas':>12s} {'openblas/eigen':>15s}")
    for name in eigen:
        if name in blas and name.startswith("BM_Rhs"):
            print(f"{name:40s} {eigen[name]:12.4g} {blas[name]:12.4g} {blas[name] / eigen[name]:15.2f}  ({units[name]})")


if __name__ == "__main__":
    main()
