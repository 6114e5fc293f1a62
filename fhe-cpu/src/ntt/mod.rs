//! Negacyclic NTT variants over one ring. Every variant computes the transform defined
//! in `fhe_api::ops::NttOps` (same order, fully reduced output, `1/N` in the inverse);
//! they differ only in how. `reference` defines the bytes. [`NttEngine`] is the pure
//! forward and inverse on one prime; the blind rotation's forms, with the next key's
//! prefetches spread over the loops, are the bit scheme's (`crate::tfhe::stream`).

mod avx2;
pub(crate) mod avx512;
pub(crate) mod avx512_wide;
mod harvey;
mod lanes;
mod reference;

use std::sync::Arc;

use fhe_api::{BackendKind, Error, Result};

pub use avx2::Avx2;
pub use avx512::Avx512;
pub use harvey::Harvey;
pub use reference::Reference;

/// The twiddle tables every variant reads (their home is `fhe-api`, shared with the GPU
/// backends' table uploads).
pub use fhe_api::ring::ntt::NttTables;

/// One NTT implementation for one ring.
pub trait NttEngine: Send + Sync {
    fn name(&self) -> &'static str;
    /// In place, one polynomial of `N` coefficients in `[0, Q)`.
    fn forward(&self, a: &mut [u64]);
    /// `forward` with the input contract checked on the way, for `NttOps`'s one-polynomial
    /// call: transforms `a` and returns true when every coefficient is below `Q`; returns
    /// false with `a` untouched when one is not, or when the engine has no fused check
    /// (the default), and the caller then checks and transforms separately.
    fn forward_checked(&self, a: &mut [u64]) -> bool {
        let _ = a;
        false
    }
    /// In place, the exact inverse of `forward`.
    fn inverse(&self, a: &mut [u64]);
    /// `inverse` with the input contract checked on the way, as [`NttEngine::forward_checked`].
    fn inverse_checked(&self, a: &mut [u64]) -> bool {
        let _ = a;
        false
    }
    /// `forward` on 32-bit words (rings with `Q < 2^32`). The default widens, transforms
    /// and narrows; the 32-bit SIMD kernels override it and work on the words in place.
    fn forward32(&self, a: &mut [u32]) {
        via_u64(a, |w| self.forward(w));
    }
    /// `inverse` on 32-bit words; see [`NttEngine::forward32`].
    fn inverse32(&self, a: &mut [u32]) {
        via_u64(a, |w| self.inverse(w));
    }
}

/// Runs a `u64` transform on 32-bit words through a per-thread buffer.
pub(crate) fn via_u64(a: &mut [u32], f: impl FnOnce(&mut [u64])) {
    thread_local! {
        static WIDE: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    WIDE.with(|w| {
        let mut w = w.borrow_mut();
        w.clear();
        w.extend(a.iter().map(|&x| u64::from(x)));
        f(&mut w);
        // Outputs are reduced below `Q < 2^32`.
        a.iter_mut().zip(w.iter()).for_each(|(o, &x)| *o = x as u32);
    })
}

/// A registered variant: name, whether this CPU can run it, constructor.
///
/// `supported` is about the CPU only. A variant whose kernels decline a ring (a modulus
/// too wide for its lanes) still builds: its engine runs the portable `harvey` code for
/// that ring, with the same bytes, so every supported variant serves every parameter set.
pub struct NttVariant {
    pub name: &'static str,
    pub supported: fn() -> bool,
    pub build: fn(Arc<NttTables>) -> Box<dyn NttEngine>,
}

/// Every variant this build knows, fastest first (measured on a Xeon with AVX-512; see
/// `bench_forward`), so the default is the first one this CPU supports.
pub fn variants() -> &'static [NttVariant] {
    &[
        NttVariant { name: "avx512", supported: avx512::supported, build: |t| Box::new(Avx512::new(t)) },
        NttVariant { name: "avx2", supported: avx2::supported, build: |t| Box::new(Avx2::new(t)) },
        NttVariant { name: "harvey", supported: || true, build: |t| Box::new(Harvey::new(t)) },
        NttVariant { name: "reference", supported: || true, build: |t| Box::new(Reference::new(t)) },
    ]
}

/// The default variant name: the first supported one.
pub fn default_variant() -> &'static str {
    variants().iter().find(|v| (v.supported)()).map(|v| v.name).unwrap_or("reference")
}

/// Looks up a variant by name; unknown or unsupported names list the valid ones.
pub fn find_variant(name: &str) -> Result<&'static NttVariant> {
    let valid = || variants().iter().filter(|v| (v.supported)()).map(|v| v.name).collect::<Vec<_>>().join(", ");
    match variants().iter().find(|v| v.name == name) {
        Some(v) if (v.supported)() => Ok(v),
        _ => Err(Error::UnknownNttVariant { backend: BackendKind::Cpu, value: name.to_string(), valid: valid() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ring::math::{mul_mod, ntt_slot_exponent, pow_mod};
    use fhe_api::ParamSet;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    fn random_poly(q: u64, n: usize, seed: u64) -> Vec<u64> {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| r.next_u64() % q).collect()
    }

    /// The definition: slot k is A(psi^(2 bitrev(k) + 1)), evaluated naively.
    #[test]
    fn reference_matches_the_definition() {
        for set in ParamSet::ALL {
            let t = Arc::new(NttTables::for_params(set.params()));
            let q = t.modulus.q;
            let a = random_poly(q, t.n, 1);
            let mut f = a.clone();
            Reference::new(t.clone()).forward(&mut f);
            for k in [0usize, 1, 2, 17, t.n - 1] {
                let x = pow_mod(t.psi, ntt_slot_exponent(k, t.log_n) as u64, q);
                let mut acc = 0u64;
                for &c in a.iter().rev() {
                    acc = (mul_mod(acc, x, q) + c) % q;
                }
                assert_eq!(f[k], acc, "{set} slot {k}");
            }
        }
    }

    /// Pointwise product in the evaluation domain is the negacyclic product.
    #[test]
    fn reference_multiplies_negacyclically() {
        let t = Arc::new(NttTables::for_params(ParamSet::PN10QP27.params()));
        let (q, n) = (t.modulus.q, t.n);
        let a = random_poly(q, n, 2);
        let b = random_poly(q, n, 3);
        let mut naive = vec![0u64; n];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let p = mul_mod(ai, bj, q);
                let k = (i + j) % n;
                naive[k] = if i + j >= n { (naive[k] + q - p) % q } else { (naive[k] + p) % q };
            }
        }
        let e = Reference::new(t.clone());
        let (mut fa, mut fb) = (a.clone(), b.clone());
        e.forward(&mut fa);
        e.forward(&mut fb);
        let mut c: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| mul_mod(x, y, q)).collect();
        e.inverse(&mut c);
        assert_eq!(c, naive);
        e.inverse(&mut fa);
        assert_eq!(fa, a);
    }

    #[test]
    fn unknown_variant_lists_valid_ones() {
        let e = find_variant("fast-but-wrong").err().unwrap().to_string();
        for name in ["reference", "harvey"] {
            assert!(e.contains(name), "{e}");
        }
        assert_eq!(find_variant("reference").unwrap().name, "reference");
        assert!(find_variant(default_variant()).is_ok());
    }

    /// One set with its reference engine and every other variant this CPU supports.
    type SetEngines = (ParamSet, Box<dyn NttEngine>, Vec<Box<dyn NttEngine>>);

    fn engines() -> &'static [SetEngines] {
        static ENGINES: std::sync::OnceLock<Vec<SetEngines>> = std::sync::OnceLock::new();
        ENGINES.get_or_init(|| {
            ParamSet::ALL
                .iter()
                .map(|&set| {
                    let t = Arc::new(NttTables::for_params(set.params()));
                    let others = variants()
                        .iter()
                        .filter(|v| (v.supported)() && v.name != "reference")
                        .map(|v| (v.build)(t.clone()))
                        .collect();
                    (set, Box::new(Reference::new(t)) as Box<dyn NttEngine>, others)
                })
                .collect()
        })
    }

    /// Every variant against the reference, forward and inverse, on one input.
    /// `ring` names the ring in a failure; `q` is its modulus.
    fn check_against_reference(a: &[u64], ring: &str, q: u64, reference: &dyn NttEngine, e: &dyn NttEngine) {
        let mut want = a.to_vec();
        reference.forward(&mut want);
        let mut got = a.to_vec();
        e.forward(&mut got);
        same(&got, &want, ring, e.name(), "forward");
        e.inverse(&mut got);
        same(&got, a, ring, e.name(), "inverse(forward(x))");
        let mut want = a.to_vec();
        reference.inverse(&mut want);
        let mut got = a.to_vec();
        e.inverse(&mut got);
        same(&got, &want, ring, e.name(), "inverse");
        // The fused checks: the same words, or (engines without one) `a` untouched.
        for (what, forward) in [("forward_checked", true), ("inverse_checked", false)] {
            let (mut want, mut got) = (a.to_vec(), a.to_vec());
            let taken = if forward {
                reference.forward(&mut want);
                e.forward_checked(&mut got)
            } else {
                reference.inverse(&mut want);
                e.inverse_checked(&mut got)
            };
            same(&got, if taken { &want } else { a }, ring, e.name(), what);
        }
        // The 32-bit entry points (blind rotation's, for the small sets) give the same words.
        if q < 1 << 32 {
            for (what, dir) in [("forward32", true), ("inverse32", false)] {
                let mut want = a.to_vec();
                let mut got: Vec<u32> = a.iter().map(|&x| x as u32).collect();
                if dir {
                    reference.forward(&mut want);
                    e.forward32(&mut got);
                } else {
                    reference.inverse(&mut want);
                    e.inverse32(&mut got);
                }
                let got: Vec<u64> = got.iter().map(|&x| u64::from(x)).collect();
                same(&got, &want, ring, e.name(), what);
            }
        }
    }

    /// Equal words, or a panic naming the first differing slot (not two whole vectors).
    fn same(got: &[u64], want: &[u64], ring: &str, name: &str, what: &str) {
        if let Some(k) = got.iter().zip(want).position(|(g, w)| g != w) {
            panic!("{ring} {name} {what}: slot {k} is {}, want {}", got[k], want[k]);
        }
    }

    /// `forward_checked` and `inverse_checked` decline every polynomial with a word at or above `Q`, wherever
    /// it is (first or second half of the first layer's pairs, either end), and leaves it
    /// as it was; `2^32` and `2^32 + 5` are words a check of the narrowed low halves would
    /// miss.
    #[test]
    fn checked_transforms_decline_words_at_or_above_q_untouched() {
        for (set, _, others) in engines() {
            let (q, n) = (reference_q(*set), set.params().big_n());
            let a = random_poly(q, n, 21);
            for e in others {
                type Checked<'a> = &'a dyn Fn(&mut [u64]) -> bool;
                let checked: [(&str, Checked); 2] =
                    [("forward", &|a| e.forward_checked(a)), ("inverse", &|a| e.inverse_checked(a))];
                for (what, f) in checked {
                    let fused = f(&mut a.clone());
                    for x in [q, q + 1, 1 << 32, (1 << 32) + 5, u64::MAX] {
                        for at in [0, 17, n / 2 - 1, n / 2, n - 1] {
                            let mut bad = a.clone();
                            bad[at] = x;
                            let before = bad.clone();
                            assert!(!f(&mut bad), "{set} {} {what}: word {x} at {at} accepted", e.name());
                            same(&bad, &before, set.name(), e.name(), "declined input untouched");
                        }
                    }
                    // Which engines fuse the check: the AVX-512 32-bit path (the small sets).
                    if e.name() == "avx512" && q < 1 << 32 {
                        assert!(fused, "{set} {what}: the AVX-512 32-bit path should take a valid input");
                    }
                }
            }
        }
    }

    #[test]
    fn variants_agree_on_extreme_inputs() {
        for (set, reference, others) in engines() {
            let q = reference_q(*set);
            let n = set.params().big_n();
            let inputs =
                [vec![0; n], vec![q - 1; n], (0..n as u64).map(|i| if i % 2 == 0 { q - 1 } else { 0 }).collect()];
            for a in &inputs {
                for e in others {
                    check_against_reference(a, set.name(), q, reference.as_ref(), e.as_ref());
                }
            }
        }
    }

    fn reference_q(set: ParamSet) -> u64 {
        set.params().q_ring()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn variants_match_reference(seed in proptest::prelude::any::<u64>()) {
            for (set, reference, others) in engines() {
                let a = random_poly(reference_q(*set), set.params().big_n(), seed);
                for e in others {
                    check_against_reference(&a, set.name(), reference_q(*set), reference.as_ref(), e.as_ref());
                }
            }
        }
    }

    /// Every variant against the reference on rings no parameter set uses, so each
    /// kernel's layer loops meet every size it accepts and each of its reductions runs:
    /// `N` from 128 to 4096 with primes `Q = 1 mod 2N`, random words. The 32-bit kernels
    /// run lazy layers on the primes next to `2^26` and `2^27`, and folding (non-lazy)
    /// ones on the largest below `2^30`. The 64-bit AVX-512 kernel finishes its lazy
    /// layers with `PowerFold` on the largest prime below `2^54`, and with a Shoup
    /// multiplication by one on the smallest above `2^53` (too far from a power of two to
    /// fold); the largest below `2^60` takes its folding layers. No parameter set reaches
    /// the last three. With avx512ifma the 52-bit kernel takes the primes next to `2^40`
    /// (CKKS's scale primes: lazy layers, folded or Shoup-finished), the largest below
    /// `2^47` (lazy up to N = 2048, then folding) and below `2^50` (folding); the smallest
    /// above `2^50` goes back to the 64-bit kernel.
    #[test]
    fn variants_match_reference_on_other_rings() {
        for log_n in 7..=12 {
            let n = 1usize << log_n;
            let rings = [(27, true), (27, false), (30, true), (54, true), (54, false), (60, true)];
            let wide = [(40, true), (41, false), (47, true), (50, true), (51, false)];
            for (bits, below) in rings.into_iter().chain(wide) {
                let step = 2 * n as u64;
                let candidates: Box<dyn Iterator<Item = u64>> = if below {
                    Box::new((1u64..).map(|k| (1 << bits) + 1 - k * step))
                } else {
                    Box::new((1u64..).map(|k| (1 << (bits - 1)) + 1 + k * step))
                };
                let q = candidates.take(100_000).find(|&q| fhe_api::ring::math::is_prime(q)).expect("a prime");
                every_variant_matches_reference(n, q);
            }
        }
    }

    /// Every supported variant against the reference on one ring, and the AVX-512 engine's
    /// 64-bit kernel on the primes IFMA would take (as a CPU without IFMA runs them).
    fn every_variant_matches_reference(n: usize, q: u64) {
        use fhe_api::ring::{PolynomialSize, RingModulus};
        let t = Arc::new(NttTables::new(PolynomialSize(n), RingModulus(q)).expect("an NTT ring"));
        let reference = Reference::new(t.clone());
        let a = random_poly(q, n, q ^ n as u64);
        let ring = format!("N={n} Q={q}");
        for v in variants().iter().filter(|v| (v.supported)() && v.name != "reference") {
            check_against_reference(&a, &ring, q, &reference, (v.build)(t.clone()).as_ref());
        }
        if avx512::supported() {
            check_against_reference(&a, &ring, q, &reference, &Avx512::with_ifma(t.clone(), false));
        }
    }

    /// CKKS's sizes: N = 2^16 and 2^17 on a 40-bit and a 60-bit prime (the 52- and
    /// 64-bit AVX-512 kernels), every variant against the reference.
    #[test]
    fn variants_match_reference_at_ckks_sizes() {
        use fhe_api::ring::PolynomialSize;
        for log_n in [16, 17] {
            let n = 1usize << log_n;
            for q in [
                fhe_api::ring::prime::primes_near(40, PolynomialSize(n), 1, &[]).expect("a prime")[0],
                fhe_api::ring::prime::primes_below(60, PolynomialSize(n), 1, &[]).expect("a prime")[0],
            ] {
                every_variant_matches_reference(n, q);
            }
        }
    }

    /// Single-threaded timings at CKKS's N = 2^16 on a 40-bit and a 60-bit prime, with
    /// the AVX-512 engine both with and without its IFMA kernel:
    /// `cargo test -p fhe-cpu --release -- --ignored --nocapture bench_ckks_sizes`.
    #[test]
    #[ignore = "timing, not a check"]
    fn bench_ckks_sizes() {
        use fhe_api::ring::{PolynomialSize, RingModulus};
        let n = PolynomialSize(1 << 16);
        let q40 = fhe_api::ring::prime::primes_near(40, n, 1, &[]).expect("a prime")[0];
        let q60 = fhe_api::ring::prime::primes_below(60, n, 1, &[]).expect("a prime")[0];
        for round in 0..3 {
            for q in [q40, q60] {
                let t = Arc::new(NttTables::new(n, RingModulus(q)).expect("an NTT ring"));
                let mut engines: Vec<(&str, Box<dyn NttEngine>)> = variants()
                    .iter()
                    .filter(|v| (v.supported)() && v.name != "reference")
                    .map(|v| (v.name, (v.build)(t.clone())))
                    .collect();
                if avx512::supported() {
                    engines.push(("avx512-no-ifma", Box::new(Avx512::with_ifma(t.clone(), false))));
                }
                for (name, e) in &engines {
                    let mut a = random_poly(q, n.0, 9);
                    let time = |f: &dyn Fn(&mut [u64]), a: &mut [u64]| {
                        let mut best = f64::MAX;
                        for _ in 0..30 {
                            let start = std::time::Instant::now();
                            for _ in 0..10 {
                                f(std::hint::black_box(&mut *a));
                            }
                            best = best.min(start.elapsed().as_secs_f64() * 1e6 / 10.0);
                        }
                        best
                    };
                    let (fwd, inv) = (time(&|a| e.forward(a), &mut a), time(&|a| e.inverse(a), &mut a));
                    println!("round {round} N=2^16 Q={q} {name:>15}: forward {fwd:.1} us, inverse {inv:.1} us");
                }
            }
        }
    }

    /// Single-threaded forward timings per variant:
    /// `cargo test -p fhe-cpu --release -- --ignored --nocapture bench_forward`.
    #[test]
    #[ignore = "timing, not a check"]
    fn bench_forward() {
        for set in [ParamSet::PN10QP27, ParamSet::PN11QP54, ParamSet::PN10QP25Q] {
            let t = Arc::new(NttTables::for_params(set.params()));
            for v in variants().iter().filter(|v| (v.supported)()) {
                let e = (v.build)(t.clone());
                let mut a = random_poly(t.modulus.q, t.n, 9);
                // Minimum over many short runs: robust to other processes on a shared machine.
                let time = |f: &dyn Fn(&mut [u64]), a: &mut [u64]| {
                    let (iters, mut best) = (200, f64::MAX);
                    for _ in 0..300 {
                        let start = std::time::Instant::now();
                        for _ in 0..iters {
                            f(std::hint::black_box(&mut *a));
                        }
                        best = best.min(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
                    }
                    best
                };
                let best = time(&|a| e.forward(a), &mut a);
                let inv = time(&|a| e.inverse(a), &mut a);
                println!("{set} N={} {:>9}: forward {best:.3} us, inverse {inv:.3} us", t.n, v.name);
                if t.modulus.q < 1 << 32 {
                    let mut w: Vec<u32> = a.iter().map(|&x| x as u32).collect();
                    let (iters, mut f32, mut i32) = (200, f64::MAX, f64::MAX);
                    for _ in 0..300 {
                        let start = std::time::Instant::now();
                        for _ in 0..iters {
                            e.forward32(std::hint::black_box(&mut w));
                        }
                        f32 = f32.min(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
                        let start = std::time::Instant::now();
                        for _ in 0..iters {
                            e.inverse32(std::hint::black_box(&mut w));
                        }
                        i32 = i32.min(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
                    }
                    println!("{set} N={} {:>9}: forward32 {f32:.3} us, inverse32 {i32:.3} us", t.n, v.name);
                }
            }
        }
    }
}
