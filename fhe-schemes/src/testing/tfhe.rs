//! The shared conformance suite: plain generic functions over any [`Backend`]; each
//! backend crate stamps them into `#[test]`s with [`conformance_tests!`], naming its
//! backend constructor once.
//!
//! Every check compares raw words with the CPU oracle where it can (decoding hides
//! races), and otherwise decrypts and compares with the plaintext circuit.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::tfhe::decrypt::{phase, phase_error};
use crate::tfhe::gates::{self, Gate};
use crate::tfhe::noise;
use fhe_api::{Backend, Error, Lut, LweCiphertext, ParamSet, Seed};

/// Outcome of [`random_gates`].
#[derive(Debug, Default)]
pub struct GateReport {
    pub gates: usize,
    pub wrong: usize,
    /// Measured variance of the outputs' phase error (units of `q`).
    pub variance: f64,
    /// Largest |phase error| seen.
    pub max_error: i64,
}

/// Evaluates `count` random gates in batches of `batch` (random gate types, inputs drawn
/// from a pool that outputs feed back into, so circuits chain), decrypting each output
/// against the plaintext circuit. The pool starts with fresh public-key encryptions.
pub fn random_gates(backend: &dyn Backend, set: ParamSet, count: usize, batch: usize, seed: u64) -> GateReport {
    let keys =
        crate::tfhe::keygen_from_seed(backend, set, &Seed::derive("lux-fhe-conformance-gates", seed)).expect("keygen");
    let key = backend.prepare(&keys.ek).expect("prepare");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let pool_size = 2 * batch;
    let mut pool: Vec<(bool, LweCiphertext)> = (0..pool_size)
        .map(|i| {
            let bit = rng.next_u32() & 1 == 1;
            let ct = crate::tfhe::encrypt_bit_seeded(&keys.pk, bit, &Seed::derive("pool", seed * 1_000_000 + i as u64));
            (bit, ct.expect("encrypt"))
        })
        .collect();
    let mut report = GateReport::default();
    let mut sum_sq = 0f64;
    while report.gates < count {
        let m = batch.min(count - report.gates);
        let pick = |rng: &mut ChaCha20Rng| (rng.next_u32() as usize) % pool_size;
        let kind = Gate::ALL[(rng.next_u32() as usize) % Gate::ALL.len()];
        let (mut lhs, mut rhs, mut want) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..m {
            let (i, j) = (pick(&mut rng), pick(&mut rng));
            // NOT on one input now and then: it is free and must compose.
            let a = if rng.next_u32() % 4 == 0 { (!pool[i].0, gates::not(&pool[i].1)) } else { pool[i].clone() };
            want.push(kind.eval_plain(a.0, pool[j].0));
            lhs.push(a.1);
            rhs.push(pool[j].1.clone());
        }
        let out = gates::gate_batch(backend, &key, kind, &lhs, &rhs).expect("gate batch");
        for (k, (ct, w)) in out.into_iter().zip(want).enumerate() {
            let (bit, err) = phase_error(&keys.sk, &ct).expect("phase");
            if bit != w {
                report.wrong += 1;
            }
            sum_sq += (err * err) as f64;
            report.max_error = report.max_error.max(err.abs());
            let slot = (report.gates + k) % pool_size;
            pool[slot] = (w, ct);
        }
        report.gates += m;
    }
    report.variance = sum_sq / report.gates as f64;
    report
}

/// Random gates decrypt right, and the measured output noise agrees with the model of
/// [`crate::tfhe::noise`] (it may be lower: the model bounds the top gadget digit by the
/// others; it must not be higher by more than sampling error).
pub fn gates_are_correct_and_noise_matches_model(backend: &dyn Backend, set: ParamSet, count: usize) {
    let r = random_gates(backend, set, count, 64, set.id() as u64);
    assert_eq!(r.wrong, 0, "{set}: {} of {} gates wrong", r.wrong, r.gates);
    let model = noise::predict(set.params());
    let ratio = r.variance / model.bootstrapped_variance;
    // Printed so a test run with --nocapture reports the measurement (docs/PARAMETERS.md).
    eprintln!(
        "{set}: {} gates, 0 wrong, phase sd {:.1} (model {:.1}), max |error| {} of margin {}",
        r.gates,
        r.variance.sqrt(),
        model.bootstrapped_variance.sqrt(),
        r.max_error,
        set.params().q_lwe() / 8
    );
    assert!(
        (0.3..1.2).contains(&ratio),
        "{set}: measured phase variance {:.0} vs predicted {:.0} (ratio {ratio:.2})",
        r.variance,
        model.bootstrapped_variance
    );
    assert!(r.max_error < (set.params().q_lwe() / 8) as i64, "{set}: max error {}", r.max_error);
}

/// Keys, encryptions and bootstraps are byte-equal to the oracle's.
pub fn byte_equal_to_oracle(backend: &dyn Backend, oracle: &dyn Backend, set: ParamSet) {
    let seed = Seed::derive("lux-fhe-conformance-bytes", set.id() as u64);
    let a = crate::tfhe::keygen_from_seed(backend, set, &seed).expect("keygen");
    let b = crate::tfhe::keygen_from_seed(oracle, set, &seed).expect("oracle keygen");
    assert!(a.sk == b.sk && a.pk == b.pk && a.ek == b.ek, "{set}: keys differ from the oracle");
    let ka = backend.prepare(&a.ek).expect("prepare");
    let kb = oracle.prepare(&b.ek).expect("oracle prepare");
    let cts: Vec<_> = (0..4)
        .map(|i| crate::tfhe::encrypt_bit_seeded(&a.pk, i % 2 == 1, &Seed::derive("bytes", i)).expect("encrypt"))
        .collect();
    for (i, ct) in cts.iter().enumerate() {
        let o = crate::tfhe::encrypt_bit_seeded(&b.pk, i % 2 == 1, &Seed::derive("bytes", i as u64)).expect("encrypt");
        assert_eq!(ct.as_words(), o.as_words(), "{set}: encryption {i} differs");
    }
    let x = backend.bootstrap_batch(&ka, &cts).expect("bootstrap");
    let y = oracle.bootstrap_batch(&kb, &cts).expect("oracle bootstrap");
    for (i, (x, y)) in x.iter().zip(&y).enumerate() {
        assert_eq!(x.as_words(), y.as_words(), "{set}: bootstrap {i} differs");
    }
}

/// Bad input is an `Error`, never a panic: mismatched parameter sets, ragged batches,
/// NTT buffers of the wrong length or out of range.
pub fn rejects_bad_input(backend: &dyn Backend) {
    let a = crate::tfhe::keygen_from_seed(backend, ParamSet::PN10QP27, &Seed::derive("bad-input", 0)).expect("keygen");
    let key = backend.prepare(&a.ek).expect("prepare");
    let other = LweCiphertext::trivial(ParamSet::PN10QP25Q, 0);
    let mine = LweCiphertext::trivial(ParamSet::PN10QP27, 0);
    assert!(matches!(backend.bootstrap_batch(&key, std::slice::from_ref(&other)), Err(Error::ParamMismatch { .. })));
    assert!(matches!(
        gates::gate_batch(backend, &key, Gate::And, &[mine.clone(), mine.clone()], std::slice::from_ref(&mine)),
        Err(Error::InvalidInput(_))
    ));
    assert!(gates::gate(backend, &key, Gate::And, &mine, &other).is_err());
    let n = ParamSet::PN10QP27.params().big_n();
    assert!(backend.ntt_forward(ParamSet::PN10QP27, &mut vec![0u64; n + 1]).is_err());
    assert!(backend.ntt_inverse(ParamSet::PN10QP27, &mut vec![u64::MAX; n]).is_err());
    assert!(crate::tfhe::decrypt_bit(&a.sk, &other).is_err());
    assert!(backend.bootstrap_batch(&key, &[]).expect("empty batch").is_empty());
}

/// A mixed-gate batch is byte-equal to each gate run on its own, and constants
/// ([`gates::constant`]) behave as inputs of known value.
pub fn mixed_batch_matches_single_gates(backend: &dyn Backend) {
    let set = ParamSet::PN10QP27;
    let keys =
        crate::tfhe::keygen_from_seed(backend, set, &Seed::derive("lux-fhe-conformance-mixed", 0)).expect("keygen");
    let key = backend.prepare(&keys.ek).expect("prepare");
    let enc =
        |bit: bool, i: u64| crate::tfhe::encrypt_bit_seeded(&keys.pk, bit, &Seed::derive("mixed", i)).expect("encrypt");
    let (a, b) = (enc(true, 0), enc(false, 1));
    let one = gates::constant(set, true);
    let triples: Vec<(Gate, &LweCiphertext, &LweCiphertext)> =
        Gate::ALL.iter().map(|&g| (g, &a, &b)).chain([(Gate::And, &a, &one), (Gate::Xor, &one, &b)]).collect();
    let mixed = gates::mixed_batch(backend, &key, &triples).expect("mixed batch");
    assert_eq!(mixed.len(), triples.len());
    for ((g, x, y), out) in triples.iter().zip(&mixed) {
        let single = gates::gate(backend, &key, *g, x, y).expect("gate");
        assert_eq!(out.as_words(), single.as_words(), "{g:?} in a mixed batch differs from the gate alone");
        let want = g.eval_plain(
            crate::tfhe::decrypt_bit(&keys.sk, x).expect("decrypt"),
            crate::tfhe::decrypt_bit(&keys.sk, y).expect("decrypt"),
        );
        assert_eq!(crate::tfhe::decrypt_bit(&keys.sk, out).expect("decrypt"), want, "{g:?}");
    }
    assert!(crate::tfhe::decrypt_bit(&keys.sk, &gates::constant(set, true)).expect("decrypt"));
    assert!(!crate::tfhe::decrypt_bit(&keys.sk, &gates::constant(set, false)).expect("decrypt"));
    assert!(gates::mixed_batch(backend, &key, &[]).expect("empty batch").is_empty());
}

/// NTT round trip and agreement with the oracle on random input.
pub fn ntt_matches_oracle(backend: &dyn Backend, oracle: &dyn Backend) {
    for set in ParamSet::ALL {
        let p = set.params();
        let mut rng = ChaCha20Rng::seed_from_u64(set.id() as u64);
        let data: Vec<u64> = (0..3 * p.big_n()).map(|_| rng.next_u64() % p.q_ring()).collect();
        let (mut x, mut y) = (data.clone(), data.clone());
        backend.ntt_forward(set, &mut x).expect("forward");
        oracle.ntt_forward(set, &mut y).expect("oracle forward");
        assert_eq!(x, y, "{set}: forward NTT differs from the oracle");
        backend.ntt_inverse(set, &mut x).expect("inverse");
        assert_eq!(x, data, "{set}: inverse(forward(x)) != x");
    }
}

/// `a b mod (X^N + 1, q)` by the schoolbook rule (`O(N^2)`): the reference for
/// [`NttOps::negacyclic_mul`](crate::NttOps::negacyclic_mul).
pub fn schoolbook_negacyclic(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
    let n = a.len();
    let q = q as u128;
    let mut c = vec![0u128; n];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            let t = x as u128 * y as u128 % q;
            // X^N = -1: a product that wraps past degree N - 1 is subtracted.
            let k = i + j;
            if k < n {
                c[k] = (c[k] + t) % q;
            } else {
                c[k - n] = (c[k - n] + q - t) % q;
            }
        }
    }
    c.into_iter().map(|x| x as u64).collect()
}

/// The operands the negacyclic product is checked on for `set`: random pairs, and
/// `X^(N-1) * X = -1` with the largest coefficients (the wrap and the top of the range).
pub fn negacyclic_cases(set: ParamSet) -> Vec<(Vec<u64>, Vec<u64>)> {
    let (n, q) = (set.params().big_n(), set.params().q_ring());
    let mut rng = ChaCha20Rng::seed_from_u64(0x6e63 + set.id() as u64);
    let mut random = || (0..n).map(|_| rng.next_u64() % q).collect::<Vec<u64>>();
    let mut top = vec![0; n];
    top[n - 1] = q - 1;
    let mut x = vec![0; n];
    x[1] = q - 1;
    vec![(random(), random()), (top, x), (vec![q - 1; n], vec![q - 1; n])]
}

/// [`NttOps::negacyclic_mul`](crate::NttOps::negacyclic_mul) equals the schoolbook
/// product on every set, and refuses a short operand or a coefficient at `Q` by name.
pub fn negacyclic_mul_matches_schoolbook(backend: &dyn Backend) {
    for set in ParamSet::ALL {
        let (n, q) = (set.params().big_n(), set.params().q_ring());
        for (a, b) in negacyclic_cases(set) {
            let got = backend.negacyclic_mul(set, &a, &b).expect("negacyclic_mul");
            assert!(got == schoolbook_negacyclic(&a, &b, q), "{set}: negacyclic_mul differs from the schoolbook");
        }
        let ok = vec![1u64; n];
        let e = backend.negacyclic_mul(set, &ok, &ok[1..]).expect_err("short operand").to_string();
        assert!(e.contains("operand b") && e.contains(&format!("N = {n}")), "{e}");
        let mut bad = ok.clone();
        bad[7] = q;
        let e = backend.negacyclic_mul(set, &bad, &ok).expect_err("coefficient at Q").to_string();
        assert!(e.contains("operand a coefficient 7"), "{e}");
    }
}

/// The table of `g` on messages `0..4` in a padded encoding: message `v` at phase
/// `v q/8 + q/16` (the middle of its box in `[0, q/2)`), mapped to `g(v) round(Q/8)`.
fn message_table(set: ParamSet, g: fn(u64) -> u64) -> Lut {
    let p = set.params();
    let (n, q) = (p.big_n(), p.q_ring());
    Lut::from_fn(set, |m| {
        let v = g(((m % n) * 4 / n) as u64) * ((q + 4) / 8) % q;
        if m < n {
            v
        } else {
            (q - v) % q
        }
    })
    .expect("a negacyclic table")
}

/// Inputs of messages `0..4` ([`message_table`]'s encoding), from fresh encryptions of
/// bits (phase `0` or `q/4`) plus public constants.
fn message_inputs(pk: &fhe_api::PublicKey, label: &str) -> Vec<(u64, LweCiphertext)> {
    let q = pk.params().params().q_lwe();
    (0..4u64)
        .map(|v| {
            let bit = crate::tfhe::encrypt_bit_seeded(pk, v >= 2, &Seed::derive(label, v)).expect("encrypt");
            let constant = ((v % 2) * q / 8 + q / 16) as u32;
            (v, LweCiphertext::linear_combination(&[(1, &bit)], constant).expect("one term"))
        })
        .collect()
}

/// Blind rotations with look-up tables other than the sign are word-equal to the
/// oracle's: a table of random words (a rotation by the wrong amount or sign shows in
/// every coefficient) and a message table with zero words, on a batch and on a lone
/// ciphertext. The sign table through `blind_rotate_batch_lut` is `blind_rotate_batch`,
/// and a table of another set is refused.
pub fn lut_matches_oracle(backend: &dyn Backend, oracle: &dyn Backend, set: ParamSet) {
    let keys = crate::tfhe::keygen_from_seed(oracle, set, &Seed::derive("lux-fhe-conformance-lut", set.id() as u64))
        .expect("keygen");
    let (ka, kb) = (backend.prepare(&keys.ek).expect("prepare"), oracle.prepare(&keys.ek).expect("oracle prepare"));
    let cts: Vec<LweCiphertext> = message_inputs(&keys.pk, "lut-bytes").into_iter().map(|(_, ct)| ct).collect();
    let p = set.params();
    let mut rng = ChaCha20Rng::seed_from_u64(set.id() as u64);
    let random = (0..p.big_n()).map(|_| rng.next_u64() % p.q_ring()).collect();
    let random = Lut::from_coefficients(set, random).expect("words below Q");
    for (name, lut) in [("random", &random), ("identity", &message_table(set, |v| v))] {
        for batch in [&cts[..], &cts[1..2]] {
            let x = backend.blind_rotate_batch_lut(&ka, batch, lut).expect("blind rotation with a table");
            let y = oracle.blind_rotate_batch_lut(&kb, batch, lut).expect("oracle blind rotation with a table");
            assert_eq!(x.len(), batch.len());
            for (i, (x, y)) in x.iter().zip(&y).enumerate() {
                assert_eq!(x.as_words(), y.as_words(), "{set}: {name} table, batch of {}, rotation {i}", batch.len());
            }
        }
    }
    let sign = backend.blind_rotate_batch_lut(&ka, &cts, &Lut::sign(set)).expect("sign table");
    assert_eq!(sign, backend.blind_rotate_batch(&ka, &cts).expect("blind rotation"), "{set}: sign table");
    let other = *ParamSet::ALL.iter().find(|&&s| s != set).expect("two sets");
    assert!(matches!(backend.blind_rotate_batch_lut(&ka, &cts, &Lut::sign(other)), Err(Error::ParamMismatch { .. })));
}

/// A function of a message mod 4, with its name for failure messages.
type NamedFn = (&'static str, fn(u64) -> u64);

/// Programmable bootstrapping decrypts to the function: messages `0..4` through the
/// identity and the negation mod 4 tables, then a key switch, decode to `g(v)` (phase
/// within `q/16` of `g(v) q/8`).
pub fn lut_decrypts_function_values(backend: &dyn Backend, set: ParamSet) {
    let keys = crate::tfhe::keygen_from_seed(backend, set, &Seed::derive("lux-fhe-conformance-pbs", set.id() as u64))
        .expect("keygen");
    let key = backend.prepare(&keys.ek).expect("prepare");
    let inputs = message_inputs(&keys.pk, "pbs");
    let cts: Vec<LweCiphertext> = inputs.iter().map(|(_, ct)| ct.clone()).collect();
    let q = set.params().q_lwe() as i64;
    let tables: [NamedFn; 2] = [("identity", |v| v), ("negation", |v| (4 - v) % 4)];
    let mut max_error = 0;
    for (name, g) in tables {
        let rotated = backend.blind_rotate_batch_lut(&key, &cts, &message_table(set, g)).expect("blind rotation");
        let out = backend.key_switch_batch(&key, &rotated).expect("key switch");
        for ((v, _), ct) in inputs.iter().zip(&out) {
            let want = g(*v) as i64 * q / 8;
            let error = (phase(&keys.sk, ct).expect("phase") as i64 - want + q / 2).rem_euclid(q) - q / 2;
            assert!(error.abs() < q / 16, "{set}: {name}({v}) has phase error {error} of margin {}", q / 16);
            max_error = max_error.max(error.abs());
        }
    }
    eprintln!("{set}: 8 programmable bootstraps decode right, max |error| {max_error} of margin {}", q / 16);
}

/// The byte checks of a device backend, for tests that run only where the device is:
/// NTT, keys, encryptions, bootstraps and blind rotations with a look-up table on every
/// set against the oracle, and bad input.
pub fn byte_equal_suite(backend: &dyn Backend, oracle: &dyn Backend) {
    ntt_matches_oracle(backend, oracle);
    for set in ParamSet::ALL {
        byte_equal_to_oracle(backend, oracle, set);
        lut_matches_oracle(backend, oracle, set);
    }
    rejects_bad_input(backend);
}

/// Stamps the suite into `#[test]` functions for one backend:
/// `fhe_schemes::conformance_tests!(my_backend_constructor_expr, oracle_expr, gates_per_set = 1000);`
/// where both expressions evaluate to something that derefs to `dyn Backend`.
/// `gates_per_set` sets how many random gates each set evaluates.
///
/// Two leading arms for a backend that may not be on the machine running the tests:
/// - `ignore = "reason",` marks every test `#[ignore]`: for a device backend whose suite
///   runs with `cargo test -- --ignored` where the device is.
/// - `skip_unless(optional_backend_expr, require = var_expr, reason = reason_expr),`
///   in place of the backend expression: the first expression gives an `Option` of the
///   backend; `None` skips each test through [`super::require_or_skip`], or fails it where the
///   environment variable named by `var_expr` (a `&str`) is `1`. `reason_expr`, a
///   `String`, is evaluated only on `None`. For a backend that runs wherever its device
///   answers, with CI requiring it (wgpu on lavapipe).
#[macro_export]
macro_rules! conformance_tests {
    (ignore = $reason:literal, $backend:expr, $oracle:expr, gates_per_set = $gates:expr) => {
        $crate::conformance_tests!(@suite [ignore = $reason] [run $backend], $oracle, $gates);
    };
    (
        skip_unless($backend:expr, require = $var:expr, reason = $why:expr),
        $oracle:expr,
        gates_per_set = $gates:expr
    ) => {
        $crate::conformance_tests!(@suite [] [skip $backend, $var, $why], $oracle, $gates);
    };
    ($backend:expr, $oracle:expr, gates_per_set = $gates:expr) => {
        $crate::conformance_tests!(@suite [] [run $backend], $oracle, $gates);
    };
    // The backend for one test: the expression itself, or its `Some` (returning from the
    // test, skipped, on `None`).
    (@get [run $backend:expr], $test:literal) => {
        $backend
    };
    (@get [skip $backend:expr, $var:expr, $why:expr], $test:literal) => {
        match $crate::testing::require_or_skip($backend, $var, || $why, concat!("conformance::", $test)) {
            Some(backend) => backend,
            None => return,
        }
    };
    (@suite [$($attr:meta)?] $get:tt, $oracle:expr, $gates:expr) => {
        mod conformance {
            #[allow(unused_imports)]
            use super::*;
            use $crate::testing::{tags, tfhe as testing};
            use ::fhe_api::ParamSet;

            #[test]
            $(#[$attr])?
            fn random_gates_pn10qp27() {
                let backend = $crate::conformance_tests!(@get $get, "random_gates_pn10qp27");
                testing::gates_are_correct_and_noise_matches_model(&*backend, ParamSet::PN10QP27, $gates);
            }
            #[test]
            $(#[$attr])?
            fn random_gates_pn11qp54() {
                let backend = $crate::conformance_tests!(@get $get, "random_gates_pn11qp54");
                testing::gates_are_correct_and_noise_matches_model(&*backend, ParamSet::PN11QP54, $gates);
            }
            #[test]
            $(#[$attr])?
            fn random_gates_pn10qp25q() {
                let backend = $crate::conformance_tests!(@get $get, "random_gates_pn10qp25q");
                testing::gates_are_correct_and_noise_matches_model(&*backend, ParamSet::PN10QP25Q, $gates);
            }
            #[test]
            $(#[$attr])?
            fn byte_equal_to_oracle_all_sets() {
                let backend = $crate::conformance_tests!(@get $get, "byte_equal_to_oracle_all_sets");
                let oracle = $oracle;
                for set in ParamSet::ALL {
                    testing::byte_equal_to_oracle(&*backend, &*oracle, set);
                }
            }
            #[test]
            $(#[$attr])?
            fn rejects_bad_input() {
                let backend = $crate::conformance_tests!(@get $get, "rejects_bad_input");
                testing::rejects_bad_input(&*backend);
            }
            #[test]
            $(#[$attr])?
            fn mixed_batch_matches_single_gates() {
                let backend = $crate::conformance_tests!(@get $get, "mixed_batch_matches_single_gates");
                testing::mixed_batch_matches_single_gates(&*backend);
            }
            #[test]
            $(#[$attr])?
            fn lut_matches_oracle_all_sets() {
                let backend = $crate::conformance_tests!(@get $get, "lut_matches_oracle_all_sets");
                let oracle = $oracle;
                for set in ParamSet::ALL {
                    testing::lut_matches_oracle(&*backend, &*oracle, set);
                }
            }
            #[test]
            $(#[$attr])?
            fn lut_decrypts_function_values_all_sets() {
                let backend = $crate::conformance_tests!(@get $get, "lut_decrypts_function_values_all_sets");
                for set in ParamSet::ALL {
                    testing::lut_decrypts_function_values(&*backend, set);
                }
            }
            #[test]
            $(#[$attr])?
            fn wrong_keys_are_refused() {
                let backend = $crate::conformance_tests!(@get $get, "wrong_keys_are_refused");
                tags::wrong_keys_are_refused(&*backend);
            }
            #[test]
            $(#[$attr])?
            fn ntt_matches_oracle() {
                let backend = $crate::conformance_tests!(@get $get, "ntt_matches_oracle");
                testing::ntt_matches_oracle(&*backend, &*$oracle);
            }
            #[test]
            $(#[$attr])?
            fn negacyclic_mul_matches_schoolbook() {
                let backend = $crate::conformance_tests!(@get $get, "negacyclic_mul_matches_schoolbook");
                testing::negacyclic_mul_matches_schoolbook(&*backend);
            }
        }
    };
}
