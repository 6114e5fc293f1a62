//! The multi-bit blind rotation kernel (`kernels/tfhe/multi_bit.cu`) against the CPU
//! oracle (`fhe-cpu/src/tfhe/multi_bit.rs`), byte for byte, inside a programmable
//! bootstrap: the key switch of the 20-bit LWE words runs on the CPU (the kernels have
//! none yet), the blind rotation on both.

use fhe_api::{Backend, BootstrapOps, ParamSet, Seed};
use fhe_cpu::CpuBackend;
use fhe_schemes::tfhe::pbs::{decrypt_block, encrypt_block_seeded, lut};

use super::*;

/// A random table on `messages` (every message for grouping 2; three for grouping 1
/// and 3, whose 841 steps and 282 steps of 7 terms are slow in the emulator): the emulator's rotations are
/// word-equal to the CPU's and decrypt to the table's values.
#[test]
fn multi_bit_pbs_of_a_random_table_matches_the_oracle() {
    let (gpu, cpu) = (emulated_backend().unwrap(), CpuBackend::oracle());
    for (set, messages) in [(ParamSet::M2C2, 9..12u64), (ParamSet::M2C2G2, 0..16), (ParamSet::M2C2G3, 5..8)] {
        let keys =
            fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("emu-multi-bit", set.id().into())).unwrap();
        let (kg, kc) = (gpu.prepare_blind_rotation(&keys.ek).unwrap(), cpu.prepare(&keys.ek).unwrap());
        let mut rng = fhe_api::rng::SplitMix64::new(0x38_0003 + u64::from(set.id()));
        let table: Vec<u64> = (0..16).map(|_| rng.below(16)).collect();
        let t = lut(set, |x| table[x as usize]).unwrap();
        let seed = Seed::derive("emu-multi-bit-blocks", set.id().into());
        let blocks: Vec<_> = messages.clone().map(|m| encrypt_block_seeded(&keys.sk, m, &seed, m).unwrap()).collect();
        let switched = cpu.key_switch_batch(&kc, &blocks).unwrap();
        let (rg, rc) = (
            gpu.blind_rotate_batch_lut(&kg, &switched, &t).unwrap(),
            cpu.blind_rotate_batch_lut(&kc, &switched, &t).unwrap(),
        );
        assert_eq!(rg, rc, "{set}: the emulator's multi-bit rotation differs from the CPU's");
        for (m, ct) in messages.zip(&rg) {
            assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), table[m as usize], "{set}: f({m})");
        }
        // The key has no key-switching half on the device: a clear error, not a launch.
        let e = gpu.key_switch_batch(&kg, &blocks).unwrap_err().to_string();
        assert!(e.contains("key switching of LWE words over 16 bits"), "{e}");
    }
}

/// `prepare` still refuses the multi-bit sets' whole keys (20-bit LWE words), as
/// `prepares` declares, and `prepare_blind_rotation` refuses a GINX set's.
#[test]
fn multi_bit_keys_are_blind_rotation_only() {
    let (gpu, cpu) = (emulated_backend().unwrap(), CpuBackend::oracle());
    assert!(!gpu.prepares(ParamSet::M2C2G2));
    let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, ParamSet::PN10QP27, &Seed::derive("emu-mb-ginx", 0)).unwrap();
    let e = gpu.prepare_blind_rotation(&keys.ek).unwrap_err().to_string();
    assert!(e.contains("not a multi-bit set"), "{e}");
}
