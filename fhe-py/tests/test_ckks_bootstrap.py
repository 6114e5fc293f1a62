"""CKKS bootstrapping from Python, at an INSECURE N = 2^12 chain (the secure
bootstrappable ones take minutes per key set): a plain refresh, then products past the
input's levels; a functional refresh of a shipped function and of a Python function."""

import math

import numpy as np
import pytest

import lux_fhe
from lux_fhe import ckks


@pytest.fixture(scope="module")
def insecure_ctx(engine):
    params = ckks.Params.insecure_for_tests("py-boot-n4096", log_n=12, depth=24, dnum=4, scale_bits=50)
    assert params.insecure and not ckks.Params.preset("slots4096-scale40-depth2").insecure
    ctx = engine.ckks(params)
    keys = ctx.keygen(relin=False, seed=lux_fhe.derive_seed("lux-fhe-py-boot", 0))
    return ctx, keys


def bits(got, want, scale=1.0):
    err = float(np.mean(np.abs(np.asarray(got) - np.asarray(want)))) / scale
    return 60.0 if err == 0 else -math.log2(err)


def test_insecure_bootstrap_then_multiply(insecure_ctx):
    ctx, keys = insecure_ctx
    params = ctx.params
    mem = ckks.Bootstrapper.memory_estimate(params)
    assert mem["total"] == mem["keys"] + mem["plaintexts"] + mem["working"] > 0
    bs = ckks.Bootstrapper(ctx, keys.sk, seed=lux_fhe.derive_seed("lux-fhe-py-boot", 1))
    ev = bs.evaluator
    x = np.random.default_rng(7).uniform(-1.0, 1.0, params.slots)
    spent = ctx.encrypt(keys.pk, ctx.encode(x, level=1), seed=lux_fhe.derive_seed("lux-fhe-py-boot", 2))
    fresh = bs.bootstrap(spent)
    assert fresh.level == bs.output_level > 5
    assert bits(ctx.decrypt(keys.sk, fresh, real=True), x) > 14
    y, want = fresh, x
    while y.level > 1:
        y, want = ev.mul(y, fresh), want * x
    assert bits(ctx.decrypt(keys.sk, y, real=True), want) > 12
    with pytest.raises(lux_fhe.LevelError):
        bs.bootstrap(ev.drop_to_level(spent, 0))


def test_insecure_functional_bootstrap_of_gelu_and_of_a_python_function(insecure_ctx):
    ctx, keys = insecure_ctx
    assert ckks.fe_functions() == ["identity", "exp", "tanh", "sigmoid", "gelu"]
    gelu = ckks.FourierSeries.for_function("gelu", 24.0)
    square = ckks.FourierSeries.fit(lambda v: v * v / 4.0, 2.0, 12)
    assert abs(square.eval(1.0) - 0.25) < 1e-3 and len(square.coeffs) == square.degree + 1
    fb = ckks.FunctionalBootstrapper(
        ctx, keys.sk, max(gelu.degree, square.degree), level_budget=(3, 2),
        seed=lux_fhe.derive_seed("lux-fhe-py-boot", 3),
    )
    n = ctx.params.slots
    xs = -0.5 + np.arange(n) / n
    level = fb.input_level
    ct = ctx.encrypt(keys.pk, ctx.encode(xs, level=level), seed=lux_fhe.derive_seed("lux-fhe-py-boot", 4))
    k = math.sqrt(2.0 / math.pi)
    v = 2.0 * gelu.radius * xs
    want = 0.5 * v * (1.0 + np.tanh(k * (v + 0.044715 * v ** 3)))
    out = fb.bootstrap(ct, gelu)
    assert out.level == fb.output_level(gelu.degree)
    got = ctx.decrypt(keys.sk, out, real=True)
    assert bits(got, want, scale=float(want.max() - want.min())) > 18
    z = fb.exponential(ct)
    sq = ctx.decrypt(keys.sk, fb.apply(z, square), real=True)
    want_sq = (2.0 * square.radius * xs) ** 2 / 4.0
    assert bits(sq, want_sq, scale=float(want_sq.max() - want_sq.min())) > 12


def test_insecure_functional_bootstrap_with_sparse_keys(insecure_ctx):
    # CoeffsToSlots and the exponential under the sparse secret, with their own keys;
    # the output is back under the user's secret.
    ctx, keys = insecure_ctx
    tanh = ckks.FourierSeries.for_function("tanh", 24.0)
    dense = ckks.FunctionalBootstrapper.memory_estimate(ctx.params, level_budget=(3, 2))
    sparse = ckks.FunctionalBootstrapper.memory_estimate(ctx.params, level_budget=(3, 2), sparse_keys=True)
    assert sparse["keys"] != dense["keys"] and sparse["plaintexts"] == dense["plaintexts"]
    fb = ckks.FunctionalBootstrapper(
        ctx, keys.sk, tanh.degree, level_budget=(3, 2), sparse_keys=True,
        seed=lux_fhe.derive_seed("lux-fhe-py-boot", 5),
    )
    n = ctx.params.slots
    xs = -0.5 + np.arange(n) / n
    ct = ctx.encrypt(keys.pk, ctx.encode(xs, level=fb.input_level), seed=lux_fhe.derive_seed("lux-fhe-py-boot", 6))
    want = np.tanh(2.0 * tanh.radius * xs)
    got = ctx.decrypt(keys.sk, fb.bootstrap(ct, tanh), real=True)
    assert bits(got, want, scale=2.0) > 18


def test_functional_bootstrapping_refusals(insecure_ctx):
    ctx, keys = insecure_ctx
    with pytest.raises(lux_fhe.InvalidInputError, match="unknown function"):
        ckks.FourierSeries.for_function("softmax", 20.0)

    def broken(v):
        raise ZeroDivisionError("from the user's function")

    with pytest.raises(ZeroDivisionError, match="user's function"):
        ckks.FourierSeries.fit(broken, 1.0, 8)
    with pytest.raises(lux_fhe.InvalidInputError, match="unknown configuration"):
        ckks.seed_two_params("fe-n99", 13)
    chains = ckks.seed_two_chains()
    names = [name for name, _, _ in chains]
    assert names[0] == "fe-n15-scale29-after1" and len(names) == 5
    assert chains[0][1:] == ((3, 2), 6) and chains[1][1:] == ((5, 4), 7)
    p = ckks.seed_two_params(names[0], 13)
    assert p.n == 2 ** 15 and p.log_qp <= 767 and not p.insecure
    est = ckks.FunctionalBootstrapper.memory_estimate(p, level_budget=(3, 2), double_angles=6)
    assert est["total"] == est["keys"] + est["plaintexts"] + est["working"] > 0
    assert ckks.precision_floor_bits(29) == pytest.approx(12.0)


def test_insecure_compact_diagonals_give_the_same_bytes(insecure_ctx):
    # Diagonals kept as their integers (transformed at each use): less memory, the same
    # words; "auto" keeps them whole where the machine holds them.
    ctx, keys = insecure_ctx
    whole = ckks.Bootstrapper.memory_estimate(ctx.params, diagonals="evaluation")
    compact = ckks.Bootstrapper.memory_estimate(ctx.params, diagonals="compact")
    assert compact["plaintexts"] < whole["plaintexts"] and compact["keys"] == whole["keys"]
    assert ckks.Bootstrapper.memory_estimate(ctx.params) == whole
    with pytest.raises(lux_fhe.InvalidInputError, match="diagonals"):
        ckks.Bootstrapper.memory_estimate(ctx.params, diagonals="sparse")
    x = np.random.default_rng(9).uniform(-1.0, 1.0, ctx.params.slots)
    spent = ctx.encrypt(keys.pk, ctx.encode(x, level=1), seed=lux_fhe.derive_seed("lux-fhe-py-boot", 7))
    outs = []
    for form in ["evaluation", "compact"]:
        bs = ckks.Bootstrapper(ctx, keys.sk, seed=lux_fhe.derive_seed("lux-fhe-py-boot", 8), diagonals=form)
        assert bs.diagonal_form == form
        # Custom parameters have no byte encoding: the decryptions, bit for bit.
        outs.append(ctx.decrypt(keys.sk, bs.bootstrap(spent)))
    assert np.array_equal(outs[0], outs[1])
