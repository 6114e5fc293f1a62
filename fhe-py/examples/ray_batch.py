"""Scale-out on Ray: a batch of gate bootstraps, an integer workload and a CKKS workload
spread over worker actors of a local cluster (loopback only), each checked byte-equal to
the same batch run in this process, with throughput and per-task overhead.

    python fhe-py/examples/ray_batch.py                       # 2 workers, check and time
    python fhe-py/examples/ray_batch.py --workers 1 2 --json bench/results/python/ray.json

Each worker runs one CPU thread (`threads=1`), so 1 and 2 workers compare one core with
two; "one process" is the same batch in this process with the backend's own threads.
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
import lux_fhe.ray as lray

CKKS_PRESET = "slots4096-scale40-depth2"


def gate_work(server, rows):
    return server.gate_batch("nand", [a for a, _ in rows], [b for _, b in rows])


def int_work(server, a, b):
    return server.add(a, b)


def ckks_work(ev, x):
    return ev.rotate(ev.rescale(ev.mul(x, x)), 1)


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def same_bytes(xs, ys):
    return len(xs) == len(ys) and all(x.to_bytes() == y.to_bytes() for x, y in zip(xs, ys))


def overhead_rows(pool, make_rows, sizes, repeats=5):
    """Per-task overhead against the work per task: one task of `size` gate bootstraps
    at a time (nothing queued behind another), driver round trip minus the worker's time
    inside fn; medians of `repeats`."""
    out = []
    for size in sizes:
        rows = make_rows(size)
        trips = []
        for _ in range(repeats + 1):  # the first is a warm-up
            pool.map_chunks(gate_work, rows, chunk=size)
            trips.append(pool.last_timings[0])
        t = trips[1:]
        work = statistics.median(c.work_s for c in t)
        trip = statistics.median(c.round_trip_s for c in t)
        io = statistics.median(c.decode_s + c.encode_s for c in t)
        over = statistics.median(c.round_trip_s - c.work_s for c in t)
        out.append({"gates_per_task": size, "repeats": repeats, "work_s": work, "round_trip_s": trip,
                    "bytes_in_out_s": io, "overhead_s": over, "overhead_pct_of_round_trip": 100 * over / trip})
        print(f"  {size:4d} gates/task: work {work * 1e3:8.2f} ms, round trip {trip * 1e3:8.2f} ms, "
              f"overhead {1e3 * over:6.2f} ms ({100 * over / trip:.1f}%), bytes in+out {io * 1e3:.2f} ms", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, nargs="+", default=[2])
    ap.add_argument("--gates", type=int, default=256)
    ap.add_argument("--ints", type=int, default=16)
    ap.add_argument("--ckks", type=int, default=64)
    ap.add_argument("--json")
    a = ap.parse_args()

    lray.init_local(workers=max(a.workers))
    engine = lux_fhe.Engine()
    seed = lambda i: lux_fhe.derive_seed("ray example", i)  # noqa: E731
    bits = engine.keygen("PN10QP27", seed=seed(0))
    server = engine.server_key(bits.ek)
    enc = lambda i, v: engine.encrypt_bit(bits.pk, v, seed(1000 + i))  # noqa: E731
    make_rows = lambda n: [(enc(2 * i, bool(i & 1)), enc(2 * i + 1, bool(i & 2))) for i in range(n)]  # noqa: E731
    rows = make_rows(a.gates)
    ints = [(lux_fhe.FheUint.encrypt(bits.pk, 8, i * 7 % 256), lux_fhe.FheUint.encrypt(bits.pk, 8, i * 13 % 256))
            for i in range(a.ints)]
    ctx = engine.ckks(CKKS_PRESET)
    ck = ctx.keygen(rotations=[1], seed=seed(1))
    ev = ctx.evaluator(ck.eval)
    xs = [ctx.encrypt(ck.pk, np.linspace(-1, 1, ctx.params.slots) / (i + 1), seed=seed(2000 + i)) for i in range(a.ckks)]

    local = {}
    local["gates"], t_g = timed(lambda: gate_work(server, rows))
    local["ints"], t_i = timed(lambda: [int_work(server, x, y) for x, y in ints])
    local["ckks"], t_c = timed(lambda: [ckks_work(ev, x) for x in xs])
    print(f"one process ({engine.backend}): {a.gates / t_g:.1f} gates/s, {a.ints / t_i:.2f} int adds/s, "
          f"{a.ckks / t_c:.1f} CKKS mul+rescale+rotate/s", flush=True)
    results = {"one_process": {"gates_per_s": a.gates / t_g, "int_adds_per_s": a.ints / t_i,
                               "ckks_ops_per_s": a.ckks / t_c}}

    for w in a.workers:
        with lray.Pool.bits(bits.ek, workers=w, threads=1) as bp:
            bp.ready()
            bp.map_chunks(gate_work, rows[: 2 * w], chunk=2)  # warm-up: workers imported and keyed
            g, tg = timed(lambda: bp.map_chunks(gate_work, rows))
            i, ti = timed(lambda: bp.map(int_work, ints))
            assert same_bytes(g, local["gates"]) and same_bytes(i, local["ints"]), "bit-scheme bytes differ"
            print(f"{w} worker(s): {a.gates / tg:.1f} gates/s, {a.ints / ti:.2f} int adds/s (bytes equal)", flush=True)
            over = overhead_rows(bp, make_rows, [1, 4, 16, 64, 256]) if w == max(a.workers) else None
        with lray.Pool.ckks(ctx, ck, workers=w, threads=1) as cp:
            cp.ready()
            cp.map(ckks_work, xs[:w])
            c, tc = timed(lambda: cp.map(ckks_work, xs))
            assert same_bytes(c, local["ckks"]), "CKKS bytes differ"
            print(f"{w} worker(s): {a.ckks / tc:.1f} CKKS ops/s (bytes equal)", flush=True)
        results[f"workers_{w}"] = {"gates_per_s": a.gates / tg, "int_adds_per_s": a.ints / ti,
                                   "ckks_ops_per_s": a.ckks / tc, "bytes_equal_to_one_process": True}
        if over:
            results[f"workers_{w}"]["per_task_overhead"] = over

    if a.json:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
        doc = {"kind": "ray_scale_out", "commit": commit, "backend": engine.backend,
               "machine": {"cpu": cpu, "cores": os.cpu_count(), "loadavg_at_end": os.getloadavg()},
               "python": platform.python_version(), "ray": __import__("ray").__version__,
               "command": "python fhe-py/examples/ray_batch.py --workers " + " ".join(map(str, a.workers))
               + f" --gates {a.gates} --ints {a.ints} --ckks {a.ckks}",
               "workload": {"gates": f"{a.gates} NAND bootstraps, PN10QP27", "ints": f"{a.ints} 8-bit adds, PN10QP27",
                            "ckks": f"{a.ckks} x mul, rescale, rotate(1), {CKKS_PRESET}"},
               "results": results}
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
