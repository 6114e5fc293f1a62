//! The multi-bit kernel against a slot-by-slot computation, and a whole rotation against
//! a plain one (unfolded keys, every digit's NTT, the monomials from coefficient form).

use super::*;
use crate::tfhe::ginx64::Wide;
use fhe_api::ring::math::mul_mod;
use fhe_api::{ParamSet, Seed};
use rand_chacha::rand_core::{RngCore, SeedableRng};

const Q54: u64 = 18_014_398_509_404_161;

/// Random words, and all words `Q - 1` (the largest sums), with 3 and 7 terms and up
/// to 16 rows, with and without a dropped digit, for the 54-bit ring (limb kernels) and
/// a modulus without their form (the `u128` kernel).
#[test]
fn kernel_matches_a_direct_computation() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let n = 64;
    for (q, levels, dropped, terms, top) in [
        (Q54, 2, 0, 3, false),
        (Q54, 2, 0, 7, true),
        (Q54, 8, 0, 7, true),
        (Q54, 3, 0, 1, false),
        (Q54, 1, 1, 3, false),
        (Q54, 2, 1, 7, true),
        (Q54, 2, 1, 3, false),
        ((1 << 40) - 87, 2, 0, 7, false),
    ] {
        let w = Wide::new(q).unwrap();
        let rows = 2 * levels;
        let mut words = |len: usize| -> Vec<u64> {
            if top {
                vec![q - 1; len]
            } else {
                (0..len).map(|_| rng.next_u64() % q).collect()
            }
        };
        let (lower, eval) = (words(2 * (levels + dropped - 1) * n), words(2 * n));
        let keys = words(terms * rows * 2 * n);
        let mono = words(terms * n);
        let mut group = vec![0u64; keys.len()];
        interleave_group(&keys, terms, rows, n, &mut group);
        let r = Rows::whole(&lower, &eval, n, levels, dropped);
        let mut want = vec![0u64; 2 * n];
        for h in 0..2 {
            for j in 0..n {
                want[h * n + j] = (0..terms).fold(0, |acc, t| {
                    let ext = (0..rows).fold(0, |s, row| {
                        (s + mul_mod(r.row(row)[j], keys[((t * rows + row) * 2 + h) * n + j], q)) % q
                    });
                    (acc + mul_mod(ext, mono[t * n + j], q)) % q
                });
            }
        }
        for isa in Isa::available() {
            let mut upd = vec![0u64; 2 * n];
            kernel(isa, w, &r, &group, &mono, &mut upd, &mut Ahead::none());
            assert!(upd == want, "q {q}, {levels} levels, {dropped} dropped, {terms} terms, top {top}, {isa:?}");
            // A block of slots: those slots, the others untouched.
            let (mut part, slots) = (vec![u64::MAX; 2 * n], CHUNK..n - CHUNK);
            let rs = Rows { slots: slots.clone(), ..r };
            kernel(isa, w, &rs, &group, &mono, &mut part, &mut Ahead::none());
            for (j, (&got, &w)) in part.iter().zip(&want).enumerate() {
                let inside = slots.contains(&(j % n));
                assert_eq!(got, if inside { w } else { u64::MAX }, "slot {j}, {isa:?}");
            }
        }
    }
}

/// A whole rotation of a ciphertext whose mask is random in its first groups (and zero
/// after, so the test stays short) against a plain computation of the same formula:
/// the RGSW keys as keygen made them (not folded), the exact decomposition's digits
/// from `Ring::decompose` with the kept top `L` multiplied, `X^e - 1` transformed from
/// coefficient form. Every grouping factor (`M2C2`'s 1, 2, 3), word for word.
#[test]
fn rotation_matches_a_plain_computation() {
    let cpu = crate::CpuBackend::oracle();
    for set in ParamSet::PBS {
        let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-multi-bit", 0)).unwrap();
        let ring = Ring::new(set, "reference").unwrap();
        let prepared = crate::tfhe::bootstrap::prepare(&ring, &keys.ek).unwrap();
        let p = ring.params;
        let (n, rows, levels, q) = (ring.n(), p.rgsw_rows(), p.bsk_levels.0, ring.modulus.q);
        let (exact, dropped) = (p.bsk_exact_levels(), p.bsk_dropped_levels());
        assert_eq!((levels, dropped), (1, 1), "{set}: the rotation under test drops a digit");
        let (k, terms) = shape(&ring).unwrap();
        let groups = 3;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(set.id().into());
        let mut data = vec![0u32; p.n() + 1];
        for x in data[..groups * k].iter_mut().chain([&mut 0]) {
            *x = rng.next_u32() & p.q_lwe_mask();
        }
        data[p.n()] = rng.next_u32() & p.q_lwe_mask();
        data[1] = 0; // a zero coefficient inside a group
        let ct = LweCiphertext::from_raw(set, keys.ek.tag(), data).unwrap();
        let lut = Lut::from_coefficients(set, (0..n as u64).map(|m| m * 7919 % q).collect()).unwrap();
        let got =
            blind_rotate_batch(&ring, &prepared, std::slice::from_ref(&ct), &lut, &[0], BootstrapThreads::One).unwrap();

        // The plain rotation.
        let two_n = 2 * n;
        let (log2n, logq) = (two_n.trailing_zeros(), p.lwe_modulus_log.0);
        let mut acc = vec![0u64; 2 * n];
        initial_acc_b(&ring, &ct, &lut, &mut acc[n..]);
        for g in 0..groups {
            let a: Vec<usize> = (0..k).map(|j| ms_to_2n(ct.a()[g * k + j], logq, log2n)).collect();
            let mut all = vec![vec![0u64; n]; 2 * exact];
            for part in 0..2 {
                ring.decompose(&acc[part * n..(part + 1) * n], &mut all[part * exact..(part + 1) * exact]);
            }
            // Row `p L + l` multiplies digit `D + l` of part `p`.
            let mut digits: Vec<Vec<u64>> =
                (0..rows).map(|r| all[(r / levels) * exact + dropped + r % levels].clone()).collect();
            digits.iter_mut().for_each(|d| ring.ntt.forward(d));
            let mut upd = vec![0u64; 2 * n];
            for t in 1..=terms {
                let mut key = vec![0u64; 2 * rows * n];
                keys.ek.rgsw_key_rows(g * terms + t - 1, &mut key, |x| x);
                let e = (0..k).filter(|j| t >> j & 1 == 1).map(|j| a[j]).sum::<usize>() % two_n;
                // X^e - 1 in coefficient form: X^e = -X^(e - N) for e >= N.
                let mut mono = vec![0u64; n];
                mono[0] = q - 1;
                let (at, neg) = if e >= n { (e - n, true) } else { (e, false) };
                mono[at] = (mono[at] + if neg { q - 1 } else { 1 }) % q;
                ring.ntt.forward(&mut mono);
                for h in 0..2 {
                    for j in 0..n {
                        let ext =
                            (0..rows).fold(0, |s, r| (s + mul_mod(digits[r][j], key[(2 * r + h) * n + j], q)) % q);
                        upd[h * n + j] = (upd[h * n + j] + mul_mod(ext, mono[j], q)) % q;
                    }
                }
            }
            for (u, a) in upd.chunks_exact_mut(n).zip(acc.chunks_exact_mut(n)) {
                ring.ntt.inverse(u);
                a.iter_mut().zip(u.iter()).for_each(|(a, &u)| *a = (*a + u) % q);
            }
        }
        let want = crate::tfhe::bootstrap::sample_extract(&ring, keys.ek.tag(), &acc[..n], &acc[n..]);
        assert_eq!(got, vec![want], "{set}");
    }
}

/// The two-thread rotation against the one-thread one, word for word, on a ciphertext
/// with a random mask in every group: every grouping factor, a dropped digit included.
#[test]
fn duo_matches_one_thread() {
    let cpu = crate::CpuBackend::oracle();
    for set in ParamSet::PBS {
        let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-multi-bit-duo", 0)).unwrap();
        let ring = Ring::new(set, "reference").unwrap();
        let prepared = crate::tfhe::bootstrap::prepare(&ring, &keys.ek).unwrap();
        let p = ring.params;
        let (k, terms) = shape(&ring).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(set.id()) + 100);
        let mut data: Vec<u32> = (0..=p.n()).map(|_| rng.next_u32() & p.q_lwe_mask()).collect();
        data[..k].iter_mut().for_each(|x| *x = 0); // a group both threads skip
        let ct = LweCiphertext::from_raw(set, keys.ek.tag(), data).unwrap();
        let q = ring.modulus.q;
        let lut = Lut::from_coefficients(set, (0..ring.n() as u64).map(|m| m * 7919 % q).collect()).unwrap();
        let wide = ring.wide.unwrap();
        let one = blind_rotate(&ring, wide, &prepared, &ct, &lut, k, terms);
        let two = crate::tfhe::multi_bit_duo::blind_rotate(&ring, wide, &prepared, &ct, &lut, k, terms);
        assert!(one[..] == two[..], "{set}");
    }
}

/// Extraction at coefficient `j` is extraction at 0 of `X^-j ACC`: the same words, at
/// the first, a middle and the last coefficient.
#[test]
fn extraction_at_an_offset_reads_that_coefficient() {
    let ring = Ring::new(ParamSet::M2C2G2, "reference").unwrap();
    let (n, q) = (ring.n(), ring.modulus.q);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let acc: Vec<u64> = (0..2 * n).map(|_| rng.next_u64() % q).collect();
    let tag = fhe_api::KeyTag::derive(ParamSet::M2C2G2, &[7; 32]);
    for j in [0, 1, n / 4, n / 2, n - 1] {
        let (mut a, mut b) = (vec![0u64; n], vec![0u64; n]);
        crate::tfhe::ring::monomial_mul(&acc[..n], 2 * n - j, q, &mut a);
        crate::tfhe::ring::monomial_mul(&acc[n..], 2 * n - j, q, &mut b);
        let want = crate::tfhe::bootstrap::sample_extract(&ring, tag, &a, &b);
        let got = sample_extract_at(&ring, tag, &acc[..n], &acc[n..], j);
        assert_eq!(got, want, "j = {j}");
    }
}

/// A GINX set's ring is no multi-bit ring: a clear error, not a panic.
#[test]
fn a_ginx_set_is_refused() {
    let ring = Ring::new(ParamSet::PN11QP54, "reference").unwrap();
    let e = shape(&ring).unwrap_err().to_string();
    assert!(e.contains("PN11QP54") && e.contains("grouping factor"), "{e}");
}

/// The kernel's time per call on each ISA copy, N = 2048, 3 terms, 2 levels (run by
/// hand: `cargo test -p fhe-cpu --release kernel_time -- --ignored --nocapture`).
#[test]
#[ignore]
fn kernel_time_per_isa() {
    let (n, levels, terms, q) = (2048, 2, 3, Q54);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut words = |len: usize| -> Vec<u64> { (0..len).map(|_| rng.next_u64() % q).collect() };
    let (lower, eval, keys, mono) = (words(2 * n), words(2 * n), words(terms * 8 * n), words(terms * n));
    let mut group = vec![0u64; keys.len()];
    interleave_group(&keys, terms, 2 * levels, n, &mut group);
    let r = Rows::whole(&lower, &eval, n, levels, 0);
    let mut upd = vec![0u64; 2 * n];
    for isa in Isa::available() {
        let start = std::time::Instant::now();
        for _ in 0..200 {
            kernel(isa, Wide::new(q).unwrap(), &r, &group, &mono, &mut upd, &mut Ahead::none());
        }
        eprintln!("{isa:?}: {:.1} us a call", start.elapsed().as_secs_f64() * 1e6 / 200.0);
    }
}

/// A lone rotation's time on one and on two threads (run by hand:
/// `cargo test -p fhe-cpu --release duo_time -- --ignored --nocapture`).
#[test]
#[ignore]
fn duo_time() {
    let cpu = crate::CpuBackend::oracle();
    for set in ParamSet::PBS {
        let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-multi-bit-duo", 0)).unwrap();
        let ring = Ring::new(set, crate::ntt::default_variant()).unwrap();
        let prepared = crate::tfhe::bootstrap::prepare(&ring, &keys.ek).unwrap();
        let p = ring.params;
        let (k, terms) = shape(&ring).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let data: Vec<u32> = (0..=p.n()).map(|_| rng.next_u32() & p.q_lwe_mask()).collect();
        let ct = LweCiphertext::from_raw(set, keys.ek.tag(), data).unwrap();
        let lut = Lut::sign(set);
        let wide = ring.wide.unwrap();
        let time = |f: &dyn Fn()| {
            f();
            let s = std::time::Instant::now();
            (0..20).for_each(|_| f());
            s.elapsed().as_secs_f64() * 1e3 / 20.0
        };
        let one = time(&|| drop(blind_rotate(&ring, wide, &prepared, &ct, &lut, k, terms)));
        let two = time(&|| drop(crate::tfhe::multi_bit_duo::blind_rotate(&ring, wide, &prepared, &ct, &lut, k, terms)));
        eprintln!("{set}: one thread {one:.2} ms, two {two:.2} ms");
    }
}

/// Many-LUT reads of a GINX (gate) set's rotation are refused with a clear error; offset
/// 0 alone is the plain rotation.
#[test]
fn many_lut_on_a_ginx_set_is_unsupported() {
    use fhe_api::ops::BootstrapOps;
    use fhe_api::Backend;
    let cpu = crate::CpuBackend::oracle();
    let set = ParamSet::PN10QP27;
    let keys = fhe_schemes::tfhe::keygen_from_seed(&cpu, set, &Seed::derive("fhe-cpu-many-ginx", 0)).unwrap();
    let key = cpu.prepare(&keys.ek).unwrap();
    let ct = fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, true, &Seed::derive("fhe-cpu-many-ginx", 1)).unwrap();
    let lut = Lut::sign(set);
    let e = cpu.blind_rotate_batch_lut_at(&key, std::slice::from_ref(&ct), &lut, &[0, 512]).unwrap_err();
    assert!(e.to_string().contains("many-LUT") && e.to_string().contains(&cpu.name()), "{e}");
    let plain = cpu.blind_rotate_batch_lut(&key, std::slice::from_ref(&ct), &lut).unwrap();
    assert_eq!(cpu.blind_rotate_batch_lut_at(&key, std::slice::from_ref(&ct), &lut, &[0]).unwrap(), plain);
}
