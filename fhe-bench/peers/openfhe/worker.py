"""OpenFHE CKKS peer for the Lux bench: a long-lived worker driven over stdin/stdout.

Run it with the venv that `scripts/openfhe-setup` makes (CPython 3.10 + the PyPI wheel
openfhe==1.6.1.0.22.4, a portable build without AVX):

    OMP_NUM_THREADS=1 target/openfhe-venv/bin/python fhe-bench/peers/openfhe/worker.py

The protocol (requests, replies, errors) is documented and served by protocol.py; log Q
and log P come from moduli.py; `baseline.py` drives this worker through four presets.
"""

import gc
import json
import math
import os
import sys
import time

from ckks_boot import Boot
from ckks_fe import FeBoot
from moduli import AUX_BITS, log_qp_info, q_moduli
from protocol import Refused, int_field, log, serve

WHEEL = "openfhe==1.6.1.0.22.4"
BUILD = "PyPI wheel, portable, no AVX"

fhe = None  # the openfhe module, imported at the first setup (after OMP_NUM_THREADS)


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


class Worker:
    def __init__(self):
        self.cc = None
        self.ctx = {}
        self.boot = Boot()

    # -- setup ---------------------------------------------------------------
    def setup(self, req):
        log_n = int_field(req, "log_n", lo=1)
        scale_bits = int_field(req, "scale_bits", lo=1)
        depth = int_field(req, "depth", lo=0)
        first_mod_bits = int_field(req, "first_mod_bits", lo=1)
        dnum = int_field(req, "dnum", lo=1)
        threads = int_field(req, "threads", 1, lo=1)
        seed = req.get("seed", 0)
        n = 1 << log_n
        slots = int_field(req, "slots", n // 2, lo=1)
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
            q = q_moduli(o, cc)
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
        qp = log_qp_info(fhe, cc, relin[0], n, dnum) if relin else {"log_qp": None, "log_qp_note": "no relinearisation key"}
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
            elif name == "pt2":
                self.ctx["pt2"] = self._encode(self._values(2))
            elif name == "ct2":
                self.ctx["ct2"] = cc.Encrypt(pk, self._input("pt2"))
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
        if op == "mul_plain_kept":
            ct, pt = self._input("ct1"), self._input("pt2")
            return lambda: cc.EvalMult(ct, pt)
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
        raise Refused(f"unknown op {op!r} (encrypt, decrypt, decrypt_1limb, mul_relin, rescale, rotate, hoisted4, "
                      "mul_plain_kept)")

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
            got, pt = dec(cc.ModReduce(cc.EvalMult(ctx, self._encode(y))))
            out["mul_plain"] = bits(got, x * y, pt)
        else:
            out["mul"] = out["mul_plain"] = None
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
        if cmd == "boot_setup":
            o = import_openfhe(int_field(req, "threads", 1, lo=1))
            self.release()
            self.boot = Boot()
            omp = set_threads(int_field(req, "threads", 1, lo=1))
            return {**self.boot.setup(o, req), "omp": omp, "version": openfhe_version(), "build": BUILD}
        if cmd == "boot_time":
            return self.boot.time(req)
        if cmd == "fe_setup":
            o = import_openfhe(int_field(req, "threads", 1, lo=1))
            self.release()
            self.boot = FeBoot()
            omp = set_threads(int_field(req, "threads", 1, lo=1))
            return {**self.boot.setup(o, req), "omp": omp, "version": openfhe_version(), "build": BUILD}
        if cmd == "fe_time":
            if not isinstance(self.boot, FeBoot):
                raise Refused("fe_time: no FE context (send fe_setup first)")
            return self.boot.time(req)
        raise Refused(
            f"unknown cmd {cmd!r} (setup, time, precision, boot_setup, boot_time, fe_setup, fe_time, info, quit)")


if __name__ == "__main__":
    serve(Worker().handle)
