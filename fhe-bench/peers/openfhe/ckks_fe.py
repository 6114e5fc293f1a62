"""FE functional bootstrapping on the OpenFHE worker (issue 36): `fe_setup` and `fe_time`
(documented in protocol.py), as seed 2's benchmark runs `EvalFEFuncBootstrap`.

The set-up follows seed 2 (OpenFHE PR #1372): SPARSE_ENCAPSULATED, full packing,
FLEXIBLEAUTO, HYBRID, a first modulus one bit wider than the scale, depth =
max GetFEFBTDepth over the series + the levels after, EvalFEFuncBootstrapSetup(budget),
KeyGen, EvalMultKeyGen, EvalBootstrapKeyGen(sk, slots). The digit count is the one asked
for, or the smallest whose log QP stays within `bound` (seed 2 skips a row over it). The
input is seed 2's: x_i = -1/2 + i/slots, encrypted at level depth - (b + 1); the output
is compared with f(2 R x) as seed 2 does (mean error over the range, in bits).
"""

import gc
import math
import time

from ckks_boot import peak_rss_bytes
from moduli import log_qp_info
from protocol import Refused, int_field


def series_field(req):
    fns = req.get("functions")
    if not isinstance(fns, list) or not fns:
        raise Refused("fe_setup: 'functions' must be a non-empty list of {name, radius, coeffs}")
    out = []
    for f in fns:
        try:
            name, radius = str(f["name"]), float(f["radius"])
            coeffs = [complex(float(re), float(im)) for re, im in f["coeffs"]]
        except (KeyError, TypeError, ValueError) as e:
            raise Refused(f"fe_setup: a function must be {{name, radius, coeffs: [[re, im], ...]}}: {e}")
        if len(coeffs) < 2 or not radius > 0:
            raise Refused(f"fe_setup: function {name!r} needs radius > 0 and at least two coefficients")
        out.append({"name": name, "radius": radius, "coeffs": coeffs})
    return out


def target(name, v):
    if name == "identity":
        return v
    if name == "exp":
        return math.exp(v)
    if name == "tanh":
        return math.tanh(v)
    if name == "sigmoid":
        return 1.0 / (1.0 + math.exp(-v))
    if name == "gelu":
        return 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
    raise Refused(f"fe_time: unknown function {name!r} (identity, exp, tanh, sigmoid, gelu)")


class FeBoot:
    """One FE bootstrapping context; one worker per round (its memory goes back on exit)."""

    def __init__(self):
        self.cc = None

    def _context(self, o, shape, depth, dnum):
        p = o.CCParamsCKKSRNS()
        p.SetSecretKeyDist(o.SPARSE_ENCAPSULATED)
        p.SetSecurityLevel(o.HEStd_NotSet)
        p.SetRingDim(shape["n"])
        p.SetScalingModSize(shape["scale_bits"])
        p.SetFirstModSize(shape["scale_bits"] + 1)
        p.SetScalingTechnique(o.FLEXIBLEAUTO)
        p.SetNumLargeDigits(dnum)
        p.SetKeySwitchTechnique(o.HYBRID)
        p.SetMultiplicativeDepth(depth)
        p.SetBatchSize(shape["n"] // 2)
        cc = o.GenCryptoContext(p)
        for feature in (o.PKE, o.KEYSWITCH, o.LEVELEDSHE, o.ADVANCEDSHE, o.FHE):
            cc.Enable(feature)
        return cc

    def setup(self, o, req):
        log_n = int_field(req, "log_n", lo=15)
        scale_bits = int_field(req, "scale_bits", lo=20)
        levels_after = int_field(req, "levels_after", lo=0)
        bound = int_field(req, "bound", lo=1)
        budget = req.get("level_budget", [5, 4])
        if (not isinstance(budget, list) or len(budget) != 2
                or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budget)):
            raise Refused(f"fe_setup: 'level_budget' must be two integers >= 1, got {budget!r}")
        fns = series_field(req)
        n = 1 << log_n
        shape = {"log_n": log_n, "n": n, "scale_bits": scale_bits, "levels_after": levels_after,
                 "level_budget": budget, "bound": bound}
        fe_depth = max(o.CryptoContext.GetFEFBTDepth(budget, f["coeffs"], o.SPARSE_ENCAPSULATED, scale_bits + 1)
                       for f in fns)
        depth = fe_depth + levels_after
        t0 = time.perf_counter_ns()
        asked = req.get("dnum")
        tried = []
        for dnum in ([asked] if isinstance(asked, int) and asked >= 1 else range(1, depth + 2)):
            try:
                cc = self._context(o, shape, depth, dnum)
            except RuntimeError as e:
                # OpenFHE refuses a digit count that leaves a digit empty (23 towers in 7
                # digits): that count is not a candidate, the next one may be.
                tried.append((dnum, f"refused: {str(e).splitlines()[0][-120:]}"))
                cc = None
                continue
            kp = cc.KeyGen()
            cc.EvalMultKeyGen(kp.secretKey)
            relin = cc.GetEvalMultKeyVector(kp.secretKey.GetKeyTag())[0]
            info = log_qp_info(__import__("openfhe"), cc, relin, n, dnum)
            del relin
            log_qp = info.get("qp_bit_length") or info.get("log_qp")
            tried.append((dnum, log_qp))
            if log_qp is not None and math.ceil(log_qp) <= bound:
                break
            cc = kp = None
            gc.collect()
        if cc is None:
            raise Refused(f"fe_setup: no digit count keeps log QP within {bound} at depth {depth}: {tried}")
        t1 = time.perf_counter_ns()
        cc.EvalFEFuncBootstrapSetup(budget, [0, 0], n // 2)
        cc.EvalBootstrapKeyGen(kp.secretKey, n // 2)
        t2 = time.perf_counter_ns()
        self.cc, self.kp, self.fns = cc, kp, fns
        self.shape = {**shape, "depth": depth, "fe_depth": fe_depth, "dnum": dnum, "log_qp": math.ceil(log_qp)}
        return {"ok": True, "setup_ms": {"context_and_search": (t1 - t0) / 1e6, "total": (t2 - t0) / 1e6},
                "dnum_tried": tried, **self.shape}

    def time(self, req):
        if self.cc is None:
            raise Refused("fe_time: no FE context (send fe_setup first)")
        cc, kp, shape = self.cc, self.kp, self.shape
        slots = shape["n"] // 2
        x = [-0.5 + i / slots for i in range(slots)]
        level = shape["depth"] - (shape["level_budget"][1] + 1)
        ct = cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x, 1, level, None, slots))
        # Discarded calls of the first function, as ours (the bench's --ckks-boot-warmup).
        for _ in range(int_field(req, "warmup", 0, lo=0)):
            cc.EvalFEFuncBootstrap(ct, self.fns[0]["coeffs"])
        rows = []
        for f in self.fns:
            want = [target(f["name"], 2.0 * f["radius"] * v) for v in x]
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter_ns()
                out = cc.EvalFEFuncBootstrap(ct, f["coeffs"])
                t1 = time.perf_counter_ns()
            finally:
                gc.enable()
            pt = cc.Decrypt(kp.secretKey, out)
            pt.SetLength(slots)
            got = pt.GetRealPackedValue()[:slots]
            err = [abs(a - b) for a, b in zip(want, got)]
            rng = max(want) - min(want)
            rng = rng if rng > 1e-15 else 1.0
            mean, mx = sum(err) / len(err), max(err)
            rows.append({"name": f["name"], "ns": t1 - t0, "mean_abs_err": mean, "max_abs_err": mx,
                         "bits_mean_rel": -math.log2(mean / rng) if mean > 0 else None,
                         "output_level": shape["depth"] - out.GetLevel(), "degree": len(f["coeffs"]) - 1})
            del out
        return {"ok": True, "functions": rows, "peak_rss_bytes": peak_rss_bytes(), **shape}
