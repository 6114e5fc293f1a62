//! Every GPU NTT variant against the CPU oracle, word for word: the batched NTT over
//! every prime of every CKKS preset (forward, and the inverse back to the input), the
//! ends of the ring range, CKKS operations at the small preset through the whole
//! backend, and the CKKS known-answer corpus (both small presets; 25 to 40 s a variant
//! on the emulator, so the default variant's replay is left to `ckks_tests`). One test
//! module per variant, so a failure names it. The whole emulator suite (conformance,
//! bootstrap corpora) runs with any variant as `LUX_FHE_NTT=<variant> cargo test -p
//! fhe-gpu-emu` (`emulated_backend` reads it).

use std::sync::Arc;

use fhe_api::ckks::Preset;
use fhe_api::ring::RingModulus;
use fhe_api::Backend;
use fhe_cpu::CpuBackend;
use fhe_gpu::GPU_NTT_VARIANTS;
use fhe_kat::ckks::Ckks;
use fhe_kat::{replay, Corpus};

use super::*;

/// Every distinct prime (q and P) of every preset, batched as limbs in one call over
/// three polynomials. A preset's primes are 1 mod 2N at its N, hence at any smaller
/// N: N = 2^10 keeps the emulator quick while every stage count from 1 to 10 and every
/// prime's twiddles are exercised; N = 2^13 follows with a whole chain.
fn every_preset_prime_matches_the_oracle(gpu: &GpuBackend<EmuDriver>) {
    let mut primes: Vec<RingModulus> = Vec::new();
    for preset in Preset::ALL {
        let p = preset.params();
        for &q in p.q().iter().chain(p.p()) {
            if !primes.contains(&q) {
                primes.push(q);
            }
        }
    }
    assert!(primes.len() > 40, "{} primes: the presets changed", primes.len());
    let oracle = CpuBackend::oracle();
    for log_n in [1, 4, 10] {
        fhe_gpu::testing::limbs_match_the_oracle(gpu, &oracle, 1 << log_n, &primes, 3);
    }
    fhe_gpu::testing::ckks_chain_matches_the_oracle(gpu, &oracle);
}

/// Encryption, mul+relin, rescale, rotations (hoisted too) and the rest, same seeds
/// as the oracle, same words, at the small preset.
fn ckks_words_match_the_oracle(gpu: GpuBackend<EmuDriver>) {
    let oracle: Arc<dyn Backend> = Arc::new(CpuBackend::oracle());
    fhe_schemes::testing::ckks::byte_equal_to_oracle(Arc::new(gpu), oracle, Preset::Slots4096Scale40Depth2);
}

/// The CKKS corpus replays with the pinned words.
fn ckks_kat_replays(gpu: GpuBackend<EmuDriver>) {
    let corpus = Corpus::<Ckks>::load_default().expect("the CKKS corpus");
    let target: Arc<dyn Backend> = Arc::new(gpu);
    let r = replay(&target, &corpus).expect("replay");
    assert!(r.ok(), "{:?}", r.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>());
    assert_eq!((r.passed, r.skipped.as_deref()), (corpus.len(), None));
}

macro_rules! variant_tests {
    ($($module:ident => $variant:expr,)*) => {$(
        mod $module {
            use super::*;

            fn gpu() -> GpuBackend<EmuDriver> {
                let gpu = emulated_backend_with($variant).expect("the emulator");
                assert_eq!(gpu.variant(), $variant);
                assert_eq!(fhe_api::ops::RingOps::ntt_variant(&gpu), $variant.name());
                gpu
            }

            #[test]
            fn ntt_matches_the_oracle_on_every_preset_prime() {
                every_preset_prime_matches_the_oracle(&gpu());
            }

            /// N = 2^17 with a 62-bit prime, 32-bit words, mixed widths, tiny rings.
            #[test]
            fn ntt_matches_the_oracle_at_the_ends_of_the_range() {
                fhe_gpu::testing::range_ends_match_the_oracle(&gpu(), &CpuBackend::oracle());
            }

            #[test]
            fn ckks_words_match_the_oracle() {
                super::ckks_words_match_the_oracle(gpu());
            }

        }
    )*};
}

variant_tests! {
    group4_smem8 => GpuNttVariant::Group4Smem8,
    group8_smem8 => GpuNttVariant::Group8Smem8,
    group16_smem8 => GpuNttVariant::Group16Smem8,
    radix4 => GpuNttVariant::Radix4,
    radix16 => GpuNttVariant::Radix16,
    indexed => GpuNttVariant::Indexed,
}

/// The CKKS corpus per variant but the default (`ckks_tests` replays it with that one).
macro_rules! kat_tests {
    ($($test:ident => $variant:expr,)*) => {$(
        #[test]
        fn $test() {
            assert_ne!($variant, GpuNttVariant::DEFAULT);
            ckks_kat_replays(emulated_backend_with($variant).expect("the emulator"));
        }
    )*};
}

kat_tests! {
    ckks_kat_replays_byte_equal_group4_smem8 => GpuNttVariant::Group4Smem8,
    ckks_kat_replays_byte_equal_group8_smem8 => GpuNttVariant::Group8Smem8,
    ckks_kat_replays_byte_equal_radix4 => GpuNttVariant::Radix4,
    ckks_kat_replays_byte_equal_radix16 => GpuNttVariant::Radix16,
    ckks_kat_replays_byte_equal_indexed => GpuNttVariant::Indexed,
}

/// The list above covers every variant: a new one must be added there.
#[test]
fn every_variant_is_tested() {
    assert_eq!(GPU_NTT_VARIANTS.len(), 6);
    let names: Vec<&str> = GPU_NTT_VARIANTS.iter().map(|v| v.name()).collect();
    for v in [
        GpuNttVariant::Group4Smem8,
        GpuNttVariant::Group8Smem8,
        GpuNttVariant::Group16Smem8,
        GpuNttVariant::Radix4,
        GpuNttVariant::Radix16,
        GpuNttVariant::Indexed,
    ] {
        assert!(names.contains(&v.name()), "{v}");
    }
}

/// An unknown variant is refused, naming every known one; the backend's name carries
/// its variant.
#[test]
fn variants_are_selected_by_name() {
    let options = BackendOptions { ntt_variant: Some("radix8_fancy".into()), device: 0 };
    let e = GpuBackend::new(EmuDriver::default(), Dialect::HostEmu, &options).err().expect("refused");
    let msg = e.to_string();
    assert!(matches!(e, Error::UnknownNttVariant { .. }), "{msg}");
    for v in GPU_NTT_VARIANTS {
        assert!(msg.contains(v.name()), "{msg}");
    }
    for v in GPU_NTT_VARIANTS {
        assert_eq!(emulated_backend_with(v).unwrap().name(), format!("gpu-emu:{v}"));
    }
}
