//! Programmable bootstrapping on the CPU backend: encoding, tables on every message, and
//! the noise at the blind rotation's input measured against the model.

use std::sync::{Arc, OnceLock};

use fhe_api::rng::{Seed, SplitMix64};
use fhe_api::{Backend, KeySet, ParamSet};
use fhe_cpu::CpuBackend;

use super::*;
use crate::tfhe::keygen_from_seed;
use crate::tfhe::noise::predict_pbs;

/// One key set of `M2C2` and its prepared key, shared by every test of this binary.
pub(crate) fn fixture() -> &'static (KeySet, PbsKey) {
    static FIX: OnceLock<(KeySet, PbsKey)> = OnceLock::new();
    FIX.get_or_init(|| {
        let backend: Arc<dyn Backend> = Arc::new(CpuBackend::new(None).expect("the CPU backend"));
        let keys = keygen_from_seed(&*backend, ParamSet::M2C2, &Seed::derive("lux-fhe-pbs-tests", 0)).expect("keygen");
        let key = PbsKey::new(backend, &keys.ek).expect("prepare");
        (keys, key)
    })
}

#[test]
fn encoding_round_trips_every_slot() {
    let enc = Encoding::for_set(ParamSet::M2C2).unwrap();
    let q = ParamSet::M2C2.params().q_ring();
    assert_eq!((enc.message_modulus(), enc.modulus()), (4, 16));
    for m in 0..32 {
        assert_eq!(enc.decode(q, enc.encode(q, m)), m);
        // Less than half a slot either way still decodes to m.
        let slot = q / 32;
        assert_eq!(enc.decode(q, (enc.encode(q, m) + slot / 2 - 1) % q), m);
        assert_eq!(enc.decode(q, (enc.encode(q, m) + q - slot / 2 + 1) % q), m);
    }
}

#[test]
fn gate_sets_and_bad_tables_are_refused() {
    let e = Encoding::for_set(ParamSet::PN10QP27).unwrap_err().to_string();
    assert!(e.contains("M2C2"), "{e}");
    let e = lut(ParamSet::M2C2, |x| x + 1).unwrap_err().to_string();
    assert!(e.contains("f(15) = 16") && e.contains("padding"), "{e}");
    assert!(lut(ParamSet::PN11QP54, |x| x).is_err());
}

#[test]
fn table_value_on_every_phase_box() {
    // The table read at the centre of box k, and at both of its edges, is f(k); the
    // half box below 0 (the top of the wrap) reads f(0).
    let set = ParamSet::M2C2;
    let (n, q) = (set.params().big_n(), set.params().q_ring());
    let enc = Encoding::for_set(set).unwrap();
    let f = |x: u64| (x * 7 + 3) % 16;
    let t = lut(set, f).unwrap();
    let width = 2 * n / 32;
    for k in 0..16usize {
        let want = enc.encode(q, f(k as u64));
        for m in [k * width, k * width + width / 2 - 1, (k * width + 2 * n - width / 2) % (2 * n)] {
            assert_eq!(t.value(m), want, "k = {k}, m = {m}");
        }
    }
}

#[test]
fn random_table_on_every_message_decrypts_to_its_value() {
    let (keys, key) = fixture();
    let mut rng = SplitMix64::new(0x5eed_0038);
    let table: Vec<u64> = (0..16).map(|_| rng.below(16)).collect();
    let t = key.lut(|x| table[x as usize]).unwrap();
    let seed = Seed::derive("lux-fhe-pbs-tests", 1);
    let inputs: Vec<_> = (0..16).map(|m| encrypt_block_seeded(&keys.sk, m, &seed, m).unwrap()).collect();
    let out = key.apply_batch(&inputs, &t).unwrap();
    for (m, ct) in out.iter().enumerate() {
        assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), table[m], "f({m})");
    }
    // And a second bootstrap of the outputs, through a bivariate table of packed pairs
    // (the largest linear combination the radix integers use: 4x + y).
    let min = key.bivariate_lut(|x, y| x.min(y)).unwrap();
    let clean = key.apply_batch(&out, &key.lut(|x| x % 4).unwrap()).unwrap();
    let packed: Vec<_> = clean.windows(2).map(|w| key.pack(&w[0], &w[1]).unwrap()).collect();
    let got = key.apply_batch(&packed, &min).unwrap();
    for (i, ct) in got.iter().enumerate() {
        assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), (table[i] % 4).min(table[i + 1] % 4), "pair {i}");
    }
}

#[test]
fn apply_mixed_matches_one_table_at_a_time() {
    let (keys, key) = fixture();
    let seed = Seed::derive("lux-fhe-pbs-tests", 2);
    let cts: Vec<_> = (0..4).map(|m| encrypt_block_seeded(&keys.sk, m * 3, &seed, m).unwrap()).collect();
    let (carry, msg) = (key.lut(|x| x / 4).unwrap(), key.lut(|x| x % 4).unwrap());
    let jobs: Vec<_> = cts.iter().enumerate().map(|(i, c)| (c, if i % 2 == 0 { &carry } else { &msg })).collect();
    let mixed = key.apply_mixed(&jobs).unwrap();
    for (i, ct) in mixed.iter().enumerate() {
        let m = i as u64 * 3;
        let want = if i % 2 == 0 { m / 4 } else { m % 4 };
        assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), want);
        // Same words as the single-table batch: the grouping changes nothing.
        let one = key.apply_batch(std::slice::from_ref(&cts[i]), jobs[i].1).unwrap();
        assert_eq!(one[0], *ct);
    }
}

/// `x mod 2N` rounded as the CPU blind rotation does (round half up).
fn ms_to_2n(x: u32, logq: u32, log2n: u32) -> i64 {
    let shift = logq - log2n;
    (((x + (1 << (shift - 1))) >> shift) & ((1 << log2n) - 1)) as i64
}

#[test]
fn measured_noise_at_the_blind_rotation_input_matches_the_model() {
    // The failure probability is the tail of the error the blind rotation sees: a
    // block's key switch (units of q), then the mod switch to 2N. Both are measured on
    // key-switched fresh blocks and compared with `predict_pbs` (2-norm 1).
    let (keys, key) = fixture();
    let set = ParamSet::M2C2;
    let p = set.params();
    let (q, two_n) = (p.q_lwe() as i64, 2 * p.big_n() as i64);
    let (logq, log2n) = (p.lwe_modulus_log.0, (2 * p.big_n()).trailing_zeros());
    let model = predict_pbs(p, 32, 1.0);
    let count = 1000u64;
    let seed = Seed::derive("lux-fhe-pbs-tests", 3);
    let blocks: Vec<_> = (0..count).map(|i| encrypt_block_seeded(&keys.sk, i % 16, &seed, i).unwrap()).collect();
    let (backend, prepared) = key.prepared();
    let switched = backend.key_switch_batch(prepared, &blocks).unwrap();
    let centered = |x: i64, m: i64| {
        let x = x.rem_euclid(m);
        if x >= m / 2 {
            x - m
        } else {
            x
        }
    };
    let s = keys.sk.lwe();
    let (mut sum_q, mut sq_q, mut sum_2n, mut sq_2n) = (0f64, 0f64, 0f64, 0f64);
    for (i, ct) in switched.iter().enumerate() {
        let m = (i % 16) as i64;
        let e = centered(crate::tfhe::phase(&keys.sk, ct).unwrap() as i64 - m * q / 32, q) as f64;
        sum_q += e;
        sq_q += e * e;
        let mut ph = ms_to_2n(ct.b(), logq, log2n);
        for (&a, &si) in ct.a().iter().zip(s) {
            ph -= ms_to_2n(a, logq, log2n) * si as i64;
        }
        let e = centered(ph - m * two_n / 32, two_n) as f64;
        assert!(e.abs() < model.margin_2n, "block {i}: error {e} beyond the margin");
        sum_2n += e;
        sq_2n += e * e;
    }
    let c = count as f64;
    let var_q = sq_q / c - (sum_q / c).powi(2);
    let var_2n = sq_2n / c - (sum_2n / c).powi(2);
    // The mean of the mod switch's rounding: +2^-(shift+1) per word, b's once and each
    // a_i's once per secret 1 (subtracted).
    let ones = s.iter().filter(|&&x| x == 1).count() as f64;
    let bias = (1.0 - ones) / 2f64.powi((logq - log2n) as i32 + 1);
    tracing::info!(
        var_q,
        model_q = model.key_switch_variance_q,
        var_2n,
        model_2n = model.input_variance_2n,
        "PBS noise"
    );
    eprintln!(
        "M2C2 over {count} blocks: key switch sd {:.1} (model {:.1}) units of q; at the blind rotation sd {:.2} \
         (model {:.2}), mean {:.2} (model {:.2}) units of 2N; margin {}",
        var_q.sqrt(),
        model.key_switch_variance_q.sqrt(),
        var_2n.sqrt(),
        model.input_variance_2n.sqrt(),
        sum_2n / c,
        bias,
        model.margin_2n
    );
    // 1,000 samples: the variance is known to within about 4.5% (one standard error).
    let ratio_q = var_q / model.key_switch_variance_q;
    let ratio_2n = var_2n / model.input_variance_2n;
    assert!((0.7..1.3).contains(&ratio_q), "key switch variance {var_q} vs model {}", model.key_switch_variance_q);
    assert!((0.7..1.3).contains(&ratio_2n), "input variance {var_2n} vs model {}", model.input_variance_2n);
    let se = (model.input_variance_2n / c).sqrt();
    assert!((sum_2n / c - bias).abs() < 5.0 * se, "mean {} vs {bias}", sum_2n / c);
    assert!(bias.abs() <= model.bias_2n);
}

#[test]
fn measured_noise_of_bootstrapped_blocks_matches_the_model() {
    // A bootstrapped block's error is the blind rotation's (units of Q); it reaches the
    // next bootstrap scaled by the linear combination's 2-norm, so the model's
    // `bootstrapped_variance_q` is checked too, in units of q (as the key switch sees it).
    let (keys, key) = fixture();
    let p = ParamSet::M2C2.params();
    let (q_ring, q) = (p.q_ring() as f64, p.q_lwe() as f64);
    let enc = key.encoding();
    let model = predict_pbs(p, 32, 1.0).bootstrapped_variance_q * (q / q_ring).powi(2);
    let count = 48u64;
    let seed = Seed::derive("lux-fhe-pbs-tests", 4);
    let blocks: Vec<_> = (0..count).map(|i| encrypt_block_seeded(&keys.sk, i % 16, &seed, i).unwrap()).collect();
    let out = key.apply_batch(&blocks, &key.lut(|x| x).unwrap()).unwrap();
    let mut sq = 0f64;
    for (i, ct) in out.iter().enumerate() {
        let want = enc.encode(p.q_ring(), i as u64 % 16) as i128;
        let e = (block_phase(&keys.sk, ct).unwrap() as i128 - want).rem_euclid(p.q_ring() as i128);
        let e = if e > p.q_ring() as i128 / 2 { e - p.q_ring() as i128 } else { e };
        let e = e as f64 * q / q_ring;
        sq += e * e;
    }
    let var = sq / count as f64;
    eprintln!("M2C2 bootstrapped blocks ({count}): sd {:.1} (model {:.1}) units of q", var.sqrt(), model.sqrt());
    // 48 samples: about 20% on the variance (one standard error); the model's digits
    // are an upper estimate (E[d^2] of a full digit for the top one too).
    assert!((0.4..1.6).contains(&(var / model)), "bootstrapped variance {var} vs model {model}");
}

#[test]
fn m2c2_objects_round_trip_through_the_format() {
    // 4-byte LWE words (q = 2^20) for the keys and the key-switched ciphertexts; blocks
    // are extracted LWE ciphertexts with 8-byte ring words.
    use fhe_api::format::{Decode, Encode};
    use fhe_api::{EvaluationKey, ExtractedLwe, LweCiphertext, PublicKey, SecretKey};
    let (keys, key) = fixture();
    assert_eq!(EvaluationKey::decode(&keys.ek.encode()).unwrap(), keys.ek);
    assert_eq!(PublicKey::decode(&keys.pk.encode()).unwrap(), keys.pk);
    assert_eq!(SecretKey::decode(&keys.sk.encode()).unwrap(), keys.sk);
    let block = encrypt_block_seeded(&keys.sk, 9, &Seed::derive("lux-fhe-pbs-tests", 5), 0).unwrap();
    assert_eq!(ExtractedLwe::decode(&block.encode()).unwrap(), block);
    let (backend, prepared) = key.prepared();
    let small = backend.key_switch_batch(prepared, std::slice::from_ref(&block)).unwrap().remove(0);
    assert!(small.as_words().iter().any(|&w| w > u16::MAX as u32), "words use more than 16 bits");
    assert_eq!(LweCiphertext::decode(&small.encode()).unwrap(), small);
}

#[test]
fn narrow_key_switching_rows_of_a_wide_set_are_an_error() {
    // M2C2's LWE words are 20 bits: the 16-bit rows would truncate them, so the narrow
    // reader refuses (it panicked before) and names the wide one, which reads them.
    let (keys, _) = fixture();
    let p = ParamSet::M2C2.params();
    let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1) * (p.n() + 1);
    let e = keys.ek.ksk_rows(0, &mut vec![0u16; per_j]).unwrap_err();
    assert!(matches!(e, fhe_api::Error::InvalidInput(_)), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("M2C2") && msg.contains("ksk_rows_wide"), "{msg}");
    let mut wide = vec![0u32; per_j];
    keys.ek.ksk_rows_wide(0, &mut wide);
    assert!(wide.iter().any(|&w| w > u16::MAX as u32), "the rows need more than 16 bits");
}

#[test]
fn apply_indexed_gives_apply_mixed_words_from_shared_inputs() {
    // Two tables reading one input key-switch it once; the words are those of one job
    // per pair, and an index past the inputs is an error, not a panic.
    let (keys, key) = fixture();
    let seed = Seed::derive("lux-fhe-pbs-tests", 6);
    let cts: Vec<_> = (0..2).map(|m| encrypt_block_seeded(&keys.sk, 5 + m, &seed, m).unwrap()).collect();
    let (carry, msg) = (key.lut(|x| x / 4).unwrap(), key.lut(|x| x % 4).unwrap());
    let out = key.apply_indexed(&cts, &[(1, &msg), (0, &carry), (1, &carry)]).unwrap();
    let want = key.apply_mixed(&[(&cts[1], &msg), (&cts[0], &carry), (&cts[1], &carry)]).unwrap();
    assert_eq!(out, want);
    let values: Vec<u64> = out.iter().map(|c| decrypt_block(&keys.sk, c).unwrap()).collect();
    assert_eq!(values, [2, 1, 1]);
    let e = key.apply_indexed(&cts, &[(2, &msg)]).unwrap_err().to_string();
    assert!(e.contains("input 2 of 2"), "{e}");
}

/// A many-LUT of 2 and of 4 functions on every message below its bound: each output
/// decrypts to its function's value, and the output read at offset 0 has the words of a
/// plain PBS of the many-LUT's test polynomial.
#[test]
fn many_lut_gives_every_function_on_every_message() {
    let (keys, key) = fixture();
    let seed = Seed::derive("lux-fhe-pbs-many", 0);
    let fs: [&dyn Fn(u64) -> u64; 4] = [&|x| x % 4, &|x| x / 4, &|x| (x * 5 + 1) % 16, &|x| 15 - x];
    for count in [2usize, 4] {
        let many = key.many_lut(&fs[..count]).unwrap();
        assert_eq!((many.len(), many.bound()), (count, 16 / count as u64));
        let blocks: Vec<_> =
            (0..many.bound()).map(|m| encrypt_block_seeded(&keys.sk, m, &seed, m)).collect::<Result<_>>().unwrap();
        let out = key.apply_many(&blocks, &many).unwrap();
        for (m, outs) in out.iter().enumerate() {
            for (j, ct) in outs.iter().enumerate() {
                assert_eq!(decrypt_block(&keys.sk, ct).unwrap(), fs[j](m as u64), "{count} functions, m {m}, f{j}");
            }
        }
        let first = key.apply_batch(&blocks, many.lut()).unwrap();
        assert!(out.iter().zip(&first).all(|(o, f)| o[0] == *f), "{count} functions: offset 0 is the plain rotation");
    }
}

#[test]
fn bad_many_luts_are_refused() {
    let (_, key) = fixture();
    let e = key.many_lut(&[]).unwrap_err().to_string();
    assert!(e.contains("1 to 8 functions"), "{e}");
    let f = |x: u64| x;
    let nine: Vec<&dyn Fn(u64) -> u64> = vec![&f; 9];
    assert!(key.many_lut(&nine).unwrap_err().to_string().contains("not 9"));
    let e = key.many_lut(&[&|x| x, &|x| x + 9]).unwrap_err().to_string();
    assert!(e.contains("function 1: f(7) = 16"), "{e}");
}
