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
//! [`blind_rotate_batch`]). A lone ciphertext runs on two threads, each with half of
//! every step's slots ([`blind_rotate_duo`], `LUX_FHE_BOOTSTRAP_THREADS`).
//!
//! Both paths skip the top digit's NTT. The digits recompose the accumulator,
//! `ACC = sum_l B^l d_l` (mod `Q`), so with `top = L - 1`
//! `sum_l NTT(d_l) K_l = sum_(l<top) NTT(d_l) (K_l - B^(l-top) K_top) + NTT(ACC) B^-top K_top`:
//! the prepared key holds those folded rows ([`fold_top_digit`]) and the step keeps
//! `NTT(ACC)` up to date by adding each update's evaluation form, which the GINX
//! kernel produces anyway. The products are equal modulo `Q`, so the words are the
//! same; one step runs `2(L-1)` forward NTTs instead of `2L`.

use rayon::prelude::*;

use fhe_api::{EvaluationKey, ExtractedLwe, KeyTag, Lut, LweCiphertext, Result};

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::kernels::{Ahead, Aligned, Rows};
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
    /// The evaluation key's tag, carried by every output.
    pub(crate) tag: KeyTag,
}

pub fn prepare(ring: &Ring, ek: &EvaluationKey) -> CpuPrepared {
    let ksk = crate::keyswitch::prepare_ksk(ring, ek);
    if ring.small.is_some() {
        // Residues below 2^29: 32-bit words (half the memory to stream per bootstrap).
        let bsk32 = interleaved_pairs(ring, ek, |kp, km, n, out| {
            let [kp, km] = [kp, km].map(|k| k.iter().map(|&x| x as u32).collect::<Vec<u32>>());
            crate::kernels::interleave_pair(&kp, &km, n, crate::kernels::CHUNK, out);
        });
        CpuPrepared { bsk: Aligned::default(), bsk32, ksk, tag: ek.tag() }
    } else {
        let bsk = interleaved_pairs(ring, ek, crate::wide::interleave_pair);
        CpuPrepared { bsk, bsk32: Aligned::default(), ksk, tag: ek.tag() }
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
    use fhe_api::ring::math::{inv_mod, mul_mod, pow_mod};
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

/// `lut` is the test polynomial (`Lut::sign` for a gate), of `ring`'s set (the caller
/// checks).
pub fn blind_rotate(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext, lut: &Lut) -> ExtractedLwe {
    blind_rotate_group(ring, key, std::slice::from_ref(ct), lut).pop().expect("one output")
}

/// The `b` half of the starting accumulator `ACC = (0, X^-b TV)`, with the test vector
/// `TV` the table's coefficients (every one `round(Q/8)` for the sign).
fn initial_acc_b(ring: &Ring, ct: &LweCiphertext, lut: &Lut, out: &mut [u64]) {
    let p = ring.params;
    let two_n = 2 * p.big_n();
    let b = ms_to_2n(ct.b(), p.lwe_modulus_log.0, two_n.trailing_zeros());
    monomial_mul(lut.coefficients(), (two_n - b) % two_n, ring.modulus.q, out);
}

/// Coefficient 0 of the accumulator as an LWE ciphertext under the ring secret of the
/// key tagged `tag`: `a'_0 = a_0`, `a'_i = -a_(N-i)`, `b' = b_0`.
pub fn sample_extract(ring: &Ring, tag: KeyTag, acc_a: &[u64], acc_b: &[u64]) -> ExtractedLwe {
    let q = ring.modulus.q;
    let big_n = ring.n();
    let mut data = Vec::with_capacity(big_n + 1);
    data.push(acc_a[0]);
    for i in 1..big_n {
        let x = acc_a[big_n - i];
        data.push(if x == 0 { 0 } else { q - x });
    }
    data.push(acc_b[0]);
    ExtractedLwe::from_raw(ring.set, tag, data).expect("extraction yields N + 1 residues under a key's tag")
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

/// The word of one blind-rotation path (module docs): what differs between them, as the
/// phases of one GINX step ([`step`]), which [`blind_rotate_duo`] spreads over two
/// threads.
trait Word: Copy + Default + Into<u64> + Send + Sync {
    /// A residue of this ring as a word.
    fn narrow(x: u64) -> Self;
    /// This path's prepared key pairs.
    fn pairs(key: &CpuPrepared) -> &[Self];
    /// In-place forward NTT of one polynomial (the starting `NTT(ACC)`).
    fn forward(ring: &Ring, a: &mut [Self]);
    /// Where [`prefetch_window`] starts, in eighths of the words a step reads past the
    /// start of its own.
    const WINDOW_EIGHTHS: usize;
    /// The NTTs of one accumulator part's lower digits (`acc` in coefficient form) into
    /// `lower`, `[level < L - 1][slot]`.
    fn digits(ring: &Ring, acc: &[Self], lower: &mut [Self], ahead: &mut Ahead);
    /// `NTT(X^a) - 1` and `NTT(X^-a) - 1`.
    fn monomials(ring: &Ring, a: usize, plus: &mut [Self], minus: &mut [Self]);
    /// The GINX kernel on the slots of `rows` (`crate::kernels::ginx_step`).
    fn kernel(ring: &Ring, rows: Rows<Self>, pair: &[Self], mono: [&[Self]; 2], upd: &mut [Self], ahead: &mut Ahead);
    /// `acc += INTT(upd)` for one part, `upd` in evaluation form (and then overwritten).
    fn finish(ring: &Ring, upd: &mut [Self], acc: &mut [Self], ahead: &mut Ahead);
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
    fn digits(ring: &Ring, acc: &[u32], lower: &mut [u32], ahead: &mut Ahead) {
        let q32 = ring.modulus.q as u32;
        crate::kernels::decompose(ring.isa, q32, ring.params.bsk_base_log.0, ring.params.bsk_levels.0, acc, lower);
        for d in lower.chunks_exact_mut(ring.n()) {
            ring.ntt.forward32(d, ahead);
        }
    }
    fn monomials(ring: &Ring, a: usize, plus: &mut [u32], minus: &mut [u32]) {
        ring.monomials_minus_one32(a, plus, minus);
    }
    fn kernel(ring: &Ring, rows: Rows<u32>, pair: &[u32], mono: [&[u32]; 2], upd: &mut [u32], ahead: &mut Ahead) {
        let br = ring.small.expect("the 32-bit path");
        crate::kernels::ginx_step(ring.isa, br, rows, pair, mono, upd, ahead);
    }
    fn finish(ring: &Ring, upd: &mut [u32], acc: &mut [u32], ahead: &mut Ahead) {
        ring.ntt.inverse32(upd, ahead);
        crate::kernels::add_mod(ring.isa, ring.modulus.q as u32, acc, upd);
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
    fn digits(ring: &Ring, acc: &[u64], lower: &mut [u64], ahead: &mut Ahead) {
        let (q, levels) = (ring.modulus.q, ring.params.bsk_levels.0);
        crate::wide::decompose_lower(ring.isa, q, ring.params.bsk_base_log.0, levels, acc, lower);
        for d in lower.chunks_exact_mut(ring.n()) {
            ring.ntt.forward_streaming(d, ahead);
        }
    }
    fn monomials(ring: &Ring, a: usize, plus: &mut [u64], minus: &mut [u64]) {
        ring.monomial_minus_one(a, plus);
        ring.monomial_minus_one(2 * ring.n() - a, minus);
    }
    fn kernel(ring: &Ring, rows: Rows<u64>, pair: &[u64], mono: [&[u64]; 2], upd: &mut [u64], ahead: &mut Ahead) {
        let wide = ring.wide.expect("the 64-bit path");
        crate::wide::ginx_step(ring.isa, wide, rows, pair, mono, upd, ahead);
    }
    fn finish(ring: &Ring, upd: &mut [u64], acc: &mut [u64], ahead: &mut Ahead) {
        ring.ntt.inverse_streaming(upd, ahead);
        crate::wide::add_mod(ring.modulus.q, acc, upd);
    }
}

/// Blind rotation of a group of ciphertexts, coefficient by coefficient, so each key
/// pair (128 KiB for `PN10QP27`, 640 KiB for `PN11QP54`) is read from memory once for the
/// whole group and then from cache.
fn blind_rotate_group(ring: &Ring, key: &CpuPrepared, cts: &[LweCiphertext], lut: &Lut) -> Vec<ExtractedLwe> {
    if ring.small.is_some() {
        blind_rotate_words::<u32>(ring, key, cts, lut)
    } else {
        blind_rotate_words::<u64>(ring, key, cts, lut)
    }
}

fn blind_rotate_words<W: Word>(ring: &Ring, key: &CpuPrepared, cts: &[LweCiphertext], lut: &Lut) -> Vec<ExtractedLwe> {
    let p = ring.params;
    let (big_n, rows) = (p.big_n(), p.rgsw_rows());
    let log2n = (2 * big_n).trailing_zeros();
    let logq = p.lwe_modulus_log.0;
    let mut states: Vec<State<W>> = cts
        .iter()
        .map(|ct| {
            let mut s = State::zeroed(big_n, rows);
            initial_acc(ring, ct, lut, &mut s.acc, &mut s.eval);
            s
        })
        .collect();
    let pairs = W::pairs(key);
    let pair_len = 2 * rows * 2 * big_n;
    for (i, pair) in pairs.chunks_exact(pair_len).enumerate().take(p.n()) {
        let mut ahead = prefetch_window::<W>(pairs, pair_len, 0..pair_len, i);
        for (s, ct) in states.iter_mut().zip(cts) {
            let a = ms_to_2n(ct.a()[i], logq, log2n);
            if a == 0 {
                continue; // X^0 - 1 = 0: the step is the identity.
            }
            step(ring, a, pair, s, &mut ahead);
        }
        ahead.rest();
    }
    states
        .iter()
        .map(|s| {
            let wide: Vec<u64> = s.acc.iter().map(|&x| x.into()).collect();
            sample_extract(ring, key.tag, &wide[..big_n], &wide[big_n..])
        })
        .collect()
}

/// The starting accumulator `(0, X^-b TV)` of `ct` as words into `acc`, `[part][slot]`,
/// and its NTT into `eval`.
fn initial_acc<W: Word>(ring: &Ring, ct: &LweCiphertext, lut: &Lut, acc: &mut [W], eval: &mut [W]) {
    let n = ring.n();
    let mut start = vec![0u64; n];
    initial_acc_b(ring, ct, lut, &mut start);
    acc[..n].fill(W::default());
    acc[n..].iter_mut().zip(&start).for_each(|(o, &x)| *o = W::narrow(x));
    eval.copy_from_slice(acc); // NTT(0) = 0 for the `a` part
    W::forward(ring, &mut eval[n..]);
}

/// What step `i` prefetches of `part`, the words of each pair the caller reads (the
/// whole pair, or one thread's half in [`blind_rotate_duo`]): a part's worth from
/// `W::WINDOW_EIGHTHS` eighths into its own part, so what its GINX kernel reads last,
/// and then the next pair's part's first words. A short step needs the lead; a long one
/// is better served keeping one pair in cache (measurements per window: `docs/PERF.md`,
/// "Lab notes moved from the code").
fn prefetch_window<W: Word>(pairs: &[W], pair_len: usize, part: Range<usize>, i: usize) -> Ahead<'_> {
    let lead = part.len() * W::WINDOW_EIGHTHS / 8;
    let (own, next) = (i * pair_len + part.start, (i + 1) * pair_len + part.start);
    let first = pairs.get(own + lead..own + part.len()).unwrap_or(&[]);
    Ahead::two(first, pairs.get(next..next + lead).unwrap_or(&[]))
}

/// One GINX step of one ciphertext (`a != 0`): `pair` is the coefficient's folded key
/// pair, `ahead` the prefetch of [`prefetch_window`].
fn step<W: Word>(ring: &Ring, a: usize, pair: &[W], s: &mut State<W>, ahead: &mut Ahead) {
    let n = ring.n();
    let lower_len = (ring.params.bsk_levels.0 - 1) * n;
    // The lower digits only: `NTT(ACC)` stands in for the top one (module docs).
    for (acc, lower) in s.acc.chunks_exact(n).zip(s.digits.chunks_exact_mut(lower_len)) {
        W::digits(ring, acc, lower, ahead);
    }
    W::monomials(ring, a, &mut s.mono_p, &mut s.mono_m);
    // Also `eval += upd`, so `eval` stays `NTT(acc)`.
    let rows = Rows::whole(n, &s.digits, &mut s.eval);
    W::kernel(ring, rows, pair, [&s.mono_p, &s.mono_m], &mut s.upd, ahead);
    for (u, acc) in s.upd.chunks_exact_mut(n).zip(s.acc.chunks_exact_mut(n)) {
        W::finish(ring, u, acc, ahead);
    }
}

/// One ciphertext's blind rotation on two threads, for the latency of a single gate:
/// the caller's thread and one it spawns, each with its half of every step.
///
/// Thread `t` owns accumulator part `t` (coefficient form) and slots
/// `t N/2 .. (t + 1) N/2` of `NTT(ACC)`; a step is three phases between two barriers:
/// 1. the NTTs of part `t`'s lower digits into the shared `digits`, and the monomials;
/// 2. (after barrier A: every digit row is written) the GINX kernel on its slots, which
///    reads its half of the key pair (the pair layout is chunk by chunk, so that is one
///    front-to-back run of words) and all digit rows at its slots, and writes its slots
///    of both parts' update into its `upd`;
/// 3. (after barrier B: every update slot is written) part `t`'s update, half from each
///    thread's `upd`, through the inverse NTT into its accumulator part.
///
/// Each shared buffer is written in one phase by one thread and read in another:
/// `digits` part `t` is written in phase 1 by thread `t` and read in phase 2 by both;
/// `upd[t]` is written in phase 2 by thread `t` and read in phase 3 by both. Between a
/// write and a read of the same words lies a barrier, and so does one between a read
/// and the next step's write of them (thread `t` writes `digits` part `t` after barrier
/// B, which the other thread reaches only once done reading it, and `upd[t]` after the
/// next step's barrier A). The arithmetic on every word is the one-thread step's, so
/// the words are the same ([`tests::duo_matches_one_thread`]).
pub fn blind_rotate_duo(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext, lut: &Lut) -> ExtractedLwe {
    if ring.small.is_some() {
        duo_words::<u32>(ring, key, ct, lut)
    } else {
        duo_words::<u64>(ring, key, ct, lut)
    }
}

fn duo_words<W: Word>(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext, lut: &Lut) -> ExtractedLwe {
    let p = ring.params;
    let (n, rows, levels) = (p.big_n(), p.rgsw_rows(), p.bsk_levels.0);
    let (half, lower_len) = (n / 2, (levels - 1) * n);
    let log2n = (2 * n).trailing_zeros();
    let logq = p.lwe_modulus_log.0;
    let pairs = W::pairs(key);
    let pair_len = 2 * rows * 2 * n;
    let (mut acc, mut eval) = (Aligned::<W>::zeroed(2 * n), Aligned::<W>::zeroed(2 * n));
    initial_acc(ring, ct, lut, &mut acc, &mut eval);
    let digits = Shared::<W>::zeroed(2 * lower_len);
    let upd = [Shared::<W>::zeroed(2 * half), Shared::<W>::zeroed(2 * half)];
    let barrier = Barrier2::default();
    let run = |t: usize| -> Aligned<W> {
        let leave = barrier.leave_on_panic(t);
        let mut own_acc = Aligned::<W>::zeroed(n);
        own_acc.copy_from_slice(&acc[t * n..(t + 1) * n]);
        let slots = t * half..(t + 1) * half;
        let mut own_eval = Aligned::<W>::zeroed(2 * half);
        for (o, e) in own_eval.chunks_exact_mut(half).zip(eval.chunks_exact(n)) {
            o.copy_from_slice(&e[slots.clone()]);
        }
        let (mut mono_p, mut mono_m, mut inv) = (Aligned::zeroed(n), Aligned::zeroed(n), Aligned::<W>::zeroed(n));
        let mine = t * pair_len / 2..(t + 1) * pair_len / 2;
        let mut epoch = 0;
        for (i, pair) in pairs.chunks_exact(pair_len).enumerate().take(p.n()) {
            let a = ms_to_2n(ct.a()[i], logq, log2n);
            if a == 0 {
                continue; // Both threads skip it.
            }
            let mut ahead = prefetch_window::<W>(pairs, pair_len, mine.clone(), i);
            // SAFETY: phase 1: only this thread touches `digits` part `t` (see above).
            W::digits(ring, &own_acc, unsafe { digits.get_mut(t * lower_len..(t + 1) * lower_len) }, &mut ahead);
            W::monomials(ring, a, &mut mono_p, &mut mono_m);
            epoch += 1;
            barrier.wait(t, epoch);
            {
                // SAFETY: phase 2: both threads only read `digits`; only this one touches
                // `upd[t]`. Both slices end with this block, before barrier B.
                let (lower, out) = unsafe { (digits.get(0..2 * lower_len), upd[t].get_mut(0..2 * half)) };
                let rows = Rows { lower, n, slot0: t * half, eval: &mut own_eval };
                let mono = [&mono_p[slots.clone()], &mono_m[slots.clone()]];
                W::kernel(ring, rows, &pair[mine.clone()], mono, out, &mut ahead);
            }
            epoch += 1;
            barrier.wait(t, epoch);
            for (h, u) in upd.iter().enumerate() {
                // SAFETY: phase 3: both threads only read `upd`.
                inv[h * half..(h + 1) * half].copy_from_slice(unsafe { u.get(t * half..(t + 1) * half) });
            }
            W::finish(ring, &mut inv, &mut own_acc, &mut ahead);
            ahead.rest();
        }
        drop(leave);
        own_acc
    };
    let caller_cpu = current_cpu();
    let (acc_a, acc_b) = std::thread::scope(|scope| {
        let helper = scope.spawn(|| {
            keep_off_cpu(caller_cpu);
            run(1)
        });
        let a = run(0);
        (a, helper.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    let [a, b] = [acc_a, acc_b].map(|acc| acc.iter().map(|&x| x.into()).collect::<Vec<u64>>());
    sample_extract(ring, key.tag, &a, &b)
}

/// The CPU the calling thread runs on, where the OS says.
fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sched_getcpu` takes no arguments and only reads the caller's state.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Binds the calling thread (the helper of [`blind_rotate_duo`], which ends with the
/// rotation) to one CPU of the process's set other than `cpu`, the caller's. Left to
/// itself, Linux sometimes starts the helper on the caller's CPU and leaves it there
/// for tens of milliseconds when the other core has just been busy; two threads that
/// meet at a barrier every few microseconds then share one core, and a rotation takes
/// several times as long (`docs/PERF.md`, "Lab notes moved from the code"). Where the
/// set has no other CPU, or on other systems, nothing changes.
fn keep_off_cpu(cpu: Option<usize>) {
    #[cfg(target_os = "linux")]
    if let Some(cpu) = cpu {
        // SAFETY: `set` is a plain bit set, zeroed then filled by the kernel; pid 0 is the
        // calling thread, and the size passed is the set's.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut set) != 0 {
                return;
            }
            let max = 8 * size;
            if let Some(other) = (0..max).find(|&c| c != cpu && libc::CPU_ISSET(c, &set)) {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(other, &mut one);
                let _ = libc::sched_setaffinity(0, size, &one);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// Words both threads of [`blind_rotate_duo`] reach through one pointer. Which thread
/// may write or read which words when is that function's protocol; its barriers order
/// every write before the other thread's reads of the same words.
struct Shared<W> {
    ptr: *mut W,
    len: usize,
    /// Owns the words `ptr` points into (an `Aligned` never moves its storage).
    _words: Aligned<W>,
}

// SAFETY: the words are plain integers; the access protocol above keeps one thread's
// writes from overlapping the other's reads or writes of the same words.
unsafe impl<W: Send + Sync> Sync for Shared<W> {}

impl<W: Copy + Default> Shared<W> {
    fn zeroed(len: usize) -> Self {
        let mut words = Aligned::zeroed(len);
        Shared { ptr: words.as_mut_ptr(), len, _words: words }
    }

    /// # Safety
    /// No thread writes `r` while the slice lives.
    unsafe fn get(&self, r: Range<usize>) -> &[W] {
        assert!(r.start <= r.end && r.end <= self.len, "shared words: range");
        // SAFETY: inside the buffer (checked); no writer (the caller's promise).
        unsafe { std::slice::from_raw_parts(self.ptr.add(r.start), r.len()) }
    }

    /// # Safety
    /// No other thread reads or writes `r`, and this thread holds no other slice of it,
    /// while the slice lives.
    #[allow(clippy::mut_from_ref)] // Exclusive by the caller's promise, not by `&mut self`.
    unsafe fn get_mut(&self, r: Range<usize>) -> &mut [W] {
        assert!(r.start <= r.end && r.end <= self.len, "shared words: range");
        // SAFETY: inside the buffer (checked); exclusive (the caller's promise).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r.start), r.len()) }
    }
}

/// Spins before a waiting thread of [`Barrier2`] starts yielding its core: a phase of
/// a step takes a few microseconds, and a thread that waits much longer has most likely
/// lost its partner to the scheduler (more busy threads than cores), which yielding
/// gives back.
const SPINS_BEFORE_YIELD: u32 = 1 << 12;

/// A barrier for two threads that meet at every phase of a step: each publishes how
/// many barriers it has reached and waits for the other's count. Its `Release` store and
/// `Acquire` load make a thread's writes before a barrier visible to the other after it.
#[derive(Default)]
struct Barrier2 {
    reached: [Padded; 2],
}

/// A counter on its own pair of cache lines, so the two threads' stores do not contend
/// (adjacent-line prefetch pairs lines).
#[derive(Default)]
#[repr(align(128))]
struct Padded(std::sync::atomic::AtomicU64);

impl Barrier2 {
    /// Thread `me` has reached barrier `epoch` (1, 2, ...): waits until the other has.
    fn wait(&self, me: usize, epoch: u64) {
        use std::sync::atomic::Ordering::{Acquire, Release};
        self.reached[me].0.store(epoch, Release);
        let mut spins = 0;
        while self.reached[1 - me].0.load(Acquire) < epoch {
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// A guard that, if thread `me` unwinds, marks every barrier as reached, so the other
    /// thread runs to its end instead of waiting forever, and the panic reaches the caller.
    fn leave_on_panic(&self, me: usize) -> impl Drop + '_ {
        struct Leave<'a>(&'a Barrier2, usize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.reached[self.1].0.store(u64::MAX, std::sync::atomic::Ordering::Release);
                }
            }
        }
        Leave(self, me)
    }
}

/// Ciphertexts per group: enough to share each key pair's read among several, few
/// enough that every core gets a group.
const MAX_GROUP: usize = 8;

/// The blind rotations of a batch with test polynomial `lut` (of `ring`'s set; the
/// caller checks): a lone ciphertext on two threads ([`blind_rotate_duo`]) where
/// `threads` is 2 and [`DuoSlot::take`] finds a core free for the second, otherwise in
/// groups ([`MAX_GROUP`]) on all cores.
pub fn blind_rotate_batch(
    ring: &Ring,
    key: &CpuPrepared,
    inputs: &[LweCiphertext],
    lut: &Lut,
    threads: BootstrapThreads,
) -> Result<Vec<ExtractedLwe>> {
    if let [ct] = inputs {
        if threads == BootstrapThreads::Two {
            if let Some(_slot) = DuoSlot::take() {
                return Ok(vec![blind_rotate_duo(ring, key, ct, lut)]);
            }
        }
    }
    let group = inputs.len().div_ceil(rayon::current_num_threads()).clamp(1, MAX_GROUP);
    Ok(inputs.par_chunks(group).flat_map_iter(|g| blind_rotate_group(ring, key, g, lut)).collect())
}

/// How many threads one ciphertext's blind rotation may use: the CPU backend's
/// `LUX_FHE_BOOTSTRAP_THREADS` (`1` or `2`, default `2`). Two threads cut a lone
/// gate's latency (measured in `docs/PERF.md`); batches use every core either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootstrapThreads {
    One,
    Two,
}

impl BootstrapThreads {
    /// The environment variable that sets it.
    pub const VAR: &'static str = "LUX_FHE_BOOTSTRAP_THREADS";

    /// `None` or empty is the default ([`BootstrapThreads::Two`]); anything but `1` or
    /// `2` is an error.
    pub fn parse(value: Option<&str>) -> Result<BootstrapThreads> {
        match value.map(str::trim) {
            None | Some("") | Some("2") => Ok(BootstrapThreads::Two),
            Some("1") => Ok(BootstrapThreads::One),
            Some(other) => Err(fhe_api::Error::Environment {
                variable: BootstrapThreads::VAR,
                value: other.to_string(),
                valid: BootstrapThreads::VALID.into(),
            }),
        }
    }

    /// A raw value as the OS holds it: as [`BootstrapThreads::parse`], and a value that is
    /// not UTF-8 is an error naming [`BootstrapThreads::VAR`] (never "unset").
    pub fn parse_raw(value: Option<&std::ffi::OsStr>) -> Result<BootstrapThreads> {
        BootstrapThreads::parse(fhe_api::registry::env_text(BootstrapThreads::VAR, value, BootstrapThreads::VALID)?)
    }

    /// From [`BootstrapThreads::VAR`] (the only reader of the real environment here).
    pub fn from_env() -> Result<BootstrapThreads> {
        BootstrapThreads::parse_raw(std::env::var_os(BootstrapThreads::VAR).as_deref())
    }

    /// What [`BootstrapThreads::VAR`] accepts, for error messages.
    const VALID: &'static str = "1 or 2 (threads per blind rotation)";
}

/// Two-thread blind rotations running now, in this process.
static DUOS: AtomicUsize = AtomicUsize::new(0);

/// Leave to run a two-thread blind rotation, held while it runs.
struct DuoSlot;

impl DuoSlot {
    /// Taken when the caller is not a rayon worker (whose pool already keeps the cores
    /// busy: a batch, or a caller's own parallel loop) and fewer two-thread rotations
    /// run than half the cores, so that each one's second thread finds a core: a
    /// thread [`Barrier2`] waits for must not be waiting for a core.
    fn take() -> Option<DuoSlot> {
        static CORES: OnceLock<usize> = OnceLock::new();
        let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if rayon::current_thread_index().is_some() {
            return None;
        }
        if DUOS.fetch_add(1, Ordering::AcqRel) < cores / 2 {
            Some(DuoSlot)
        } else {
            DUOS.fetch_sub(1, Ordering::AcqRel);
            None
        }
    }
}

impl Drop for DuoSlot {
    fn drop(&mut self) {
        DUOS.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `LUX_FHE_BOOTSTRAP_THREADS` as raw OS values: UTF-8 as [`BootstrapThreads::parse`],
    /// anything else an error naming the variable, never the default.
    #[cfg(unix)]
    #[test]
    fn bootstrap_threads_raw_values() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(BootstrapThreads::parse_raw(None).unwrap(), BootstrapThreads::Two);
        assert_eq!(BootstrapThreads::parse_raw(Some(OsStr::new(" 1 "))).unwrap(), BootstrapThreads::One);
        assert!(BootstrapThreads::parse_raw(Some(OsStr::new("3"))).is_err());
        let err = BootstrapThreads::parse_raw(Some(OsStr::from_bytes(b"\xff1"))).unwrap_err();
        assert!(
            matches!(&err, fhe_api::Error::Environment { variable: BootstrapThreads::VAR, value, .. } if value == "\u{fffd}1"),
            "{err:?}"
        );
        assert!(err.to_string().contains("UTF-8"), "{err}");
    }
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

    /// A thread that panics between barriers does not leave its partner waiting: the
    /// partner runs through every later barrier, and the panic reaches the caller.
    #[test]
    fn a_panicking_thread_releases_its_partner() {
        let barrier = Barrier2::default();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::thread::scope(|scope| {
                let helper = scope.spawn(|| {
                    let _leave = barrier.leave_on_panic(1);
                    barrier.wait(1, 1);
                    panic!("the helper fails after the first barrier");
                });
                let _leave = barrier.leave_on_panic(0);
                (1..=1000).for_each(|e| barrier.wait(0, e));
                helper.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
        }));
        assert!(result.is_err(), "the helper's panic reaches the caller");
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
                let mut ahead = prefetch_window::<u32>(&key, pair_len, 0..pair_len, i);
                step(&ring, 1 + 2 * i, pair, &mut s, &mut ahead);
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
                step(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut Ahead::none());
            }
            cached = cached.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
        }
        println!("step_small, one pair from cache: {cached:.2} us per step (best of 5 x 556)");
        let mut touched = f64::MAX;
        for _ in 0..5 {
            let whole = Instant::now();
            for i in 0..pairs {
                let mut ahead = Ahead::new(&key[pair_len..2 * pair_len]);
                step(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut ahead);
                ahead.rest();
            }
            touched = touched.min(whole.elapsed().as_secs_f64() * 1e6 / pairs as f64);
        }
        println!("step_small, two pairs from cache, prefetching: {touched:.2} us per step (best of 5 x 556)");
        let mut t = [f64::MAX; 5];
        for _ in 0..5 {
            let mut r = [0f64; 5];
            for (i, pair) in key.chunks_exact(pair_len).enumerate() {
                let mut ahead = prefetch_window::<u32>(&key, pair_len, 0..pair_len, i);
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
                    Rows::whole(n, &s.digits, &mut s.eval),
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
        use fhe_api::ring::math::mul_mod;
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
            step(&ring, a, &pair, &mut s, &mut Ahead::none());
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
        let next = |i: usize| prefetch_window::<u64>(&key, pair_len, 0..pair_len, i);
        for _ in 0..3 {
            let whole = Instant::now();
            for (i, pair) in key.chunks_exact(pair_len).enumerate() {
                let mut ahead = next(i);
                step(&ring, 1 + 2 * i, pair, &mut s, &mut ahead);
                ahead.rest();
            }
            let streamed = whole.elapsed().as_secs_f64() * 1e6 / pairs as f64;
            let whole = Instant::now();
            for i in 0..pairs {
                step(&ring, 1 + 2 * i, &key[..pair_len], &mut s, &mut Ahead::none());
            }
            let cached = whole.elapsed().as_secs_f64() * 1e6 / pairs as f64;
            println!("step_wide: {streamed:.1} us per step streaming the key, {cached:.1} us with one pair in cache");
        }
        let mut r = [0f64; 6];
        let wide = ring.wide.unwrap();
        for (i, pair) in key.chunks_exact(pair_len).enumerate() {
            let mut ahead = next(i);
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
            let rows = Rows::whole(n, &s.digits, &mut s.eval);
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
