"""Drives an OpenFHE CKKS worker (worker.py, over its protocol) through four presets,
N=2^16 depth 34 down to N=2^13 depth 2, and writes one JSON file (`--help`):

    target/openfhe-venv/bin/python fhe-bench/peers/openfhe/baseline.py

bench/results/openfhe/<UTC timestamp>-baseline.json by default: which dnum OpenFHE
accepts at 128-bit security, the timings of every op (medians in ms) and the precision
(complex and real data types). A record for readers, not a bench result file. Not run
by CI.
"""

import json
import os
import sys

from moduli import AUX_BITS
from protocol import json_safe, log
from worker import BUILD, WHEEL

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")

PRESETS = {
    # name: (setup fields, iterations per op)
    "N16-L34": (dict(log_n=16, scale_bits=40, depth=34, first_mod_bits=60, dnum=6), 10),
    "N15-L14": (dict(log_n=15, scale_bits=40, depth=14, first_mod_bits=60, dnum=None), 20),
    "N14-L6": (dict(log_n=14, scale_bits=40, depth=6, first_mod_bits=60, dnum=None), 30),
    "N13-L2": (dict(log_n=13, scale_bits=40, depth=2, first_mod_bits=60, dnum=None), 30),
}
OPS = ["encrypt", "decrypt", "decrypt_1limb", "mul_relin", "rescale", "rotate", "hoisted4"]


def _cpu():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" not in line:
                    if info:
                        break
                    continue
                k, v = (x.strip() for x in line.split(":", 1))
                info.setdefault(k, v)
    except OSError:
        pass
    flags = set(info.get("flags", "").split())
    return {
        "cpu_model": info.get("model name"),
        "cpu_id": "{} family {} model {} stepping {}".format(
            info.get("vendor_id"), info.get("cpu family"), info.get("model"), info.get("stepping")),
        "cpu_features": {f: f in flags for f in ("avx2", "avx512f", "avx512ifma")},
        "cores": os.cpu_count(),
    }


def _median(xs):
    xs = sorted(xs)
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def main(argv):
    import argparse
    import datetime
    import platform
    import subprocess

    ap = argparse.ArgumentParser(prog="baseline.py", description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="output file (default: bench/results/openfhe/<UTC>-baseline.json)")
    ap.add_argument("--presets", default=",".join(PRESETS), help="comma-separated: " + ",".join(PRESETS))
    ap.add_argument("--iters", type=int, default=None, help="iterations per op (default: per preset)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)

    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    out = a.out or os.path.join(root, "bench", "results", "openfhe", f"{stamp}-baseline.json")
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    load_start = os.getloadavg()
    worker = subprocess.Popen([sys.executable, WORKER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, text=True, bufsize=1)

    def ask(req):
        worker.stdin.write(json.dumps(req) + "\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        if not line:
            raise SystemExit(f"worker died on {req}")
        rep = json.loads(line)
        log(f"{req.get('cmd')} {req.get('op', '')}: {'ok' if rep.get('ok') else rep.get('error')}")
        return rep

    info = ask({"cmd": "info"})
    runs = []
    for name in a.presets.split(","):
        fields, iters = PRESETS[name]
        iters = a.iters or iters
        base = dict(cmd="setup", slots=1 << (fields["log_n"] - 1), threads=a.threads,
                    rotations=[1, 2, 3, 4], seed=a.seed, special_bits=AUX_BITS, **fields)
        run = {"preset": name, "iters": iters, "warmup": 1}
        # Which dnum OpenFHE accepts at 128-bit security (context only, no keys).
        accepted, refused = [], {}
        for d in range(1, fields["depth"] + 2):
            rep = ask(dict(base, dnum=d, keys=False))
            if rep["ok"]:
                accepted.append(d)
            else:
                refused[d] = rep["error"].split("():")[-1].strip()
        run["dnum_accepted_128"] = accepted
        run["dnum_refused_128"] = refused
        setups = []
        if fields["dnum"] is not None:
            setups.append(dict(base))
        elif accepted:
            setups.append(dict(base, dnum=accepted[0]))
        else:
            # Nothing passes at 128-bit: time it without the check (flagged), and the
            # nearest accepted variant, a smaller first modulus.
            d = max(1, min(fields["depth"] + 1, 3))
            run["refused_128"] = ask(dict(base, dnum=d))
            setups.append(dict(base, dnum=d, security="HEStd_NotSet"))
            for first in range(fields["first_mod_bits"] - 1, fields["scale_bits"], -1):
                rep = ask(dict(base, dnum=d, first_mod_bits=first, keys=False))
                if rep["ok"]:
                    setups.append(dict(base, dnum=d, first_mod_bits=first))
                    break
        run["configs"] = []
        for req in setups:
            cfg = {"setup_request": req}
            setup = ask(req)
            cfg["setup"] = setup
            if setup.get("ok"):
                cfg["time"], cfg["median_ms"] = {}, {}
                for op in OPS:
                    rep = ask({"cmd": "time", "op": op, "iters": iters, "warmup": 1})
                    cfg["time"][op] = rep
                    if rep.get("ok"):
                        cfg["median_ms"][op] = _median(rep["ns"]) / 1e6
                        if "precompute_ns" in rep:
                            cfg["median_ms"]["hoisted4_precompute"] = _median(rep["precompute_ns"]) / 1e6
                cfg["precision"] = ask({"cmd": "precision"})
                # The same precision with the REAL data type (OpenFHE's default), whose
                # decoding adds noise.
                real = ask(dict(req, data_type="real", rotations=[1]))
                cfg["precision_real"] = ask({"cmd": "precision"}) if real.get("ok") else real
            run["configs"].append(cfg)
        runs.append(run)
    ask({"cmd": "quit"})
    worker.wait()

    doc = {
        "kind": "openfhe_ckks_baseline",
        "date_utc": stamp,
        "machine": dict(_cpu(), os=f"{platform.system()} {platform.release()}",
                        loadavg_start=load_start, loadavg_end=os.getloadavg()),
        "openfhe": {"version": info.get("version"), "wheel": WHEEL, "build": BUILD,
                    "python": info.get("python"),
                    "note": "the wheel's libOPENFHEcore/pke have no ymm/zmm (AVX/AVX2/AVX-512) "
                            "instructions: an SSE2 build, whatever the host supports"},
        "command": " ".join(["OMP_NUM_THREADS=%d" % a.threads, "target/openfhe-venv/bin/python",
                             "fhe-bench/peers/openfhe/baseline.py"] + argv),
        "method": "each call timed on its own with time.perf_counter_ns, 1 untimed warm-up "
                  "call per op, inputs fresh top-level ciphertexts made once; medians in ms",
        "runs": runs,
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(json_safe(doc), f, indent=1)
        f.write("\n")
    print(out, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
