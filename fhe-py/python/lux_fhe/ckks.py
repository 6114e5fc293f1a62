"""RNS-CKKS: approximate arithmetic on vectors of complex numbers.

::

    import numpy as np
    import lux_fhe
    ctx = lux_fhe.Engine().ckks("slots4096-scale40-depth2")
    keys = ctx.keygen(rotations=[1])
    ev = ctx.evaluator(keys)
    x = ctx.encrypt(keys.pk, np.arange(8.0))
    y = ev.rotate(ev.rescale(ev.mul(x, x)), 1)
    print(ctx.decrypt(keys.sk, y, real=True)[:7])   # [1, 4, 9, ..., 49]

The classes are those of the native module (``lux_fhe._native.ckks``), re-exported so
that ``import lux_fhe.ckks`` works and pickles name a module Python can import.
"""

from ._native import ckks as _ckks

Bootstrapper = _ckks.Bootstrapper
Ciphertext = _ckks.Ciphertext
Context = _ckks.Context
EvalKeys = _ckks.EvalKeys
Evaluator = _ckks.Evaluator
FourierSeries = _ckks.FourierSeries
FunctionalBootstrapper = _ckks.FunctionalBootstrapper
HoistedCiphertext = _ckks.HoistedCiphertext
KeySet = _ckks.KeySet
Params = _ckks.Params
Plaintext = _ckks.Plaintext
PreparedPlaintext = _ckks.PreparedPlaintext
PublicKey = _ckks.PublicKey
SecretKey = _ckks.SecretKey
SwitchingKey = _ckks.SwitchingKey
presets = _ckks.presets
fe_functions = _ckks.fe_functions
precision_floor_bits = _ckks.precision_floor_bits
seed_two_chains = _ckks.seed_two_chains
seed_two_params = _ckks.seed_two_params

__all__ = [
    "Bootstrapper",
    "Ciphertext",
    "Context",
    "EvalKeys",
    "Evaluator",
    "FourierSeries",
    "FunctionalBootstrapper",
    "HoistedCiphertext",
    "KeySet",
    "Params",
    "Plaintext",
    "PreparedPlaintext",
    "PublicKey",
    "SecretKey",
    "SwitchingKey",
    "presets",
    "fe_functions",
    "precision_floor_bits",
    "seed_two_chains",
    "seed_two_params",
]
