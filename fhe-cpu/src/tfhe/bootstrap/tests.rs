//! Tests of the blind rotation's pieces, and timings of a step's phases (run by hand).

use super::duo::Barrier2;
use super::key::fold_top_digit;
use super::*;

/// `LUX_FHE_BOOTSTRAP_THREADS` as raw OS values: UTF-8 as [`BootstrapThreads::parse`],
/// anything else an error naming the variable, never the default.
#[cfg(unix)]
#[test]
fn bootstrap_threads_raw_values() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    assert_eq!(BootstrapThreads::parse_raw(None).unwrap(), BootstrapThreads::Two);
    assert_eq!(BootstrapThreads::parse_raw(Some(OsStr::new(" 1 "))).unwrap(), BootstrapThreads::One);
    assert!(BootstrapThreads::parse_raw(Some(OsStr::new("3"))).is_err());
    let err = BootstrapThreads::parse_raw(Some(OsStr::from_bytes(b"\xff1"))).unwrap_err();
    assert!(
        matches!(&err, fhe_api::Error::Environment { variable: BootstrapThreads::VAR, value, .. } if value == "\u{fffd}1"),
        "{err:?}"
    );
    assert!(err.to_string().contains("UTF-8"), "{err}");
}
use crate::tfhe::decompose::decompose;
use crate::tfhe::ginx32::{ginx_step, Rows};
use fhe_api::ParamSet;
use std::time::Instant;

/// The folded key against the direct external product: for a random accumulator
/// and key, `sum_l NTT(d_l) K_l` equals the folded sum that uses `NTT(ACC)` for the
/// top digit, in every slot of both halves (the identity `step_small` rests on).
#[test]
fn folded_key_gives_the_same_external_product() {
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    for set in [ParamSet::PN10QP27, ParamSet::PN10QP25Q, ParamSet::PN11QP54] {
        let ring = Ring::new(set, "reference").unwrap();
        let (n, rows, levels, m) = (ring.n(), ring.params.rgsw_rows(), ring.params.bsk_levels.0, ring.modulus);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(set.id()));
        let mut random = |len: usize| -> Vec<u64> { (0..len).map(|_| rng.next_u64() % m.q).collect() };
        let (acc, key) = (random(2 * n), random(rows * 2 * n));
        let mut folded = key.clone();
        fold_top_digit(&ring, &mut folded);
        let mut digits = vec![vec![0u64; n]; rows];
        let mut evals = vec![vec![0u64; n]; 2];
        for part in 0..2 {
            ring.decompose(&acc[part * n..(part + 1) * n], &mut digits[part * levels..(part + 1) * levels]);
            evals[part].copy_from_slice(&acc[part * n..(part + 1) * n]);
            ring.ntt.forward(&mut evals[part]);
        }
        digits.iter_mut().for_each(|d| ring.ntt.forward(d));
        for half in 0..2 {
            for j in 0..n {
                let k = |key: &[u64], r: usize| key[(2 * r + half) * n + j];
                let direct = (0..rows).fold(0, |s, r| m.add(s, m.mul(digits[r][j], k(&key, r))));
                let via_acc = (0..rows).fold(0, |s, r| {
                    let d = if r % levels == levels - 1 { evals[r / levels][j] } else { digits[r][j] };
                    m.add(s, m.mul(d, k(&folded, r)))
                });
                assert_eq!(direct, via_acc, "{set} half {half} slot {j}");
            }
        }
    }
}

/// A thread that panics between barriers does not leave its partner waiting: the
/// partner runs through every later barrier, and the panic reaches the caller.
#[test]
fn a_panicking_thread_releases_its_partner() {
    let barrier = Barrier2::default();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        std::thread::scope(|scope| {
            let helper = scope.spawn(|| {
                let _leave = barrier.leave_on_panic(1);
                barrier.wait(1, 1);
                panic!("the helper fails after the first barrier");
            });
            let _leave = barrier.leave_on_panic(0);
            (1..=1000).for_each(|e| barrier.wait(0, e));
            helper.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }));
    assert!(result.is_err(), "the helper's panic reaches the caller");
}

/// Where one blind rotation's time goes on the 32-bit path: the real step over 556
/// key pairs streamed from memory as in a bootstrap, then each phase of it timed
/// alone. Prints only (a timing, not a check):
/// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture time_step_phases`.
#[test]
#[ignore = "timing; run by hand"]
fn time_step_phases() {
    let ring = Ring::new(ParamSet::PN10QP27, "avx512").unwrap();
    let (n, rows, pairs) = (ring.n(), ring.params.rgsw_rows(), ring.params.n());
    let levels = rows / 2;
    let q = ring.modulus.q;
    let br = ring.small.unwrap();
    let pair_len = 4 * rows * n;
    let mut key = Aligned::<u32>::zeroed_huge(pairs * pair_len);
    key.iter_mut().enumerate().for_each(|(i, k)| *k = (i as u64 * 2_654_435_761 % q) as u32);
    let mut s = State::<u32>::zeroed(n, rows);
    for (v, m) in [(&mut s.acc, 7_777_777), (&mut s.eval, 5_555_555)] {
        v.iter_mut().enumerate().for_each(|(i, x)| *x = (i as u64 * m % q) as u32);
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let whole = Instant::now();
        for (i, pair) in key.chunks_exact(pair_len).enumerate() {
            let mut ahead = prefetch_window::<u32>(&key, pair_len, 0..pair_len, i);
            step(&ring, 1 + 2 * i, pair, &mut s, &mut ahead);
            ahead.rest();
        }
        best = best.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
    }
    println!("step_small: {best:.2} us per step (best of 5 x 556)");
    // The same steps with one pair for all (in cache): what the step costs when
    // memory is not in the way.
    let mut cached = f64::MAX;
    for _ in 0..5 {
        let whole = Instant::now();
        for i in 0..pairs {
            step(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut Ahead::none());
        }
        cached = cached.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
    }
    println!("step_small, one pair from cache: {cached:.2} us per step (best of 5 x 556)");
    let mut touched = f64::MAX;
    for _ in 0..5 {
        let whole = Instant::now();
        for i in 0..pairs {
            let mut ahead = Ahead::new(&key[pair_len..2 * pair_len]);
            step(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut ahead);
            ahead.rest();
        }
        touched = touched.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
    }
    println!("step_small, two pairs from cache, prefetching: {touched:.2} us per step (best of 5 x 556)");
    let mut t = [f64::MAX; 5];
    for _ in 0..5 {
        let mut r = [0f64; 5];
        for (i, pair) in key.chunks_exact(pair_len).enumerate() {
            let mut ahead = prefetch_window::<u32>(&key, pair_len, 0..pair_len, i);
            let c = Instant::now();
            for (acc, d) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut((levels - 1) * n)) {
                decompose(ring.isa, q as u32, ring.params.bsk_base_log.0, levels, acc, d);
            }
            r[0] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            for d in s.digits.chunks_exact_mut(n) {
                ring.ntt.forward32_streaming(d, &mut ahead);
            }
            r[1] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            ring.monomials_minus_one32(1 + 2 * i, &mut s.mono_p, &mut s.mono_m);
            r[2] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            ginx_step(
                ring.isa,
                br,
                Rows::whole(n, &s.digits, &mut s.eval),
                pair,
                [&s.mono_p, &s.mono_m],
                &mut s.upd,
                &mut ahead,
            );
            r[3] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            for u in s.upd.chunks_exact_mut(n) {
                ring.ntt.inverse32_streaming(u, &mut ahead);
            }
            ahead.rest();
            r[4] += c.elapsed().as_secs_f64();
        }
        t.iter_mut().zip(r).for_each(|(t, r)| *t = t.min(r * 1e6 / pairs as f64));
    }
    println!(
        "phases (best of 5): decompose {:.2}, forward x{} {:.2}, monomials {:.2}, ginx {:.2}, inverse x2 {:.2} us",
        t[0],
        2 * (levels - 1),
        t[1],
        t[2],
        t[3],
        t[4]
    );
}

/// One 54-bit step against the textbook step it replaced: all `2L` digits' NTTs, the
/// unfolded keys, a reduction per product, on a random accumulator, key pair and
/// rotation, for each NTT variant this CPU runs. Checks the folded key, the wide
/// kernels and `NTT(ACC)`'s upkeep together.
#[test]
fn wide_step_matches_the_textbook_step() {
    use fhe_api::ring::math::mul_mod;
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    let set = ParamSet::PN11QP54;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for v in crate::ntt::variants().iter().filter(|v| (v.supported)()) {
        let ring = Ring::new(set, v.name).unwrap();
        let (n, rows, levels, q) = (ring.n(), ring.params.rgsw_rows(), ring.params.bsk_levels.0, ring.modulus.q);
        let mut random = |len: usize| -> Vec<u64> { (0..len).map(|_| rng.next_u64() % q).collect() };
        let (acc, kp, km) = (random(2 * n), random(rows * 2 * n), random(rows * 2 * n));
        let a = 1 + (acc[0] as usize) % (2 * n - 1);
        // The textbook step.
        let mut digits = vec![vec![0u64; n]; rows];
        for part in 0..2 {
            ring.decompose(&acc[part * n..(part + 1) * n], &mut digits[part * levels..(part + 1) * levels]);
        }
        digits.iter_mut().for_each(|d| ring.ntt.forward(d));
        let (mut mono_p, mut mono_m) = (vec![0u64; n], vec![0u64; n]);
        ring.monomial_minus_one(a, &mut mono_p);
        ring.monomial_minus_one(2 * n - a, &mut mono_m);
        let mut want = acc.clone();
        for (h, want) in want.chunks_exact_mut(n).enumerate() {
            let mut upd: Vec<u64> = (0..n)
                .map(|j| {
                    let ext = |k: &[u64]| {
                        (0..rows).fold(0, |s, r| (s + mul_mod(digits[r][j], k[(2 * r + h) * n + j], q)) % q)
                    };
                    (mul_mod(ext(&kp), mono_p[j], q) + mul_mod(ext(&km), mono_m[j], q)) % q
                })
                .collect();
            ring.ntt.inverse(&mut upd);
            want.iter_mut().zip(&upd).for_each(|(x, &u)| *x = (*x + u) % q);
        }
        // The prepared step.
        let [mut fp, mut fm] = [kp.clone(), km.clone()];
        fold_top_digit(&ring, &mut fp);
        fold_top_digit(&ring, &mut fm);
        let mut pair = vec![0u64; 4 * rows * n];
        crate::tfhe::ginx64::interleave_pair(&fp, &fm, n, &mut pair);
        let mut s = State::<u64>::zeroed(n, rows);
        s.acc.copy_from_slice(&acc);
        s.eval.copy_from_slice(&acc);
        s.eval.chunks_exact_mut(n).for_each(|e| ring.ntt.forward(e));
        step(&ring, a, &pair, &mut s, &mut Ahead::none());
        assert!(s.acc[..] == want[..], "{}: accumulator", v.name);
        let mut want_eval = want.clone();
        want_eval.chunks_exact_mut(n).for_each(|e| ring.ntt.forward(e));
        assert!(s.eval[..] == want_eval[..], "{}: NTT(ACC)", v.name);
    }
}

/// [`time_step_phases`] for the 54-bit ring's step ([`step_wide`]): the step over
/// 556 pairs streamed from memory, over one pair in cache, then each phase. Prints
/// only: `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture time_wide_step_phases`.
#[test]
#[ignore = "timing; run by hand"]
fn time_wide_step_phases() {
    let ring = Ring::new(ParamSet::PN11QP54, "avx512").unwrap();
    let (n, rows, pairs) = (ring.n(), ring.params.rgsw_rows(), ring.params.n());
    let levels = rows / 2;
    let q = ring.modulus.q;
    let pair_len = 4 * rows * n;
    let mut key = Aligned::<u64>::zeroed_huge(pairs * pair_len);
    key.iter_mut().enumerate().for_each(|(i, k)| *k = crate::tfhe::ginx64::split(i as u64 * 2_654_435_761 % q));
    let mut s = State::<u64>::zeroed(n, rows);
    for (v, m) in [(&mut s.acc, 7_777_777), (&mut s.eval, 5_555_555)] {
        v.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64 * m % q);
    }
    let next = |i: usize| prefetch_window::<u64>(&key, pair_len, 0..pair_len, i);
    for _ in 0..3 {
        let whole = Instant::now();
        for (i, pair) in key.chunks_exact(pair_len).enumerate() {
            let mut ahead = next(i);
            step(&ring, 1 + 2 * i, pair, &mut s, &mut ahead);
            ahead.rest();
        }
        let streamed = whole.elapsed().as_secs_f64() * 1e6 / pairs as f64;
        let whole = Instant::now();
        for i in 0..pairs {
            step(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut Ahead::none());
        }
        let cached = whole.elapsed().as_secs_f64() * 1e6 / pairs as f64;
        println!("step_wide: {streamed:.1} us per step streaming the key, {cached:.1} us with one pair in cache");
    }
    let mut r = [0f64; 6];
    let wide = ring.wide.unwrap();
    for (i, pair) in key.chunks_exact(pair_len).enumerate() {
        let mut ahead = next(i);
        let c = Instant::now();
        for (acc, d) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut((levels - 1) * n)) {
            crate::tfhe::decompose::decompose_lower(ring.isa, q, ring.params.bsk_base_log.0, levels, acc, d);
        }
        r[0] += c.elapsed().as_secs_f64();
        let c = Instant::now();
        for d in s.digits.chunks_exact_mut(n) {
            ring.ntt.forward_streaming(d, &mut ahead);
        }
        r[1] += c.elapsed().as_secs_f64();
        let c = Instant::now();
        ring.monomial_minus_one(1 + 2 * i, &mut s.mono_p);
        ring.monomial_minus_one(2 * n - 1 - 2 * i, &mut s.mono_m);
        r[2] += c.elapsed().as_secs_f64();
        let c = Instant::now();
        let rows = Rows::whole(n, &s.digits, &mut s.eval);
        crate::tfhe::ginx64::ginx_step(ring.isa, wide, rows, pair, [&s.mono_p, &s.mono_m], &mut s.upd, &mut ahead);
        r[3] += c.elapsed().as_secs_f64();
        let c = Instant::now();
        for u in s.upd.chunks_exact_mut(n) {
            ring.ntt.inverse_streaming(u, &mut ahead);
        }
        ahead.rest();
        r[4] += c.elapsed().as_secs_f64();
        let c = Instant::now();
        crate::tfhe::ginx64::add_mod(ring.isa, q, &mut s.acc, &s.upd);
        r[5] += c.elapsed().as_secs_f64();
    }
    let r = r.map(|x| x * 1e6 / pairs as f64);
    println!(
        "phases: decompose {:.1}, forward x{} {:.1}, monomials {:.1}, ginx {:.1}, inverse x2 {:.1}, add {:.1} us",
        r[0],
        2 * (levels - 1),
        r[1],
        r[2],
        r[3],
        r[4],
        r[5]
    );
}
