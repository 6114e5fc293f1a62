"""CKKS bootstrapping on the OpenFHE worker (issue 35): `boot_setup` and `boot_time`
(documented in protocol.py). Kept apart from worker.py, whose set-up is the leveled one
(FIXEDMANUAL, no FHE feature).

The set-up follows OpenFHE's bootstrapping examples: FLEXIBLEAUTO scaling, the FHE
feature, EvalBootstrapSetup(level budget), KeyGen, EvalMultKeyGen and
EvalBootstrapKeyGen(sk, slots); the input is encrypted at level depth - 1, as the
examples do (`MakeCKKSPackedPlaintext(x, 1, depth - 1)`).
"""

import gc
import math
import resource
import time

from protocol import Refused, int_field

SECRETS = ("uniform", "sparse", "encapsulated")


def peak_rss_bytes():
    """This process's peak resident set: VmHWM of /proc/self/status. Not ru_maxrss: a
    child forked from the bench inherits the bench's high-water mark in it (Linux
    copies the parent's mm counters at fork and keeps them across exec), so after our
    round it would report ours. ru_maxrss only where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def boot_params(o, req):
    """CCParamsCKKSRNS for a `boot_setup` request; refuses bad fields before any work."""
    log_n = int_field(req, "log_n", lo=1)
    scale_bits = int_field(req, "scale_bits", lo=1)
    first_mod_bits = int_field(req, "first_mod_bits", lo=1)
    depth = int_field(req, "depth", lo=1)
    dnum = int_field(req, "dnum", lo=1)
    n = 1 << log_n
    slots = int_field(req, "slots", n // 2, lo=1)
    if slots & (slots - 1) or slots > n // 2:
        raise Refused(f"boot_setup: slots must be a power of two <= N/2 = {n // 2}, got {slots}")
    secret = req.get("secret")
    if secret not in SECRETS:
        raise Refused(f"boot_setup: 'secret' must be one of {', '.join(SECRETS)}, got {secret!r}")
    budget = req.get("level_budget", [3, 3])
    if (not isinstance(budget, list) or len(budget) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budget)):
        raise Refused(f"boot_setup: 'level_budget' must be two integers >= 1, got {budget!r}")
    security = req.get("security", "HEStd_128_classic")
    if not isinstance(security, str) or not isinstance(getattr(o, security, None), o.SecurityLevel):
        raise Refused(f"boot_setup: unknown security level {security!r} (e.g. HEStd_128_classic, HEStd_NotSet)")
    p = o.CCParamsCKKSRNS()
    dist = {"uniform": o.UNIFORM_TERNARY, "sparse": o.SPARSE_TERNARY, "encapsulated": o.SPARSE_ENCAPSULATED}
    p.SetSecretKeyDist(dist[secret])
    p.SetSecurityLevel(getattr(o, security))
    p.SetRingDim(n)
    p.SetScalingModSize(scale_bits)
    p.SetFirstModSize(first_mod_bits)
    p.SetScalingTechnique(o.FLEXIBLEAUTO)
    p.SetNumLargeDigits(dnum)
    p.SetKeySwitchTechnique(o.HYBRID)
    p.SetMultiplicativeDepth(depth)
    p.SetBatchSize(slots)
    shape = {"log_n": log_n, "n": n, "slots": slots, "depth": depth, "dnum": dnum, "secret": secret,
             "level_budget": budget, "security": security, "scale_bits": scale_bits,
             "first_mod_bits": first_mod_bits}
    return p, shape


class Boot:
    """One bootstrapping context. The Rust side starts a fresh worker per round, so the
    memory of a round is returned to the system when its worker exits."""

    def __init__(self):
        self.cc = None

    def setup(self, o, req):
        p, shape = boot_params(o, req)
        seed = req.get("seed", 1)
        t0 = time.perf_counter_ns()
        try:
            cc = o.GenCryptoContext(p)
        except Exception as e:
            raise Refused(f"OpenFHE refused the bootstrapping parameters {shape}: {e}")
        for feature in (o.PKE, o.KEYSWITCH, o.LEVELEDSHE, o.ADVANCEDSHE, o.FHE):
            cc.Enable(feature)
        if cc.GetRingDimension() != shape["n"]:
            raise Refused(f"OpenFHE chose ring dimension {cc.GetRingDimension()}, not {shape['n']}")
        t1 = time.perf_counter_ns()
        cc.EvalBootstrapSetup(shape["level_budget"], [0, 0], shape["slots"])
        t2 = time.perf_counter_ns()
        kp = cc.KeyGen()
        cc.EvalMultKeyGen(kp.secretKey)
        cc.EvalBootstrapKeyGen(kp.secretKey, shape["slots"])
        t3 = time.perf_counter_ns()
        self.cc, self.kp, self.shape, self.seed = cc, kp, shape, seed
        return {
            "ok": True,
            "setup_ms": {
                "context": (t1 - t0) / 1e6,
                "EvalBootstrapSetup": (t2 - t1) / 1e6,
                "keygen": (t3 - t2) / 1e6,
                "total": (t3 - t0) / 1e6,
            },
            "keygen_note": "KeyGen + EvalMultKeyGen + EvalBootstrapKeyGen(sk, slots)",
            "scaling_technique": "FLEXIBLEAUTO",
            "data_type": "real (OpenFHE's default CKKSDataType)",
            **shape,
        }

    def _values(self):
        import numpy as np

        rng = np.random.default_rng([abs(int(self.seed)), 35])
        return rng.uniform(-1.0, 1.0, self.shape["slots"])

    def time(self, req):
        if self.cc is None:
            raise Refused("boot_time: no bootstrapping context (send boot_setup first)")
        iters, warmup = req.get("iters", 1), req.get("warmup", 0)
        for k, v, lo in (("iters", iters, 1), ("warmup", warmup, 0)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise Refused(f"boot_time: '{k}' must be an integer >= {lo}, got {v!r}")
        import numpy as np

        cc, kp, depth, slots = self.cc, self.kp, self.shape["depth"], self.shape["slots"]
        x = self._values()
        # OpenFHE's examples encrypt at level depth - 1 (two primes left) before bootstrapping.
        ct = cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x.tolist(), 1, depth - 1))
        level_in = ct.GetLevel()
        ns, out = [], None
        gc.collect()
        gc.disable()
        try:
            for i in range(warmup + iters):
                t0 = time.perf_counter_ns()
                r = cc.EvalBootstrap(ct)
                t1 = time.perf_counter_ns()
                if i >= warmup:
                    ns.append(t1 - t0)
                if out is None and i >= warmup:
                    out = r  # the first timed output is the one checked
                del r
        finally:
            gc.enable()
        peak = peak_rss_bytes()  # before the decryption and the key sizes below
        pt = cc.Decrypt(kp.secretKey, out)
        pt.SetLength(slots)
        got = np.asarray(pt.GetRealPackedValue(), dtype=float)[:slots]
        err = np.abs(got - x)
        mx, mean = float(err.max()), float(err.mean())
        level = out.GetLevel()
        keys = self.key_sizes()
        return {
            "ok": True,
            "ns": ns,
            "warmup": warmup,
            "bits_max": -math.log2(mx) if mx > 0 else None,
            "bits_mean": -math.log2(mean) if mean > 0 else None,
            "max_abs_err": mx,
            "mean_abs_err": mean,
            "level_in": level_in,
            "level_out": level,
            "noise_scale_deg_out": out.GetNoiseScaleDeg(),
            # As the examples compute it: depth - GetLevel() levels are left.
            "output_level": depth - level,
            "peak_rss_bytes": peak,
            "ru_maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            **keys,
        }

    def key_sizes(self):
        """Switching keys: the automorphism keys of the key tag plus the relinearization
        key; bytes = their count times the binary serialization of the relinearization
        key (every key has its shape: dnum digits of two polynomials over QP)."""
        fhe = __import__("openfhe")
        tag = self.kp.secretKey.GetKeyTag()
        try:
            count = len(self.cc.GetExistingEvalAutomorphismKeyIndices(tag)) + 1
            relin = self.cc.GetEvalMultKeyVector(tag)[0]
            one = len(fhe.Serialize(relin, fhe.BINARY))
            del relin
        except Exception as e:  # the map or the serialization missing from a wheel
            return {"key_count": None, "key_bytes": None, "key_note": f"not measured: {type(e).__name__}: {e}"}
        return {"key_count": count, "key_bytes": count * one,
                "key_note": "relinearization + automorphism keys, times one key's BINARY serialization"}
