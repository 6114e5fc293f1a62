//! Checks of [`GpuBackend`]'s ring NTT that every driver runs: the emulator in CI
//! (`fhe-gpu-emu`), CUDA and HIP on a device (their ignored tests). Plain functions over
//! any driver and any oracle, so each crate only wires them (feature `testing`).

use fhe_api::ckks::Preset;
use fhe_api::ops::RingOps;
use fhe_api::ring::prime::primes_below;
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::rng::SplitMix64;
use fhe_api::Error;

use crate::{GpuBackend, GpuDriver, GpuNttVariant, GPU_NTT_VARIANTS};

/// Random residues laid out `[polynomial][limb][N]` over `moduli`.
pub fn rns_words(n: usize, moduli: &[RingModulus], polys: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..polys).flat_map(|_| moduli).flat_map(|q| (0..n).map(|_| rng.below(q.0)).collect::<Vec<_>>()).collect()
}

/// One limb-batched call over `moduli`, forward then inverse, against the oracle's
/// one-prime transforms, word for word.
pub fn limbs_match_the_oracle<D: GpuDriver>(
    gpu: &GpuBackend<D>,
    oracle: &dyn RingOps,
    n: usize,
    moduli: &[RingModulus],
    polys: usize,
) {
    let size = PolynomialSize(n);
    let data = rns_words(n, moduli, polys, n as u64 ^ moduli[0].0);
    let mut got = data.clone();
    gpu.ring_forward_limbs(size, moduli, &mut got).expect("forward");
    let mut want = data.clone();
    for (i, limb) in want.chunks_mut(n).enumerate() {
        oracle.ring_forward(size, moduli[i % moduli.len()], limb).expect("oracle forward");
    }
    for (i, (g, w)) in got.chunks(n).zip(want.chunks(n)).enumerate() {
        let q = moduli[i % moduli.len()].0;
        assert!(g == w, "N = {n}, limb {} (q = {q}): forward differs from the oracle", i % moduli.len());
    }
    gpu.ring_inverse_limbs(size, moduli, &mut got).expect("inverse");
    assert!(got == data, "N = {n}: inverse(forward(x)) != x");
}

/// Every prime of a CKKS preset's chain (q and P: 55-, 40- and 60-bit primes at
/// N = 2^13) in one batched call over two polynomials, and each prime through
/// `RingOps` alone.
pub fn ckks_chain_matches_the_oracle<D: GpuDriver>(gpu: &GpuBackend<D>, oracle: &dyn RingOps) {
    let p = Preset::Slots4096Scale40Depth2.params();
    let moduli: Vec<RingModulus> = p.q().iter().chain(p.p()).copied().collect();
    assert!(moduli.len() >= 3 && p.n() == 1 << 13, "the preset changed: pick another");
    limbs_match_the_oracle(gpu, oracle, p.n(), &moduli, 2);
    for &q in &moduli {
        let data = rns_words(p.n(), &[q], 1, q.0);
        let (mut g, mut c) = (data.clone(), data.clone());
        gpu.ring_forward(p.ring_degree(), q, &mut g).expect("forward");
        oracle.ring_forward(p.ring_degree(), q, &mut c).expect("oracle forward");
        assert!(g == c, "q = {}: RingOps forward differs from the oracle", q.0);
        gpu.ring_inverse(p.ring_degree(), q, &mut g).expect("inverse");
        assert!(g == data, "q = {}: RingOps inverse(forward(x)) != x", q.0);
    }
}

/// The ends of the range: N = 2^17 with the largest 62-bit NTT prime (five stages in
/// device memory, twelve in shared), 32-bit words at N = 2^15 (two in device memory),
/// a 64-bit launch that also holds a small prime, and the smallest rings.
pub fn range_ends_match_the_oracle<D: GpuDriver>(gpu: &GpuBackend<D>, oracle: &dyn RingOps) {
    let ring = |bits: u32, log_n: u32, count: usize| {
        let primes = primes_below(bits, PolynomialSize(1usize << log_n), count, &[]).expect("NTT primes");
        primes.into_iter().map(RingModulus)
    };
    limbs_match_the_oracle(gpu, oracle, 1 << 17, &ring(62, 17, 1).collect::<Vec<_>>(), 1);
    limbs_match_the_oracle(gpu, oracle, 1 << 15, &ring(30, 15, 2).collect::<Vec<_>>(), 1);
    limbs_match_the_oracle(gpu, oracle, 1 << 12, &ring(30, 12, 1).chain(ring(50, 12, 1)).collect::<Vec<_>>(), 3);
    for log_n in [1, 2, 5] {
        limbs_match_the_oracle(gpu, oracle, 1 << log_n, &ring(20, log_n, 2).collect::<Vec<_>>(), 3);
    }
}

/// Bad input is an error that names the cause, never a panic or a device fault: a word
/// at or above its limb's prime, a ragged batch, no primes, and rings without an NTT.
pub fn bad_ring_input_is_a_clear_error<D: GpuDriver>(gpu: &GpuBackend<D>) {
    let p = Preset::Slots4096Scale40Depth2.params();
    let (n, moduli) = (p.ring_degree(), p.q().to_vec());
    let mut data = rns_words(n.0, &moduli, 2, 7);
    data[(moduli.len() + 1) * n.0 + 5] = moduli[1].0; // polynomial 1, limb 1, word 5
    let e = gpu.ring_forward_limbs(n, &moduli, &mut data).expect_err("a word at q");
    let msg = e.to_string();
    assert!(matches!(e, Error::InvalidInput(_)), "{msg}");
    assert!(msg.contains("polynomial 1, limb 1") && msg.contains("input 5 "), "{msg}");
    data.truncate(data.len() - 1);
    let e = gpu.ring_inverse_limbs(n, &moduli, &mut data).expect_err("a ragged batch");
    assert!(matches!(e, Error::InvalidInput(_)) && e.to_string().contains("not a whole number"), "{e}");
    assert!(matches!(gpu.ring_forward_limbs(n, &[], &mut []), Err(Error::InvalidInput(_))));
    let e = gpu.ring_forward(n, moduli[0], &mut vec![moduli[0].0; n.0]).expect_err("a word at q");
    assert!(e.to_string().contains("input 0 is not below q"), "{e}");
    // Not prime, not 1 mod 2N, N not a power of two: the ring tables refuse them.
    for (n, q) in [(8192, (1u64 << 40) + 1), (8192, 134_215_681), (1000, 134_215_681)] {
        let e = gpu.ring_forward(PolynomialSize(n), RingModulus(q), &mut vec![0; n]).expect_err("no NTT");
        assert!(matches!(e, Error::InvalidRing(_)), "N = {n}, q = {q}: {e}");
    }
}

/// Every NTT variant of a device: `open` builds the backend with that variant; each runs
/// the checks above (a CKKS chain, the ends of the range, bad input) against the oracle.
pub fn every_variant_matches_the_oracle<D: GpuDriver>(
    open: impl Fn(GpuNttVariant) -> GpuBackend<D>,
    oracle: &dyn RingOps,
) {
    for variant in GPU_NTT_VARIANTS {
        let gpu = open(variant);
        assert_eq!(gpu.variant(), variant);
        ckks_chain_matches_the_oracle(&gpu, oracle);
        range_ends_match_the_oracle(&gpu, oracle);
        bad_ring_input_is_a_clear_error(&gpu);
    }
}
