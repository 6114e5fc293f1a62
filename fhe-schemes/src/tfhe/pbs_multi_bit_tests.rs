//! Programmable bootstrapping with a multi-bit key (`M2C2G2`, `M2C2G3`) on the CPU
//! backend: a random table on every message, the radix integers on the same key
//! unchanged, the bootstrapped noise against the model, and the keys through the format.

use std::sync::{Arc, OnceLock};

use fhe_api::format::{Decode, Encode};
use fhe_api::rng::{Seed, SplitMix64};
use fhe_api::{Backend, EvaluationKey, KeySet, ParamSet};
use fhe_cpu::CpuBackend;

use super::*;
use crate::integer::radix::{self, Propagation, RadixUint};
use crate::tfhe::keygen_from_seed;
use crate::tfhe::noise::predict_pbs;

/// One key set and prepared key per multi-bit set, shared by the tests of this binary.
pub(crate) fn fixture(set: ParamSet) -> &'static (KeySet, PbsKey) {
    static G2: OnceLock<(KeySet, PbsKey)> = OnceLock::new();
    static G3: OnceLock<(KeySet, PbsKey)> = OnceLock::new();
    let cell = match set {
        ParamSet::M2C2G2 => &G2,
        ParamSet::M2C2G3 => &G3,
        other => panic!("{other} is not a multi-bit set"),
    };
    cell.get_or_init(|| {
        let backend: Arc<dyn Backend> = Arc::new(CpuBackend::new(None).expect("the CPU backend"));
        let keys = keygen_from_seed(&*backend, set, &Seed::derive("lux-fhe-pbs-multi-bit", set.id().into())).unwrap();
        let key = PbsKey::new(backend, &keys.ek).expect("prepare");
        (keys, key)
    })
}

const SETS: [ParamSet; 2] = [ParamSet::M2C2G2, ParamSet::M2C2G3];

#[test]
fn random_table_on_every_message_decrypts_to_its_value() {
    for set in SETS {
        let (keys, key) = fixture(set);
        let mut rng = SplitMix64::new(0x5eed_0338 + u64::from(set.id()));
        let table: Vec<u64> = (0..16).map(|_| rng.below(16)).collect();
        let t = key.lut(|x| table[x as usize]).unwrap();
        let seed = Seed::derive("lux-fhe-pbs-multi-bit", 10 + u64::from(set.id()));
        let inputs: Vec<_> = (0..16).map(|m| encrypt_block_seeded(&keys.sk, m, &seed, m).unwrap()).collect();
        let out = key.apply_batch(&inputs, &t).unwrap();
        for (m, ct) in out.iter().enumerate() {
            assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), table[m], "{set}: f({m})");
        }
        // A second bootstrap of the outputs through a bivariate table of packed pairs
        // (4x + y, the largest combination the radix integers feed a bootstrap).
        let max = key.bivariate_lut(|x, y| x.max(y)).unwrap();
        let clean = key.apply_batch(&out, &key.lut(|x| x % 4).unwrap()).unwrap();
        let packed: Vec<_> = (0..15).map(|i| key.pack(&clean[i], &clean[i + 1]).unwrap()).collect();
        let maxed = key.apply_batch(&packed, &max).unwrap();
        for (i, ct) in maxed.iter().enumerate() {
            let want = (table[i] % 4).max(table[i + 1] % 4);
            assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), want, "{set}: max at {i}");
        }
    }
}

/// The radix integers take a `PbsKey` and nothing else: on a multi-bit key an add with
/// carries and a comparison decrypt right with no change to their code.
#[test]
fn radix_integers_run_unchanged_on_a_multi_bit_key() {
    let (keys, key) = fixture(ParamSet::M2C2G2);
    let (a, b) = (0xb7u128, 0x6eu128);
    let enc = |v: u128, i: u64| {
        let seed = Seed::derive("lux-fhe-pbs-multi-bit-radix", i);
        RadixUint::encrypt_limbs_seeded(&keys.sk, 8, &crate::integer::u128_limbs(v), &seed).unwrap()
    };
    let (x, y) = (enc(a, 1), enc(b, 2));
    let sum = radix::add::add(key, &x, &y, Propagation::Auto).unwrap();
    assert_eq!(sum.decrypt_u128(&keys.sk).unwrap(), (a + b) & 0xff);
    assert!(!radix::compare::lt(key, &x, &y).unwrap().decrypt(&keys.sk).unwrap());
}

/// The bootstrapped blocks' error against [`predict_pbs`]'s multi-bit blind rotation
/// (`2 (2^k - 1) / k` external products a coefficient against GINX's 4), in units of q.
#[test]
fn measured_noise_of_bootstrapped_blocks_matches_the_model() {
    for set in SETS {
        let (keys, key) = fixture(set);
        let p = set.params();
        let (q_ring, q) = (p.q_ring() as f64, p.q_lwe() as f64);
        let model = predict_pbs(p, 32, 1.0).bootstrapped_variance_q * (q / q_ring).powi(2);
        let count = 32u64;
        let seed = Seed::derive("lux-fhe-pbs-multi-bit", 20 + u64::from(set.id()));
        let blocks: Vec<_> = (0..count).map(|i| encrypt_block_seeded(&keys.sk, i % 16, &seed, i).unwrap()).collect();
        let out = key.apply_batch(&blocks, &key.lut(|x| x).unwrap()).unwrap();
        let mut sq = 0f64;
        for (i, ct) in out.iter().enumerate() {
            let want = key.encoding().encode(p.q_ring(), i as u64 % 16) as i128;
            let e = (block_phase(&keys.sk, ct).unwrap() as i128 - want).rem_euclid(p.q_ring() as i128);
            let e = if e > p.q_ring() as i128 / 2 { e - p.q_ring() as i128 } else { e };
            let e = e as f64 * q / q_ring;
            sq += e * e;
        }
        let var = sq / count as f64;
        eprintln!("{set} bootstrapped blocks ({count}): sd {:.1} (model {:.1}) units of q", var.sqrt(), model.sqrt());
        // 32 samples: about 25% on the variance (one standard error).
        assert!((0.4..1.7).contains(&(var / model)), "{set}: bootstrapped variance {var} vs model {model}");
    }
}

/// A multi-bit evaluation key round-trips through the byte format, its length is the
/// documented one, and damaged bytes (cut short, a set id of another shape, a word out
/// of range) are errors, never a panic.
#[test]
fn multi_bit_keys_round_trip_and_damage_is_an_error() {
    use fhe_api::format::ObjectKind;
    for (set, len) in [(ParamSet::M2C2G2, 41_869_352u64), (ParamSet::M2C2G3, 64_970_792)] {
        let ek = &fixture(set).0.ek;
        let bytes = ek.encode();
        assert_eq!(bytes.len() as u64, ObjectKind::EvaluationKey.encoded_len(set), "{set}");
        assert_eq!(ObjectKind::EvaluationKey.body_len(set), len, "{set}");
        assert_eq!(&EvaluationKey::decode(&bytes).unwrap(), ek, "{set}");
        let e = EvaluationKey::decode(&bytes[..bytes.len() - 1]).unwrap_err().to_string();
        assert!(e.contains("truncated") || e.contains("Truncated"), "{set}: {e}");
        // The other multi-bit set's id: its key has another length, refused by the header.
        let mut other = bytes.clone();
        let id = if set == ParamSet::M2C2G2 { ParamSet::M2C2G3.id() } else { ParamSet::M2C2G2.id() };
        other[10..12].copy_from_slice(&id.to_le_bytes());
        assert!(EvaluationKey::decode(&other).is_err(), "{set}");
        // The first bootstrap-key word set to Q: out of range.
        let mut bad = bytes;
        let at = fhe_api::format::HEADER_LEN + fhe_api::format::KEY_TAG_LEN + 32;
        bad[at..at + 8].copy_from_slice(&set.params().q_ring().to_le_bytes());
        let e = EvaluationKey::decode(&bad).unwrap_err().to_string();
        assert!(e.contains("range"), "{set}: {e}");
    }
}

/// One-thread time of a PBS (key switch and blind rotation of one block) on the three
/// sets (grouping 1, 2, 3), rounds interleaved; prints medians. A lab
/// measurement run by hand, never a CI assertion:
/// `cargo test -p fhe-schemes --release one_thread_pbs_time -- --ignored --nocapture`.
#[test]
#[ignore]
fn one_thread_pbs_time_per_grouping() {
    use fhe_cpu::tfhe::bootstrap::BootstrapThreads;
    let rounds: usize = std::env::var("LUX_PBS_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let backend: Arc<dyn Backend> =
        Arc::new(CpuBackend::new(None).unwrap().with_bootstrap_threads(BootstrapThreads::One));
    let sets = [ParamSet::M2C2, ParamSet::M2C2G2, ParamSet::M2C2G3];
    let fixtures: Vec<(KeySet, PbsKey)> = sets
        .iter()
        .map(|&set| {
            let keys = keygen_from_seed(&*backend, set, &Seed::derive("lux-fhe-pbs-timing", set.id().into())).unwrap();
            let key = PbsKey::new(backend.clone(), &keys.ek).unwrap();
            (keys, key)
        })
        .collect();
    let mut times = vec![Vec::new(); sets.len()];
    pool.install(|| {
        for round in 0..=rounds {
            for (i, (keys, key)) in fixtures.iter().enumerate() {
                let t = key.lut(|x| (x * 3 + 1) % 16).unwrap();
                let m = round as u64 % 16;
                let block =
                    encrypt_block_seeded(&keys.sk, m, &Seed::derive("lux-fhe-pbs-timing-ct", 0), round as u64).unwrap();
                let start = std::time::Instant::now();
                let out = key.apply_batch(std::slice::from_ref(&block), &t).unwrap();
                let dt = start.elapsed().as_secs_f64() * 1e3;
                assert_eq!(decrypt_block(&keys.sk, &out[0]).unwrap(), (m * 3 + 1) % 16);
                if round > 0 {
                    times[i].push(dt); // round 0 warms the caches
                }
            }
        }
    });
    for (set, t) in sets.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        eprintln!(
            "{set}: one-thread PBS median {:.1} ms (min {:.1}, max {:.1}, {} rounds)",
            t[t.len() / 2],
            t[0],
            t[t.len() - 1],
            t.len()
        );
    }
}
