"""Lux FHE runtime from Python: gate-bootstrapped bits, encrypted integers and RNS-CKKS.

Every class wraps the Rust facade (``lux-fhe``); heavy calls run with the GIL released.
Keys and ciphertexts have ``to_bytes``/``from_bytes`` in the versioned binary format
(``docs/FORMAT.md``) and pickle through those bytes, so they travel between processes
and machines unchanged. Errors are ``LuxFheError`` subclasses carrying the cause.

The bit scheme::

    import lux_fhe
    engine = lux_fhe.Engine()                # LUX_FHE_BACKEND, or Engine("cpu")
    keys = engine.keygen("PN10QP27")
    server = engine.server_key(keys.ek)
    c = server.xor(engine.encrypt_bit(keys.pk, True), engine.encrypt_bit(keys.pk, False))
    assert engine.decrypt_bit(keys.sk, c)

CKKS lives in :mod:`lux_fhe.ckks`; scale-out on Ray in :mod:`lux_fhe.ray`.
"""

from . import _native
from ._native import (
    PARAM_SETS,
    BackendError,
    DecodeError,
    Engine,
    EvaluationKey,
    FheUint,
    Gate,
    InvalidInputError,
    KeySet,
    LevelError,
    LuxFheError,
    LweCiphertext,
    MissingKeyError,
    ParamError,
    PublicKey,
    ScaleError,
    SecretKey,
    ServerKey,
    WrongKeyError,
    derive_seed,
    init_logging,
)
from . import ckks  # noqa: E402  (the submodule, after the names it builds on)

__all__ = [
    "PARAM_SETS",
    "BackendError",
    "DecodeError",
    "Engine",
    "EvaluationKey",
    "FheUint",
    "Gate",
    "InvalidInputError",
    "KeySet",
    "LevelError",
    "LuxFheError",
    "LweCiphertext",
    "MissingKeyError",
    "ParamError",
    "PublicKey",
    "ScaleError",
    "SecretKey",
    "ServerKey",
    "WrongKeyError",
    "ckks",
    "derive_seed",
    "init_logging",
]

del _native
