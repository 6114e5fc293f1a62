//! Measurements of the CPU's CKKS (ignored: timings and noise breakdowns, not checks)
//! and a words dump for manual before/after comparisons.

use std::sync::Arc;

use super::keyswitch::{mod_up, switch, CpuSwitchKey, Finish};
use crate::CpuBackend;
use fhe_api::ckks::params::Preset;
use fhe_schemes::testing::ckks::setup;

/// Where one multiplication's time goes at the big preset, one thread:
/// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_profile`.
#[test]
#[ignore = "timing, not a check"]
fn ckks_profile() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    pool.install(|| {
        let preset = fhe_schemes::testing::ckks::preset_from_env();
        let backend = Arc::new(CpuBackend::new(None).unwrap());
        let (ctx, keys, ev) = setup(backend.clone(), preset, 1);
        let x = fhe_schemes::testing::ckks::random_values(ctx.params().slots(), 1);
        let pt = ctx.encode(&x).unwrap();
        let ct = ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("p", 1)).unwrap();
        let plan = backend.ckks_plan(ctx.params()).unwrap();
        let lp = plan.level(ct.level()).unwrap();
        let c = backend.ct(&ct).unwrap();
        let t = std::time::Instant::now();
        for _ in 0..10 {
            let mut v = c.parts[0][..plan.params.n()].to_vec();
            plan.primes[0].ntt.forward(&mut v);
        }
        eprintln!("one NTT: {:?}", t.elapsed() / 10);
        let t = std::time::Instant::now();
        let up = mod_up(&plan, &lp, &c.parts[1]);
        eprintln!("mod_up: {:?}", t.elapsed());
        let key = ev_key(&backend, &keys);
        let len = c.parts[0].len();
        let mut out = (vec![0u64; len], vec![0u64; len]);
        let t = std::time::Instant::now();
        switch(&plan, &lp, &up.of(&c.parts[1]), &key, None, &mut out.0, Finish::Set, &mut out.1, Finish::Set);
        eprintln!("inner product + mod_down: {:?}", t.elapsed());
        up.recycle(&plan);
        for _ in 0..2 {
            let t = std::time::Instant::now();
            let up = mod_up(&plan, &lp, &c.parts[1]);
            eprintln!("mod_up (warm): {:?}", t.elapsed());
            let t = std::time::Instant::now();
            switch(&plan, &lp, &up.of(&c.parts[1]), &key, None, &mut out.0, Finish::Set, &mut out.1, Finish::Set);
            eprintln!("inner product + mod_down (warm): {:?}", t.elapsed());
            up.recycle(&plan);
        }
        let reps: usize = std::env::var("LUX_CKKS_REPS").ok().map(|s| s.parse().unwrap()).unwrap_or(3);
        let only = std::env::var("LUX_CKKS_OPS").ok();
        let time = |what: &str, f: &mut dyn FnMut()| {
            if only.as_ref().is_some_and(|o| !o.split(',').any(|o| what.starts_with(o))) {
                return;
            }
            let mut ts: Vec<_> = (0..reps)
                .map(|_| {
                    let t = std::time::Instant::now();
                    f();
                    t.elapsed()
                })
                .collect();
            ts.sort();
            eprintln!("{what}: median {:?} (min {:?}, max {:?})", ts[reps / 2], ts[0], ts[reps - 1]);
        };
        time("mul_relin", &mut || drop(ev.mul(&ct, &ct).unwrap()));
        time("rescale", &mut || drop(ev.rescale(&ct).unwrap()));
        time("rotate", &mut || drop(ev.rotate(&ct, 1).unwrap()));
        time("hoisted4", &mut || drop(ev.rotate_hoisted(&ct, &[1, 2, 3, 4]).unwrap()));
        time("encrypt", &mut || drop(ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("p", 2)).unwrap()));
        time("decrypt (to plaintext)", &mut || drop(ctx.decrypt_plaintext(&keys.sk, &ct).unwrap()));
        time("decrypt + decode", &mut || drop(ctx.decrypt(&keys.sk, &ct).unwrap()));
        if std::env::var("LUX_CKKS_KEYGEN").is_ok() {
            let options =
                fhe_schemes::ckks::KeygenOptions { relin: true, rotations: vec![1, 2, 3, 4], conjugation: false };
            time("keygen relin + 4 rotations", &mut || {
                drop(ctx.keygen_from_seed(&fhe_api::Seed::derive("k", 1), &options).unwrap())
            });
        }
    });
}

/// Writes the words of every CKKS operation (fixed seeds) to `$LUX_CKKS_DUMP/<preset>-<op>.bin`
/// so optimisations can be checked word for word (`sha256sum` the files before and after):
/// `LUX_CKKS_DUMP=/tmp/d cargo test -p fhe-cpu --release --lib -- --ignored ckks_words_dump`.
#[test]
#[ignore = "writes files for a manual before/after comparison"]
fn ckks_words_dump() {
    let Ok(dir) = std::env::var("LUX_CKKS_DUMP") else { return };
    std::fs::create_dir_all(&dir).unwrap();
    let presets =
        std::env::var("LUX_CKKS_DUMP_PRESETS").unwrap_or("slots4096-scale40-depth2,slots8192-scale40-depth6".into());
    for name in presets.split(',') {
        let preset: Preset = name.parse().unwrap();
        let backend = Arc::new(CpuBackend::new(None).unwrap());
        let (ctx, keys, ev) = setup(backend.clone(), preset, 7);
        let write = |op: &str, words: &[&[u64]]| {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.iter().flat_map(|x| x.to_le_bytes())).collect();
            std::fs::write(format!("{dir}/{name}-{op}.bin"), bytes).unwrap();
        };
        let ct_words = |op: &str, h: &fhe_api::ckks::Ciphertext| {
            let c = ev.download(h).unwrap();
            write(op, &[c.c0(), c.c1()]);
        };
        write("pk", &[keys.pk.b()]);
        write("relin", &[keys.eval.relin.as_ref().unwrap().b()]);
        for (g, k) in &keys.eval.galois {
            write(&format!("galois{g}"), &[k.b()]);
        }
        let slots = ctx.params().slots();
        let (x, y) = (
            fhe_schemes::testing::ckks::random_values(slots, 71),
            fhe_schemes::testing::ckks::random_values(slots, 72),
        );
        let enc = |v: &[fhe_schemes::ckks::Complex], s: u64| {
            let pt = ctx.encode(v).unwrap();
            ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("dump", s)).unwrap()
        };
        let (cx, cy) = (enc(&x, 1), enc(&y, 2));
        ct_words("encrypt", &cx);
        let pt = ctx.encode(&x).unwrap();
        let csk = ctx.encrypt_sk_seeded(&keys.sk, &pt, &fhe_api::Seed::derive("dump", 3)).unwrap();
        ct_words("encrypt_sk", &csk);
        let m = ev.mul(&cx, &cy).unwrap();
        ct_words("mul_relin", &m);
        let r = ev.rescale(&m).unwrap();
        ct_words("rescale", &r);
        ct_words("rotate", &ev.rotate(&cx, 3).unwrap());
        ct_words("rotate_after_mul", &ev.rotate(&r, 1).unwrap());
        for (k, h) in ev.rotate_hoisted(&cx, &[1, 2, 3, 4]).unwrap().iter().enumerate() {
            ct_words(&format!("hoisted{k}"), h);
        }
        write("decrypt", &[ctx.decrypt_plaintext(&keys.sk, &r).unwrap().coeffs()]);
        write("decrypt_top", &[ctx.decrypt_plaintext(&keys.sk, &cx).unwrap().coeffs()]);
    }
}

/// The spread of a fresh public-key encryption's precision (bits, the worst slot) over
/// key sets and encryption seeds, since one seeded bench row is one draw:
/// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_fresh_precision_spread`.
#[test]
#[ignore = "a measurement, not a check"]
fn ckks_fresh_precision_spread() {
    use fhe_schemes::ckks::precision_bits;
    let preset = fhe_schemes::testing::ckks::preset_from_env();
    let backend = Arc::new(CpuBackend::new(None).unwrap());
    let (mut all, mut means) = (Vec::new(), Vec::new());
    for key_seed in 1..=4 {
        let (ctx, keys, _) = setup(backend.clone(), preset, key_seed);
        let x = fhe_schemes::testing::ckks::random_values(ctx.params().slots(), 11);
        let pt = ctx.encode(&x).unwrap();
        for s in 1..=4 {
            let c = ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("spread", s)).unwrap();
            let got = ctx.decrypt(&keys.sk, &c).unwrap();
            all.push(precision_bits(&got, &x));
            // The mean error is a far steadier statistic than the worst slot's.
            let mean = got.iter().zip(&x).map(|(g, w)| (g.re - w.re).hypot(g.im - w.im)).sum::<f64>() / x.len() as f64;
            means.push(-mean.log2());
        }
    }
    means.sort_by(f64::total_cmp);
    eprintln!("{preset}: mean error over the slots: {:.3}..{:.3} bits", means[0], means[means.len() - 1]);
    all.sort_by(f64::total_cmp);
    eprintln!(
        "{preset}: fresh encryption, {} draws: min {:.2}, median {:.2}, max {:.2} bits",
        all.len(),
        all[0],
        all[all.len() / 2],
        all[all.len() - 1]
    );
}

/// Where the noise of mul-then-rotate comes from at a preset (default the big one):
/// the precision in bits of each step, and the coefficient noise (bits of its largest
/// magnitude) of encryption and of one rotation of a fresh ciphertext.
/// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_noise_breakdown`.
#[test]
#[ignore = "a measurement, not a check"]
fn ckks_noise_breakdown() {
    use fhe_schemes::ckks::precision_bits;
    use fhe_schemes::ckks::Complex;
    let preset = fhe_schemes::testing::ckks::preset_from_env();
    let backend = Arc::new(CpuBackend::new(None).unwrap());
    let (ctx, keys, ev) = setup(backend, preset, 1);
    let p = ctx.params();
    let bits = |v: &[fhe_api::ring::RingModulus]| v.iter().map(|q| 64 - q.0.leading_zeros()).collect::<Vec<_>>();
    eprintln!(
        "{preset}: N = {}, q bits {:?}, p bits {:?}, dnum {}, eta {}",
        p.n(),
        bits(p.q()),
        bits(p.p()),
        p.dnum(),
        p.noise_eta()
    );
    let slots = p.slots();
    let (x, y) =
        (fhe_schemes::testing::ckks::random_values(slots, 11), fhe_schemes::testing::ckks::random_values(slots, 12));
    let rot = |v: &[Complex], k: usize| (0..v.len()).map(|i| v[(i + k) % v.len()]).collect::<Vec<_>>();
    let xy: Vec<Complex> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
    let px = ctx.encode(&x).unwrap();
    eprintln!("encode -> decode: {:.2} bits", precision_bits(&ctx.decode(&px).unwrap(), &x));
    let enc = |v: &[Complex], s| {
        ctx.encrypt_seeded(&keys.pk, &ctx.encode(v).unwrap(), &fhe_api::Seed::derive("n", s)).unwrap()
    };
    let (cx, cy) = (enc(&x, 1), enc(&y, 2));
    let dec = |h: &fhe_api::ckks::Ciphertext| ctx.decrypt(&keys.sk, h).unwrap();
    // Coefficient noise against a plaintext: centered difference modulo q_0.
    let coeff_noise = |h: &fhe_api::ckks::Ciphertext, want: &[Complex]| {
        let got = ctx.decrypt_plaintext(&keys.sk, h).unwrap();
        let mut pw = ctx.encode(want).unwrap();
        pw = ctx.decode(&pw).map(|_| pw).unwrap();
        let q0 = p.q()[0].0;
        let e = fhe_schemes::testing::ckks::coefficient_noise(&got, &pw);
        let mx = e.iter().map(|&e| e.unsigned_abs()).max().unwrap_or(0) as f64;
        let sq: f64 = e.iter().map(|&e| (e as f64) * (e as f64)).sum();
        let n = e.len();
        // The noise alone as a plaintext at level 0 (scale 1): its slot values, with and
        // without its mean coefficient.
        let mean = e.iter().sum::<i64>() as f64 / n as f64;
        let noise = |demean: bool| {
            let shift = if demean { mean.round() as i64 } else { 0 };
            let w: Vec<u64> = e.iter().map(|&e| (e - shift).rem_euclid(q0 as i64) as u64).collect();
            let one = fhe_api::ckks::Scale::new(1.0).unwrap();
            let meta = fhe_api::ckks::CkksMeta::new(p.clone(), 0, one, fhe_api::KeyTag::NONE).unwrap();
            let pt = fhe_api::ckks::entities::Plaintext::from_raw(meta, w).unwrap();
            let v = ctx.decode(&pt).unwrap();
            let (mut best, mut at) = (0f64, 0);
            for (i, c) in v.iter().enumerate() {
                let a = (c.re * c.re + c.im * c.im).sqrt();
                if a > best {
                    best = a;
                    at = i;
                }
            }
            format!("2^{:.2} at slot {at}", best.log2())
        };
        format!(
            "coefficient noise max 2^{:.2}, rms 2^{:.2}, mean {mean:.2}; slot noise max {}, demeaned {}",
            mx.log2(),
            (sq / n as f64).sqrt().log2(),
            noise(false),
            noise(true)
        )
    };
    eprintln!("encrypt: {:.2} bits; {}", precision_bits(&dec(&cx), &x), coeff_noise(&cx, &x));
    let c0 = ev.drop_to_level(&cx, 0).unwrap();
    eprintln!("encrypt, dropped to level 0: {:.2} bits", precision_bits(&dec(&c0), &x));
    let r = ev.rotate(&cx, 3).unwrap();
    eprintln!("rotate(fresh, 3): {:.2} bits; {}", precision_bits(&dec(&r), &rot(&x, 3)), coeff_noise(&r, &rot(&x, 3)));
    let m = ev.mul(&cx, &cy).unwrap();
    eprintln!("mul (no rescale): {:.2} bits", precision_bits(&dec(&m), &xy));
    let mr = ev.rescale(&m).unwrap();
    eprintln!("mul + rescale: {:.2} bits", precision_bits(&dec(&mr), &xy));
    let mr0 = ev.drop_to_level(&mr, 0).unwrap();
    eprintln!("mul + rescale, dropped to level 0: {:.2} bits", precision_bits(&dec(&mr0), &xy));
    let mrr = ev.rotate(&mr, 3).unwrap();
    eprintln!("mul + rescale + rotate 3: {:.2} bits", precision_bits(&dec(&mrr), &rot(&xy, 3)));
    let sk_x = ctx.encrypt_sk_seeded(&keys.sk, &px, &fhe_api::Seed::derive("n", 5)).unwrap();
    eprintln!("secret-key encrypt: {:.2} bits; {}", precision_bits(&dec(&sk_x), &x), coeff_noise(&sk_x, &x));
}

fn ev_key(backend: &CpuBackend, keys: &fhe_api::ckks::entities::KeySet) -> CpuSwitchKey {
    let k = keys.eval.relin.as_ref().unwrap();
    let _ = backend;
    let p = k.params();
    CpuSwitchKey { b: k.b().to_vec(), a: k.a(), perm: None, level: p.max_level(), q_len: p.q().len() }
}

/// Speed-up of two threads over one for seed 1's operations, rounds alternated (a lab
/// tool; the numbers that count come from `cargo xtask bench --ckks` with and without
/// `--ckks-all-threads`, `docs/perf/2026-12-06.md`):
/// `LUX_CKKS_PRESET=slots32768-scale40-depth34 cargo test -p fhe-cpu --release --lib --
/// --ignored --nocapture ckks_thread_scaling`.
#[test]
#[ignore = "timing, not a check"]
fn ckks_thread_scaling() {
    let preset = fhe_schemes::testing::ckks::preset_from_env();
    let backend = Arc::new(CpuBackend::new(None).unwrap());
    let (ctx, keys, ev) = setup(backend, preset, 1);
    let x = fhe_schemes::testing::ckks::random_values(ctx.params().slots(), 1);
    let pt = ctx.encode(&x).unwrap();
    let kept = ev.prepare_plaintext(&pt).unwrap();
    let ct = ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("p", 1)).unwrap();
    let pools = [1, 2].map(|t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap());
    let rounds: usize = std::env::var("LUX_CKKS_REPS").ok().map(|s| s.parse().unwrap()).unwrap_or(5);
    let ops: [(&str, &(dyn Fn() + Sync)); 7] = [
        ("encrypt", &|| drop(ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("p", 2)).unwrap())),
        ("decrypt", &|| drop(ctx.decrypt_plaintext(&keys.sk, &ct).unwrap())),
        ("mul_relin", &|| drop(ev.mul(&ct, &ct).unwrap())),
        ("rotate", &|| drop(ev.rotate(&ct, 1).unwrap())),
        ("hoisted4", &|| drop(ev.rotate_hoisted(&ct, &[1, 2, 3, 4]).unwrap())),
        ("mul_plain (kept)", &|| drop(ev.mul_plain(&ct, &kept).unwrap())),
        ("mul_plain (uploaded)", &|| drop(ev.mul_plain(&ct, &pt).unwrap())),
    ];
    for (name, f) in ops {
        let mut t = [Vec::new(), Vec::new()];
        for _ in 0..rounds {
            for (k, pool) in pools.iter().enumerate() {
                let start = std::time::Instant::now();
                pool.install(f);
                t[k].push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        t.iter_mut().for_each(|v| v.sort_by(f64::total_cmp));
        let (one, two) = (t[0][rounds / 2], t[1][rounds / 2]);
        eprintln!("{preset} {name:>22}: 1 thread {one:8.2} ms, 2 threads {two:8.2} ms, speed-up {:.2}x", one / two);
    }
}
