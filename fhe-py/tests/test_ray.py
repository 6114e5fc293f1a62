"""Scale-out on a local Ray cluster (two worker processes, loopback only): a batch of
gate bootstraps, an integer workload and a CKKS workload give the bytes one process
gives, in input order."""

import os

import numpy as np
import pytest

import lux_fhe

from conftest import seed

if os.environ.get("LUX_FHE_REQUIRE_RAY") == "1":
    import ray  # noqa: F401  (CI installs Ray: a missing one is a failure there, not a skip)
else:
    pytest.importorskip("ray")

import lux_fhe.ray as lray  # noqa: E402

WORKERS = 2


@pytest.fixture(scope="module")
def cluster():
    import ray

    lray.init_local(workers=WORKERS)
    yield
    ray.shutdown()


@pytest.fixture
def bit_pool(cluster, bit_keys):
    # One pool at a time: each worker takes one of the cluster's two CPUs.
    with lray.Pool.bits(bit_keys.ek, workers=WORKERS, threads=1) as pool:
        assert len(pool.ready(timeout=120)) == WORKERS
        yield pool


@pytest.fixture
def ckks_pool(cluster, ctx, ckks_keys):
    with lray.Pool.ckks(ctx, ckks_keys, workers=WORKERS, threads=1) as pool:
        yield pool


def test_gate_bootstraps_match_one_process(engine, bit_keys, server, bit_pool):
    n = 24
    lhs = [engine.encrypt_bit(bit_keys.pk, bool(i & 1), seed(500 + i)) for i in range(n)]
    rhs = [engine.encrypt_bit(bit_keys.pk, bool(i & 2), seed(600 + i)) for i in range(n)]
    local = server.gate_batch("nand", lhs, rhs)
    for chunk in (None, 5):  # 2 chunks, or 5 uneven ones over 2 workers
        spread = bit_pool.gate_batch(lux_fhe.Gate.NAND, lhs, rhs, chunk=chunk)
        assert [c.to_bytes() for c in spread] == [c.to_bytes() for c in local]
    assert len(bit_pool.last_timings) == 5 and sum(t.items for t in bit_pool.last_timings) == n
    assert engine.decrypt_bits(bit_keys.sk, spread) == [not (i & 1 and i & 2) for i in range(n)]


def test_integer_workload_matches_one_process(bit_keys, server, bit_pool):
    xs = [lux_fhe.FheUint.encrypt(bit_keys.pk, 4, v) for v in (3, 9, 14, 0, 7)]
    ys = [lux_fhe.FheUint.encrypt(bit_keys.pk, 4, v) for v in (5, 9, 1, 15, 8)]

    def work(server, a, b):
        return server.add(a, b), server.lt(a, b)

    local = [work(server, a, b) for a, b in zip(xs, ys)]
    spread = bit_pool.map(work, list(zip(xs, ys)), chunk=2)
    assert [(s.to_bytes(), l.to_bytes()) for s, l in spread] == [(s.to_bytes(), l.to_bytes()) for s, l in local]
    assert [s.decrypt(bit_keys.sk) for s, _ in spread] == [8, 2, 15, 15, 15]


def test_ckks_workload_matches_one_process(ctx, ckks_keys, ev, ckks_pool):
    inputs = [ctx.encrypt(ckks_keys.pk, np.linspace(-1, 1, 4096) * (i + 1), seed=seed(700 + i)) for i in range(6)]

    def work(ev, x):
        return ev.rotate(ev.rescale(ev.mul(x, x)), 1)

    local = [work(ev, x) for x in inputs]
    spread = ckks_pool.map(work, inputs)
    assert [c.to_bytes() for c in spread] == [c.to_bytes() for c in local]
    want = np.roll((np.linspace(-1, 1, 4096) * 3) ** 2, -1)
    assert np.max(np.abs(ctx.decrypt(ckks_keys.sk, spread[2], real=True) - want)) < 1e-3


def test_worker_errors_reach_the_driver(bit_pool, bit_keys, engine):
    import ray

    other = engine.keygen("PN10QP27", seed=lux_fhe.derive_seed("ray other key", 0))
    a = engine.encrypt_bit(other.pk, True)
    with pytest.raises(ray.exceptions.RayTaskError, match="WrongKeyError"):
        bit_pool.gate_batch("and", [a], [a])
