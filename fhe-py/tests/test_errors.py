"""Bad input from Python is a Python exception naming the cause, never a crash: malformed
bytes of every kind, wrong keys, unknown names, a bad backend selection."""

import os
import subprocess
import sys

import numpy as np
import pytest

import lux_fhe
from lux_fhe import ckks

from conftest import seed


def all_objects(engine, bit_keys, server, ctx, ckks_keys):
    """One object of every class with bytes, with the class that decodes it."""
    bit = engine.encrypt_bit(bit_keys.pk, True, seed(300))
    ct = ctx.encrypt(ckks_keys.pk, np.arange(4.0), seed=seed(301))
    return [
        (lux_fhe.SecretKey, bit_keys.sk),
        (lux_fhe.PublicKey, bit_keys.pk),
        (lux_fhe.EvaluationKey, bit_keys.ek),
        (lux_fhe.LweCiphertext, bit),
        (lux_fhe.FheUint, lux_fhe.FheUint.encrypt(bit_keys.pk, 4, 9)),
        (ckks.SecretKey, ckks_keys.sk),
        (ckks.PublicKey, ckks_keys.pk),
        (ckks.EvalKeys, ckks_keys.eval),
        (ckks.SwitchingKey, ckks_keys.eval.keys()[0]),
        (ckks.Plaintext, ctx.encode(np.arange(4.0))),
        (ckks.Ciphertext, ct),
    ]


@pytest.fixture(scope="module")
def objects(engine, bit_keys, server, ctx, ckks_keys):
    return all_objects(engine, bit_keys, server, ctx, ckks_keys)


def test_round_trip_of_every_kind(objects):
    for cls, obj in objects:
        data = obj.to_bytes()
        assert cls.from_bytes(data).to_bytes() == data, cls


@pytest.mark.parametrize("data, cause", [(b"", "truncated"), (b"garbage!", "bad magic"), (b"\x00" * 64, "bad magic")])
def test_malformed_bytes_name_the_cause(objects, data, cause):
    for cls, _ in objects:
        with pytest.raises(lux_fhe.DecodeError, match=cause) as err:
            cls.from_bytes(data)
        # The decoder's own error is kept as the cause.
        assert isinstance(err.value.__cause__, lux_fhe.LuxFheError), cls


def test_truncated_flipped_and_foreign_bytes(objects):
    rng = np.random.default_rng(5)
    for cls, obj in objects:
        data = obj.to_bytes()
        for cut in (1, 7, len(data) // 2, len(data) - 1):
            with pytest.raises(lux_fhe.DecodeError):
                cls.from_bytes(data[:cut])
        # Another kind's bytes under this class: refused by the header's kind.
        other = objects[(objects.index((cls, obj)) + 1) % len(objects)][1].to_bytes()
        with pytest.raises(lux_fhe.LuxFheError):
            cls.from_bytes(other)
        # Random single-byte changes: an exception or a valid object, never a crash.
        for _ in range(8):
            bad = bytearray(data[:4096] if len(data) > 4096 else data)
            i = int(rng.integers(len(bad)))
            bad[i] ^= 1 << int(rng.integers(8))
            try:
                cls.from_bytes(bytes(bad))
            except lux_fhe.LuxFheError:
                pass


def test_wrong_key_is_named(engine, bit_keys, server, ctx, ckks_keys):
    other = engine.keygen("PN10QP27", seed=lux_fhe.derive_seed("another key set", 0))
    foreign = engine.encrypt_bit(other.pk, True)
    with pytest.raises(lux_fhe.WrongKeyError):
        server.and_(foreign, engine.encrypt_bit(bit_keys.pk, True))
    other_ckks = ctx.keygen(seed=lux_fhe.derive_seed("another key set", 1))
    ct = ctx.encrypt(other_ckks.pk, [1.0])
    with pytest.raises(lux_fhe.WrongKeyError):
        ctx.decrypt(ckks_keys.sk, ct)


def test_unknown_names_and_bad_arguments(engine, ctx, ckks_keys, ev):
    with pytest.raises(lux_fhe.ParamError, match="PN99"):
        engine.keygen("PN99")
    with pytest.raises(lux_fhe.ParamError):
        engine.ckks("slots1-scale1-depth1")
    with pytest.raises(lux_fhe.InvalidInputError, match="32 bytes, got 3"):
        engine.keygen("PN10QP27", seed=b"abc")
    with pytest.raises(lux_fhe.InvalidInputError, match="unknown mode"):
        ctx.evaluator(ckks_keys, mode="fast")
    with pytest.raises(lux_fhe.LuxFheError):
        ctx.encode(np.ones(4097))
    ct = ctx.encrypt(ckks_keys.pk, [1.0])
    with pytest.raises(lux_fhe.LevelError):
        ev.rescale(ev.rescale(ev.rescale(ev.mul(ct, ct))))
    with pytest.raises(lux_fhe.MissingKeyError):
        ev.rotate(ct, 7)
    with pytest.raises(lux_fhe.InvalidInputError, match="Plaintext"):
        ev.add_plain(ct, "not a plaintext")


def test_bytes_of_another_preset_are_a_param_error(engine, ctx, ckks_keys):
    ct = ctx.encrypt(ckks_keys.pk, [1.0])
    bigger = engine.ckks("slots8192-scale40-depth6")
    with pytest.raises(lux_fhe.ParamError):
        bigger.ciphertext_from_bytes(ct.to_bytes())


def run_python(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


def test_backend_from_the_environment_fails_fast():
    code = "import lux_fhe\ntry:\n    lux_fhe.Engine()\nexcept lux_fhe.BackendError as e:\n    print('BackendError:', e)\n"
    out = run_python(code, LUX_FHE_BACKEND="bogus")
    assert out.returncode == 0, out.stderr
    assert "BackendError: unknown backend `bogus`" in out.stdout
    # A backend not compiled into this build: the cause says which feature is missing.
    out = run_python(code.replace("Engine()", "Engine('cuda')"))
    assert "not compiled in" in out.stdout
    out = run_python("import lux_fhe; print(lux_fhe.Engine().backend)", LUX_FHE_BACKEND="cpu")
    assert out.returncode == 0 and out.stdout.startswith("cpu"), out.stderr
