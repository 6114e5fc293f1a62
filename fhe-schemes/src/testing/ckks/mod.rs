//! The CKKS conformance suite: generic functions over any backend that declares the
//! CKKS capability, stamped per backend by [`crate::ckks_conformance_tests!`]. Words are
//! compared with the CPU oracle's (same seeds), and decrypted values with plaintext
//! arithmetic, with the measured precision in bits.
//!
//! | file | checks |
//! |---|---|
//! | `ops` | every evaluator operation against plaintext arithmetic, in both modes |
//! | `words` | words equal to the oracle's, hoisting, threads, noise, the depth chain |
//! | `refusals` | misuse, other key sets, spent levels and overflowing scales are typed errors |
//! | `keys` | keys made later from the secret key, sparse packing, bytes through the context |
//! | `circuits` | Chebyshev series, linear transforms, slot sums, bootstrapping (insecure `N = 2^12`) |
//! | `each_op` | each `CkksOps` method's words against the oracle's, bad input refused (device backends) |

pub mod circuits;
pub mod each_op;
pub mod functional;
mod keys;
mod ops;
mod refusals;
mod words;

pub use keys::{ciphertexts_travel_as_bytes, keys_later_and_sparse_packing, keys_up_to_a_level_serve_the_same_words};
pub use ops::{both_modes_evaluate_polynomials, ops_match_plaintext, OpPrecision};
pub use refusals::{other_key_sets_are_refused, rejects_misuse};
pub use words::{
    byte_equal_to_oracle, coefficient_noise, depth_chain, evaluator_is_shared_across_threads,
    fresh_noise_is_the_rounding, fused_product_equals_its_steps, hoisted_equals_separate,
};

use std::sync::Arc;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::ckks::Complex;
use crate::ckks::Context;
use crate::ckks::Evaluator;
use crate::ckks::KeygenOptions;
use fhe_api::ckks::entities::KeySet;
use fhe_api::ckks::params::Preset;
use fhe_api::ckks::Ciphertext;
use fhe_api::{Backend, Seed};

/// Rotation steps every suite key set carries.
pub const ROTATIONS: [i64; 5] = [1, 2, 3, 4, -1];

/// The preset `LUX_CKKS_PRESET` names, else `slots32768-scale40-depth34`: the one the
/// ignored measurements run by default. Panics on a name that is not a preset.
pub fn preset_from_env() -> Preset {
    std::env::var("LUX_CKKS_PRESET")
        .ok()
        .map(|s| s.parse().expect("LUX_CKKS_PRESET names a CKKS preset"))
        .unwrap_or(Preset::Slots32768Scale40Depth34)
}

/// Values in the unit disc from a seed.
pub fn random_values(count: usize, seed: u64) -> Vec<Complex> {
    let mut r = ChaCha20Rng::seed_from_u64(seed);
    let mut unit = || (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    (0..count).map(|_| Complex::new(unit() * 0.7, unit() * 0.7)).collect()
}

/// A context, keys (relin, [`ROTATIONS`], conjugation) and evaluator from a seed.
pub fn setup(backend: Arc<dyn Backend>, preset: Preset, seed: u64) -> (Context, KeySet, Evaluator) {
    let ctx = Context::from_preset(backend, preset).expect("context");
    let options = KeygenOptions { relin: true, rotations: ROTATIONS.to_vec(), conjugation: true };
    let keys = ctx.keygen_from_seed(&Seed::derive("lux-fhe-ckks-conformance", seed), &options).expect("keygen");
    let ev = ctx.evaluator(&keys.eval).expect("evaluator");
    (ctx, keys, ev)
}

pub(crate) fn encrypt(ctx: &Context, keys: &KeySet, values: &[Complex], seed: u64) -> Ciphertext {
    let pt = ctx.encode(values).expect("encode");
    ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("lux-fhe-ckks-encrypt", seed)).expect("encrypt")
}

pub(crate) fn rotate_plain(v: &[Complex], k: i64) -> Vec<Complex> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + k).rem_euclid(n) as usize]).collect()
}

/// Stamps the CKKS suite for one backend. `ckks_conformance_tests!(backend, oracle,
/// preset = Preset::X)` runs it; `ckks_conformance_tests!(unsupported = "why")`
/// stamps the same test names as `#[ignore]`d with the reason (a backend without the
/// capability is reported as skipped, never as a pass); `ckks_conformance_tests!(ignore =
/// "why", backend, oracle, preset = ...)` stamps the real tests `#[ignore]`d, for a
/// backend that needs a device (run with `--ignored` where there is one).
#[macro_export]
macro_rules! ckks_conformance_tests {
    (unsupported = $reason:literal) => {
        mod ckks_conformance {
            #[test]
            #[ignore = $reason]
            fn ckks_ops_match_plaintext() {}
            #[test]
            #[ignore = $reason]
            fn ckks_byte_equal_to_oracle() {}
            #[test]
            #[ignore = $reason]
            fn ckks_depth_chain() {}
            #[test]
            #[ignore = $reason]
            fn ckks_both_modes_evaluate_polynomials() {}
            #[test]
            #[ignore = $reason]
            fn ckks_rejects_misuse() {}
            #[test]
            #[ignore = $reason]
            fn ckks_other_key_sets_are_refused() {}
            #[test]
            #[ignore = $reason]
            fn ckks_keys_later_and_sparse_packing() {}
            #[test]
            #[ignore = $reason]
            fn ckks_ciphertexts_travel_as_bytes() {}
            #[test]
            #[ignore = $reason]
            fn ckks_keys_up_to_a_level_serve_the_same_words() {}
            #[test]
            #[ignore = $reason]
            fn ckks_insecure_circuits() {}
            #[test]
            #[ignore = $reason]
            fn ckks_insecure_bootstrap_sparse_secret() {}
            #[test]
            #[ignore = $reason]
            fn ckks_insecure_bootstrap_ternary_secret() {}
            #[test]
            #[ignore = $reason]
            fn ckks_insecure_bootstrap_byte_equal_to_oracle() {}
            #[test]
            #[ignore = $reason]
            fn ckks_insecure_functional_bootstrap() {}
            #[test]
            #[ignore = $reason]
            fn ckks_insecure_functional_bootstrap_byte_equal_to_oracle() {}
        }
    };
    (@stamp [$($attr:meta),*] $backend:expr, $oracle:expr, preset = $preset:expr) => {
        mod ckks_conformance {
            #[allow(unused_imports)]
            use super::*;
            use $crate::testing::ckks as suite;

            #[test]
            $(#[$attr])*
            fn ckks_ops_match_plaintext() {
                let report = suite::ops_match_plaintext($backend, $preset, 15.0);
                for r in report {
                    eprintln!("{}: {} {:.1} bits", $preset, r.op, r.bits);
                }
            }
            #[test]
            $(#[$attr])*
            fn ckks_hoisted_equals_separate() {
                suite::hoisted_equals_separate($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_fused_product_equals_its_steps() {
                suite::fused_product_equals_its_steps($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_fresh_noise_is_the_rounding() {
                suite::fresh_noise_is_the_rounding($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_depth_chain() {
                let bits = suite::depth_chain($backend, $preset, 10.0);
                eprintln!("{}: {bits:.1} bits after the whole chain", $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_byte_equal_to_oracle() {
                suite::byte_equal_to_oracle($backend, $oracle, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_rejects_misuse() {
                suite::rejects_misuse($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_evaluator_is_shared_across_threads() {
                suite::evaluator_is_shared_across_threads($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_both_modes_evaluate_polynomials() {
                suite::both_modes_evaluate_polynomials($backend, $preset, 15.0);
            }
            #[test]
            $(#[$attr])*
            fn ckks_other_key_sets_are_refused() {
                suite::other_key_sets_are_refused($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_keys_later_and_sparse_packing() {
                suite::keys_later_and_sparse_packing($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_ciphertexts_travel_as_bytes() {
                suite::ciphertexts_travel_as_bytes($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_keys_up_to_a_level_serve_the_same_words() {
                suite::keys_up_to_a_level_serve_the_same_words($backend, $preset);
            }
            #[test]
            $(#[$attr])*
            fn ckks_insecure_circuits() {
                let c = suite::circuits::insecure_chebyshev_series_match_f64($backend, 25.0);
                let l = suite::circuits::insecure_linear_transforms_match_plain($backend, 25.0);
                let s = suite::circuits::insecure_slot_sums_match_plain($backend, 20.0);
                eprintln!("Chebyshev {c:.1} bits, linear transforms {l:.1} bits, sums {s:.1} bits");
            }
            #[test]
            $(#[$attr])*
            fn ckks_insecure_bootstrap_sparse_secret() {
                let secret = fhe_api::ckks::params::SecretDist::SparseTernary { hamming_weight: 192 };
                let config = $crate::ckks::BootstrapConfig::default();
                let bits = suite::circuits::insecure_bootstrap_then_multiply($backend, secret, &config, 14.0);
                eprintln!("bootstrap (sparse ternary): {bits:.1} bits");
            }
            #[test]
            $(#[$attr])*
            fn ckks_insecure_bootstrap_ternary_secret() {
                let secret = fhe_api::ckks::params::SecretDist::Ternary;
                let config = $crate::ckks::BootstrapConfig::default();
                let sse = suite::circuits::insecure_bootstrap_then_multiply($backend, secret, &config, 13.0);
                let config = $crate::ckks::BootstrapConfig { encapsulation: None, ..config };
                let direct = suite::circuits::insecure_bootstrap_then_multiply($backend, secret, &config, 10.0);
                eprintln!(
                    "bootstrap (uniform ternary): {sse:.1} bits through a sparse secret, {direct:.1} bits without"
                );
            }
            #[test]
            $(#[$attr])*
            fn ckks_insecure_bootstrap_byte_equal_to_oracle() {
                suite::circuits::insecure_bootstrap_byte_equal_to_oracle($backend, $oracle);
            }
            #[test]
            $(#[$attr])*
            fn ckks_insecure_functional_bootstrap() {
                for (f, bits) in suite::functional::insecure_functional_bootstrap_each_function($backend, 20.0) {
                    eprintln!("functional bootstrap, {}: {bits:.1} bits", f.name());
                }
            }
            #[test]
            $(#[$attr])*
            fn ckks_insecure_functional_bootstrap_byte_equal_to_oracle() {
                suite::functional::insecure_functional_bootstrap_byte_equal_to_oracle($backend, $oracle);
            }
        }
    };
    // A backend whose suite needs a device: the same tests, each `#[ignore]`d with the
    // reason, for the device check to run with `--ignored`.
    (ignore = $reason:literal, $backend:expr, $oracle:expr, preset = $preset:expr) => {
        $crate::ckks_conformance_tests!(@stamp [ignore = $reason] $backend, $oracle, preset = $preset);
    };
    ($backend:expr, $oracle:expr, preset = $preset:expr) => {
        $crate::ckks_conformance_tests!(@stamp [] $backend, $oracle, preset = $preset);
    };
}
