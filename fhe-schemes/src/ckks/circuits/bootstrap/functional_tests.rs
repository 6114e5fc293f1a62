use std::sync::Arc;

use fhe_api::ckks::params::SecretDist;
use fhe_api::rng::Seed;
use fhe_cpu::CpuBackend;

use super::*;
use crate::ckks::circuits::bootstrap::{seed_two_chains, FunctionalChain};
use crate::ckks::circuits::fourier::FeFunction;
use crate::ckks::{Complex, Mode};
use fhe_api::error::{Error, LevelNeed};

/// The CI chain (N = 2^12, insecure) for the functional bootstrap: a 50-bit scale and a
/// first prime one bit wider, a uniform ternary secret raised through a sparse one.
fn insecure_fe_params(depth: usize) -> Arc<fhe_api::ckks::Params> {
    let lit = fhe_api::ckks::ParamsLiteral {
        name: "fe-ci".into(),
        log_n: 12,
        scale_bits: 50,
        depth,
        first_bits: 51,
        special_bits: 60,
        dnum: 4,
        secret: SecretDist::Ternary,
    };
    Arc::new(fhe_api::ckks::Params::insecure_for_tests(&lit).unwrap())
}

#[test]
fn insecure_functional_bootstrap_refuses_what_it_cannot_do() {
    let config = FunctionalConfig { level_budget: (3, 2), ..FunctionalConfig::for_scale(50) };
    let exp = FeFunction::Exp.series(20.0).unwrap();
    // A chain too short for the exponential and the series names the depth it needs.
    let short = insecure_fe_params(12);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), short.clone()).unwrap();
    let options = FunctionalBootstrapper::key_options(&short, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let e = FunctionalBootstrapper::new(&ctx, &ev, &config, exp.degree()).unwrap_err();
    assert!(matches!(e, Error::Level { needed: LevelNeed::AtLeast(_), .. }), "{e}");
    let params = insecure_fe_params(24);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    // A CoeffsToSlots growth its last factor cannot pay for (2^50 down to 2^10).
    let greedy = FunctionalConfig { cts_growth_bits: 20, ..config.clone() };
    let e = FunctionalBootstrapper::new(&ctx, &ev, &greedy, exp.degree()).unwrap_err();
    assert!(matches!(&e, Error::InvalidInput(m) if m.contains("growth of 20 bits")), "{e}");
    let fb = FunctionalBootstrapper::new(&ctx, &ev, &config, exp.degree()).unwrap();
    let values = vec![Complex::new(0.25, 0.0); params.slots()];
    let at = |level| {
        let pt = ctx.encode_at(&values, level, params.scale_at(level)).unwrap();
        ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([5; 32])).unwrap()
    };
    // Below the input level; a series longer than prepared; no encapsulation keys yet.
    let e = fb.bootstrap(&ev, &at(1), &exp).unwrap_err();
    assert!(matches!(e, Error::Level { found: 1, .. }), "{e}");
    let long = FeFunction::Gelu.series(30.0).unwrap();
    assert!(long.degree() > exp.degree());
    assert!(fb.bootstrap(&ev, &at(4), &long).unwrap_err().to_string().contains("degree"));
    let e = fb.bootstrap(&ev, &at(4), &exp).unwrap_err().to_string();
    assert!(e.contains("encapsulation_keys"), "{e}");
}

/// Seed 2's chains: the first prime one bit above the scale, log QP within the sparse
/// bound with the fewest digits, and a chain over it refused naming both numbers.
#[test]
fn seed_two_chains_fit_their_bounds() {
    for chain in seed_two_chains() {
        let bits = crate::ckks::circuits::fourier::precision_floor_bits(chain.scale_bits);
        let degree = FeFunction::ALL.iter().map(|f| f.series(bits).unwrap().degree()).max().unwrap();
        let p = chain.params(degree).unwrap();
        let bound =
            fhe_api::ckks::params::security_bound_bits(chain.log_n, SecretDist::SparseTernary { hamming_weight: 192 })
                .unwrap();
        assert!(p.log_qp() <= bound, "{}", chain.name);
        if p.dnum() > 1 {
            let fewer = FunctionalChain { dnum: Some(p.dnum() - 1), ..chain.clone() };
            assert!(fewer.params(degree).is_err(), "{}: dnum {} fits too", chain.name, p.dnum() - 1);
        }
        assert_eq!(p.q()[0].0.ilog2() + 1, chain.scale_bits + 1);
        // The chain is built for its own configuration's exponential: the levels after
        // are exactly what a bootstrap leaves.
        let spent = FunctionalBootstrapper::depth(&p, &chain.config(), degree).unwrap();
        assert_eq!(spent + chain.level_budget.1 + chain.levels_after, p.max_level(), "{}", chain.name);
        if std::env::var("LUX_FE_MEMORY").is_err() {
            continue;
        }
        let with = |form| FunctionalConfig { diagonals: Some(form), ..chain.config() };
        let mem = FunctionalBootstrapper::memory_estimate(&p, &with(DiagonalForm::Evaluation)).unwrap();
        let compact = FunctionalBootstrapper::memory_estimate(&p, &with(DiagonalForm::Compact)).unwrap();
        assert!(compact.plaintexts < mem.plaintexts && compact.keys == mem.keys, "{}", chain.name);
        eprintln!(
            "{}: degree {degree} ({bits} bits), depth {}, dnum {}, {} special, log QP {}, memory {:.1} GiB \
             (keys {:.1}, {} rotations under the user's secret; plaintexts {:.1}; working {:.1}); with compact \
             diagonals {:.1} GiB (plaintexts {:.2})",
            chain.name,
            p.depth(),
            p.dnum(),
            p.p().len(),
            p.log_qp(),
            mem.total() as f64 / (1u64 << 30) as f64,
            mem.keys as f64 / (1u64 << 30) as f64,
            FunctionalBootstrapper::key_options(&p, &chain.config()).map(|o| o.rotations.len()).unwrap_or(0),
            mem.plaintexts as f64 / (1u64 << 30) as f64,
            mem.working as f64 / (1u64 << 30) as f64,
            compact.total() as f64 / (1u64 << 30) as f64,
            compact.plaintexts as f64 / (1u64 << 30) as f64,
        );
    }
    let deep = FunctionalChain { levels_after: 20, ..seed_two_chains().remove(2) };
    let e = deep.params(35).unwrap_err();
    let Error::SecurityBound { log_qp, bound, .. } = e else { panic!("{e}") };
    assert!(log_qp > bound && bound == 1553);
}

/// Each slot's error in `u` (in units of `u`): `(K + 1) u - x / 2` is an integer.
fn u_errors(us: &[Complex], xs: &[f64], k1: f64) -> Vec<f64> {
    let err = |(x, u): (&f64, &Complex)| {
        let d = u.re * k1 - x / 2.0;
        (d - d.round()).abs() / k1
    };
    xs.iter().zip(us).map(err).collect()
}

/// SlotsToCoeffs as the bootstrap does it: at level 0, coefficient `j` holds `(q_0 / 2) x_j`.
fn slots_to_coeffs(ev: &Evaluator, fb: &FunctionalBootstrapper, ct: &Ciphertext) -> Ciphertext {
    let mut y = ev.canonical_at(ct, fb.stc.len()).unwrap();
    for t in &fb.stc {
        y = ev.rescale(&ev.linear_transform_unscaled(&y, t).unwrap()).unwrap();
    }
    y
}

/// SlotsToCoeffs and ModRaise (with the encapsulation's switches), as the bootstrap does.
fn raised(ev: &Evaluator, fb: &FunctionalBootstrapper, ct: &Ciphertext) -> Ciphertext {
    let at0 = ev.relabel(&slots_to_coeffs(ev, fb, ct), fb.s0).unwrap();
    encapsulation::raise(ev, &at0, fb.encapsulation, fb.prepared_encapsulation.as_ref(), "probe").unwrap()
}

/// `u` as the bootstrap computes it: the real parts taken before the last rescale.
fn u_as_bootstrapped(ev: &Evaluator, fb: &FunctionalBootstrapper, ct: &Ciphertext) -> Ciphertext {
    let mut y = raised(ev, fb, ct);
    for (i, t) in fb.cts.iter().enumerate() {
        y = ev.linear_transform_unscaled(&y, t).unwrap();
        if i + 1 < fb.cts.len() {
            y = ev.rescale(&y).unwrap();
        }
    }
    let u = ev.add(&y, &ev.conjugate(&y).unwrap()).unwrap();
    ev.canonical_label(ev.rescale(&u).unwrap()).unwrap()
}

/// CoeffsToSlots' output before the real parts are taken.
fn coeffs_to_slots_output(ev: &Evaluator, fb: &FunctionalBootstrapper, ct: &Ciphertext) -> Ciphertext {
    let mut y = raised(ev, fb, ct);
    for t in &fb.cts {
        y = ev.rescale(&ev.linear_transform_unscaled(&y, t).unwrap()).unwrap();
    }
    ev.canonical_label(y).unwrap()
}

/// Precision of the identity at a 29-bit scale (insecure chain), for tuning, with the
/// error of `u` after CoeffsToSlots and of `z` after the exponential: the exponential's
/// bits and squarings, the encapsulation weight (no security check here), `log2 N` and
/// the scale from `LUX_FE_EXP_BITS`, `LUX_FE_R`, `LUX_FE_WEIGHT`, `LUX_FE_LOGN` (default
/// 13), `LUX_FE_SCALE` (default 29; the series' bits: `LUX_FE_SERIES_BITS`, 12), `LUX_FE_SPARSE_KEYS`
/// and `LUX_FE_SPARSE_USER` (below):
/// `LUX_FE_WEIGHT=32 cargo test -p fhe-schemes --release --lib -- --ignored --nocapture insecure_fe_probe_29`
#[test]
#[ignore]
fn insecure_fe_probe_29() {
    let env = |k: &str, d: f64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let scale_bits = env("LUX_FE_SCALE", 29.0) as u32;
    let mut config = FunctionalConfig { level_budget: (3, 2), ..FunctionalConfig::for_scale(scale_bits) };
    config.exp_bits = env("LUX_FE_EXP_BITS", config.exp_bits as f64) as u32;
    config.encapsulation = Some(env("LUX_FE_WEIGHT", 192.0) as usize);
    // LUX_FE_SPARSE_USER: the user's secret itself sparse (everything under it);
    // LUX_FE_SPARSE_KEYS: FunctionalConfig::sparse_keys.
    let sparse_user = std::env::var("LUX_FE_SPARSE_USER").is_ok();
    if sparse_user {
        config.encapsulation = None;
    }
    config.sparse_keys = std::env::var("LUX_FE_SPARSE_KEYS").is_ok();
    // LUX_FE_R: the squarings (negative: the fewest levels).
    let r = env("LUX_FE_R", config.double_angles.map_or(-1.0, f64::from));
    config.double_angles = (r >= 0.0).then_some(r as u32);
    let series = FeFunction::Identity.series(env("LUX_FE_SERIES_BITS", 12.0)).unwrap();
    let secret = if sparse_user { SecretDist::SparseTernary { hamming_weight: 192 } } else { SecretDist::Ternary };
    let first_bits = env("LUX_FE_FIRST", scale_bits as f64 + 1.0) as u32;
    let params = insecure_depth_30(env("LUX_FE_LOGN", 13.0) as u32, scale_bits, first_bits, secret);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let options = FunctionalBootstrapper::key_options(&params, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let mut fb = FunctionalBootstrapper::new(&ctx, &ev, &config, series.degree()).unwrap();
    if let Some(sse) =
        FunctionalBootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &Seed([4; 32])).unwrap()
    {
        fb.set_encapsulation_keys(&ev, &sse).unwrap();
    }
    let n = params.slots();
    let xs: Vec<f64> = (0..n).map(|i| -0.5 + i as f64 / n as f64).collect();
    let values: Vec<Complex> = xs.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let pt = ctx.encode_at(&values, fb.input_level(), params.scale_at(fb.input_level())).unwrap();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([5; 32])).unwrap();
    // Stage errors: u after CoeffsToSlots (in units of u: (K + 1) u - x / 2 is an integer),
    // decrypted under the user's secret (not where CoeffsToSlots stays under s').
    if !config.sparse_keys {
        let u = u_as_bootstrapped(&ev, &fb, &ct);
        let us = ctx.decrypt(&keys.sk, &u).unwrap();
        let k1 = fb.k() as f64 + 1.0;
        let uerr = u_errors(&us, &xs, k1);
        let umean = uerr.iter().sum::<f64>() / n as f64;
        let imax = xs.iter().zip(&us).map(|(x, u)| (u.re * k1 - x / 2.0).round().abs()).fold(0.0, f64::max);
        eprintln!(
            "u (level {}, scale 2^{:.2}) mean error 2^{:.1}, max |I| {imax}",
            u.level(),
            u.scale().value().log2(),
            umean.log2()
        );
    }
    let z = fb.exponential(&ev, &ct).unwrap();
    let zs = ctx.decrypt(&keys.sk, &z).unwrap();
    let zerr = xs.iter().zip(&zs).map(|(x, z)| {
        let (c, s) = crate::ckks::fft::cos_sin_turns(x / 2.0);
        (z.re - c).hypot(z.im - s)
    });
    let zerr: Vec<f64> = zerr.collect();
    let zmean = zerr.iter().sum::<f64>() / n as f64;
    let zmax = zerr.iter().copied().fold(0.0, f64::max);
    let zabs = zs.iter().map(|z| z.re.hypot(z.im)).fold(0.0, f64::max);
    eprintln!("z max error {zmax:.2e}, max |z| {zabs:.3}");
    let out = fb.apply(&ev, &z, &series).unwrap();
    let got: Vec<f64> = ctx.decrypt(&keys.sk, &out).unwrap().iter().map(|c| c.re).collect();
    let want: Vec<f64> = xs.iter().map(|&x| 2.0 * x).collect();
    let (bits, max) = crate::ckks::circuits::fourier::relative_precision(&want, &got);
    eprintln!(
        "exp {:?} K {}: z mean error 2^{:.1}; identity degree {}: {bits:.1} bits (max {max:.2e})",
        fb.exp_shape(),
        fb.k(),
        zmean.log2(),
        series.degree()
    );
}

/// Seed 2's configuration `name`: every function through one functional bootstrap,
/// printed (precision as seed 2 measures it, time, levels). A configuration beyond the
/// machine's memory is refused by `key_options` with both numbers, and says so.
/// Diagnostics, from the environment: `LUX_FE_WORST` prints the worst slots after
/// SlotsToCoeffs, ModRaise (limb 0), CoeffsToSlots (its imaginary parts, then `u`), the
/// conjugation alone (also of an encryption of zero, beside a rotation) and the
/// exponential (`z`);
/// `LUX_FE_R` the exponential's squarings (negative: fewest levels), `LUX_FE_EXP_BITS`
/// its interpolant's bits, `LUX_FE_CTS_GROWTH` CoeffsToSlots' scale growth (the chain
/// stays the configuration's: a deeper exponential leaves fewer levels); `LUX_FE_SEED` and
/// `LUX_FE_KEY_SEED` the encryption's and the keys' seed bytes; `LUX_FE_SHUFFLE` the
/// same inputs in another slot order; `LUX_FE_INPUT_UP` the input encrypted one level up
/// at the product scale and brought down, without the encryption's noise (at N = 2^16
/// SlotsToCoeffs' error stayed 1.55e-5: its own rescales and switches set it).
fn run_seed_two_chain(name: &str) {
    use crate::ckks::circuits::fourier::{precision_floor_bits, relative_precision};
    let chain = seed_two_chains().into_iter().find(|c| c.name == name).unwrap();
    let bits = precision_floor_bits(chain.scale_bits);
    let series: Vec<_> = FeFunction::ALL.iter().map(|&f| (f, f.series(bits).unwrap())).collect();
    let max_degree = series.iter().map(|(_, s)| s.degree()).max().unwrap();
    let params = Arc::new(chain.params(max_degree).unwrap());
    let mut config = chain.config();
    if let Some(r) = std::env::var("LUX_FE_R").ok().and_then(|v| v.parse::<i32>().ok()) {
        config.double_angles = (r >= 0).then_some(r as u32);
    }
    if let Some(b) = std::env::var("LUX_FE_EXP_BITS").ok().and_then(|v| v.parse().ok()) {
        config.exp_bits = b;
    }
    if let Some(g) = std::env::var("LUX_FE_CTS_GROWTH").ok().and_then(|v| v.parse().ok()) {
        config.cts_growth_bits = g;
    }
    if std::env::var("LUX_FE_SPARSE_KEYS").as_deref() == Ok("0") {
        config.sparse_keys = false;
    }
    let options = match FunctionalBootstrapper::key_options(&params, &config) {
        Ok(o) => o,
        Err(e @ Error::OutOfMemory { .. }) => return eprintln!("{name}: refused: {e}"),
        Err(e) => panic!("{name}: {e}"),
    };
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let key_seed = std::env::var("LUX_FE_KEY_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(3u8);
    let keys = ctx.keygen_from_seed(&Seed([key_seed; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let mut fb = FunctionalBootstrapper::new(&ctx, &ev, &config, max_degree).unwrap();
    let sse = FunctionalBootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &Seed([4; 32])).unwrap();
    fb.set_encapsulation_keys(&ev, &sse.unwrap()).unwrap();
    let n = params.slots();
    let mut xs: Vec<f64> = (0..n).map(|i| -0.5 + i as f64 / n as f64).collect();
    if std::env::var("LUX_FE_SHUFFLE").is_ok() {
        // The same values in a scrambled order (an odd stride is a permutation).
        xs = (0..n).map(|i| xs[(i * 7919) % n]).collect();
    }
    let values: Vec<Complex> = xs.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let b = fb.input_level();
    let input_up = std::env::var("LUX_FE_INPUT_UP").is_ok();
    let pt = if input_up {
        // One level up at scale_b q_(b+1): the way down divides the encryption's noise.
        let s = params.scale_at(b).value() * params.q()[b + 1].0 as f64;
        ctx.encode_at(&values, b + 1, Scale::new(s).unwrap()).unwrap()
    } else {
        ctx.encode_at(&values, b, params.scale_at(b)).unwrap()
    };
    let enc_seed = std::env::var("LUX_FE_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(5u8);
    let ct = ctx.encrypt_seeded(&keys.pk, &pt, &Seed([enc_seed; 32])).unwrap();
    let ct = if input_up { ev.canonical_at(&ct, b).unwrap() } else { ct };
    if std::env::var("LUX_FE_WORST").is_ok() && config.sparse_keys {
        eprintln!("LUX_FE_WORST decrypts each stage under the user's secret: add LUX_FE_SPARSE_KEYS=0");
    } else if std::env::var("LUX_FE_WORST").is_ok() {
        // SlotsToCoeffs' output at level 0: coefficient j holds (q_0 / 2) x_j (j < N/2).
        let y = slots_to_coeffs(&ev, &fb, &ct);
        let pt = ctx.decrypt_plaintext(&keys.sk, &y).unwrap();
        let q0 = params.q()[0].0;
        let c: Vec<f64> = pt.coeffs()[..params.n()]
            .iter()
            .map(|&w| if w > q0 / 2 { w as f64 - q0 as f64 } else { w as f64 })
            .collect();
        let cmax = c.iter().map(|v| v.abs()).fold(0.0, f64::max) / (q0 as f64 / 2.0);
        eprintln!("StC max |coefficient| / (q0/2): {cmax:.4}; c[0..4] {:?}", &c[..4]);
        // Coefficient j of a real slot vector's encoding: its position is found by value.
        let mut sorted: Vec<(f64, usize)> = c.iter().enumerate().map(|(j, &v)| (v / (q0 as f64 / 2.0), j)).collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        eprintln!("StC sorted quantiles: {:?}", [0, n / 2, n, 3 * n / 2, 2 * n - 1].map(|k| sorted[k].0));
        let cerr: Vec<f64> = (0..params.n())
            .map(|j| {
                let bits = n.trailing_zeros();
                let want = if j < n { xs[j.reverse_bits() >> (usize::BITS - bits)] * q0 as f64 / 2.0 } else { 0.0 };
                (c[j] - want).abs() / (q0 as f64 / 2.0)
            })
            .collect();
        let mut idx: Vec<usize> = (0..params.n()).collect();
        idx.sort_by(|&a, &b| cerr[b].total_cmp(&cerr[a]));
        eprintln!("StC coefficient mean error {:.2e} (in x)", cerr.iter().sum::<f64>() / params.n() as f64);
        for &i in idx.iter().take(6) {
            let slot = if i < n { i.reverse_bits() >> (usize::BITS - n.trailing_zeros()) } else { usize::MAX };
            eprintln!("  coefficient {i} (slot {slot}): err {:.3e}", cerr[i]);
        }
        // After ModRaise (and the switches back to s): limb 0 holds (q_0 / 2) x mod q_0.
        let at0 = ev.relabel(&y, fb.s0).unwrap();
        let raised =
            encapsulation::raise(&ev, &at0, fb.encapsulation, fb.prepared_encapsulation.as_ref(), "probe").unwrap();
        let pt = ctx.decrypt_plaintext(&keys.sk, &raised).unwrap();
        let c: Vec<f64> = pt.coeffs()[..params.n()]
            .iter()
            .map(|&w| if w > q0 / 2 { w as f64 - q0 as f64 } else { w as f64 })
            .collect();
        let bits = n.trailing_zeros();
        let rerr: Vec<f64> = (0..params.n())
            .map(|j| {
                let want = if j < n { xs[j.reverse_bits() >> (usize::BITS - bits)] * q0 as f64 / 2.0 } else { 0.0 };
                let d = (c[j] - want) / q0 as f64;
                (d - d.round()).abs() * 2.0
            })
            .collect();
        let mut idx: Vec<usize> = (0..params.n()).collect();
        idx.sort_by(|&a, &b| rerr[b].total_cmp(&rerr[a]));
        eprintln!("raised mean error {:.2e} (in x)", rerr.iter().sum::<f64>() / params.n() as f64);
        for &i in idx.iter().take(6) {
            let slot = if i < n { i.reverse_bits() >> (usize::BITS - bits) } else { usize::MAX };
            eprintln!("  raised coefficient {i} (slot {slot}): err {:.3e}", rerr[i]);
        }
        // CoeffsToSlots' own output: imaginary parts t_(j + n) / 2(K + 1), integers there.
        let y = coeffs_to_slots_output(&ev, &fb, &ct);
        let ys = ctx.decrypt(&keys.sk, &y).unwrap();
        let k2 = 2.0 * (fb.k() as f64 + 1.0);
        let mut im: Vec<(f64, usize)> =
            ys.iter().enumerate().map(|(j, y)| ((y.im * k2 - (y.im * k2).round()).abs() / k2, j)).collect();
        let mean = im.iter().map(|v| v.0).sum::<f64>() / n as f64;
        im.sort_by(|a, b| b.0.total_cmp(&a.0));
        eprintln!("CoeffsToSlots imaginary parts: mean error {mean:.2e}, worst (error, slot) {:?}", &im[..6]);
        // The conjugation alone: decrypt(conj(y)) against conj(decrypt(y)).
        let cy = ctx.decrypt(&keys.sk, &ev.conjugate(&y).unwrap()).unwrap();
        let mut cerr: Vec<(f64, usize)> =
            ys.iter().zip(&cy).enumerate().map(|(j, (a, b))| ((b.re - a.re).hypot(b.im + a.im), j)).collect();
        let mean = cerr.iter().map(|v| v.0).sum::<f64>() / n as f64;
        cerr.sort_by(|a, b| b.0.total_cmp(&a.0));
        eprintln!(
            "conjugation at level {} (key up to level {:?}): mean error {mean:.2e}, worst (error, slot) {:?}",
            y.level(),
            ev.galois_key_level(2 * params.n() as u64 - 1),
            &cerr[..6]
        );
        // A Galois map of an encryption of zero at the same level and scale.
        let zero = ctx.encode_at(&vec![Complex::default(); n], y.level(), y.scale()).unwrap();
        let cz = ctx.encrypt_seeded(&keys.pk, &zero, &Seed([8; 32])).unwrap();
        let r = options.rotations[0];
        let rotated = ev.rotate(&cz, r).unwrap();
        let conjugated = ev.conjugate(&cz).unwrap();
        for (name, out) in [("conjugated", conjugated), ("as encrypted", cz.clone()), ("rotated", rotated)] {
            let d = ctx.decrypt(&keys.sk, &out).unwrap();
            let mean = d.iter().map(|v| v.re.hypot(v.im)).sum::<f64>() / n as f64;
            eprintln!(
                "zero {name} (rotation {r}): mean {mean:.2e}, slot 0 {:.2e}, slot 9891 {:.2e}",
                d[0].re.hypot(d[0].im),
                d[9891].re.hypot(d[9891].im)
            );
        }
        let k1 = fb.k() as f64 + 1.0;
        let fixed = u_errors(&ctx.decrypt(&keys.sk, &u_as_bootstrapped(&ev, &fb, &ct)).unwrap(), &xs, k1);
        let worst = fixed.iter().copied().fold(0.0, f64::max);
        eprintln!(
            "u as bootstrapped (real parts before the last rescale): mean error {:.2e}, worst {worst:.2e}",
            fixed.iter().sum::<f64>() / n as f64
        );
        let u = u_as_bootstrapped(&ev, &fb, &ct);
        let us = ctx.decrypt(&keys.sk, &u).unwrap();
        let uerr = u_errors(&us, &xs, k1);
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&a, &b| uerr[b].total_cmp(&uerr[a]));
        eprintln!("u (real parts before the last rescale) mean error {:.2e}", uerr.iter().sum::<f64>() / n as f64);
        for &i in idx.iter().take(6) {
            let int = (us[i].re * k1 - xs[i] / 2.0).round();
            eprintln!("  u slot {i}: x {:.6} err {:.3e} u {:.4} im {:.2e} I {int}", xs[i], uerr[i], us[i].re, us[i].im);
        }
        let z = fb.exponential(&ev, &ct).unwrap();
        let zs = ctx.decrypt(&keys.sk, &z).unwrap();
        let zerr: Vec<f64> = xs
            .iter()
            .zip(&zs)
            .map(|(x, z)| {
                let (c, s) = crate::ckks::fft::cos_sin_turns(x / 2.0);
                (z.re - c).hypot(z.im - s)
            })
            .collect();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&a, &b| zerr[b].total_cmp(&zerr[a]));
        let mean = zerr.iter().sum::<f64>() / n as f64;
        eprintln!("z mean error {mean:.2e}");
        for &i in idx.iter().take(6) {
            eprintln!("  z slot {i}: x {:.6} err {:.3e} |z| {:.4}", xs[i], zerr[i], zs[i].re.hypot(zs[i].im));
        }
    }
    for (f, s) in &series {
        let t = std::time::Instant::now();
        let y = fb.bootstrap(&ev, &ct, s).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let got: Vec<f64> = ctx.decrypt(&keys.sk, &y).unwrap().iter().map(|c| c.re).collect();
        let want: Vec<f64> = xs.iter().map(|&x| f.eval(2.0 * f.radius() * x)).collect();
        let (prec, max) = relative_precision(&want, &got);
        if std::env::var("LUX_FE_WORST").is_ok() {
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_by(|&a, &b| (got[b] - want[b]).abs().total_cmp(&(got[a] - want[a]).abs()));
            for &i in idx.iter().take(6) {
                eprintln!("  slot {i}: x {:.6} want {:.4} got {:.4}", xs[i], want[i], got[i]);
            }
            let big = idx.iter().filter(|&&i| (got[i] - want[i]).abs() > 0.05 * f.radius()).count();
            eprintln!("  {big} slots off by more than 5% of R");
        }
        eprintln!(
            "{name} {}: degree {}, {dt:.2} s, level {}: {prec:.1} bits (max {max:.2e})",
            f.name(),
            s.degree(),
            y.level()
        );
        assert!(prec > bits - 6.0, "{name} {}: {prec:.1} bits", f.name());
    }
}

/// `cargo test -p fhe-schemes --release --lib -- --ignored --nocapture seed_two_`
#[test]
#[ignore]
fn seed_two_n15_scale29_after1() {
    run_seed_two_chain("fe-n15-scale29-after1");
}

#[test]
#[ignore]
fn seed_two_n16_scale29_after6() {
    run_seed_two_chain("fe-n16-scale29-after6");
}

#[test]
#[ignore]
fn seed_two_n16_scale59_after1() {
    run_seed_two_chain("fe-n16-scale59-after1");
}

#[test]
#[ignore]
fn seed_two_n17_scale59_after6() {
    run_seed_two_chain("fe-n17-scale59-after6");
}

#[test]
#[ignore]
fn seed_two_n17_scale59_after10() {
    run_seed_two_chain("fe-n17-scale59-after10");
}

/// Up to 40 bits the exponential squares seven times (two levels more than the fewest,
/// for precision: `FunctionalConfig::for_scale`) and CoeffsToSlots' scale grows a bit
/// per factor; above, the fewest levels and no growth, as before.
#[test]
fn small_scales_square_the_exponential_seven_times() {
    let small = FunctionalConfig::for_scale(29);
    assert_eq!((small.double_angles, small.exp_bits, small.cts_growth_bits), (Some(7), 20, 1));
    let exp = ModPoly::exponential(36, small.exp_bits, small.double_angles).unwrap();
    assert_eq!((exp.double_angles, exp.poly.degree(), exp.depth()), (7, 11, 11));
    let fewest = ModPoly::exponential(36, 26, None).unwrap();
    assert_eq!((fewest.double_angles, fewest.depth()), (3, 9));
    let large = FunctionalConfig::for_scale(50);
    assert_eq!((large.double_angles, large.exp_bits, large.cts_growth_bits), (None, 44, 0));
    assert!(ModPoly::exponential(36, 20, Some(11)).is_err());
}

/// An insecure chain of depth 30 (the probes' and the sparse keys' test's), dnum 3.
fn insecure_depth_30(log_n: u32, scale_bits: u32, first_bits: u32, secret: SecretDist) -> Arc<fhe_api::ckks::Params> {
    let name = format!("fe-probe-n{log_n}-s{scale_bits}");
    let lit = fhe_api::ckks::ParamsLiteral {
        name,
        log_n,
        scale_bits,
        depth: 30,
        first_bits,
        special_bits: 60,
        dnum: 3,
        secret,
    };
    Arc::new(fhe_api::ckks::Params::insecure_for_tests(&lit).unwrap())
}

/// `FunctionalConfig::sparse_keys` at a 29-bit scale: CoeffsToSlots and the exponential
/// under the sparse secret give the identity over a bit more precision (13.0 against 11.7
/// bits with these seeds); the user's keys lose CoeffsToSlots' rotations; keys made for
/// another configuration are refused by name; the keys made one at a time from the secret
/// give the same words as the host keys.
#[test]
fn insecure_sparse_keys_gain_precision_at_29_bits() {
    let params = insecure_depth_30(13, 29, 30, SecretDist::Ternary);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let series = FeFunction::Identity.series(12.0).unwrap();
    let n = params.slots();
    let xs: Vec<f64> = (0..n).map(|i| -0.5 + i as f64 / n as f64).collect();
    let values: Vec<Complex> = xs.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let want: Vec<f64> = xs.iter().map(|&x| 2.0 * x).collect();
    let dense = FunctionalConfig { level_budget: (3, 2), ..FunctionalConfig::for_scale(29) };
    let sparse = FunctionalConfig { sparse_keys: true, ..dense.clone() };
    let (dense_options, sparse_options) = (
        FunctionalBootstrapper::key_options(&params, &dense).unwrap(),
        FunctionalBootstrapper::key_options(&params, &sparse).unwrap(),
    );
    assert!(sparse_options.rotations.len() < dense_options.rotations.len());
    assert!(sparse_options.rotations.iter().all(|r| dense_options.rotations.contains(r)));
    let keys = ctx.keygen_from_seed(&Seed([3; 32]), &dense_options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let b = FunctionalBootstrapper::new(&ctx, &ev, &dense, series.degree()).unwrap().input_level();
    let pt = ctx.encode_at(&values, b, params.scale_at(b)).unwrap();
    let ct = ctx.encrypt_seeded(&keys.pk, &pt, &Seed([5; 32])).unwrap();
    let mut bits = Vec::new();
    let mut outputs = Vec::new();
    for config in [&dense, &sparse] {
        let mut fb = FunctionalBootstrapper::new(&ctx, &ev, config, series.degree()).unwrap();
        let sse = FunctionalBootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, config, &Seed([4; 32]));
        fb.set_encapsulation_keys(&ev, &sse.unwrap().unwrap()).unwrap();
        let out = fb.bootstrap(&ev, &ct, &series).unwrap();
        assert_eq!(out.level(), fb.output_level(&ev, series.degree()));
        let got: Vec<f64> = ctx.decrypt(&keys.sk, &out).unwrap().iter().map(|c| c.re).collect();
        bits.push(crate::ckks::circuits::fourier::relative_precision(&want, &got).0);
        outputs.push(ev.download(&out).unwrap());
    }
    eprintln!("identity at 29 bits: {:.2} bits under s, {:.2} with sparse keys", bits[0], bits[1]);
    assert!(bits[1] >= bits[0] + 1.0, "{bits:?}");
    // Keys without those under s' are refused; the one-at-a-time path gives the same words.
    let mut fb = FunctionalBootstrapper::new(&ctx, &ev, &sparse, series.degree()).unwrap();
    let plain = FunctionalBootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &dense, &Seed([4; 32]));
    let e = fb.set_encapsulation_keys(&ev, &plain.unwrap().unwrap()).unwrap_err();
    assert!(matches!(&e, Error::InvalidInput(m) if m.contains("lack the relinearization key")), "{e}");
    fb.set_encapsulation_from_secret(&ctx, &ev, &keys.sk, &Seed([4; 32])).unwrap();
    assert!(fb.sparse_key_count() > 1);
    let out = fb.bootstrap(&ev, &ct, &series).unwrap();
    assert_eq!(ev.download(&out).unwrap(), outputs[1]);
}

/// Keys under the sparse secret over a chain beyond its bound (the peer's bootstrapping
/// chain, log QP 1719 > 1553 at N = 2^16) are refused with both numbers.
#[test]
fn sparse_keys_over_the_sparse_bound_are_refused() {
    let params = fhe_api::ckks::Preset::Slots32768Scale59Depth22.params().clone();
    let config = FunctionalConfig { level_budget: (3, 3), sparse_keys: true, ..FunctionalConfig::for_scale(59) };
    let e = FunctionalBootstrapper::memory_estimate(&params, &config).unwrap_err();
    assert!(matches!(e, Error::SecurityBound { log_qp: 1719, bound: 1553, .. }), "{e}");
    let off = FunctionalConfig { sparse_keys: false, ..config };
    FunctionalBootstrapper::memory_estimate(&params, &off).unwrap();
}
