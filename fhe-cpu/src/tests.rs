//! End-to-end tests of the oracle on the production parameter sets.

use fhe_api::Seed;
use fhe_schemes::tfhe::decrypt::phase_error;
use fhe_schemes::tfhe::gates::{self, Gate};

use super::*;

#[test]
fn encrypt_decrypt_and_every_gate_on_every_set() {
    let cpu = CpuBackend::oracle();
    for set in ParamSet::ALL {
        let keys =
            fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-test", set.id() as u64)).unwrap();
        let key = cpu.prepare(&keys.ek).unwrap();
        let bits = [(false, false), (false, true), (true, false), (true, true)];
        let enc =
            |b: bool, i: u64| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, b, &Seed::derive("enc", i)).unwrap();
        let lhs: Vec<_> = bits.iter().enumerate().map(|(i, &(a, _))| enc(a, 2 * i as u64)).collect();
        let rhs: Vec<_> = bits.iter().enumerate().map(|(i, &(_, b))| enc(b, 2 * i as u64 + 1)).collect();
        for (ct, &(a, _)) in lhs.iter().zip(&bits) {
            assert_eq!(fhe_schemes::tfhe::decrypt_bit(&keys.sk, ct).unwrap(), a);
            assert_eq!(fhe_schemes::tfhe::decrypt_bit(&keys.sk, &gates::not(ct)).unwrap(), !a);
        }
        for g in Gate::ALL {
            let out = gates::gate_batch(&cpu, &key, g, &lhs, &rhs).unwrap();
            for (ct, &(a, b)) in out.iter().zip(&bits) {
                assert_eq!(
                    fhe_schemes::tfhe::decrypt_bit(&keys.sk, ct).unwrap(),
                    g.eval_plain(a, b),
                    "{set} {g:?}({a},{b})"
                );
            }
        }
        let sel: Vec<_> = [false, true, false, true].iter().enumerate().map(|(i, &b)| enc(b, 100 + i as u64)).collect();
        let out = gates::mux_batch(&cpu, &key, &sel, &lhs, &rhs).unwrap();
        for (i, ct) in out.iter().enumerate() {
            let want = if i % 2 == 1 { bits[i].0 } else { bits[i].1 };
            assert_eq!(fhe_schemes::tfhe::decrypt_bit(&keys.sk, ct).unwrap(), want, "{set} mux {i}");
        }
        let (_, err) = phase_error(&keys.sk, &out[0]).unwrap();
        assert!(err.abs() < (set.params().q_lwe() / 8) as i64);
    }
}

/// A lone ciphertext's blind rotation on two threads gives the one-thread words, on
/// every set, for the default variant and the reference, including steps skipped for a
/// zero coefficient (both threads must skip them alike); and the backend with either
/// setting gives the same gate.
#[test]
fn two_thread_blind_rotation_gives_the_same_words() {
    for set in ParamSet::ALL {
        for cpu in [CpuBackend::new(None).unwrap(), CpuBackend::oracle()] {
            let keys =
                fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-duo", set.id() as u64)).unwrap();
            let key = cpu.prepare(&keys.ek).unwrap();
            let prepared = key.downcast::<CpuPrepared>(&cpu.name()).unwrap();
            let ring = &*cpu.ring(set).unwrap();
            for i in 0..3u64 {
                let ct = fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, i == 1, &Seed::derive("duo", i)).unwrap();
                let mut words = ct.into_words();
                if i == 2 {
                    // Zero coefficients at the start, in the middle and last.
                    let n = set.params().n();
                    [0, 1, n / 2, n - 1].iter().for_each(|&j| words[j] = 0);
                }
                let ct = LweCiphertext::from_raw(set, keys.ek.tag(), words).unwrap();
                // The sign table, and one whose every coefficient differs (a rotation by
                // the wrong amount or sign shows).
                let (q, n) = (set.params().q_ring(), set.params().big_n() as u64);
                let ramp = Lut::from_coefficients(set, (0..n).map(|j| (j * 7919 + 1) % q).collect()).unwrap();
                for lut in [&*Lut::sign(set), &ramp] {
                    let one = bootstrap::blind_rotate(ring, prepared, &ct, lut);
                    assert!(
                        bootstrap::blind_rotate_duo(ring, prepared, &ct, lut) == one,
                        "{set} {} ct {i}",
                        cpu.name()
                    );
                }
            }
            let (x, y) = (
                fhe_schemes::tfhe::encrypt_bit(&keys.pk, true).unwrap(),
                fhe_schemes::tfhe::encrypt_bit(&keys.pk, false).unwrap(),
            );
            let one = cpu.bootstrap_threads() == BootstrapThreads::One;
            let other = CpuBackend::new(Some(cpu.ntt_variant())).unwrap().with_bootstrap_threads(if one {
                BootstrapThreads::Two
            } else {
                BootstrapThreads::One
            });
            let gate = |b: &CpuBackend| gates::gate(b, &key, Gate::Nand, &x, &y).unwrap();
            assert_eq!(gate(&cpu), gate(&other), "{set} {}: NAND with 1 and 2 threads", cpu.name());
        }
    }
}

#[test]
fn bootstrap_threads_setting() {
    assert_eq!(BootstrapThreads::parse(None).unwrap(), BootstrapThreads::Two);
    assert_eq!(BootstrapThreads::parse(Some("")).unwrap(), BootstrapThreads::Two);
    assert_eq!(BootstrapThreads::parse(Some("2")).unwrap(), BootstrapThreads::Two);
    assert_eq!(BootstrapThreads::parse(Some(" 1 ")).unwrap(), BootstrapThreads::One);
    for bad in ["0", "3", "two", "-1"] {
        let err = BootstrapThreads::parse(Some(bad)).unwrap_err();
        assert!(matches!(err, fhe_api::Error::Environment { variable: BootstrapThreads::VAR, .. }), "{bad}: {err:?}");
        let err = err.to_string();
        assert!(err.contains(BootstrapThreads::VAR) && err.contains(bad), "{bad}: {err}");
    }
}

/// Per-set caches are keyed, so a parameter set beyond today's three is one more key,
/// never an index past a fixed array. `ParamSet` is a closed enum (a real fourth set
/// would be a new variant, i.e. a new key), so the fourth set here is a synthetic key, a
/// ring no preset uses (N = 4096, a 50-bit NTT prime), beside the three real ones, in
/// the cache type the backend keeps its rings in; its engine must round-trip like theirs.
#[test]
fn a_fourth_parameter_set_is_one_more_cache_key() {
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    enum Set {
        Real(ParamSet),
        Fourth,
    }
    let ring_of = |s: Set| match s {
        Set::Real(p) => Ok((PolynomialSize(p.params().big_n()), RingModulus(p.params().q_ring()))),
        Set::Fourth => {
            let n = PolynomialSize(4096);
            fhe_api::ring::prime::primes_below(50, n, 1, &[]).map(|q| (n, RingModulus(q[0])))
        }
    };
    let cpu = CpuBackend::new(None).unwrap();
    let cache: KeyedCache<Set, Box<dyn ntt::NttEngine>> = KeyedCache::new();
    let keys: Vec<Set> = ParamSet::ALL.into_iter().map(Set::Real).chain([Set::Fourth]).collect();
    for &key in &keys {
        let (n, q) = ring_of(key).unwrap();
        let build = || Ok((ntt::find_variant(cpu.ntt_variant())?.build)(Arc::new(NttTables::new(n, q)?)));
        let engine = cache.get_or_try_init(&key, build).unwrap();
        assert!(Arc::ptr_eq(&engine, &cache.get_or_init(&key, || unreachable!("{key:?} is cached"))));
        let data: Vec<u64> = (0..n.0 as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q.0).collect();
        let mut x = data.clone();
        engine.forward(&mut x);
        engine.inverse(&mut x);
        assert_eq!(x, data, "{key:?}: inverse(forward(x)) != x");
    }
    assert_eq!(cache.len(), 4);
    // The backend's own ring cache: one ring per real set, built once and shared.
    for set in ParamSet::ALL {
        let ring = cpu.ring(set).unwrap();
        assert!(Arc::ptr_eq(&ring, &cpu.ring(set).unwrap()), "{set}: ring rebuilt");
        assert_eq!(ring.set, set);
    }
}

fhe_schemes::conformance_tests!(
    std::sync::Arc::new(CpuBackend::new(None).expect("default variant")),
    std::sync::Arc::new(CpuBackend::oracle()),
    gates_per_set = 1000
);

fhe_schemes::ckks_conformance_tests!(
    std::sync::Arc::new(CpuBackend::new(None).expect("default variant")),
    std::sync::Arc::new(CpuBackend::oracle()),
    preset = fhe_api::ckks::params::Preset::Slots4096Scale40Depth2
);

/// `x * x + x` and `c * x + x` in both modes at every other preset (the suite above runs
/// the smallest); about 15 s on 2 cores, the big preset's keys most of it.
#[test]
fn ckks_polynomials_at_every_preset() {
    use fhe_api::ckks::params::Preset;
    for preset in [Preset::Slots8192Scale40Depth6, Preset::Slots16384Scale40Depth14, Preset::Slots32768Scale40Depth34] {
        let backend = std::sync::Arc::new(CpuBackend::new(None).unwrap());
        fhe_schemes::testing::ckks::both_modes_evaluate_polynomials(backend, preset, 15.0);
    }
}

/// Where one gate bootstrap's time goes on `PN10QP27` and `PN11QP54` with the default
/// variant, as a gate sees it: each call on a fresh ciphertext, the key-switching rows
/// read after a blind rotation has streamed the bootstrapping key through the caches.
/// Medians of 40 calls (8 for `PN11QP54`); prints only (a timing, not a check):
/// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture time_bootstrap_phases`.
#[test]
#[ignore = "timing; run by hand"]
fn time_bootstrap_phases() {
    use std::time::Instant;
    let cpu = CpuBackend::new(None).unwrap();
    for (set, calls) in [(ParamSet::PN10QP27, 40), (ParamSet::PN11QP54, 8)] {
        let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-timing", 0)).unwrap();
        let key = cpu.prepare(&keys.ek).unwrap();
        let prepared = key.downcast::<CpuPrepared>(&cpu.name()).unwrap();
        let ring = &*cpu.ring(set).unwrap();
        let (mut br, mut duo, mut ks) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..=calls {
            let ct = fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, i % 2 == 0, &Seed::derive("timing", i)).unwrap();
            let t = Instant::now();
            let ext = bootstrap::blind_rotate(ring, prepared, &ct, &Lut::sign(set));
            let t1 = Instant::now();
            let out = keyswitch::key_switch(ring, prepared, &ext, false);
            let t2 = Instant::now();
            let two = bootstrap::blind_rotate_duo(ring, prepared, &ct, &Lut::sign(set));
            let t3 = Instant::now();
            assert!(two == ext, "two threads: the same words");
            std::hint::black_box(out);
            if i > 0 {
                br.push((t1 - t).as_secs_f64() * 1e6);
                ks.push((t2 - t1).as_secs_f64() * 1e6);
                duo.push((t3 - t2).as_secs_f64() * 1e6);
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "{} {set}: blind rotation {:.0} us, on two threads {:.0} us, key switch {:.0} us (medians of {calls})",
            cpu.name(),
            median(&mut br),
            median(&mut duo),
            median(&mut ks)
        );
    }
}

/// `NttOps` on batches, every variant: the same words as the reference engine one
/// polynomial at a time, and a word at or above `Q` in any polynomial (first, middle,
/// last) is an error that leaves the whole batch as it was, including the polynomials
/// before it that the fused path had already transformed.
#[test]
fn ntt_batches_match_and_a_bad_word_leaves_the_batch_untouched() {
    use fhe_api::NttOps;
    for set in [ParamSet::PN10QP27, ParamSet::PN11QP54] {
        let (n, q) = (set.params().big_n(), set.params().q_ring());
        let polys = 5;
        let batch: Vec<u64> = (0..(polys * n) as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q).collect();
        let oracle = CpuBackend::oracle();
        for v in crate::ntt::variants().iter().filter(|v| (v.supported)()) {
            let b = CpuBackend::new(Some(v.name)).unwrap();
            for forward in [true, false] {
                let run =
                    |b: &CpuBackend, d: &mut [u64]| if forward { b.ntt_forward(set, d) } else { b.ntt_inverse(set, d) };
                let (mut want, mut got) = (batch.clone(), batch.clone());
                run(&oracle, &mut want).unwrap();
                run(&b, &mut got).unwrap();
                assert!(got == want, "{set} {} forward={forward}: batch differs from the oracle", v.name);
                for bad_poly in [0, 2, polys - 1] {
                    let mut bad = batch.clone();
                    bad[bad_poly * n + n / 3] = q + 7;
                    let before = bad.clone();
                    assert!(run(&b, &mut bad).is_err(), "{set} {}: bad word in poly {bad_poly} accepted", v.name);
                    assert!(bad == before, "{set} {} forward={forward}: batch changed by a rejected call", v.name);
                }
            }
        }
    }
}

/// The depth-exhausting chain at the big preset (N = 2^16, 34 levels): every
/// level's precision, on all cores. Minutes, so not in CI:
/// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_depth_chain_big_preset`.
#[test]
#[ignore = "the big preset: minutes; run by hand and in benches"]
fn ckks_depth_chain_big_preset() {
    let preset = fhe_api::ckks::params::Preset::Slots32768Scale40Depth34;
    let bits =
        fhe_schemes::testing::ckks::depth_chain(std::sync::Arc::new(CpuBackend::new(None).unwrap()), preset, 10.0);
    eprintln!("{preset}: {bits:.1} bits after 34 multiplications");
}

/// `negacyclic_mul` of every supported NTT variant against the schoolbook product on
/// every set (the conformance suite checks the default variant only).
#[test]
fn negacyclic_mul_matches_schoolbook_on_every_variant() {
    use fhe_api::NttOps;
    use fhe_schemes::testing::tfhe::{negacyclic_cases, schoolbook_negacyclic};
    for set in ParamSet::ALL {
        for (a, b) in negacyclic_cases(set) {
            let want = schoolbook_negacyclic(&a, &b, set.params().q_ring());
            for v in crate::ntt::variants().iter().filter(|v| (v.supported)()) {
                let got = CpuBackend::new(Some(v.name)).unwrap().negacyclic_mul(set, &a, &b).unwrap();
                assert!(got == want, "{set} {}: negacyclic_mul differs from the schoolbook", v.name);
            }
        }
    }
}
