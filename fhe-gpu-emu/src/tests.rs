//! The GPU kernels against the CPU oracle, byte for byte, on every parameter set.

use fhe_api::{Backend, BootstrapOps, ParamSet, Seed};
use fhe_cpu::CpuBackend;
use fhe_schemes::testing;
use fhe_schemes::tfhe::gates::{self, Gate};

use super::*;

/// NTT, keys, encryptions and bootstraps on every set, and bad input: the same suite
/// the CUDA and HIP crates run on a device.
#[test]
fn byte_equal_suite() {
    testing::tfhe::byte_equal_suite(&emulated_backend().unwrap(), &CpuBackend::oracle());
}

/// The shared GPU backend checks every input's key tag and tags its outputs with the
/// evaluation key's (issue 27): the conformance test the device crates stamp, run here
/// where no device is needed.
#[test]
fn wrong_keys_are_refused() {
    testing::tags::wrong_keys_are_refused(&emulated_backend().unwrap());
}

#[test]
fn blind_rotation_and_key_switch_separately_match_the_oracle() {
    let (gpu, cpu) = (emulated_backend().unwrap(), CpuBackend::oracle());
    let set = ParamSet::PN10QP27;
    let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("emu-steps", 0)).unwrap();
    let (kg, kc) = (gpu.prepare(&keys.ek).unwrap(), cpu.prepare(&keys.ek).unwrap());
    let cts: Vec<_> = (0..3)
        .map(|i| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, i == 1, &Seed::derive("emu-ct", i)).unwrap())
        .collect();
    let (rg, rc) = (gpu.blind_rotate_batch(&kg, &cts).unwrap(), cpu.blind_rotate_batch(&kc, &cts).unwrap());
    assert_eq!(rg, rc, "blind rotation differs");
    assert_eq!(gpu.key_switch_batch(&kg, &rc).unwrap(), cpu.key_switch_batch(&kc, &rc).unwrap());
    // A gate through the generic gate code decrypts right.
    let out = gates::gate_batch(&gpu, &kg, Gate::Xor, &cts[..2], &cts[1..]).unwrap();
    assert!(fhe_schemes::tfhe::decrypt_bit(&keys.sk, &out[0]).unwrap());
    assert!(fhe_schemes::tfhe::decrypt_bit(&keys.sk, &out[1]).unwrap());
}

#[test]
fn a_key_from_another_backend_is_refused() {
    let (gpu, cpu) = (emulated_backend().unwrap(), CpuBackend::oracle());
    let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, ParamSet::PN10QP27, &Seed::derive("emu-wrong", 0)).unwrap();
    let kc = cpu.prepare(&keys.ek).unwrap();
    let ct = fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, true, &Seed::derive("emu-wrong-ct", 0)).unwrap();
    let e = gpu.bootstrap_batch(&kc, &[ct]).unwrap_err().to_string();
    assert!(e.contains("belongs to backend cpu:reference"), "{e}");
    assert_eq!(gpu.name(), format!("gpu-emu:{}", gpu.variant()));
    assert!(GpuBackend::new(
        EmuDriver::default(),
        Dialect::HostEmu,
        &BackendOptions { ntt_variant: Some("avx512".into()), device: 0 }
    )
    .is_err());
}

/// The limb-batched ring NTT on a CKKS chain (55-, 40- and 60-bit primes at N = 2^13)
/// in one call, and each prime through `RingOps`, byte for byte with the oracle.
#[test]
fn ring_ntt_matches_the_oracle_on_ckks_primes() {
    let gpu = emulated_backend().unwrap();
    fhe_gpu::testing::ckks_chain_matches_the_oracle(&gpu, &CpuBackend::oracle());
}

#[test]
fn ring_ntt_matches_the_oracle_at_the_ends_of_the_range() {
    fhe_gpu::testing::range_ends_match_the_oracle(&emulated_backend().unwrap(), &CpuBackend::oracle());
}

#[test]
fn bad_ring_input_is_a_clear_error() {
    fhe_gpu::testing::bad_ring_input_is_a_clear_error(&emulated_backend().unwrap());
}

/// The shared GPU kernels hold LWE words in 16 bits, so the PBS corpus (`M2C2`, 20-bit
/// words) is skipped on the emulator, with the reason, and counts nothing as passed; the
/// backend's declaration agrees with what `prepare` does.
#[test]
fn the_pbs_corpus_is_skipped_where_wide_keys_are_refused() {
    use std::sync::Arc;
    let gpu: Arc<dyn Backend> = Arc::new(emulated_backend().unwrap());
    assert!(!gpu.prepares(ParamSet::M2C2) && gpu.prepares(ParamSet::PN10QP27));
    let corpus = fhe_kat::Corpus::<fhe_kat::tfhe::pbs::Pbs>::load_default().expect("the PBS corpus");
    let r = fhe_kat::replay(&gpu, &corpus).expect("replay");
    let why = r.skipped.as_deref().expect("skipped");
    assert!(why.contains("prepares no keys of M2C2"), "{why}");
    assert_eq!(r.passed, 0);
    let cpu = CpuBackend::oracle();
    let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, ParamSet::M2C2, &Seed::derive("emu-wide", 0)).unwrap();
    let e = gpu.prepare(&keys.ek).unwrap_err().to_string();
    assert!(e.contains("LWE words over 16 bits"), "{e}");
}
