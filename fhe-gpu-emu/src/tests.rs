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
    assert_eq!(gpu.name(), "gpu-emu:radix2");
    assert!(GpuBackend::new(
        EmuDriver::default(),
        Dialect::HostEmu,
        &BackendOptions { ntt_variant: Some("avx512".into()), device: 0 }
    )
    .is_err());
}

/// No CKKS on the GPU backend yet: asking for it is an error naming the backend, not a
/// host fallback or a panic.
#[test]
fn ckks_is_declared_unsupported() {
    use fhe_api::ops::RingOps;
    use fhe_api::ring::{PolynomialSize, RingModulus};
    let gpu = std::sync::Arc::new(emulated_backend().unwrap());
    assert!(gpu.ckks().is_none());
    let e = gpu.ring_forward(PolynomialSize(8192), RingModulus(36_028_797_018_652_673), &mut [0u64; 8192]).unwrap_err();
    assert!(matches!(e, fhe_api::Error::Unsupported { .. }) && e.to_string().contains("gpu-emu"), "{e}");
    let ctx = fhe_schemes::ckks::Context::from_preset(gpu, fhe_api::ckks::params::Preset::Slots4096Scale40Depth2);
    assert!(matches!(ctx, Err(fhe_api::Error::Unsupported { .. })));
}
