"""CKKS from Python: presets and literals, keys, numpy in and out, every evaluator
operation against numpy on the same values."""

import numpy as np
import pytest

import lux_fhe
from lux_fhe import ckks

from conftest import CKKS_PRESET, seed

TOL = 1e-4


@pytest.fixture(scope="module")
def xs(rng_module):
    return rng_module.uniform(-1, 1, 4096)


@pytest.fixture(scope="module")
def zs(rng_module):
    return rng_module.uniform(-1, 1, 4096) + 1j * rng_module.uniform(-1, 1, 4096)


@pytest.fixture(scope="module")
def rng_module():
    return np.random.default_rng(34)


@pytest.fixture(scope="module")
def cx(ctx, ckks_keys, xs):
    return ctx.encrypt(ckks_keys.pk, xs, seed=seed(200))


@pytest.fixture(scope="module")
def cz(ctx, ckks_keys, zs):
    return ctx.encrypt(ckks_keys.pk, zs, seed=seed(201))


def dec(ctx, keys, ct):
    return ctx.decrypt(keys.sk, ct)


def close(got, want):
    assert np.max(np.abs(got - want)) < TOL


def test_presets_and_params():
    names = ckks.presets()
    assert CKKS_PRESET in names and "slots32768-scale40-depth34" in names
    p = ckks.Params.preset(CKKS_PRESET)
    assert (p.n, p.slots, p.depth, p.max_level) == (8192, 4096, 2, 2)
    assert p.default_scale == 2.0**40 and len(p.q) == 3 and p.security_bound >= p.log_qp
    # The preset's own literal gives its primes.
    mine = ckks.Params("mine", log_n=13, depth=2, dnum=p.dnum, first_bits=55)
    assert mine.name == "mine" and (mine.q, mine.p) == (p.q, p.p)
    with pytest.raises(lux_fhe.ParamError, match="128"):
        ckks.Params("too-big", log_n=12, depth=20, dnum=1)
    with pytest.raises(lux_fhe.ParamError):
        ckks.Params.preset("slots3-scale1-depth0")


def test_float64_and_complex128_round_trip(ctx, ckks_keys, cx, cz, xs, zs):
    out = ctx.decrypt(ckks_keys.sk, cx, real=True)
    assert out.dtype == np.float64 and out.shape == (4096,)
    close(out, xs)
    outz = dec(ctx, ckks_keys, cz)
    assert outz.dtype == np.complex128
    close(outz, zs)
    # Lists and short arrays: missing slots are zero.
    short = ctx.encrypt_sk(ckks_keys.sk, [1.5, -2.0, 3.25])
    close(ctx.decrypt(ckks_keys.sk, short, real=True)[:5], [1.5, -2.0, 3.25, 0, 0])


def test_encode_decode_levels_scales_and_sparse(ctx, ckks_keys):
    pt = ctx.encode(np.array([1.0, 2.0]), level=1)
    assert pt.level == 1 and pt.scale == ctx.params.scale_at(1)
    close(ctx.decode(pt)[:2], [1, 2])
    sparse = ctx.encode(np.arange(8.0), slots=8)
    close(ctx.decode(sparse, slots=8, real=True), np.arange(8.0))
    ct = ctx.encrypt(ckks_keys.pk, sparse, seed=seed(3))
    close(ctx.decrypt(ckks_keys.sk, ct, slots=8, real=True), np.arange(8.0))
    close(ctx.decode(ctx.decrypt_plaintext(ckks_keys.sk, ct), slots=8).real, np.arange(8.0))


def test_seeded_encryption_is_deterministic(ctx, ckks_keys, xs):
    a = ctx.encrypt(ckks_keys.pk, xs, seed=seed(7))
    b = ctx.encrypt(ckks_keys.pk, xs, seed=seed(7))
    c = ctx.encrypt(ckks_keys.pk, xs)
    assert a.to_bytes() == b.to_bytes() != c.to_bytes()


def test_additive_operations(ctx, ckks_keys, ev, cx, cz, xs, zs):
    d = lambda ct: dec(ctx, ckks_keys, ct)  # noqa: E731
    close(d(ev.add(cx, cz)), xs + zs)
    close(d(ev.sub(cx, cz)), xs - zs)
    close(d(ev.negate(cz)), -zs)
    pt = ctx.encode(zs)
    close(d(ev.add_plain(cx, pt)), xs + zs)
    close(d(ev.sub_plain(cx, ev.prepare_plaintext(pt))), xs - zs)
    close(d(ev.add_const(cx, 0.5)), xs + 0.5)
    close(d(ev.sub_const(cx, 1 + 2j)), xs - (1 + 2j))
    close(d(ev.mul_int(cx, -3)), -3 * xs)
    close(d(ev.mul_i(cx)), 1j * xs)
    acc = ev.add(cx, cx)
    ev.add_assign(acc, cz)
    close(d(acc), 2 * xs + zs)
    ev.sub_assign(acc, cx)
    close(d(acc), xs + zs)


def test_multiplicative_operations(ctx, ckks_keys, ev, cx, cz, xs, zs):
    d = lambda ct: dec(ctx, ckks_keys, ct)  # noqa: E731
    prod = ev.mul(cx, cz)
    assert prod.level == 2 and prod.degree == 1
    r = ev.rescale(prod)
    assert r.level == 1
    close(d(r), xs * zs)
    close(d(ev.mul_rescale(cx, cz)), xs * zs)
    close(d(ev.rescale(ev.square(cz))), zs * zs)
    t = ev.tensor(cx, cz)
    assert t.degree == 2
    close(d(ev.rescale(ev.relinearize(t))), xs * zs)
    close(d(ev.rescale(ev.mul_plain(cx, ctx.encode(zs)))), xs * zs)
    close(d(ev.rescale(ev.mul_const(cx, 0.25 - 1j))), xs * (0.25 - 1j))
    # The accumulating forms: products summed before one relinearization / rescale.
    acc = ev.tensor(cx, cx)
    ev.mul_then_add(acc, cz, cz)
    close(d(ev.rescale(ev.relinearize(acc))), xs * xs + zs * zs)
    acc = ev.mul_const(cx, 2.0)
    ev.mul_const_then_add(acc, cz, 3.0)
    close(d(ev.rescale(acc)), 2 * xs + 3 * zs)
    # Constants at a chosen scale: the product lands on exactly scale * factor.
    factor = ctx.params.q[2]
    acc = ev.mul_const_scaled(cx, 0.5, factor)
    assert acc.scale == cx.scale * factor
    ev.mul_const_then_add_scaled(acc, cz, -1j, factor)
    close(d(ev.rescale(acc)), 0.5 * xs - 1j * zs)
    pt = ev.prepare_plaintext(ctx.encode(xs))
    acc = ev.mul_plain(cx, pt)
    ev.mul_plain_then_add(acc, cz, pt)
    close(d(ev.rescale(acc)), xs * xs + zs * xs)


def test_levels_and_scales(ctx, ckks_keys, ev, cx, cz, xs, zs):
    d = lambda ct: dec(ctx, ckks_keys, ct)  # noqa: E731
    low = ev.drop_to_level(cx, 1)
    assert low.level == 1
    close(d(low), xs)
    a, b = ev.match_levels(low, cz)
    assert a.level == b.level == 1
    close(d(b), zs)
    s = ev.set_scale(cx, 2.0**41)
    assert s.scale == 2.0**41
    close(d(s), xs)
    moved = ev.rescale_to(cx, 1, ctx.params.scale_at(1))
    assert moved.level == 1
    close(d(moved), xs)


def test_rotations_and_conjugation(ctx, ckks_keys, ev, cx, cz, xs, zs):
    d = lambda ct: dec(ctx, ckks_keys, ct)  # noqa: E731
    close(d(ev.rotate(cx, 1)), np.roll(xs, -1))
    close(d(ev.rotate(cx, -1)), np.roll(xs, 1))
    close(d(ev.conjugate(cz)), np.conj(zs))
    rots = ev.rotate_hoisted(cz, [1, 2, 3])
    for k, ct in zip([1, 2, 3], rots):
        close(d(ct), np.roll(zs, -k))
    h = ev.hoist(cz)
    assert [c.to_bytes() for c in ev.rotate_hoisted_with(h, [1, 2, 3])] == [c.to_bytes() for c in rots]
    # sum_i p_i * rot(x, k_i): extended plaintexts, prepared.
    ws = [np.full(4096, w) for w in (0.5, -1.0, 2.0)]
    terms = [(k, ev.prepare_plaintext(ctx.encode_extended(w))) for k, w in zip([1, 2, 3], ws)]
    want = sum(w * np.roll(xs, -k) for k, w in zip([1, 2, 3], ws))
    close(d(ev.rescale(ev.sum_of_rotations(cx, terms))), want)


def test_circuits_sums_and_chebyshev(ctx, ckks_keys, ev, cx, cz, xs, zs):
    d = lambda ct: dec(ctx, ckks_keys, ct)  # noqa: E731
    close(d(ev.rotate_and_sum(cx, 1, 4)), sum(np.roll(xs, -k) for k in range(4)))
    # A series of degree 3 on [-1, 1] spends its 2 levels.
    coeffs = [0.25, -0.5, 0.75, 0.125]
    y = ev.eval_chebyshev(cx, coeffs, -1.0, 1.0)
    assert y.level == cx.level - 2
    close(d(y), np.polynomial.chebyshev.chebval(xs, coeffs))
    with pytest.raises(lux_fhe.LuxFheError):
        ev.rotate_and_sum(cx, 1, 3)


def test_automatic_mode_rescales_for_you(ctx, ckks_keys, cx, xs):
    auto = ctx.evaluator(ckks_keys, mode="auto")
    assert auto.mode == "auto"
    sq = auto.mul(cx, cx)
    assert sq.level == 1
    close(dec(ctx, ckks_keys, auto.add(sq, cx)), xs * xs + xs)


def test_evaluator_keys_added_later(ctx, ckks_keys, cx, xs):
    ev = ctx.evaluator(ctx.eval_keys(ckks_keys.sk, relin=True, seed=seed(9)))
    with pytest.raises(lux_fhe.MissingKeyError):
        ev.rotate(cx, 5)
    ev.add_keys(ctx.rotation_keys(ckks_keys.sk, [5]))
    assert len(ev.galois_elements) == 1
    close(dec(ctx, ckks_keys, ev.rotate(cx, 5)), np.roll(xs, -5))


def test_keys_split_and_bundled(ckks_keys):
    keys = ckks_keys.eval.keys()
    assert keys[0].kind == "relin" and all(k.kind == "galois" and k.element for k in keys[1:])
    again = ckks.EvalKeys.from_keys(keys)
    assert again.to_bytes() == ckks_keys.eval.to_bytes()
    with pytest.raises(lux_fhe.InvalidInputError, match="two relinearization keys"):
        ckks.EvalKeys.from_keys([keys[0], keys[0]])
