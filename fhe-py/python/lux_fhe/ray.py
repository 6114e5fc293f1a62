"""Scale-out on Ray: one batch of homomorphic work spread over worker actors.

The evaluation keys go into Ray's object store once (their versioned bytes,
``ray.put``); each worker actor decodes them and prepares its own ``ServerKey`` or CKKS
``Evaluator`` once, then runs chunks of the batch. Ciphertexts travel as their
versioned bytes in both directions (``to_bytes``/``from_bytes``, done here explicitly,
not left to pickle), and results come back in the order of the inputs. Evaluation is
deterministic, so every worker gives the bytes one process would give (the equivalence
rule of ``docs/ARCHITECTURE.md``, across processes and machines).

::

    import lux_fhe, lux_fhe.ray as lray
    lray.init_local(workers=2)                       # or ray.init(address=...)
    pool = lray.Pool.bits(keys.ek, workers=2)
    out = pool.gate_batch("and", lhs, rhs)           # list of LweCiphertext, in order
    sums = pool.map(lambda server, a, b: server.add(a, b), list(zip(xs, ys)))
    pool.close()

``fn`` given to ``map``/``map_chunks`` runs in the workers: it receives the worker's
``ServerKey`` (bit scheme) or ``ckks.Evaluator`` (CKKS) and the decoded items, and may
return a ``lux_fhe`` object, a list or tuple of them, or plain Python values.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

import ray

from . import Engine, EvaluationKey, FheUint, Gate, InvalidInputError, LweCiphertext
from . import ckks as _ckks

__all__ = ["Pool", "ChunkTiming", "init_local"]

# Tags of the objects that travel as bytes; anything else passes through Ray as it is.
_LWE, _UINT, _CKKS_CT, _CKKS_PT = "lwe", "uint", "ckks", "ckks-pt"


def init_local(workers: int = 2, **kwargs: Any) -> None:
    """Starts a Ray cluster on this machine only: ``workers`` CPUs, the loopback
    address, no dashboard, no usage reporting. Does nothing if Ray is already up."""
    if ray.is_initialized():
        return
    # Ray's usage statistics would be sent off the machine; the cluster stays local.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray maps 127.0.0.1 to the host's outward address (`_node_ip_address` is
    # "resolved" too) unless clustering is off, as it is by default on macOS: turn it
    # off for this process (the constant was read at import) and for the processes Ray
    # starts, so every socket is on the loopback interface.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False
    ray.init(num_cpus=workers, include_dashboard=False, **kwargs)
    address = ray.util.get_node_ip_address()
    if address != "127.0.0.1":
        ray.shutdown()
        raise InvalidInputError(f"Ray chose {address}, not the loopback address: this Ray version is not supported")


class _Packed(tuple):
    """A ``(tag, bytes)`` pair standing for one object, apart from a user's own tuples."""


def _pack(obj: Any) -> Any:
    """A value with every lux_fhe ciphertext (in lists and tuples too) replaced by its
    tag and versioned bytes."""
    for cls, tag in ((LweCiphertext, _LWE), (FheUint, _UINT), (_ckks.Ciphertext, _CKKS_CT),
                     (_ckks.Plaintext, _CKKS_PT)):
        if isinstance(obj, cls):
            return _Packed((tag, obj.to_bytes()))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_pack(x) for x in obj)
    return obj


def _unpack(obj: Any, context: Optional[Any]) -> Any:
    if isinstance(obj, _Packed):
        tag, data = obj
        if tag == _LWE:
            return LweCiphertext.from_bytes(data)
        if tag == _UINT:
            return FheUint.from_bytes(data)
        if tag == _CKKS_CT:
            return _ckks.Ciphertext.from_bytes(data, context)
        return _ckks.Plaintext.from_bytes(data)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unpack(x, context) for x in obj)
    return obj


@dataclass(frozen=True)
class ChunkTiming:
    """Where one chunk's time went: ``work_s`` inside ``fn`` in the worker, ``decode_s``
    and ``encode_s`` the bytes in and out in the worker, ``round_trip_s`` from the
    driver's submission to its result (so overhead = round trip - work)."""

    items: int
    work_s: float
    decode_s: float
    encode_s: float
    round_trip_s: float


class _Worker:
    """One actor: prepared keys, held for the pool's life."""

    def __init__(self, scheme: str, key_bytes: bytes, params: Any, backend: Optional[str], mode: str, threads: int):
        if threads > 0:
            # The CPU backend's thread pool starts on first use in this process: set
            # its size before that, so workers on one host do not oversubscribe it.
            os.environ["RAYON_NUM_THREADS"] = str(threads)
        engine = Engine(backend) if backend else Engine()
        self.context = None
        if scheme == "bits":
            self.env = engine.server_key(EvaluationKey.from_bytes(key_bytes))
        else:
            self.context = engine.ckks(params)
            self.env = self.context.evaluator(_ckks.EvalKeys.from_bytes(key_bytes), mode)

    def run(self, fn: Callable, chunk: List[Any], whole: bool):
        t0 = time.perf_counter()
        items = _unpack(chunk, self.context)
        t1 = time.perf_counter()
        out = fn(self.env, items) if whole else [fn(self.env, *item) for item in items]
        t2 = time.perf_counter()
        packed = _pack(list(out))
        t3 = time.perf_counter()
        return packed, (t2 - t1, t1 - t0, t3 - t2)

    def backend(self) -> str:
        return repr(self.env)


class Pool:
    """Worker actors holding one set of evaluation keys. Build with ``Pool.bits`` or
    ``Pool.ckks``; ``close()`` (or a ``with`` block) ends the actors."""

    def __init__(self, scheme: str, key_bytes: bytes, params: Any, workers: int, backend: Optional[str],
                 mode: str, threads: int, context: Optional[Any]):
        if workers < 1:
            raise InvalidInputError(f"a pool needs at least one worker, got {workers}")
        if not ray.is_initialized():
            raise InvalidInputError("Ray is not running: call ray.init(...) or lux_fhe.ray.init_local() first")
        self.workers = workers
        self._context = context
        # Once into the object store; every actor reads the same object.
        self.keys_ref = ray.put(key_bytes)
        actor = ray.remote(num_cpus=1)(_Worker)
        self._actors = [actor.remote(scheme, self.keys_ref, params, backend, mode, threads) for _ in range(workers)]
        self.last_timings: List[ChunkTiming] = []

    @classmethod
    def bits(cls, ek: EvaluationKey, workers: int = 2, backend: Optional[str] = None, threads: int = 0) -> "Pool":
        """A pool for the bit scheme: each worker prepares ``ek`` into a ``ServerKey``.
        ``threads`` > 0 caps each worker's CPU threads (0: the backend's default)."""
        return cls("bits", ek.to_bytes(), None, workers, backend, "manual", threads, None)

    @classmethod
    def ckks(cls, context: Any, keys: Any, workers: int = 2, mode: str = "manual", backend: Optional[str] = None,
             threads: int = 0) -> "Pool":
        """A pool for CKKS: each worker builds a context of ``context``'s preset and an
        evaluator (``mode``) over ``keys`` (an ``EvalKeys`` or a ``KeySet``). Results
        land in ``context`` on the driver."""
        eval_keys = keys.eval if isinstance(keys, _ckks.KeySet) else keys
        name = context.params.name
        if name not in _ckks.presets():
            raise InvalidInputError(f"a Ray pool needs a preset context; `{name}` is custom")
        return cls("ckks", eval_keys.to_bytes(), name, workers, backend, mode, threads, context)

    def ready(self, timeout: Optional[float] = None) -> List[str]:
        """Waits until every worker has prepared its keys; their descriptions. A worker
        still unscheduled after ``timeout`` seconds (say, another pool holds the
        cluster's CPUs) is an error naming the free CPUs."""
        try:
            return ray.get([a.backend.remote() for a in self._actors], timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            free = ray.available_resources().get("CPU", 0)
            raise InvalidInputError(
                f"{self.workers} workers not ready after {timeout} s; the cluster has {free} free CPUs "
                "and each worker takes one (close other pools, or start Ray with more CPUs)"
            ) from None

    def map_chunks(self, fn: Callable, items: Sequence[Any], chunk: Optional[int] = None) -> List[Any]:
        """``fn(env, chunk_items) -> list`` on chunks of ``items`` (default: one chunk
        per worker), the chunks spread round-robin over the workers; the results
        concatenated in input order. Use it for batched calls (``gate_batch``)."""
        return self._run(fn, items, chunk, whole=True)

    def map(self, fn: Callable, items: Sequence[Any], chunk: Optional[int] = None) -> List[Any]:
        """``fn(env, *item)`` for each item (a tuple of arguments), in order."""
        rows = [tuple(it) if isinstance(it, (list, tuple)) else (it,) for it in items]
        return self._run(fn, rows, chunk, whole=False)

    def gate_batch(self, gate: Any, lhs: Sequence[Any], rhs: Sequence[Any], chunk: Optional[int] = None) -> List[Any]:
        """``gate(lhs[i], rhs[i])`` for every ``i``: one batched bootstrap per chunk."""
        if len(lhs) != len(rhs):
            raise InvalidInputError(f"gate_batch: {len(lhs)} left operands but {len(rhs)} right ones")
        name = _gate_name(gate)
        return self.map_chunks(lambda server, rows: _gate_rows(server, name, rows), list(zip(lhs, rhs)), chunk)

    def _run(self, fn: Callable, items: Sequence[Any], chunk: Optional[int], whole: bool) -> List[Any]:
        items = list(items)
        if not items:
            return []
        size = chunk or math.ceil(len(items) / self.workers)
        if size < 1:
            raise InvalidInputError(f"chunk must be at least 1, got {size}")
        fn_ref = ray.put(fn)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        starts, refs = [], []
        for i, part in enumerate(chunks):
            starts.append(time.perf_counter())
            refs.append(self._actors[i % self.workers].run.remote(fn_ref, _pack(part), whole))
        # Gather in submission order, noting when each result arrived.
        done, results, timings = {}, [], []
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            done[ready[0]] = time.perf_counter()
        for ref, start, part in zip(refs, starts, chunks):
            packed, (work, dec, enc) = ray.get(ref)
            out = _unpack(packed, self._context)
            if len(out) != len(part):
                raise InvalidInputError(f"fn returned {len(out)} results for a chunk of {len(part)} items")
            results.extend(out)
            timings.append(ChunkTiming(len(part), work, dec, enc, done[ref] - start))
        self.last_timings = timings
        return results

    def close(self) -> None:
        for a in self._actors:
            ray.kill(a)
        self._actors = []

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _gate_name(gate: Any) -> str:
    """A ``Gate``'s name (``Gate.AND`` -> ``"AND"``): names travel, enum objects do not pickle."""
    return repr(gate).rsplit(".", 1)[-1] if isinstance(gate, Gate) else str(gate)


def _gate_rows(server: Any, gate: Any, rows: List[Any]) -> List[Any]:
    return server.gate_batch(gate, [a for a, _ in rows], [b for _, b in rows])
