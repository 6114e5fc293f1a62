"""The README's Python example: CKKS on a numpy array (multiply, rotate, decrypt), gates,
an integer, and bytes that travel. Run: python fhe-py/examples/quickstart.py"""

import pickle

import numpy as np

import lux_fhe

engine = lux_fhe.Engine()  # LUX_FHE_BACKEND, or Engine("cpu")

# CKKS: numpy float64 or complex128 in, numpy out.
ctx = engine.ckks("slots4096-scale40-depth2")
keys = ctx.keygen(rotations=[1])
ev = ctx.evaluator(keys.eval)  # keys prepared once
x = ctx.encrypt(keys.pk, np.array([0.5, -0.25, 2.0, 1.0]))
y = ev.rotate(ev.rescale(ev.mul(x, x)), 1)  # x * x, rotated left by one slot
print(ctx.decrypt(keys.sk, y, real=True)[:3])  # ~[0.0625, 4.0, 1.0]

# Gates and integers.
bits = engine.keygen("PN10QP27")
server = engine.server_key(bits.ek)
c = server.xor(engine.encrypt_bit(bits.pk, True), engine.encrypt_bit(bits.pk, False))
s = server.add(lux_fhe.FheUint.encrypt(bits.pk, 8, 173), lux_fhe.FheUint.encrypt(bits.pk, 8, 94))
print(engine.decrypt_bit(bits.sk, c), s.decrypt(bits.sk))  # True 11

# Bytes in the versioned format (pickle uses them): what travels between processes.
same = lux_fhe.ckks.Ciphertext.from_bytes(y.to_bytes(), ctx)
assert same.to_bytes() == pickle.loads(pickle.dumps(y)).to_bytes()
try:
    lux_fhe.ckks.Ciphertext.from_bytes(b"not a ciphertext")
except lux_fhe.DecodeError as e:
    print("DecodeError:", e)
