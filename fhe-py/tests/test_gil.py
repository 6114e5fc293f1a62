"""Heavy calls release the GIL: while one thread is inside a batched bootstrap or a
CKKS key generation, another Python thread keeps running. With the GIL held through the
call the counting thread would stand still until it returned."""

import threading

import lux_fhe

from conftest import seed


def progress_during(call):
    """How many loop iterations the calling thread made while `call` ran in another."""
    state = {"inside": False, "done": False, "count": 0}

    def worker():
        state["inside"] = True
        call()
        state["done"] = True

    t = threading.Thread(target=worker)
    t.start()
    while not state["inside"]:
        pass
    while not state["done"]:
        state["count"] += 1
    t.join()
    return state["count"]


def test_bootstrap_batch_releases_the_gil(engine, bit_keys, server):
    cts = [engine.encrypt_bit(bit_keys.pk, bool(i & 1), seed(800 + i)) for i in range(48)]
    assert progress_during(lambda: server.refresh_batch(cts)) > 1000


def test_ckks_keygen_releases_the_gil(engine):
    ctx = engine.ckks("slots16384-scale40-depth14")
    assert progress_during(lambda: ctx.keygen(rotations=[1, 2], seed=lux_fhe.derive_seed("gil", 0))) > 1000
