use std::sync::Arc;

use fhe_api::ckks::params::{Params, ParamsLiteral, SecretDist};
use fhe_api::rng::Seed;
use fhe_cpu::CpuBackend;

use super::*;
use crate::ckks::KeygenOptions;
use crate::ckks::{precision_bits, Complex, Mode};

/// N = 2^12, 50-bit primes: far below 128-bit security, small enough for CI.
pub(crate) fn insecure_params(secret: SecretDist, depth: usize) -> Arc<Params> {
    let lit = ParamsLiteral {
        name: "boot-ci".into(),
        log_n: 12,
        scale_bits: 50,
        depth,
        first_bits: 60,
        special_bits: 60,
        dnum: 4,
        secret,
    };
    Arc::new(Params::insecure_for_tests(&lit).unwrap())
}

#[test]
fn insecure_bootstrap_restores_levels_and_values() {
    let params = insecure_params(SecretDist::SparseTernary { hamming_weight: 192 }, 24);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let mut config = BootstrapConfig::default();
    if let Ok(c) = std::env::var("BOOT_C") {
        config.prescale_bits = c.parse().unwrap();
    }
    config.arcsine = std::env::var("BOOT_ARC").is_ok();
    let options = Bootstrapper::key_options(&params, &config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([7; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let mut bs = Bootstrapper::new(&ctx, &ev, &config).unwrap();
    if let Some(sse) = Bootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &Seed([8; 32])).unwrap() {
        bs.set_encapsulation_keys(&ev, &sse).unwrap();
    }
    let n = params.slots();
    let mut values: Vec<Complex> = (0..n)
        .map(|i| Complex::new(((i * 37 % 101) as f64 / 50.0) - 1.0, ((i * 11 % 61) as f64 / 30.0) - 1.0))
        .collect();
    if std::env::var("BOOT_CONST").is_ok() {
        values.iter_mut().for_each(|v| *v = Complex::new(0.95 + v.re * 0.05, 0.0));
    }
    let pt = ctx.encode_at(&values, 2, params.scale_at(2)).unwrap();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([9; 32])).unwrap();
    let out = bs.bootstrap(&ev, &ct).unwrap();
    let got = ctx.decrypt(&keys.sk, &out).unwrap();
    let bits = precision_bits(&got, &values);
    eprintln!(
        "K = {}, EvalMod {:?}, output level {}, {} plaintexts, {} rotations: {bits:.1} bits",
        bs.k(),
        bs.eval_mod_shape(),
        bs.output_level(),
        bs.plaintexts(),
        options.rotations.len()
    );
    assert_eq!(out.level(), bs.output_level());
    assert!(bits > 15.0, "{bits}");
}

/// The peer's configuration (N = 2^16, uniform ternary): time, precision, levels.
/// `cargo test -p fhe-schemes --release --lib -- --ignored --nocapture bootstrap_at_the_peer_preset`
#[test]
#[ignore]
fn bootstrap_at_the_peer_preset() {
    let preset = fhe_api::ckks::Preset::Slots32768Scale59Depth22;
    let ctx = Context::from_preset(Arc::new(CpuBackend::new(None).unwrap()), preset).unwrap();
    time_bootstraps(&ctx, &BootstrapConfig::default(), 2);
}

/// The memory estimate at the peer's configuration, by kind (no keys made):
/// `cargo test -p fhe-schemes --release --lib -- --ignored --nocapture memory_estimate_at_the_peer_preset`
#[test]
#[ignore = "prints numbers, not a check"]
fn memory_estimate_at_the_peer_preset() {
    let params = fhe_api::ckks::Preset::Slots32768Scale59Depth22.params().clone();
    let m = Bootstrapper::memory_estimate(&params, &BootstrapConfig::default()).unwrap();
    let gb = |b: u64| b as f64 / 1e9;
    eprintln!(
        "keys {:.2} GB, diagonals {:.2} GB, working set {:.2} GB (pool {:.2} GB), total {:.2} GB",
        gb(m.keys),
        gb(m.plaintexts),
        gb(m.working),
        gb(memory::pool_bytes(&params)),
        gb(m.total())
    );
}

/// Keys, bootstrapper and `runs` timed bootstraps of one input at level 1, printed with
/// their phases, precision and output level (the ignored measurements).
fn time_bootstraps(ctx: &Context, config: &BootstrapConfig, runs: usize) {
    let params = ctx.params().clone();
    let t = std::time::Instant::now();
    let options = Bootstrapper::key_options(&params, config).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([7; 32]), &options).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let mut bs = Bootstrapper::new(ctx, &ev, config).unwrap();
    if let Some(sse) = Bootstrapper::encapsulation_keys_seeded(ctx, &keys.sk, config, &Seed([8; 32])).unwrap() {
        bs.set_encapsulation_keys(&ev, &sse).unwrap();
    }
    eprintln!(
        "setup {:.1} s, {} rotation keys, {} plaintexts",
        t.elapsed().as_secs_f64(),
        options.rotations.len(),
        bs.plaintexts()
    );
    let n = params.slots();
    let values: Vec<Complex> = (0..n).map(|i| Complex::new(((i * 7919 % 10007) as f64 / 5003.5) - 1.0, 0.0)).collect();
    let pt = ctx.encode_at(&values, 1, params.scale_at(1)).unwrap();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([9; 32])).unwrap();
    for _ in 0..runs {
        let cpu0 = cpu_seconds();
        let t = std::time::Instant::now();
        let (out, phases) = bs.bootstrap_timed(&ev, &ct).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let cpu1 = cpu_seconds();
        eprintln!("cpu: user {:.2} s, system {:.2} s", cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
        let got = ctx.decrypt(&keys.sk, &out).unwrap();
        eprintln!(
            "bootstrap {dt:.2} s {phases:?}: {:.1} bits, output level {}, K = {}, EvalMod {:?}",
            precision_bits(&got, &values),
            out.level(),
            bs.k(),
            bs.eval_mod_shape()
        );
    }
}

/// This process's user and system CPU seconds (`/proc/self/stat`; zeros elsewhere): a
/// bootstrap's system time is the page faults of its fresh buffers.
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    let tick = 100.0; // USER_HZ on Linux
    (f.get(11).copied().unwrap_or(0.0) / tick, f.get(12).copied().unwrap_or(0.0) / tick)
}

/// Phase times at N = 2^15 (insecure chain, a profiling aid):
/// `LUX_BOOT_SECRET=sparse cargo test -p fhe-schemes --release --lib -- --ignored --nocapture bootstrap_phases_n32768`
#[test]
#[ignore]
fn bootstrap_phases_n32768() {
    let secret = match std::env::var("LUX_BOOT_SECRET").as_deref() {
        Ok("sparse") => SecretDist::SparseTernary { hamming_weight: 192 },
        _ => SecretDist::Ternary,
    };
    let lit = ParamsLiteral {
        name: "boot-n32768".into(),
        log_n: 15,
        scale_bits: 59,
        depth: 22,
        first_bits: 60,
        special_bits: 60,
        dnum: 4,
        secret,
    };
    let params = Arc::new(Params::insecure_for_tests(&lit).unwrap());
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let mut config = BootstrapConfig::default();
    if let Ok(b) = std::env::var("LUX_BOOT_MOD_BITS") {
        config.eval_mod_bits = b.parse().unwrap();
    }
    if std::env::var("LUX_BOOT_NO_SSE").is_ok() {
        config.encapsulation = None;
    }
    let runs = std::env::var("LUX_BOOT_RUNS").map(|r| r.parse().unwrap()).unwrap_or(2);
    time_bootstraps(&ctx, &config, runs);
}

/// `I_j` of ModRaise for a level-0 ciphertext: from its decryption mod `q_0` (`t`) and the
/// raised one's mod `q_1` (`t + q_0 I`).
fn integer_parts(ctx: &Context, sk: &fhe_api::ckks::SecretKey, ev: &Evaluator, at0: &Ciphertext) -> Vec<i64> {
    let params = ctx.params();
    let (q0, q1, n) = (params.q()[0].0 as i128, params.q()[1].0 as i128, params.n());
    let centered = |x: i128, q: i128| if x > q / 2 { x - q } else { x };
    let t: Vec<i128> =
        ctx.decrypt_plaintext(sk, at0).unwrap().coeffs()[..n].iter().map(|&c| centered(c as i128, q0)).collect();
    let raised = ev.mod_raise(at0, 1).unwrap();
    let limb1 = ctx.decrypt_plaintext(sk, &raised).unwrap().coeffs()[n..2 * n].to_vec();
    // q0^-1 mod q1 by Fermat's little theorem.
    let (mut inv, mut b, mut e) = (1i128, q0 % q1, q1 - 2);
    while e > 0 {
        if e & 1 == 1 {
            inv = inv * b % q1;
        }
        b = b * b % q1;
        e >>= 1;
    }
    (0..n).map(|j| centered((limb1[j] as i128 - t[j]).rem_euclid(q1) * inv % q1, q1) as i64).collect()
}

#[test]
fn integer_parts_after_mod_raise_stay_within_k_and_match_the_model() {
    for (secret, variance) in
        [(SecretDist::SparseTernary { hamming_weight: 192 }, 192.0 / 12.0), (SecretDist::Ternary, 4096.0 / 18.0)]
    {
        let params = insecure_params(secret, 4);
        let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
        let keys = ctx.keygen_from_seed(&Seed([3; 32]), &KeygenOptions::default()).unwrap();
        let ev = ctx.evaluator(&keys.eval).unwrap();
        let k = super::evalmod::k_bound(&params, FAILURE_LOG2) as i64;
        let (mut max, mut sum2, mut count) = (0i64, 0.0f64, 0usize);
        for i in 0..24u8 {
            let values: Vec<Complex> =
                (0..params.slots()).map(|j| Complex::new(((j % 7) as f64 - 3.0) / 3.0, 0.0)).collect();
            let pt = ctx.encode_at(&values, 0, Scale::new(params.q()[0].0 as f64 / 256.0).unwrap()).unwrap();
            let ct = ctx.encrypt_seeded(&keys.pk, &pt, &Seed([i; 32])).unwrap();
            for v in integer_parts(&ctx, &keys.sk, &ev, &ct) {
                max = max.max(v.abs());
                sum2 += (v * v) as f64;
                count += 1;
            }
        }
        // I = round(c0/q0 + c1 s/q0): the sum's variance, plus about 1/12 + 1/12 for c0 and
        // the rounding.
        let (std, model) = ((sum2 / count as f64).sqrt(), (variance + 1.0 / 6.0f64).sqrt());
        eprintln!("{}: max |I| = {max} (K = {k}), std {std:.3} (model {model:.3}) over {count}", secret.name());
        assert!((std / model - 1.0).abs() < 0.05, "{std} vs {model}");
        assert!(max <= k, "{max} > {k}");
    }
}

/// 100 bootstraps in a row at the insecure CI configuration, one product by unit-modulus
/// values between each, precision printed after each tenth:
/// `cargo test -p fhe-schemes --lib -- --ignored --nocapture insecure_hundred_chained_bootstraps`
#[test]
#[ignore]
fn insecure_hundred_chained_bootstraps() {
    let params = insecure_params(SecretDist::SparseTernary { hamming_weight: 192 }, 24);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let config = BootstrapConfig::default();
    let keys = ctx.keygen_from_seed(&Seed([5; 32]), &Bootstrapper::key_options(&params, &config).unwrap()).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let mut bs = Bootstrapper::new(&ctx, &ev, &config).unwrap();
    if let Some(sse) = Bootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &Seed([8; 32])).unwrap() {
        bs.set_encapsulation_keys(&ev, &sse).unwrap();
    }
    let n = params.slots();
    let mut want: Vec<Complex> = (0..n).map(|i| Complex::new(((i * 37 % 101) as f64 / 50.0) - 1.0, 0.0)).collect();
    let turn: Vec<Complex> = (0..n).map(|i| Complex::new(if i % 3 == 0 { -1.0 } else { 1.0 }, 0.0)).collect();
    let w = ctx.encrypt_sk_seeded(&keys.sk, &ctx.encode(&turn).unwrap(), &Seed([6; 32])).unwrap();
    let pt = ctx.encode_at(&want, 1, params.scale_at(1)).unwrap();
    let mut ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([9; 32])).unwrap();
    let mut worst = f64::INFINITY;
    for i in 1..=100 {
        ct = bs.bootstrap(&ev, &ct).unwrap();
        ct = ev.mul(&ct, &w).unwrap();
        want.iter_mut().zip(&turn).for_each(|(v, t)| *v *= *t);
        let bits = precision_bits(&ctx.decrypt(&keys.sk, &ct).unwrap(), &want);
        worst = worst.min(bits);
        if i % 10 == 0 {
            eprintln!("after {i} bootstraps: {bits:.1} bits (worst {worst:.1})");
        }
        assert!(bits > 12.0, "bootstrap {i}: {bits:.1} bits");
    }
}

#[test]
fn encapsulation_is_checked_against_the_sparse_bound_and_its_keys_are_required() {
    let config = BootstrapConfig::default();
    // N = 2^16: q_0 P is 420 bits, far below the sparse bound of 1553.
    let peer = fhe_api::ckks::Preset::Slots32768Scale59Depth22.params();
    assert_eq!(super::encapsulation::effective_weight(peer, config.encapsulation).unwrap(), Some(192));
    // No sparse bound covers N = 2^13: refused with the reason, unless switched off.
    let small = fhe_api::ckks::Preset::Slots4096Scale40Depth2.params();
    let e = super::encapsulation::effective_weight(small, config.encapsulation).unwrap_err();
    assert!(e.to_string().contains("encapsulation"), "{e}");
    assert_eq!(super::encapsulation::effective_weight(small, None).unwrap(), None);
    // A sparse user secret needs none.
    let sparse = insecure_params(SecretDist::SparseTernary { hamming_weight: 192 }, 24);
    assert_eq!(super::encapsulation::effective_weight(&sparse, config.encapsulation).unwrap(), None);
    // A bootstrapper planned through a sparse secret refuses to run without its keys.
    let params = insecure_params(SecretDist::Ternary, 24);
    let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
    let keys = ctx.keygen_from_seed(&Seed([4; 32]), &Bootstrapper::key_options(&params, &config).unwrap()).unwrap();
    let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let bs = Bootstrapper::new(&ctx, &ev, &config).unwrap();
    assert!(bs.encapsulates());
    let ct = ctx
        .encrypt_sk_seeded(&keys.sk, &ctx.encode_at(&[0.5], 1, params.scale_at(1)).unwrap(), &Seed([1; 32]))
        .unwrap();
    let e = bs.bootstrap(&ev, &ct).unwrap_err();
    assert!(e.to_string().contains("set_encapsulation_keys"), "{e}");
    // Keys of another secret key set are refused when prepared.
    let other = ctx.keygen_from_seed(&Seed([5; 32]), &KeygenOptions::default()).unwrap();
    let sse = Bootstrapper::encapsulation_keys_seeded(&ctx, &other.sk, &config, &Seed([6; 32])).unwrap().unwrap();
    let mut bs = bs;
    assert!(matches!(bs.set_encapsulation_keys(&ev, &sse), Err(fhe_api::Error::WrongKey { .. })));
}

#[test]
fn insecure_sparse_packing_bootstraps_with_fewer_rotations() {
    for (secret, slots) in [(SecretDist::SparseTernary { hamming_weight: 192 }, 64), (SecretDist::Ternary, 256)] {
        let params = insecure_params(secret, 24);
        let config = BootstrapConfig { slots: Some(slots), ..BootstrapConfig::default() };
        let full = BootstrapConfig::default();
        let options = Bootstrapper::key_options(&params, &config).unwrap();
        assert!(options.rotations.len() < Bootstrapper::key_options(&params, &full).unwrap().rotations.len());
        let ctx = Context::new(Arc::new(CpuBackend::new(None).unwrap()), params.clone()).unwrap();
        let keys = ctx.keygen_from_seed(&Seed([2; 32]), &options).unwrap();
        let ev = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
        let mut bs = Bootstrapper::new(&ctx, &ev, &config).unwrap();
        if let Some(sse) = Bootstrapper::encapsulation_keys_seeded(&ctx, &keys.sk, &config, &Seed([3; 32])).unwrap() {
            bs.set_encapsulation_keys(&ev, &sse).unwrap();
        }
        let values: Vec<Complex> = (0..slots)
            .map(|i| Complex::new(((i * 37 % 101) as f64 / 50.0) - 1.0, ((i * 13 % 29) as f64 / 14.0) - 1.0))
            .collect();
        let pt = ctx.encode_sparse(&values, slots, 1, params.scale_at(1)).unwrap();
        let ct = ctx.encrypt_sk_seeded(&keys.sk, &pt, &Seed([9; 32])).unwrap();
        let out = bs.bootstrap(&ev, &ct).unwrap();
        assert_eq!((out.level(), bs.slots()), (bs.output_level(), slots));
        // The output is still a sparse packing: every one of the N/2 slots repeats it.
        let all = ctx.decrypt(&keys.sk, &out).unwrap();
        let repeated: Vec<Complex> = (0..params.slots()).map(|j| values[j % slots]).collect();
        let bits = precision_bits(&all, &repeated);
        eprintln!("{} secret, {slots} slots: {bits:.1} bits, {} rotation keys", secret.name(), options.rotations.len());
        assert!(bits > 15.0, "{bits}");
    }
    let params = insecure_params(SecretDist::Ternary, 24);
    for bad in [3, 0, params.slots() * 2] {
        let config = BootstrapConfig { slots: Some(bad), ..BootstrapConfig::default() };
        assert!(Bootstrapper::key_options(&params, &config).is_err(), "{bad}");
    }
}

/// At a 40-bit preset the factor that folds a term into a product is about 2^40: the
/// scales must still agree (a rounded factor once broke this).
#[test]
fn chebyshev_series_at_a_forty_bit_preset() {
    let ctx =
        Context::from_preset(Arc::new(CpuBackend::new(None).unwrap()), fhe_api::ckks::Preset::Slots4096Scale40Depth2)
            .unwrap();
    let keys = ctx.keygen_from_seed(&Seed([1; 32]), &KeygenOptions::default()).unwrap();
    let ev = ctx.evaluator(&keys.eval).unwrap();
    let xs: Vec<Complex> = (0..64).map(|i| Complex::new(i as f64 / 32.0 - 1.0, 0.0)).collect();
    let ct = ctx.encrypt_sk_seeded(&keys.sk, &ctx.encode(&xs).unwrap(), &Seed([2; 32])).unwrap();
    let p = crate::ckks::Chebyshev { a: -1.0, b: 1.0, coeffs: vec![0.25, -0.5, 0.75, 0.125] };
    let y = ev.eval_chebyshev(&ct, &p).unwrap();
    assert_eq!(y.level(), ct.level() - 2);
    let want: Vec<Complex> = xs.iter().map(|v| Complex::new(p.eval(v.re), 0.0)).collect();
    let got = ctx.decrypt(&keys.sk, &y).unwrap()[..64].to_vec();
    assert!(precision_bits(&got, &want) > 15.0);
}
