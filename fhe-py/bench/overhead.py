"""Python-call overhead against the Rust call (issue 39, item 5): a gate bootstrap and a
CKKS multiplication (relinearized) at the depth-34 preset, timed call by call from
Python (`time.perf_counter` around the binding) and inside Rust (`lux_fhe._native.bench`,
the same objects, the GIL released), interleaved call by call so both see the same
machine moment. Reports medians and the paired difference, and writes JSON. A benchmark, not a test: it asserts nothing.

    python fhe-py/bench/overhead.py --json bench/results/python/overhead.json
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import time

import numpy as np

import lux_fhe
from lux_fhe._native import bench


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def py_times(call, iters):
    out = []
    for _ in range(iters):
        t = time.perf_counter()
        call()
        out.append(time.perf_counter() - t)
    return out


def compare(name, py_call, rust_call, rounds, iters):
    """Python and Rust calls interleaved one by one (order alternating), so load from
    other processes falls on both alike; the overhead is the median of the paired
    differences over the Rust median."""
    py, rust = [], []
    py_call(), rust_call(1)  # warm-up, discarded
    for i in range(rounds * iters):
        if i % 2:
            py += py_times(py_call, 1)
            rust += rust_call(1)
        else:
            rust += rust_call(1)
            py += py_times(py_call, 1)
    mp, mr = statistics.median(py), statistics.median(rust)
    diff = statistics.median(p - r for p, r in zip(py, rust))
    row = {
        "op": name,
        "samples": len(py),
        "python_median_s": mp,
        "rust_median_s": mr,
        "python_p90_s": float(np.percentile(py, 90)),
        "rust_p90_s": float(np.percentile(rust, 90)),
        "median_paired_diff_s": diff,
        "overhead_pct": 100.0 * diff / mr,
        "overhead_of_medians_pct": 100.0 * (mp / mr - 1.0),
    }
    print(f"{name}: python {mp * 1e3:.3f} ms, rust {mr * 1e3:.3f} ms, paired difference {diff * 1e6:+.1f} us "
          f"= {row['overhead_pct']:+.2f}% ({len(py)} calls each)", flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--gate-iters", type=int, default=25)
    ap.add_argument("--mul-iters", type=int, default=5)
    ap.add_argument("--preset", default="slots32768-scale40-depth34")
    ap.add_argument("--json")
    a = ap.parse_args()

    engine = lux_fhe.Engine()
    rows = []
    for params in ("PN10QP27", "PN11QP54"):
        keys = engine.keygen(params, seed=lux_fhe.derive_seed("overhead", 0))
        server = engine.server_key(keys.ek)
        x, y = engine.encrypt_bit(keys.pk, True), engine.encrypt_bit(keys.pk, False)
        rows.append(compare(f"gate AND (one bootstrap), {params}", lambda: server.and_(x, y),
                            lambda n: bench.rust_and_times(server, x, y, n), a.rounds, a.gate_iters))

    ctx = engine.ckks(a.preset)
    ck = ctx.keygen(seed=lux_fhe.derive_seed("overhead", 1))
    ev = ctx.evaluator(ck.eval)
    rng = np.random.default_rng(1)
    u = ctx.encrypt(ck.pk, rng.uniform(-1, 1, ctx.params.slots))
    v = ctx.encrypt(ck.pk, rng.uniform(-1, 1, ctx.params.slots))
    rows.append(compare(f"CKKS mul (relinearized), {a.preset}, level {u.level}", lambda: ev.mul(u, v),
                        lambda n: bench.rust_mul_times(ev, u, v, n), a.rounds, a.mul_iters))

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {
        "kind": "python_overhead",
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "loadavg_at_start": os.getloadavg()},
        "backend": engine.backend,
        "commit": commit,
        "command": "python fhe-py/bench/overhead.py " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(a).items()
                                                                   if k != "json" and v is not None),
        "python": platform.python_version(),
        "results": rows,
    }
    if a.json:
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
