//! Byte equality with the CPU oracle, and the shared conformance suite.
//!
//! These need a wgpu adapter with 64-bit shader integers (lavapipe will do). Without
//! one they say so and pass as skipped, unless `LUX_FHE_REQUIRE_WGPU=1` (CI sets it),
//! where a missing adapter fails the test.

use std::sync::{Arc, OnceLock};

use fhe_api::{Backend, BackendOptions, BootstrapOps, NttOps, ParamSet, Probe, Seed};
use fhe_schemes::testing;
use rand_chacha::rand_core::{RngCore, SeedableRng};

use super::*;

/// Set to `1` where an adapter is promised (CI on lavapipe): a missing one then fails
/// every test instead of skipping it.
const REQUIRE: &str = "LUX_FHE_REQUIRE_WGPU";

/// One backend for every test (opening a device loads the driver once), or `None` where
/// no adapter answers. An adapter that probes as present but does not open is a failure,
/// not a skip.
fn available() -> Option<Arc<WgpuBackend>> {
    static B: OnceLock<Option<Arc<WgpuBackend>>> = OnceLock::new();
    B.get_or_init(|| match probe() {
        Probe::Unavailable(_) => None,
        _ => Some(Arc::new(WgpuBackend::new(&BackendOptions::default()).expect("wgpu backend"))),
    })
    .clone()
}

/// Why [`available`] is `None`, for the skip message.
fn skip_reason() -> String {
    match probe() {
        Probe::Unavailable(cause) => cause.to_string(),
        _ => "the adapter did not open".into(),
    }
}

/// The backend for `test`, under the shared skip rule (`fhe_schemes::testing::require_or_skip`).
pub(crate) fn backend(test: &str) -> Option<Arc<WgpuBackend>> {
    testing::require_or_skip(available(), REQUIRE, skip_reason, test)
}

pub(crate) fn oracle() -> &'static fhe_cpu::CpuBackend {
    static O: OnceLock<fhe_cpu::CpuBackend> = OnceLock::new();
    O.get_or_init(fhe_cpu::CpuBackend::oracle)
}

#[test]
fn ntt_is_byte_equal_to_the_oracle_on_random_batches() {
    let Some(b) = backend("ntt_is_byte_equal_to_the_oracle_on_random_batches") else { return };
    for set in ParamSet::ALL {
        let p = set.params();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7 + set.id() as u64);
        let mut data: Vec<u64> = (0..5 * p.big_n()).map(|_| rng.next_u64() % p.q_ring()).collect();
        // Extremes in the first two polynomials.
        data[..p.big_n()].iter_mut().for_each(|x| *x = p.q_ring() - 1);
        data[p.big_n()..2 * p.big_n()].iter_mut().for_each(|x| *x = 0);
        let (mut x, mut y) = (data.clone(), data.clone());
        b.ntt_forward(set, &mut x).unwrap();
        oracle().ntt_forward(set, &mut y).unwrap();
        assert!(x == y, "{set}: forward NTT differs from the oracle");
        let (mut xi, mut yi) = (data.clone(), data.clone());
        b.ntt_inverse(set, &mut xi).unwrap();
        oracle().ntt_inverse(set, &mut yi).unwrap();
        assert!(xi == yi, "{set}: inverse NTT differs from the oracle");
        b.ntt_inverse(set, &mut x).unwrap();
        assert!(x == data, "{set}: inverse(forward(x)) != x");
    }
}

#[test]
fn reports_the_adapter() {
    let Some(b) = backend("reports_the_adapter") else { return };
    let info = b.device_info();
    assert!(!info.name.is_empty());
    assert_eq!(b.kind(), BackendKind::Wgpu);
    assert_eq!(b.name(), "wgpu:radix4");
    assert_eq!(matches!(probe(), Probe::Software), info.software);
}

#[test]
fn unknown_ntt_variant_is_an_error() {
    let Some(_) = backend("unknown_ntt_variant_is_an_error") else { return };
    let opts = BackendOptions { ntt_variant: Some("radix2".into()), device: 0 };
    assert!(matches!(WgpuBackend::new(&opts), Err(Error::UnknownNttVariant { .. })));
    let opts = BackendOptions { ntt_variant: None, device: 99 };
    assert!(matches!(WgpuBackend::new(&opts), Err(Error::Unavailable { .. })));
}

/// Blind rotation, key switch and the fused bootstrap, word for word.
fn stages_match_oracle(set: ParamSet) {
    let Some(b) = backend("stages_match_oracle") else { return };
    let seed = Seed::derive("fhe-wgpu-stages", set.id() as u64);
    let keys = fhe_schemes::tfhe::keygen_from_seed(&*b, set, &seed).unwrap();
    let want = fhe_schemes::tfhe::keygen_from_seed(oracle(), set, &seed).unwrap();
    assert!(keys.ek == want.ek && keys.pk == want.pk, "{set}: keys differ");
    let kw = b.prepare(&keys.ek).unwrap();
    let ko = oracle().prepare(&keys.ek).unwrap();
    let cts: Vec<_> = (0..3)
        .map(|i| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, i % 2 == 0, &Seed::derive("stages", i)).unwrap())
        .collect();
    let rw = b.blind_rotate_batch(&kw, &cts).unwrap();
    let ro = oracle().blind_rotate_batch(&ko, &cts).unwrap();
    for (i, (x, y)) in rw.iter().zip(&ro).enumerate() {
        assert!(x.as_words() == y.as_words(), "{set}: blind rotation {i} differs");
    }
    let sw = b.key_switch_batch(&kw, &ro).unwrap();
    let so = oracle().key_switch_batch(&ko, &ro).unwrap();
    assert_eq!(sw, so, "{set}: key switch differs");
    let bw = b.bootstrap_batch(&kw, &cts).unwrap();
    let bo = oracle().bootstrap_batch(&ko, &cts).unwrap();
    assert_eq!(bw, bo, "{set}: bootstrap differs");
}

#[test]
fn stages_match_oracle_pn10qp27() {
    stages_match_oracle(ParamSet::PN10QP27);
}

#[test]
fn stages_match_oracle_pn11qp54() {
    stages_match_oracle(ParamSet::PN11QP54);
}

#[test]
fn stages_match_oracle_pn10qp25q() {
    stages_match_oracle(ParamSet::PN10QP25Q);
}

/// Random gates per set in the shared suite: a count lavapipe runs in minutes.
const GATES: usize = 32;

// The shared suite (`fhe_schemes::testing`), skipped like the tests above where no adapter
// answers.
fhe_schemes::conformance_tests!(
    skip_unless(available(), require = REQUIRE, reason = skip_reason()),
    oracle(),
    gates_per_set = GATES
);

/// First differing word, for a readable failure.
fn first_diff<T: PartialEq + Copy>(x: &[T], y: &[T]) -> Option<(usize, T, T)> {
    x.iter().zip(y).enumerate().find(|(_, (a, b))| a != b).map(|(i, (a, b))| (i, *a, *b))
}

/// Rotations of hand-made ciphertexts: trivial ones (only the initial rotation and
/// the extraction run) and ones with a single non-zero mask coefficient (one step).
#[test]
fn blind_rotation_of_simple_ciphertexts() {
    let Some(b) = backend("blind_rotation_of_simple_ciphertexts") else { return };
    let set = ParamSet::PN10QP27;
    let p = set.params();
    let keys = fhe_schemes::tfhe::keygen_from_seed(&*b, set, &Seed::derive("fhe-wgpu-simple", 0)).unwrap();
    let kw = b.prepare(&keys.ek).unwrap();
    let ko = oracle().prepare(&keys.ek).unwrap();
    let mut cts = vec![LweCiphertext::trivial(set, 0), LweCiphertext::trivial(set, 12345)];
    for (i, a) in [(0usize, 16u32), (1, 1000), (p.n() - 1, 32000)] {
        let mut w = vec![0u32; p.n() + 1];
        w[i] = a;
        w[p.n()] = 777;
        cts.push(LweCiphertext::from_raw(set, keys.ek.tag(), w).unwrap());
    }
    // Two steps: the second decomposes a non-constant accumulator.
    let mut w = vec![0u32; p.n() + 1];
    w[3] = 5000;
    w[7] = 20000;
    cts.push(LweCiphertext::from_raw(set, keys.ek.tag(), w.clone()).unwrap());
    // Both key chunks, with skipped steps (a_i that switch to 0) in between.
    w[p.n() - 2] = 3;
    w[9] = 32767 - 3;
    cts.push(LweCiphertext::from_raw(set, keys.ek.tag(), w).unwrap());
    let rw = b.blind_rotate_batch(&kw, &cts).unwrap();
    let ro = oracle().blind_rotate_batch(&ko, &cts).unwrap();
    for (i, (x, y)) in rw.iter().zip(&ro).enumerate() {
        assert_eq!(first_diff(x.as_words(), y.as_words()), None, "ciphertext {i}");
    }
}

// The shared CKKS suite at the smallest preset, skipped like the tests above where no
// adapter answers (the backend expression returns from the test on `None`).
fhe_schemes::ckks_conformance_tests!(
    match super::backend("ckks_conformance") {
        Some(b) => b,
        None => return,
    },
    std::sync::Arc::new(fhe_cpu::CpuBackend::oracle()),
    preset = fhe_api::ckks::params::Preset::Slots4096Scale40Depth2
);

/// Every kind of integer circuit once on wgpu (the shared `fhe_schemes::integer`
/// checks): the adder, the comparator, the multiplier and a mux level (lavapipe runs
/// about 200 gates here in a minute or two).
#[test]
fn integer_8_bit_add_lt_mul_select() {
    use fhe_schemes::integer::conformance::{self, IntegerFixture};
    use fhe_schemes::integer::IntOp;
    let Some(b) = backend("integer_8_bit_add_lt_mul_select") else { return };
    let fx = IntegerFixture::new(b, ParamSet::PN10QP27, "lux-fhe-integer-tests-wgpu");
    conformance::bad_operands_are_errors(&fx);
    for (i, op) in [IntOp::Add, IntOp::Lt, IntOp::MulLow, IntOp::Select].into_iter().enumerate() {
        conformance::random_operands_decrypt_right(&fx, op, 8, 1, 30 + i as u64);
    }
}
