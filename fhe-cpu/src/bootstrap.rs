//! Prepared keys, blind rotation (GINX with ternary secrets) and sample extraction.
//!
//! For each LWE coefficient `a_i` (mod-switched to `2N`), with RGSW keys `K+ = RGSW(s_i
//! == 1)` and `K- = RGSW(s_i == -1)`:
//! `ACC <- ACC + (X^a - 1) (ACC [x] K+) + (X^-a - 1) (ACC [x] K-)`, which multiplies the
//! accumulator's phase by `X^(a s_i)`. Both external products share one gadget
//! decomposition of `ACC`; the monomials are applied in evaluation form; two inverse
//! NTTs per coefficient.
//!
//! Two paths run the same steps on different words ([`Word`]): rings with `Q < 2^29`
//! (the 25- and 27-bit sets) on `u32` ([`crate::kernels`]), the 54-bit ring on `u64`
//! ([`crate::wide`]). On both, the key pair of each coefficient is interleaved for one
//! front-to-back read, and a batch runs in groups that share each key pair's read (see
//! [`blind_rotate_batch`]).
//!
//! Both paths skip the top digit's NTT. The digits recompose the accumulator,
//! `ACC = sum_l B^l d_l` (mod `Q`), so with `top = L - 1`
//! `sum_l NTT(d_l) K_l = sum_(l<top) NTT(d_l) (K_l - B^(l-top) K_top) + NTT(ACC) B^-top K_top`:
//! the prepared key holds those folded rows ([`fold_top_digit`]) and the step keeps
//! `NTT(ACC)` up to date by adding each update's evaluation form, which the GINX
//! kernel produces anyway. The products are equal modulo `Q`, so the words are the
//! same; one step runs `2(L-1)` forward NTTs instead of `2L`.

use rayon::prelude::*;

use fhe_api::{EvaluationKey, ExtractedLwe, LweCiphertext, Result};

use crate::kernels::Ahead;
use crate::kernels::Aligned;
use crate::ring::{monomial_mul, Ring};

/// The CPU's form of an evaluation key: every coefficient's RGSW key pair, folded
/// ([`fold_top_digit`]) and interleaved, and full key-switching samples.
pub struct CpuPrepared {
    /// For the 54-bit ring (empty otherwise): `[coefficient][pair]`, each pair `(K+, K-)`
    /// in the [`crate::wide::interleave_pair`] layout.
    pub(crate) bsk: Aligned<u64>,
    /// For moduli below `2^29` (empty otherwise): 32-bit words, `[coefficient][pair]`,
    /// each pair `(K+, K-)` in the [`crate::kernels::interleave_pair`] layout.
    pub(crate) bsk32: Aligned<u32>,
    /// `[sample][n + 1]`, `a` then `b`.
    pub(crate) ksk: Aligned<u16>,
}

pub fn prepare(ring: &Ring, ek: &EvaluationKey) -> CpuPrepared {
    let ksk = crate::keyswitch::prepare_ksk(ring, ek);
    if ring.small.is_some() {
        // Residues below 2^29: 32-bit words (half the memory to stream per bootstrap).
        let bsk32 = interleaved_pairs(ring, ek, |kp, km, n, out| {
            let [kp, km] = [kp, km].map(|k| k.iter().map(|&x| x as u32).collect::<Vec<u32>>());
            crate::kernels::interleave_pair(&kp, &km, n, crate::kernels::CHUNK, out);
        });
        CpuPrepared { bsk: Aligned::default(), bsk32, ksk }
    } else {
        let bsk = interleaved_pairs(ring, ek, crate::wide::interleave_pair);
        CpuPrepared { bsk, bsk32: Aligned::default(), ksk }
    }
}

/// Every coefficient's key pair, folded and laid out by `interleave(K+, K-, N, out)`,
/// on all cores.
fn interleaved_pairs<W: Copy + Default + Send>(
    ring: &Ring,
    ek: &EvaluationKey,
    interleave: impl Fn(&[u64], &[u64], usize, &mut [W]) + Sync,
) -> Aligned<W> {
    let per_key = 2 * ring.params.rgsw_rows() * ring.n();
    let mut bsk = Aligned::zeroed_huge(2 * ring.params.bsk_b_len());
    bsk.par_chunks_mut(2 * per_key).enumerate().for_each(|(i, out)| {
        let (mut kp, mut km) = (vec![0u64; per_key], vec![0u64; per_key]);
        ek.rgsw_key_rows(2 * i, &mut kp, |x| x);
        ek.rgsw_key_rows(2 * i + 1, &mut km, |x| x);
        fold_top_digit(ring, &mut kp);
        fold_top_digit(ring, &mut km);
        interleave(&kp, &km, ring.n(), out);
    });
    bsk
}

/// One RGSW key (`[row][half][slot]`, evaluation form, row `p L + l` for part `p` of
/// the accumulator and level `l`) rewritten for a step that multiplies `NTT(ACC_p)`
/// in place of the top digit's NTT (module docs): `K_l <- K_l - B^(l-top) K_top` for
/// `l < top`, `K_top <- B^-top K_top`.
fn fold_top_digit(ring: &Ring, key: &mut [u64]) {
    use fhe_api::math::{inv_mod, mul_mod, pow_mod};
    let (n, q, levels) = (ring.n(), ring.modulus.q, ring.params.bsk_levels.0);
    let top = levels - 1;
    let b_inv = inv_mod(ring.params.bsk_base() % q, q);
    for part in key.chunks_exact_mut(levels * 2 * n) {
        let (lower, top_row) = part.split_at_mut(top * 2 * n);
        for (l, row) in lower.chunks_exact_mut(2 * n).enumerate() {
            let c = pow_mod(b_inv, (top - l) as u64, q);
            for (x, &k) in row.iter_mut().zip(top_row.iter()) {
                *x = (*x + q - mul_mod(c, k, q)) % q;
            }
        }
        let c = pow_mod(b_inv, top as u64, q);
        top_row.iter_mut().for_each(|x| *x = mul_mod(c, *x, q));
    }
}

/// Mod switch `q -> 2N` (both powers of two): round half up.
#[inline]
fn ms_to_2n(x: u32, logq: u32, log2n: u32) -> usize {
    let shift = logq - log2n;
    (((x + (1 << (shift - 1))) >> shift) & ((1 << log2n) - 1)) as usize
}

pub fn blind_rotate(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext) -> ExtractedLwe {
    blind_rotate_group(ring, key, std::slice::from_ref(ct)).pop().expect("one output")
}

/// The `b` half of the starting accumulator `ACC = (0, X^-b TV)`, with the test vector
/// `TV = round(Q/8)` in every coefficient.
fn initial_acc_b(ring: &Ring, ct: &LweCiphertext, out: &mut [u64]) {
    let p = ring.params;
    let (q, two_n) = (ring.modulus.q, 2 * p.big_n());
    let b = ms_to_2n(ct.b(), p.lwe_modulus_log.0, two_n.trailing_zeros());
    let tv = vec![(q + 4) / 8; p.big_n()];
    monomial_mul(&tv, (two_n - b) % two_n, q, out);
}

/// Coefficient 0 of the accumulator as an LWE ciphertext under the ring secret:
/// `a'_0 = a_0`, `a'_i = -a_(N-i)`, `b' = b_0`.
pub fn sample_extract(ring: &Ring, acc_a: &[u64], acc_b: &[u64]) -> ExtractedLwe {
    let q = ring.modulus.q;
    let big_n = ring.n();
    let mut data = Vec::with_capacity(big_n + 1);
    data.push(acc_a[0]);
    for i in 1..big_n {
        let x = acc_a[big_n - i];
        data.push(if x == 0 { 0 } else { q - x });
    }
    data.push(acc_b[0]);
    ExtractedLwe::from_raw(ring.set, data).expect("extraction yields N + 1 residues")
}

/// The accumulator and scratch of one ciphertext's blind rotation, each on cache-line
/// boundaries ([`Aligned`]; every row is a whole number of lines, so all are).
struct State<W> {
    /// `[part][slot]`, coefficient form.
    acc: Aligned<W>,
    /// `NTT(acc)`, `[part][slot]`.
    eval: Aligned<W>,
    /// NTTs of the lower digits, `[part][level < L - 1][slot]`.
    digits: Aligned<W>,
    mono_p: Aligned<W>,
    mono_m: Aligned<W>,
    upd: Aligned<W>,
}

impl<W: Copy + Default> State<W> {
    /// Zeroed buffers for a ring of `n` slots and `rows` RGSW rows.
    fn zeroed(n: usize, rows: usize) -> State<W> {
        State {
            acc: Aligned::zeroed(2 * n),
            eval: Aligned::zeroed(2 * n),
            digits: Aligned::zeroed((rows - 2) * n),
            mono_p: Aligned::zeroed(n),
            mono_m: Aligned::zeroed(n),
            upd: Aligned::zeroed(2 * n),
        }
    }
}

/// The word of one blind-rotation path (module docs): what differs between them.
trait Word: Copy + Default + Into<u64> + Send + Sync {
    /// A residue of this ring as a word.
    fn narrow(x: u64) -> Self;
    /// This path's prepared key pairs.
    fn pairs(key: &CpuPrepared) -> &[Self];
    /// In-place forward NTT of one polynomial (the starting `NTT(ACC)`).
    fn forward(ring: &Ring, a: &mut [Self]);
    /// Where [`prefetch_window`] starts, in eighths of a pair past the start of the
    /// step's own pair.
    const WINDOW_EIGHTHS: usize;
    /// The prefetch of [`prefetch_window`]'s words, spread over a step.
    fn ahead(next: &[Self]) -> Ahead<'_>;
    /// One GINX step (`a != 0`) of one ciphertext with its coefficient's folded pair.
    fn step(ring: &Ring, a: usize, pair: &[Self], s: &mut State<Self>, ahead: &mut Ahead);
}

impl Word for u32 {
    /// Half a pair: the second half of the step's own pair, then the first half of the
    /// next (see [`prefetch_window`]).
    const WINDOW_EIGHTHS: usize = 4;
    fn narrow(x: u64) -> u32 {
        x as u32
    }
    fn pairs(key: &CpuPrepared) -> &[u32] {
        &key.bsk32
    }
    fn forward(ring: &Ring, a: &mut [u32]) {
        ring.ntt.forward32(a, &mut Ahead::none());
    }
    fn ahead(next: &[u32]) -> Ahead<'_> {
        Ahead::new(next)
    }
    fn step(ring: &Ring, a: usize, pair: &[u32], s: &mut State<u32>, ahead: &mut Ahead) {
        step_small(ring, ring.small.expect("the 32-bit path"), a, pair, s, ahead);
    }
}

impl Word for u64 {
    /// The step's own pair: its 640 KiB (`PN11QP54`) arrive during the step's eight
    /// forward NTTs, about 60 us, and only one pair is in the second-level cache.
    const WINDOW_EIGHTHS: usize = 0;
    fn narrow(x: u64) -> u64 {
        x
    }
    fn pairs(key: &CpuPrepared) -> &[u64] {
        &key.bsk
    }
    fn forward(ring: &Ring, a: &mut [u64]) {
        ring.ntt.forward(a);
    }
    fn ahead(next: &[u64]) -> Ahead<'_> {
        Ahead::new(next)
    }
    fn step(ring: &Ring, a: usize, pair: &[u64], s: &mut State<u64>, ahead: &mut Ahead) {
        step_wide(ring, a, pair, s, ahead);
    }
}

/// Blind rotation of a group of ciphertexts, coefficient by coefficient, so each key
/// pair (128 KiB for `PN10QP27`, 640 KiB for `PN11QP54`) is read from memory once for the
/// whole group and then from cache.
fn blind_rotate_group(ring: &Ring, key: &CpuPrepared, cts: &[LweCiphertext]) -> Vec<ExtractedLwe> {
    if ring.small.is_some() {
        blind_rotate_words::<u32>(ring, key, cts)
    } else {
        blind_rotate_words::<u64>(ring, key, cts)
    }
}

fn blind_rotate_words<W: Word>(ring: &Ring, key: &CpuPrepared, cts: &[LweCiphertext]) -> Vec<ExtractedLwe> {
    let p = ring.params;
    let (big_n, rows) = (p.big_n(), p.rgsw_rows());
    let two_n = 2 * big_n;
    let log2n = two_n.trailing_zeros();
    let logq = p.lwe_modulus_log.0;
    let mut start = vec![0u64; big_n];
    let mut states: Vec<State<W>> = cts
        .iter()
        .map(|ct| {
            initial_acc_b(ring, ct, &mut start);
            let mut s = State::zeroed(big_n, rows);
            s.acc[big_n..].iter_mut().zip(&start).for_each(|(o, &x)| *o = W::narrow(x));
            s.eval.copy_from_slice(&s.acc); // NTT(0) = 0 for the `a` part
            W::forward(ring, &mut s.eval[big_n..]);
            s
        })
        .collect();
    let pairs = W::pairs(key);
    let pair_len = 2 * rows * 2 * big_n;
    for (i, pair) in pairs.chunks_exact(pair_len).enumerate().take(p.n()) {
        let mut ahead = W::ahead(prefetch_window::<W>(pairs, pair_len, i));
        for (s, ct) in states.iter_mut().zip(cts) {
            let a = ms_to_2n(ct.a()[i], logq, log2n);
            if a == 0 {
                continue; // X^0 - 1 = 0: the step is the identity.
            }
            W::step(ring, a, pair, s, &mut ahead);
        }
        ahead.rest();
    }
    states
        .iter()
        .map(|s| {
            let wide: Vec<u64> = s.acc.iter().map(|&x| x.into()).collect();
            sample_extract(ring, &wide[..big_n], &wide[big_n..])
        })
        .collect()
}

/// What step `i` prefetches: a pair's worth of words from `W::WINDOW_EIGHTHS` eighths
/// into its own pair, so the part its GINX kernel reads last, and then the next pair's
/// first part. Measured on the development Xeon (`time_bootstrap_phases`, alternated
/// rounds, eighths of the step's own pair in the window): PN10QP27 0: 9.36-10.18 ms,
/// 2: 9.23-9.39, 4: 8.51-9.51, 6: 8.73-9.24, 7: 9.64-10.05, 8: 10.69-11.15; PN11QP54 0:
/// 89.1-93.9 ms, 2: 88.8-89.6, 4: 81.6-90.0, 6: 80.1-83.5, 7: 74.3-76.8, 8: 75.4-75.8.
/// A short step needs the lead; a long one is better served keeping one pair in cache.
fn prefetch_window<W: Word>(pairs: &[W], pair_len: usize, i: usize) -> &[W] {
    let start = i * pair_len + pair_len * W::WINDOW_EIGHTHS / 8;
    pairs.get(start..(start + pair_len).min(pairs.len())).unwrap_or(&[])
}

/// One GINX step of one ciphertext on the 32-bit path (`a != 0`): `pair` is the
/// coefficient's folded key pair, `ahead` the prefetch of [`prefetch_window`].
fn step_small(
    ring: &Ring,
    br: crate::kernels::SmallBarrett,
    a: usize,
    pair: &[u32],
    s: &mut State<u32>,
    ahead: &mut Ahead,
) {
    let n = ring.n();
    let levels = ring.params.bsk_levels.0;
    let q32 = br.q as u32;
    // The lower digits only: `NTT(ACC)` stands in for the top one (module docs).
    for (acc, lower) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut((levels - 1) * n)) {
        crate::kernels::decompose(ring.isa, q32, ring.params.bsk_base_log.0, levels, acc, lower);
        for d in lower.chunks_exact_mut(n) {
            ring.ntt.forward32(d, ahead);
        }
    }
    ring.monomials_minus_one32(a, &mut s.mono_p, &mut s.mono_m);
    // Also `eval += upd`, so `eval` stays `NTT(acc)`.
    let mono = [&s.mono_p[..], &s.mono_m[..]];
    let rows = crate::kernels::Rows { lower: &s.digits, eval: &mut s.eval };
    crate::kernels::ginx_step(ring.isa, br, rows, pair, mono, &mut s.upd, ahead);
    for u in s.upd.chunks_exact_mut(n) {
        ring.ntt.inverse32(u, ahead);
    }
    crate::kernels::add_mod(ring.isa, q32, &mut s.acc, &s.upd);
}

/// [`step_small`] on the 54-bit ring's 64-bit words ([`crate::wide`]).
fn step_wide(ring: &Ring, a: usize, pair: &[u64], s: &mut State<u64>, ahead: &mut Ahead) {
    let (n, q) = (ring.n(), ring.modulus.q);
    let levels = ring.params.bsk_levels.0;
    for (acc, lower) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut((levels - 1) * n)) {
        crate::wide::decompose_lower(ring.isa, q, ring.params.bsk_base_log.0, levels, acc, lower);
        for d in lower.chunks_exact_mut(n) {
            ring.ntt.forward_streaming(d, ahead);
        }
    }
    ring.monomial_minus_one(a, &mut s.mono_p);
    ring.monomial_minus_one(2 * n - a, &mut s.mono_m);
    let mono = [&s.mono_p[..], &s.mono_m[..]];
    let rows = crate::wide::Rows { lower: &s.digits, eval: &mut s.eval };
    let wide = ring.wide.expect("the 64-bit path");
    crate::wide::ginx_step(ring.isa, wide, rows, pair, mono, &mut s.upd, ahead);
    for u in s.upd.chunks_exact_mut(n) {
        ring.ntt.inverse_streaming(u, ahead);
    }
    crate::wide::add_mod(q, &mut s.acc, &s.upd);
}

/// Ciphertexts per group: enough to share each key pair's read among several, few
/// enough that every core gets a group.
const MAX_GROUP: usize = 8;

pub fn blind_rotate_batch(ring: &Ring, key: &CpuPrepared, inputs: &[LweCiphertext]) -> Result<Vec<ExtractedLwe>> {
    let group = inputs.len().div_ceil(rayon::current_num_threads()).clamp(1, MAX_GROUP);
    Ok(inputs.par_chunks(group).flat_map_iter(|g| blind_rotate_group(ring, key, g)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{decompose, ginx_step, Rows};
    use fhe_api::ParamSet;
    use std::time::Instant;

    /// The folded key against the direct external product: for a random accumulator
    /// and key, `sum_l NTT(d_l) K_l` equals the folded sum that uses `NTT(ACC)` for the
    /// top digit, in every slot of both halves (the identity `step_small` rests on).
    #[test]
    fn folded_key_gives_the_same_external_product() {
        use rand_chacha::rand_core::{RngCore, SeedableRng};
        for set in [ParamSet::PN10QP27, ParamSet::PN10QP25Q, ParamSet::PN11QP54] {
            let ring = Ring::new(set, "reference").unwrap();
            let (n, rows, levels, m) = (ring.n(), ring.params.rgsw_rows(), ring.params.bsk_levels.0, ring.modulus);
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(set.id()));
            let mut random = |len: usize| -> Vec<u64> { (0..len).map(|_| rng.next_u64() % m.q).collect() };
            let (acc, key) = (random(2 * n), random(rows * 2 * n));
            let mut folded = key.clone();
            fold_top_digit(&ring, &mut folded);
            let mut digits = vec![vec![0u64; n]; rows];
            let mut evals = vec![vec![0u64; n]; 2];
            for part in 0..2 {
                ring.decompose(&acc[part * n..(part + 1) * n], &mut digits[part * levels..(part + 1) * levels]);
                evals[part].copy_from_slice(&acc[part * n..(part + 1) * n]);
                ring.ntt.forward(&mut evals[part]);
            }
            digits.iter_mut().for_each(|d| ring.ntt.forward(d));
            for half in 0..2 {
                for j in 0..n {
                    let k = |key: &[u64], r: usize| key[(2 * r + half) * n + j];
                    let direct = (0..rows).fold(0, |s, r| m.add(s, m.mul(digits[r][j], k(&key, r))));
                    let via_acc = (0..rows).fold(0, |s, r| {
                        let d = if r % levels == levels - 1 { evals[r / levels][j] } else { digits[r][j] };
                        m.add(s, m.mul(d, k(&folded, r)))
                    });
                    assert_eq!(direct, via_acc, "{set} half {half} slot {j}");
                }
            }
        }
    }

    /// Where one blind rotation's time goes on the 32-bit path: the real step over 556
    /// key pairs streamed from memory as in a bootstrap, then each phase of it timed
    /// alone. Prints only (a timing, not a check):
    /// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture time_step_phases`.
    #[test]
    #[ignore = "timing; run by hand"]
    fn time_step_phases() {
        let ring = Ring::new(ParamSet::PN10QP27, "avx512").unwrap();
        let (n, rows, pairs) = (ring.n(), ring.params.rgsw_rows(), ring.params.n());
        let levels = rows / 2;
        let q = ring.modulus.q;
        let br = ring.small.unwrap();
        let pair_len = 4 * rows * n;
        let mut key = Aligned::<u32>::zeroed_huge(pairs * pair_len);
        key.iter_mut().enumerate().for_each(|(i, k)| *k = (i as u64 * 2_654_435_761 % q) as u32);
        let mut s = State::<u32>::zeroed(n, rows);
        for (v, m) in [(&mut s.acc, 7_777_777), (&mut s.eval, 5_555_555)] {
            v.iter_mut().enumerate().for_each(|(i, x)| *x = (i as u64 * m % q) as u32);
        }
        let mut best = f64::MAX;
        for _ in 0..5 {
            let whole = Instant::now();
            for (i, pair) in key.chunks_exact(pair_len).enumerate() {
                let mut ahead = Ahead::new(prefetch_window::<u32>(&key, pair_len, i));
                step_small(&ring, br, 1 + 2 * i, pair, &mut s, &mut ahead);
                ahead.rest();
            }
            best = best.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
        }
        println!("step_small: {best:.2} us per step (best of 5 x 556)");
        // The same steps with one pair for all (in cache): what the step costs when
        // memory is not in the way.
        let mut cached = f64::MAX;
        for _ in 0..5 {
            let whole = Instant::now();
            for i in 0..pairs {
                step_small(&ring, br, 1 + 2 * i, &key[..pair_len], &mut s, &mut Ahead::none());
            }
            cached = cached.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
        }
        println!("step_small, one pair from cache: {cached:.2} us per step (best of 5 x 556)");
        let mut touched = f64::MAX;
        for _ in 0..5 {
            let whole = Instant::now();
            for i in 0..pairs {
                let mut ahead = Ahead::new(&key[pair_len..2 * pair_len]);
                step_small(&ring, br, 1 + 2 * i, &key[..pair_len], &mut s, &mut ahead);
                ahead.rest();
            }
            touched = touched.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
        }
        println!("step_small, two pairs from cache, prefetching: {touched:.2} us per step (best of 5 x 556)");
        let mut t = [f64::MAX; 5];
        for _ in 0..5 {
            let mut r = [0f64; 5];
            for (i, pair) in key.chunks_exact(pair_len).enumerate() {
                let mut ahead = Ahead::new(prefetch_window::<u32>(&key, pair_len, i));
                let c = Instant::now();
                for (acc, d) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut((levels - 1) * n)) {
                    decompose(ring.isa, q as u32, ring.params.bsk_base_log.0, levels, acc, d);
                }
                r[0] += c.elapsed().as_secs_f64();
                let c = Instant::now();
                for d in s.digits.chunks_exact_mut(n) {
                    ring.ntt.forward32(d, &mut ahead);
                }
                r[1] += c.elapsed().as_secs_f64();
                let c = Instant::now();
                ring.monomials_minus_one32(1 + 2 * i, &mut s.mono_p, &mut s.mono_m);
                r[2] += c.elapsed().as_secs_f64();
                let c = Instant::now();
                ginx_step(
                    ring.isa,
                    br,
                    Rows { lower: &s.digits, eval: &mut s.eval },
                    pair,
                    [&s.mono_p, &s.mono_m],
                    &mut s.upd,
                    &mut ahead,
                );
                r[3] += c.elapsed().as_secs_f64();
                let c = Instant::now();
                for u in s.upd.chunks_exact_mut(n) {
                    ring.ntt.inverse32(u, &mut ahead);
                }
                ahead.rest();
                r[4] += c.elapsed().as_secs_f64();
            }
            t.iter_mut().zip(r).for_each(|(t, r)| *t = t.min(r * 1e6 / pairs as f64));
        }
        println!(
            "phases (best of 5): decompose {:.2}, forward x{} {:.2}, monomials {:.2}, ginx {:.2}, inverse x2 {:.2} us",
            t[0],
            2 * (levels - 1),
            t[1],
            t[2],
            t[3],
            t[4]
        );
    }

    /// One 54-bit step against the textbook step it replaced: all `2L` digits' NTTs, the
    /// unfolded keys, a reduction per product, on a random accumulator, key pair and
    /// rotation, for each NTT variant this CPU runs. Checks the folded key, the wide
    /// kernels and `NTT(ACC)`'s upkeep together.
    #[test]
    fn wide_step_matches_the_textbook_step() {
        use fhe_api::math::mul_mod;
        use rand_chacha::rand_core::{RngCore, SeedableRng};
        let set = ParamSet::PN11QP54;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for v in crate::ntt::variants().iter().filter(|v| (v.supported)()) {
            let ring = Ring::new(set, v.name).unwrap();
            let (n, rows, levels, q) = (ring.n(), ring.params.rgsw_rows(), ring.params.bsk_levels.0, ring.modulus.q);
            let mut random = |len: usize| -> Vec<u64> { (0..len).map(|_| rng.next_u64() % q).collect() };
            let (acc, kp, km) = (random(2 * n), random(rows * 2 * n), random(rows * 2 * n));
            let a = 1 + (acc[0] as usize) % (2 * n - 1);
            // The textbook step.
            let mut digits = vec![vec![0u64; n]; rows];
            for part in 0..2 {
                ring.decompose(&acc[part * n..(part + 1) * n], &mut digits[part * levels..(part + 1) * levels]);
            }
            digits.iter_mut().for_each(|d| ring.ntt.forward(d));
            let (mut mono_p, mut mono_m) = (vec![0u64; n], vec![0u64; n]);
            ring.monomial_minus_one(a, &mut mono_p);
            ring.monomial_minus_one(2 * n - a, &mut mono_m);
            let mut want = acc.clone();
            for (h, want) in want.chunks_exact_mut(n).enumerate() {
                let mut upd: Vec<u64> = (0..n)
                    .map(|j| {
                        let ext = |k: &[u64]| {
                            (0..rows).fold(0, |s, r| (s + mul_mod(digits[r][j], k[(2 * r + h) * n + j], q)) % q)
                        };
                        (mul_mod(ext(&kp), mono_p[j], q) + mul_mod(ext(&km), mono_m[j], q)) % q
                    })
                    .collect();
                ring.ntt.inverse(&mut upd);
                want.iter_mut().zip(&upd).for_each(|(x, &u)| *x = (*x + u) % q);
            }
            // The prepared step.
            let [mut fp, mut fm] = [kp.clone(), km.clone()];
            fold_top_digit(&ring, &mut fp);
            fold_top_digit(&ring, &mut fm);
            let mut pair = vec![0u64; 4 * rows * n];
            crate::wide::interleave_pair(&fp, &fm, n, &mut pair);
            let mut s = State::<u64>::zeroed(n, rows);
            s.acc.copy_from_slice(&acc);
            s.eval.copy_from_slice(&acc);
            s.eval.chunks_exact_mut(n).for_each(|e| ring.ntt.forward(e));
            step_wide(&ring, a, &pair, &mut s, &mut Ahead::none());
            assert!(s.acc[..] == want[..], "{}: accumulator", v.name);
            let mut want_eval = want.clone();
            want_eval.chunks_exact_mut(n).for_each(|e| ring.ntt.forward(e));
            assert!(s.eval[..] == want_eval[..], "{}: NTT(ACC)", v.name);
        }
    }

    /// [`time_step_phases`] for the 54-bit ring's step ([`step_wide`]): the step over
    /// 556 pairs streamed from memory, over one pair in cache, then each phase. Prints
    /// only: `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture time_wide_step_phases`.
    #[test]
    #[ignore = "timing; run by hand"]
    fn time_wide_step_phases() {
        let ring = Ring::new(ParamSet::PN11QP54, "avx512").unwrap();
        let (n, rows, pairs) = (ring.n(), ring.params.rgsw_rows(), ring.params.n());
        let levels = rows / 2;
        let q = ring.modulus.q;
        let pair_len = 4 * rows * n;
        let mut key = Aligned::<u64>::zeroed_huge(pairs * pair_len);
        key.iter_mut().enumerate().for_each(|(i, k)| *k = crate::wide::split(i as u64 * 2_654_435_761 % q));
        let mut s = State::<u64>::zeroed(n, rows);
        for (v, m) in [(&mut s.acc, 7_777_777), (&mut s.eval, 5_555_555)] {
            v.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64 * m % q);
        }
        let next = |i: usize| prefetch_window::<u64>(&key, pair_len, i);
        for _ in 0..3 {
            let whole = Instant::now();
            for (i, pair) in key.chunks_exact(pair_len).enumerate() {
                let mut ahead = Ahead::new(next(i));
                step_wide(&ring, 1 + 2 * i, pair, &mut s, &mut ahead);
                ahead.rest();
            }
            let streamed = whole.elapsed().as_secs_f64() * 1e6 / pairs as f64;
            let whole = Instant::now();
            for i in 0..pairs {
                step_wide(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut Ahead::none());
            }
            let cached = whole.elapsed().as_secs_f64() * 1e6 / pairs as f64;
            println!("step_wide: {streamed:.1} us per step streaming the key, {cached:.1} us with one pair in cache");
        }
        let mut r = [0f64; 6];
        let wide = ring.wide.unwrap();
        for (i, pair) in key.chunks_exact(pair_len).enumerate() {
            let mut ahead = Ahead::new(next(i));
            let c = Instant::now();
            for (acc, d) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut((levels - 1) * n)) {
                crate::wide::decompose_lower(ring.isa, q, ring.params.bsk_base_log.0, levels, acc, d);
            }
            r[0] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            for d in s.digits.chunks_exact_mut(n) {
                ring.ntt.forward_streaming(d, &mut ahead);
            }
            r[1] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            ring.monomial_minus_one(1 + 2 * i, &mut s.mono_p);
            ring.monomial_minus_one(2 * n - 1 - 2 * i, &mut s.mono_m);
            r[2] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            let rows = crate::wide::Rows { lower: &s.digits, eval: &mut s.eval };
            crate::wide::ginx_step(ring.isa, wide, rows, pair, [&s.mono_p, &s.mono_m], &mut s.upd, &mut ahead);
            r[3] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            for u in s.upd.chunks_exact_mut(n) {
                ring.ntt.inverse_streaming(u, &mut ahead);
            }
            ahead.rest();
            r[4] += c.elapsed().as_secs_f64();
            let c = Instant::now();
            crate::wide::add_mod(q, &mut s.acc, &s.upd);
            r[5] += c.elapsed().as_secs_f64();
        }
        let r = r.map(|x| x * 1e6 / pairs as f64);
        println!(
            "phases: decompose {:.1}, forward x{} {:.1}, monomials {:.1}, ginx {:.1}, inverse x2 {:.1}, add {:.1} us",
            r[0],
            2 * (levels - 1),
            r[1],
            r[2],
            r[3],
            r[4],
            r[5]
        );
    }
}
