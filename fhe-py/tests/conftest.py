"""Shared fixtures: seeded keys (so runs are reproducible) at CI-sized parameters, the
bit scheme's PN10QP27 and CKKS's `slots4096-scale40-depth2`, made once per session."""

import numpy as np
import pytest

import lux_fhe
from lux_fhe import ckks

BIT_PARAMS = "PN10QP27"
CKKS_PRESET = "slots4096-scale40-depth2"
ROTATIONS = [1, 2, 3, -1]


@pytest.fixture(scope="session")
def engine():
    return lux_fhe.Engine("cpu")


@pytest.fixture(scope="session")
def bit_keys(engine):
    return engine.keygen(BIT_PARAMS, seed=lux_fhe.derive_seed("lux-fhe-py-tests", 0))


@pytest.fixture(scope="session")
def server(engine, bit_keys):
    return engine.server_key(bit_keys.ek)


@pytest.fixture(scope="session")
def ctx(engine):
    return engine.ckks(CKKS_PRESET)


@pytest.fixture(scope="session")
def ckks_keys(ctx):
    return ctx.keygen(rotations=ROTATIONS, conjugation=True, seed=lux_fhe.derive_seed("lux-fhe-py-tests", 1))


@pytest.fixture(scope="session")
def ev(ctx, ckks_keys):
    return ctx.evaluator(ckks_keys)


@pytest.fixture
def rng():
    return np.random.default_rng(20261206)


def seed(i):
    """A distinct 32-byte seed per call site."""
    return lux_fhe.derive_seed("lux-fhe-py-tests/enc", i)


__all__ = ["BIT_PARAMS", "CKKS_PRESET", "ROTATIONS", "ckks", "seed"]
