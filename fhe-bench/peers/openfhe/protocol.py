"""The JSON-lines protocol of the OpenFHE CKKS peer (worker.py serves it; the Rust side,
fhe-bench/src/peers/openfhe.rs, speaks it).

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
        mul_plain_kept  EvalMult(ct1, pt2): a fresh top-level ciphertext times a
                     plaintext encoded beforehand (held in evaluation form), no rescale
      "decrypt_raw" is not offered: the Python API has no decrypt without decode.
      Result objects are released after the clock stops (destruction is not timed).
  {"cmd":"precision"}
      Random values, real and imaginary parts uniform in [-1,1] ("complex" data type)
      or real values in [-1,1] ("real"); for "mul": Enc(x)*Enc(y), relinearise,
      ModReduce, decrypt, against x*y; "fresh": Dec(Enc(x)) against x; "rotate":
      Dec(EvalRotate(Enc(x),1)) against x shifted left by one slot; "mul_plain":
      Dec(ModReduce(EvalMult(Enc(x), Encode(y)))) against x*y. Each gives
      "bits_max" = -log2(max |err|) and "bits_mean" = -log2(mean |err|), |.| the
      complex modulus, over all slots.
  {"cmd":"boot_setup","log_n":16,"scale_bits":59,"first_mod_bits":60,"depth":22,"dnum":4,
   "secret":"uniform"|"sparse"|"encapsulated","level_budget":[3,3],"slots":32768,"threads":1,"seed":1}
      Bootstrapping (ckks_boot.py): CCParamsCKKSRNS with UNIFORM_TERNARY,
      SPARSE_TERNARY or SPARSE_ENCAPSULATED, "security" (default HEStd_128_classic),
      FLEXIBLEAUTO, HYBRID with numLargeDigits = dnum, batch size = slots; enables PKE,
      KEYSWITCH, LEVELEDSHE, ADVANCEDSHE, FHE; EvalBootstrapSetup(level_budget, [0,0], slots), KeyGen,
      EvalMultKeyGen, EvalBootstrapKeyGen(sk, slots). Replies "setup_ms" (context,
      EvalBootstrapSetup, keygen, total). Replaces any leveled context.
  {"cmd":"boot_time","iters":k,"warmup":0}
      Real values uniform in [-1,1] encrypted at level depth - 1
      (MakeCKKSPackedPlaintext(x, 1, depth - 1), as OpenFHE's examples), then "warmup"
      untimed and k timed EvalBootstrap calls. Replies "ns", "max_abs_err",
      "mean_abs_err", "bits_max", "bits_mean" (of the first timed output against x over
      all slots), "level_in", "level_out", "noise_scale_deg_out", "output_level" =
      depth - level_out (as the examples compute the levels left), "peak_rss_bytes"
      (ru_maxrss, read before the decryption), "key_count" (automorphism keys + the
      relinearization key) and "key_bytes" (that count times one key's BINARY
      serialization).
  {"cmd":"fe_setup","log_n":16,"scale_bits":59,"levels_after":1,"level_budget":[3,2],
   "bound":1553,"dnum":null,"functions":[{"name":"exp","radius":2.0,"coeffs":[[re,im],...]}],
   "threads":1}
      FE functional bootstrapping (ckks_fe.py), seed 2's set-up: SPARSE_ENCAPSULATED,
      first modulus scale_bits + 1, FLEXIBLEAUTO, HYBRID, depth = max GetFEFBTDepth +
      levels_after, the given dnum or the smallest whose log QP <= bound;
      EvalFEFuncBootstrapSetup(level_budget), KeyGen, EvalMultKeyGen,
      EvalBootstrapKeyGen. Replies "setup_ms", "depth", "dnum", "log_qp", "dnum_tried".
  {"cmd":"fe_time","warmup":0}
      Seed 2's input x_i = -1/2 + i/slots at level depth - (b + 1); "warmup" (default
      0) discarded EvalFEFuncBootstrap calls of the first function, then one timed
      EvalFEFuncBootstrap per function. Replies "functions": per function "ns",
      "mean_abs_err", "max_abs_err" (against f(2 R x)), "bits_mean_rel" (-log2 of the
      mean error over the range of f), "output_level" (depth - GetLevel()), "degree";
      and "peak_rss_bytes" (VmHWM).
  {"cmd":"info"}   version and build, without a context.
  {"cmd":"quit"}   replies {"ok":true} and exits.

This module holds what the protocol owns: the real stdout (claimed at start, so that
nothing else printed to fd 1 can corrupt a reply), the reply encoding, the serving loop
and the request-field checks. It imports nothing from OpenFHE.
"""

import json
import math
import os
import sys
import traceback

_proto = None  # the real stdout, once claimed


class Refused(Exception):
    """A request that cannot be served; its message is the reply's error."""


def log(msg):
    print(f"openfhe_ckks: {msg}", file=sys.stderr, flush=True)


def claim_stdout():
    """The protocol owns the real stdout; anything else written to fd 1 (OpenFHE's C++
    code printing to std::cout, a stray print) goes to stderr instead. Returns the
    protocol's stream."""
    global _proto
    if _proto is None:
        _proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    return _proto


def int_field(req, key, default=None, lo=None):
    """An integer field of a setup request (a bool is not an integer here)."""
    v = req.get(key, default)
    if v is None:
        raise Refused(f"setup: '{key}' is required")
    if isinstance(v, bool) or not isinstance(v, int):
        raise Refused(f"setup: '{key}' must be an integer, got {v!r}")
    if lo is not None and v < lo:
        raise Refused(f"setup: '{key}' must be >= {lo}, got {v}")
    return v


def json_safe(x):
    """`x` with every non-finite float as null (JSON has no NaN or infinity)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [json_safe(v) for v in x]
    return x


def send(obj):
    _proto.write(json.dumps(json_safe(obj), separators=(",", ":")) + "\n")
    _proto.flush()


def serve(handle):
    """Answers one request per stdin line with `handle(request)` until "quit" or the end
    of the input; a Refused is the reply's error, any other exception too (its traceback
    goes to stderr). Then exits at once."""
    claim_stdout()
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
            send(handle(req))
        except Refused as e:
            send({"ok": False, "error": str(e)})
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            send({"ok": False, "error": f"{type(e).__name__}: {e}"})
    sys.stderr.flush()
    # Skip the interpreter's teardown of OpenFHE's static state (a quit must be quick).
    os._exit(0)
