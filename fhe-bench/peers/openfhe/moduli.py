"""log Q and log P of an OpenFHE CKKS context, which its Python API does not expose
directly: Q from the context's JSON serialisation, P counted in the relinearisation key
and its primes replayed by OpenFHE's own rule."""

import json
import math

AUX_BITS = 60  # OpenFHE's AUXMODSIZE: the special primes P of HYBRID key switching

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


def q_moduli(fhe, cc):
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


def log_qp_info(fhe, cc, relin_key, n, dnum):
    """log2 Q (exact, from the context) and log2 P. P is not exposed by the Python
    API: the number of special primes is counted from the relinearisation key
    (2 * dnum polynomials over Q*P, N 8-byte words per limb, in its binary
    serialisation), the primes are OpenFHE's rule replayed, and each one is checked to
    be present in that key's bytes."""
    q = q_moduli(fhe, cc)
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
