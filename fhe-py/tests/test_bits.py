"""The bit scheme from Python: keys, encryption, every gate, batches, integers."""

import itertools

import pytest

import lux_fhe
from lux_fhe import FheUint, Gate

from conftest import BIT_PARAMS, seed

TRUTH = {
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "nand": lambda a, b: not (a and b),
    "nor": lambda a, b: not (a or b),
    "xor": lambda a, b: a != b,
    "xnor": lambda a, b: a == b,
}
PAIRS = list(itertools.product([False, True], repeat=2))


@pytest.fixture(scope="module")
def bits(engine, bit_keys):
    return {b: engine.encrypt_bit(bit_keys.pk, b, seed=seed(100 + int(b))) for b in (False, True)}


def test_engine_reports_its_backend(engine):
    assert engine.backend.startswith("cpu")
    assert "cpu" in repr(engine)


def test_seeded_keygen_is_reproducible(engine, bit_keys):
    again = engine.keygen(BIT_PARAMS, seed=lux_fhe.derive_seed("lux-fhe-py-tests", 0))
    assert again.sk.to_bytes() == bit_keys.sk.to_bytes()
    assert again.pk.to_bytes() == bit_keys.pk.to_bytes()
    other = engine.keygen(BIT_PARAMS, seed=lux_fhe.derive_seed("lux-fhe-py-tests", 1))
    assert other.sk.to_bytes() != bit_keys.sk.to_bytes()
    assert bit_keys.sk.params == BIT_PARAMS and len(bit_keys.sk.tag) == 16


def test_encrypt_decrypt_bits(engine, bit_keys):
    values = [True, False, False, True, True]
    cts = engine.encrypt_bits(bit_keys.pk, values)
    assert engine.decrypt_bits(bit_keys.sk, cts) == values
    # Seeded encryption is deterministic; unseeded is not.
    s = seed(1)
    assert engine.encrypt_bit(bit_keys.pk, True, s) == engine.encrypt_bit(bit_keys.pk, True, s)
    assert engine.encrypt_bit(bit_keys.pk, True) != engine.encrypt_bit(bit_keys.pk, True)


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_each_gate_by_method_by_name_and_by_enum(engine, bit_keys, server, bits, name):
    method = getattr(server, name + "_" if name in ("and", "or") else name)
    for a, b in PAIRS:
        want = TRUTH[name](a, b)
        out = method(bits[a], bits[b])
        assert engine.decrypt_bit(bit_keys.sk, out) == want, (name, a, b)
        # The same bootstrap whichever way the gate is named: byte-equal.
        assert server.gate(name.upper(), bits[a], bits[b]) == out
        assert server.gate(getattr(Gate, name.upper()), bits[a], bits[b]) == out


def test_not_mux_and_constants(engine, bit_keys, server, bits):
    dec = lambda c: engine.decrypt_bit(bit_keys.sk, c)  # noqa: E731
    assert dec(server.not_(bits[True])) is False
    for s, t, f in itertools.product([False, True], repeat=3):
        assert dec(server.mux(bits[s], bits[t], bits[f])) == (t if s else f)
    one = lux_fhe.LweCiphertext.constant(True, BIT_PARAMS)
    assert dec(server.and_(one, bits[True])) is True


def test_batches_match_single_gates(engine, bit_keys, server, bits):
    lhs = [bits[a] for a, _ in PAIRS]
    rhs = [bits[b] for _, b in PAIRS]
    out = server.gate_batch("xor", lhs, rhs)
    assert out == [server.xor(a, b) for a, b in zip(lhs, rhs)]
    mixed = server.mixed_batch([(g, bits[True], bits[False]) for g in ("and", Gate.OR, "nand")])
    assert [engine.decrypt_bit(bit_keys.sk, c) for c in mixed] == [False, True, True]
    muxed = server.mux_batch([bits[True], bits[False]], [bits[True]] * 2, [bits[False]] * 2)
    assert engine.decrypt_bits(bit_keys.sk, muxed) == [True, False]
    fresh = server.refresh_batch([bits[True], bits[False]])
    assert engine.decrypt_bits(bit_keys.sk, fresh) == [True, False]
    assert fresh[0] != bits[True]  # a bootstrap gives new words


def test_unknown_gate_name_is_an_error(server, bits):
    with pytest.raises(lux_fhe.InvalidInputError, match="unknown gate `andd`"):
        server.gate("andd", bits[True], bits[True])


def test_batch_length_mismatch_is_an_error(server, bits):
    with pytest.raises(lux_fhe.LuxFheError):
        server.gate_batch("and", [bits[True]] * 2, [bits[True]])


WIDTH = 4
A, B = 13, 6


@pytest.fixture(scope="module")
def ints(bit_keys):
    return FheUint.encrypt(bit_keys.pk, WIDTH, A), FheUint.encrypt(bit_keys.pk, WIDTH, B)


@pytest.mark.parametrize(
    "op, want",
    [
        ("add", (A + B) % 16),
        ("sub", (A - B) % 16),
        ("mul_low", (A * B) % 16),
        ("mul_full", A * B),
        ("min", min(A, B)),
        ("max", max(A, B)),
    ],
)
def test_integer_operations(bit_keys, server, ints, op, want):
    out = getattr(server, op)(*ints)
    assert out.decrypt(bit_keys.sk) == want
    assert out.width == (2 * WIDTH if op == "mul_full" else WIDTH)


def test_integer_comparisons_select_and_shifts(engine, bit_keys, server, ints):
    a, b = ints
    dec = lambda c: engine.decrypt_bit(bit_keys.sk, c)  # noqa: E731
    assert (dec(server.eq(a, b)), dec(server.lt(a, b)), dec(server.le(b, a))) == (False, False, True)
    assert server.select(server.lt(b, a), a, b).decrypt(bit_keys.sk) == A
    assert server.shl(a, 1).decrypt(bit_keys.sk) == (A << 1) % 16
    assert server.shr(a, 2).decrypt(bit_keys.sk) == A >> 2


def test_wide_integers_use_python_ints(bit_keys):
    big = 2**200 + 12345
    x = FheUint.encrypt(bit_keys.pk, 256, big)
    assert x.decrypt(bit_keys.sk) == big and x.width == 256
    assert FheUint.trivial(8, 200, BIT_PARAMS).bits()[3] == lux_fhe.LweCiphertext.constant(True, BIT_PARAMS)
    bits = x.bits()[:8]
    assert FheUint.from_bits(bits).decrypt(bit_keys.sk) == big % 256


def test_integer_out_of_range_is_an_error(bit_keys):
    with pytest.raises(lux_fhe.LuxFheError):
        FheUint.encrypt(bit_keys.pk, 4, 16)
    with pytest.raises(OverflowError):
        FheUint.encrypt(bit_keys.pk, 4, -1)
