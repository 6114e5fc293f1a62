#!/usr/bin/env python3
"""OpenFHE CKKS peer for the Lux bench: a long-lived worker driven over stdin/stdout.

(One file over ~600 lines on purpose: the bench starts this one script as its worker,
and most of its length is the protocol's documentation below.)

Run it with the venv that `scripts/openfhe-setup` makes (CPython 3.10 + the PyPI wheel
openfhe==1.6.1.0.22.4, a portable build without AVX):

    OMP_NUM_THREADS=1 target/openfhe-venv/bin/python fhe-bench/peers/openfhe_ckks.py

Protocol: one JSON object per line in, one JSON object per line out, in order. Every
reply has "ok"; a failed request answers {"ok": false, "error": "..."} and the worker
keeps serving (tracebacks go to stderr, never to stdout). Requests:

  {"cmd":"setup","log_n":16,"scale_bits":40,"depth":34,"first_mod_bits":60,"dnum":6,
   "special_bits":60,"slots":32768,"threads":1,"rotations":[1,2,3,4],"seed":1}
      special_bits is optional: OpenFHE fixes the special primes at 60 bits, anything
      else is refused. Optional extras: "data_type": "complex" (default) | "real"
      (OpenFHE's CKKSDataType), "security": "HEStd_128_classic" (default) or another
      OpenFHE SecurityLevel name such as "HEStd_NotSet".
      Builds CCParamsCKKSRNS (HYBRID key switching with numLargeDigits = dnum,
      FIXEDMANUAL scaling: nothing rescales by itself, the caller rescales with
      ModReduce as Lux does; UNIFORM_TERNARY secret; batch size = slots), enables PKE,
      KEYSWITCH, LEVELEDSHE, and generates keys, timing KeyGen, EvalMultKeyGen and
      EvalRotateKeyGen(rotations). A second setup replaces the first. With "keys": false
      it only checks that OpenFHE accepts the parameters (no keys; the reply has log_q,
      log_qp null) and leaves no context.
  {"cmd":"time","op":OP,"iters":k,"warmup":1}
      k timed calls, each timed on its own with time.perf_counter_ns; "warmup"
      (default 1) untimed calls first. Replies {"ok":true,"ns":[...k ints...]}.
      Inputs are made once per context, untimed: fresh encryptions at the top level.
      OP is one of
        encrypt      Encrypt(publicKey, plaintext); the plaintext is encoded beforehand
                     (encoding is not timed)
        decrypt      Decrypt(secretKey, ct) of a fresh top-level ciphertext; OpenFHE's
                     Decrypt always decodes (CRT-interpolates every limb to a
                     multi-precision polynomial, then the FFT), so decoding is included
        decrypt_1limb  the same on a ciphertext LevelReduce'd (untimed) to one limb
        mul_relin    EvalMult(ct1, ct2) of two fresh top-level ciphertexts: tensor and
                     relinearisation, no rescale (FIXEDMANUAL)
        rescale      ModReduce(product) of one top-level relinearised product
        rotate       EvalRotate(ct, 1)
        hoisted4     EvalFastRotationPrecompute(ct) and EvalFastRotation(ct, i, 2N,
                     digits) for i = 1..4, timed together; the reply also has
                     "precompute_ns" (the precompute part of each sample)
      "decrypt_raw" is not offered: the Python API has no decrypt without decode.
      Result objects are released after the clock stops (destruction is not timed).
  {"cmd":"precision"}
      Random values, real and imaginary parts uniform in [-1,1] ("complex" data type)
      or real values in [-1,1] ("real"); for "mul": Enc(x)*Enc(y), relinearise,
      ModReduce, decrypt, against x*y; "fresh": Dec(Enc(x)) against x; "rotate":
      Dec(EvalRotate(Enc(x),1)) against x shifted left by one slot. Each gives
      "bits_max" = -log2(max |err|) and "bits_mean" = -log2(mean |err|), |.| the
      complex modulus, over all slots.
  {"cmd":"info"}   version and build, without a context.
  {"cmd":"quit"}   replies {"ok":true} and exits.

`--baseline` instead runs a worker through four presets (N=2^16 depth 34 down to N=2^13
depth 2) and writes bench/results/openfhe/<UTC timestamp>-baseline.json (`--help`).
"""

import gc
import json
import math
import os
import sys
import time
import traceback

WHEEL = "openfhe==1.6.1.0.22.4"
BUILD = "PyPI wheel, portable, no AVX"
AUX_BITS = 60  # OpenFHE's AUXMODSIZE: the special primes P of HYBRID key switching

# The protocol owns the real stdout; anything else written to fd 1 (OpenFHE's C++ code
# printing to std::cout, a stray print) goes to stderr instead.
_proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

fhe = None  # the openfhe module, imported at the first setup (after OMP_NUM_THREADS)


class Refused(Exception):
    """A request that cannot be served; its message is the reply's error."""


def log(msg):
    print(f"openfhe_ckks: {msg}", file=sys.stderr, flush=True)


def import_openfhe(threads):
    global fhe
    if fhe is None:
        # OpenMP reads OMP_NUM_THREADS once, when its runtime starts: the Rust side sets
        # it; set it here too when the caller did not.
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        try:
            import openfhe  # noqa: F401
        except Exception as e:  # ImportError, or a wheel built for another Python
            raise Refused(
                f"cannot import openfhe ({type(e).__name__}: {e}); run scripts/openfhe-setup "
                f"and start this script with the python it prints ({WHEEL}, CPython 3.10)"
            )
        fhe = openfhe
    return fhe


def openfhe_version():
    return getattr(fhe, "__version__", None) if fhe else None


def omp_runtime():
    """The OpenMP runtime OpenFHE loaded (ctypes handle), or None.

    The Python API has no set-threads call, so omp_set_num_threads is called on the
    libgomp already mapped into this process (RTLD_NOLOAD: never a second copy; the
    wheel also ships its own libgomp.so, which the extension does not load)."""
    import ctypes

    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1] if len(line.split()) >= 6 else ""
                if "libgomp" in os.path.basename(p) and p not in paths:
                    paths.append(p)
    except OSError:
        pass
    for p in paths + ["libgomp.so.1"]:
        try:
            return p, ctypes.CDLL(p, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        except OSError:
            continue
    return None, None


def set_threads(threads):
    path, lib = omp_runtime()
    out = {"env_OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "runtime": path}
    if lib is None:
        out["omp_set_num_threads"] = "no OpenMP runtime found in the process"
        return out
    lib.omp_set_num_threads(int(threads))
    out["omp_set_num_threads"] = int(threads)
    out["omp_get_max_threads"] = int(lib.omp_get_max_threads())
    return out


# ---------------------------------------------------------------------------
# log Q and log P

def _find_key(x, key):
    if isinstance(x, dict):
        if key in x:
            return x[key]
        for v in x.values():
            r = _find_key(v, key)
            if r is not None:
                return r
    elif isinstance(x, list):
        for v in x:
            r = _find_key(v, key)
            if r is not None:
                return r
    return None


def q_moduli(cc):
    """The RNS moduli of Q, read from the context's JSON serialisation (element
    parameters "elp"; the Python API has no getter for the moduli list)."""
    d = json.loads(fhe.Serialize(cc, fhe.JSON))
    elp = _find_key(d, "elp")
    towers = _find_key(elp, "p")
    mods = []
    for t in towers:
        cm = _find_key(t, "cm")
        mods.append(int(cm["v"]))
    return mods


def _is_prime(n):
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):  # deterministic below 3.3e24
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _openfhe_special_primes(size_p, step, q):
    """OpenFHE's choice of special primes: FirstPrime(60, step), then PreviousPrime in
    steps of `step`, skipping the moduli of Q (rns-cryptoparameters.cpp)."""
    base = 1 << AUX_BITS
    r = base % step
    cand = base + 1 - r + (step if r > 0 else 0)
    while not _is_prime(cand):
        cand += step
    out, prev, qs = [], cand, set(q)
    for _ in range(size_p):
        c = prev - step
        while not _is_prime(c) or c in qs:
            c -= step
        out.append(c)
        prev = c
    return out


def log_qp_info(cc, relin_key, n, dnum):
    """log2 Q (exact, from the context) and log2 P. P is not exposed by the Python
    API: the number of special primes is counted from the relinearisation key
    (2 * dnum polynomials over Q*P, N 8-byte words per limb, in its binary
    serialisation), the primes are OpenFHE's rule replayed, and each one is checked to
    be present in that key's bytes."""
    q = q_moduli(cc)
    big_q = math.prod(q)
    out = {
        "log_q": round(math.log2(big_q), 3),
        "q_bits": [m.bit_length() for m in q],
        "log_p": None,
        "log_qp": None,
        "qp_bit_length": None,
    }
    try:
        blob = fhe.Serialize(relin_key, fhe.BINARY)
    except Exception as e:
        out["log_qp_note"] = f"P not exposed by the Python API, and serialising the relinearisation key failed: {e}"
        return out
    limbs_f = len(blob) / (8 * n)
    limbs = round(limbs_f)
    per_poly = limbs / (2 * dnum)
    size_p = per_poly - len(q)
    if abs(limbs_f - limbs) > 0.25 or per_poly != int(per_poly) or size_p < 1:
        out["log_qp_note"] = (
            f"P not exposed by the Python API; the relinearisation key's size ({len(blob)} bytes = "
            f"{limbs_f:.2f} limbs of N words) does not fit 2*dnum*(|Q|+|P|) limbs"
        )
        return out
    size_p = int(size_p)
    p = None
    for step in (2 * n, n):
        cand = _openfhe_special_primes(size_p, step, q)
        if all(blob.find(c.to_bytes(8, "little")) >= 0 for c in cand):
            p = cand
            break
    if p is None:
        out["log_p"] = size_p * AUX_BITS
        out["log_qp"] = round(math.log2(big_q) + size_p * AUX_BITS, 3)
        out["log_qp_note"] = (
            f"{size_p} special primes counted in the relinearisation key; their values could not be "
            f"confirmed, so log P is the nominal {size_p} x {AUX_BITS} bits (upper bound)"
        )
        return out
    big_p = math.prod(p)
    out["log_p"] = round(math.log2(big_p), 3)
    out["p_bits"] = [m.bit_length() for m in p]
    out["log_qp"] = round(math.log2(big_q * big_p), 3)
    out["qp_bit_length"] = (big_q * big_p).bit_length()
    out["log_qp_note"] = (
        "Q from the context's moduli; P (not exposed by the Python API): "
        f"{size_p} special primes counted in the relinearisation key, values found in its bytes"
    )
    return out


# ---------------------------------------------------------------------------
# the worker

def _int(req, key, default=None, lo=None):
    v = req.get(key, default)
    if v is None:
        raise Refused(f"setup: '{key}' is required")
    if isinstance(v, bool) or not isinstance(v, int):
        raise Refused(f"setup: '{key}' must be an integer, got {v!r}")
    if lo is not None and v < lo:
        raise Refused(f"setup: '{key}' must be >= {lo}, got {v}")
    return v


class Worker:
    def __init__(self):
        self.cc = None
        self.ctx = {}

    # -- setup ---------------------------------------------------------------
    def setup(self, req):
        log_n = _int(req, "log_n", lo=1)
        scale_bits = _int(req, "scale_bits", lo=1)
        depth = _int(req, "depth", lo=0)
        first_mod_bits = _int(req, "first_mod_bits", lo=1)
        dnum = _int(req, "dnum", lo=1)
        threads = _int(req, "threads", 1, lo=1)
        seed = req.get("seed", 0)
        n = 1 << log_n
        slots = _int(req, "slots", n // 2, lo=1)
        if slots & (slots - 1) or slots > n // 2:
            raise Refused(f"setup: slots must be a power of two <= N/2 = {n // 2}, got {slots}")
        special = req.get("special_bits")
        if special is not None and special != AUX_BITS:
            raise Refused(
                f"setup: special_bits={special} cannot be honoured: OpenFHE 1.6 fixes the special "
                f"primes of HYBRID key switching at {AUX_BITS} bits (AUXMODSIZE, no setter)"
            )
        rotations = req.get("rotations", [1, 2, 3, 4])
        if not isinstance(rotations, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in rotations):
            raise Refused("setup: 'rotations' must be a list of integers")
        data_type = req.get("data_type", "complex")
        if data_type not in ("complex", "real"):
            raise Refused("setup: 'data_type' must be \"complex\" or \"real\"")
        security = req.get("security", "HEStd_128_classic")

        o = import_openfhe(threads)
        if not isinstance(security, str) or not isinstance(getattr(o, security, None), o.SecurityLevel):
            raise Refused(f"setup: unknown security level {security!r} (e.g. HEStd_128_classic, HEStd_NotSet)")
        self.release()
        omp = set_threads(threads)

        p = o.CCParamsCKKSRNS()
        p.SetRingDim(n)
        p.SetScalingModSize(scale_bits)
        p.SetFirstModSize(first_mod_bits)
        p.SetMultiplicativeDepth(depth)
        p.SetNumLargeDigits(dnum)
        p.SetKeySwitchTechnique(o.HYBRID)
        p.SetScalingTechnique(o.FIXEDMANUAL)
        p.SetSecurityLevel(getattr(o, security))
        p.SetSecretKeyDist(o.UNIFORM_TERNARY)
        p.SetBatchSize(slots)
        p.SetCKKSDataType(o.COMPLEX if data_type == "complex" else o.REAL)
        t0 = time.perf_counter_ns()
        try:
            cc = o.GenCryptoContext(p)
        except Exception as e:
            raise Refused(f"OpenFHE refused the parameters (log_n={log_n}, depth={depth}, dnum={dnum}, "
                          f"first_mod_bits={first_mod_bits}, scale_bits={scale_bits}, {security}): {e}")
        for feature in (o.PKE, o.KEYSWITCH, o.LEVELEDSHE):
            cc.Enable(feature)
        t1 = time.perf_counter_ns()
        if cc.GetRingDimension() != n:
            raise Refused(f"OpenFHE chose ring dimension {cc.GetRingDimension()}, not {n}")

        if req.get("keys", True) is False:
            # A parameter check: the context only, no keys (so no log P, no ops).
            q = q_moduli(cc)
            o.ReleaseAllContexts()
            return {
                "ok": True, "keys": False, "ring_dim": n, "security": security, "dnum": dnum,
                "log_q": round(math.log2(math.prod(q)), 3), "q_bits": [m.bit_length() for m in q],
                "log_qp": None, "version": openfhe_version(), "build": BUILD,
            }

        t2 = time.perf_counter_ns()
        kp = cc.KeyGen()
        t3 = time.perf_counter_ns()
        cc.EvalMultKeyGen(kp.secretKey)
        t4 = time.perf_counter_ns()
        if rotations:
            cc.EvalRotateKeyGen(kp.secretKey, rotations)
        t5 = time.perf_counter_ns()
        keygen_ms = {
            "KeyGen": (t3 - t2) / 1e6,
            "EvalMultKeyGen": (t4 - t3) / 1e6,
            "EvalRotateKeyGen": (t5 - t4) / 1e6,
            "rotations": len(rotations),
            "total": (t5 - t2) / 1e6,
        }

        self.cc, self.kp = cc, kp
        self.n, self.slots, self.depth, self.dnum = n, slots, depth, dnum
        self.rotations = set(rotations)
        self.data_type = data_type
        self.seed = seed
        self.ctx = {}

        relin = cc.GetEvalMultKeyVector(kp.secretKey.GetKeyTag())
        qp = log_qp_info(cc, relin[0], n, dnum) if relin else {"log_qp": None, "log_qp_note": "no relinearisation key"}
        del relin
        gc.collect()

        reply = {
            "ok": True,
            "log_qp": qp.pop("log_qp"),
            "ring_dim": cc.GetRingDimension(),
            "slots": slots,
            "version": openfhe_version(),
            "keygen_ms": keygen_ms,
            "build": BUILD,
            "context_ms": (t1 - t0) / 1e6,
            "levels": depth + 1,
            "dnum": dnum,
            "key_switching": "HYBRID",
            "scaling_technique": "FIXEDMANUAL (no automatic rescale; the caller rescales with ModReduce, as Lux does)",
            "security": security,
            "secret_key_dist": "UNIFORM_TERNARY",
            "data_type": data_type,
            "special_bits": AUX_BITS,
            "threads": threads,
            "omp": omp,
            "seed_note": "the seed drives the test vectors only; OpenFHE's PRNG is not seedable from Python",
        }
        reply.update(qp)
        return reply

    def release(self):
        if self.cc is not None:
            self.ctx = {}
            self.cc = self.kp = None
            try:
                fhe.ReleaseAllContexts()
            except Exception as e:  # older wheels
                log(f"ReleaseAllContexts failed: {e}")
            gc.collect()

    # -- inputs --------------------------------------------------------------
    def _rng(self, salt):
        import numpy as np

        import zlib

        s = self.seed
        if isinstance(s, bool) or not isinstance(s, int):
            s = zlib.crc32(json.dumps(s).encode())  # any JSON seed, the same in every process
        return np.random.default_rng([abs(s), salt])

    def _values(self, salt):
        rng = self._rng(salt)
        re = rng.uniform(-1.0, 1.0, self.slots)
        if self.data_type == "real":
            return re.astype(complex)
        return re + 1j * rng.uniform(-1.0, 1.0, self.slots)

    def _encode(self, v):
        if self.data_type == "real":
            return self.cc.MakeCKKSPackedPlaintext(v.real.copy())
        return self.cc.MakeCKKSPackedPlaintext(v)

    def _input(self, name):
        if name not in self.ctx:
            cc, pk = self.cc, self.kp.publicKey
            if name in ("pt", "x"):
                self.ctx["x"] = self._values(1)
                self.ctx["pt"] = self._encode(self.ctx["x"])
            elif name == "ct1":
                self.ctx["ct1"] = cc.Encrypt(pk, self._input("pt"))
            elif name == "ct2":
                self.ctx["ct2"] = cc.Encrypt(pk, self._encode(self._values(2)))
            elif name == "prod":
                self.ctx["prod"] = cc.EvalMult(self._input("ct1"), self._input("ct2"))
            elif name == "ct_1limb":
                self.ctx["ct_1limb"] = cc.LevelReduce(self._input("ct1"), None, self.depth)
        return self.ctx[name]

    # -- time ----------------------------------------------------------------
    def op_fn(self, op):
        cc, kp = self.cc, self.kp
        if op == "encrypt":
            pt, pk = self._input("pt"), kp.publicKey
            return lambda: cc.Encrypt(pk, pt)
        if op == "decrypt":
            ct, sk = self._input("ct1"), kp.secretKey
            return lambda: cc.Decrypt(sk, ct)
        if op == "decrypt_1limb":
            if self.depth < 1:
                raise Refused("decrypt_1limb: the top level already has one limb (depth 0)")
            ct, sk = self._input("ct_1limb"), kp.secretKey
            return lambda: cc.Decrypt(sk, ct)
        if op == "decrypt_raw":
            raise Refused("decrypt_raw is not offered: OpenFHE 1.6's Python API has no decrypt without "
                          "decode (CryptoContext.Decrypt always decodes)")
        if op == "mul_relin":
            a, b = self._input("ct1"), self._input("ct2")
            return lambda: cc.EvalMult(a, b)
        if op == "rescale":
            if self.depth < 1:
                raise Refused("rescale: depth 0 leaves no level to drop")
            prod = self._input("prod")
            return lambda: cc.ModReduce(prod)
        if op == "rotate":
            if 1 not in self.rotations:
                raise Refused("rotate: no rotation key for index 1 (add 1 to setup's rotations)")
            ct = self._input("ct1")
            return lambda: cc.EvalRotate(ct, 1)
        if op == "hoisted4":
            missing = [i for i in (1, 2, 3, 4) if i not in self.rotations]
            if missing:
                raise Refused(f"hoisted4: no rotation keys for {missing} (setup's rotations must hold 1..4)")
            return None  # timed by time_hoisted4
        raise Refused(f"unknown op {op!r} (encrypt, decrypt, decrypt_1limb, mul_relin, rescale, rotate, hoisted4)")

    def time_op(self, req):
        if self.cc is None:
            raise Refused("time: no context yet (send setup first)")
        op = req.get("op")
        iters = req.get("iters", 1)
        warmup = req.get("warmup", 1)
        for k, v in (("iters", iters), ("warmup", warmup)):
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if k == "iters" else 0):
                raise Refused(f"time: '{k}' must be an integer >= {1 if k == 'iters' else 0}, got {v!r}")
        fn = self.op_fn(op)
        ns_now = time.perf_counter_ns
        gc.collect()
        gc.disable()
        try:
            if fn is None:
                return self.time_hoisted4(iters, warmup)
            for _ in range(warmup):
                r = fn()
                del r
            ns = []
            for _ in range(iters):
                t0 = ns_now()
                r = fn()
                t1 = ns_now()
                del r
                ns.append(t1 - t0)
        finally:
            gc.enable()
        return {"ok": True, "op": op, "ns": ns}

    def time_hoisted4(self, iters, warmup):
        cc, ct = self.cc, self._input("ct1")
        m = cc.GetCyclotomicOrder()
        ns_now = time.perf_counter_ns
        ns, pre = [], []
        for i in range(warmup + iters):
            t0 = ns_now()
            digits = cc.EvalFastRotationPrecompute(ct)
            tp = ns_now()
            r1 = cc.EvalFastRotation(ct, 1, m, digits)
            r2 = cc.EvalFastRotation(ct, 2, m, digits)
            r3 = cc.EvalFastRotation(ct, 3, m, digits)
            r4 = cc.EvalFastRotation(ct, 4, m, digits)
            t1 = ns_now()
            del digits, r1, r2, r3, r4
            if i >= warmup:
                ns.append(t1 - t0)
                pre.append(tp - t0)
        return {"ok": True, "op": "hoisted4", "ns": ns, "precompute_ns": pre}

    # -- precision -----------------------------------------------------------
    def precision(self, req):
        import numpy as np

        if self.cc is None:
            raise Refused("precision: no context yet (send setup first)")
        cc, kp = self.cc, self.kp
        x, y = self._values(11), self._values(12)
        ctx = cc.Encrypt(kp.publicKey, self._encode(x))
        cty = cc.Encrypt(kp.publicKey, self._encode(y))

        def dec(ct):
            pt = cc.Decrypt(kp.secretKey, ct)
            pt.SetLength(self.slots)
            got = np.asarray(pt.GetCKKSPackedValue(), dtype=complex)[: self.slots]
            return got, pt

        def bits(got, want, pt):
            err = np.abs(got - want)
            mx, mean = float(err.max()), float(err.mean())
            r = {
                "bits_max": -math.log2(mx) if mx > 0 else None,
                "bits_mean": -math.log2(mean) if mean > 0 else None,
                "max_abs_err": mx,
                "mean_abs_err": mean,
            }
            try:
                r["openfhe_log_precision"] = float(pt.GetLogPrecision())
            except Exception:
                pass
            return r

        out = {"ok": True, "data_type": self.data_type, "slots": self.slots}
        got, pt = dec(ctx)
        out["fresh"] = bits(got, x, pt)
        if self.depth >= 1:
            prod = cc.ModReduce(cc.EvalMult(ctx, cty))
            got, pt = dec(prod)
            out["mul"] = bits(got, x * y, pt)
        else:
            out["mul"] = None
        if 1 in self.rotations:
            got, pt = dec(cc.EvalRotate(ctx, 1))
            out["rotate"] = bits(got, np.roll(x, -1), pt)
        else:
            out["rotate"] = None
        out["inputs"] = (
            "real and imaginary parts uniform in [-1,1]" if self.data_type == "complex" else "real, uniform in [-1,1]"
        )
        out["error"] = "|got - want| (complex modulus) over all slots"
        out["decode_noise"] = (
            "none: with CKKSDataType COMPLEX, OpenFHE's Decode adds no noise"
            if self.data_type == "complex"
            else "included: with CKKSDataType REAL, OpenFHE's Decode adds Gaussian noise (sqrt(2) x its "
            "estimated error, at least sqrt(N)/8 units) against key-recovery attacks"
        )
        return out

    def info(self):
        try:
            import_openfhe(int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
        except Refused as e:
            return {"ok": False, "error": str(e)}
        return {"ok": True, "version": openfhe_version(), "build": BUILD, "wheel": WHEEL,
                "python": sys.version.split()[0]}

    def handle(self, req):
        if not isinstance(req, dict):
            raise Refused("a request must be a JSON object")
        cmd = req.get("cmd")
        if cmd == "setup":
            return self.setup(req)
        if cmd == "time":
            return self.time_op(req)
        if cmd == "precision":
            return self.precision(req)
        if cmd == "info":
            return self.info()
        raise Refused(f"unknown cmd {cmd!r} (setup, time, precision, info, quit)")


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    return x


def send(obj):
    _proto.write(json.dumps(_json_safe(obj), separators=(",", ":")) + "\n")
    _proto.flush()


def main():
    w = Worker()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            send({"ok": False, "error": f"bad JSON: {e}"})
            continue
        if isinstance(req, dict) and req.get("cmd") == "quit":
            send({"ok": True})
            break
        try:
            send(w.handle(req))
        except Refused as e:
            send({"ok": False, "error": str(e)})
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            send({"ok": False, "error": f"{type(e).__name__}: {e}"})
    sys.stderr.flush()
    # Skip the interpreter's teardown of OpenFHE's static state (a quit must be quick).
    os._exit(0)


# ---------------------------------------------------------------------------
# --baseline: drive a worker (this script, over the protocol) through the presets and
# write one JSON file. Not run by CI.

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


def run_baseline(argv):
    import argparse
    import datetime
    import platform
    import subprocess

    ap = argparse.ArgumentParser(prog="openfhe_ckks.py --baseline")
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--out", help="output file (default: bench/results/openfhe/<UTC>-baseline.json)")
    ap.add_argument("--presets", default=",".join(PRESETS), help="comma-separated: " + ",".join(PRESETS))
    ap.add_argument("--iters", type=int, default=None, help="iterations per op (default: per preset)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)

    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    out = a.out or os.path.join(root, "bench", "results", "openfhe", f"{stamp}-baseline.json")
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    load_start = os.getloadavg()
    worker = subprocess.Popen([sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
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
                             "fhe-bench/peers/openfhe_ckks.py"] + argv),
        "method": "each call timed on its own with time.perf_counter_ns, 1 untimed warm-up "
                  "call per op, inputs fresh top-level ciphertexts made once; medians in ms",
        "runs": runs,
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(_json_safe(doc), f, indent=1)
        f.write("\n")
    print(out, file=_proto, flush=True)


if __name__ == "__main__":
    if "--baseline" in sys.argv[1:]:
        run_baseline(sys.argv[1:])
        sys.exit(0)
    main()
