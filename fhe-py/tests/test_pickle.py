"""Objects travel between processes as their versioned bytes: pickling goes through
`to_bytes`/`from_bytes`, and another interpreter decodes what this one wrote."""

import pickle
import subprocess
import sys

import numpy as np
import pytest

import lux_fhe
from lux_fhe import ckks

from conftest import seed
from test_errors import all_objects


@pytest.fixture(scope="module")
def objects(engine, bit_keys, server, ctx, ckks_keys):
    return all_objects(engine, bit_keys, server, ctx, ckks_keys)


def test_pickle_is_the_versioned_bytes(objects):
    for cls, obj in objects:
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is cls and back.to_bytes() == obj.to_bytes()
        # The pickle holds the format's bytes verbatim (no second encoding).
        assert obj.to_bytes() in pickle.dumps(obj)


def test_key_sets_pickle_as_their_parts(bit_keys, ckks_keys):
    back = pickle.loads(pickle.dumps(bit_keys))
    assert [k.to_bytes() for k in (back.sk, back.pk)] == [k.to_bytes() for k in (bit_keys.sk, bit_keys.pk)]
    back = pickle.loads(pickle.dumps(ckks_keys))
    assert back.eval.to_bytes() == ckks_keys.eval.to_bytes() and back.sk.tag == ckks_keys.sk.tag


def test_unpickled_ciphertext_computes(ctx, ckks_keys, ev):
    ct = ctx.encrypt(ckks_keys.pk, np.arange(4.0), seed=seed(400))
    back = pickle.loads(pickle.dumps(ct))
    assert back.context.params.name == ctx.params.name
    got = ctx.decrypt(ckks_keys.sk, ev.rescale(ev.mul(back, ct)), real=True)[:4]
    assert np.max(np.abs(got - np.arange(4.0) ** 2)) < 1e-4


def test_malformed_pickle_payload_is_a_decode_error(bit_keys):
    data = pickle.dumps(lux_fhe.FheUint.encrypt(bit_keys.pk, 4, 3))
    raw = lux_fhe.FheUint.encrypt(bit_keys.pk, 4, 3).to_bytes()
    # Same length, wrong magic: the payload inside the pickle is the format's bytes.
    bad = bytearray(data)
    start = bytes(bad).find(raw[:16])
    assert start >= 0
    bad[start] ^= 0xFF
    with pytest.raises(lux_fhe.DecodeError):
        pickle.loads(bytes(bad))


def test_another_process_gives_the_same_bytes(tmp_path, engine, bit_keys, server, ctx, ckks_keys):
    """A second interpreter decodes keys and ciphertexts, computes, and writes back
    bytes equal to this process's."""
    a = engine.encrypt_bit(bit_keys.pk, True, seed(401))
    b = engine.encrypt_bit(bit_keys.pk, False, seed(402))
    x = ctx.encrypt(ckks_keys.pk, np.linspace(-1, 1, 4096), seed=seed(403))
    ev = ctx.evaluator(ckks_keys)
    (tmp_path / "in.pkl").write_bytes(pickle.dumps((bit_keys.ek, a, b, ckks_keys.eval, x)))
    code = f"""
import pickle, lux_fhe
ek, a, b, keys, x = pickle.loads(open({str(tmp_path / 'in.pkl')!r}, 'rb').read())
server = lux_fhe.Engine('cpu').server_key(ek)
ctx = lux_fhe.Engine('cpu').ckks('{ctx.params.name}')
ev = ctx.evaluator(keys)
y = ev.rotate(ev.rescale(ev.mul(x, x)), 1)
open({str(tmp_path / 'out.pkl')!r}, 'wb').write(pickle.dumps((server.nand(a, b), y)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    gate, y = pickle.loads((tmp_path / "out.pkl").read_bytes())
    assert gate.to_bytes() == server.nand(a, b).to_bytes()
    assert y.to_bytes() == ev.rotate(ev.rescale(ev.mul(x, x)), 1).to_bytes()
    assert isinstance(y, ckks.Ciphertext)
