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
//! (the 25- and 27-bit sets) on `u32` ([`crate::tfhe::ginx32`]), the 54-bit ring on `u64`
//! ([`crate::tfhe::ginx64`]). On both, the key pair of each coefficient is interleaved for one
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

use crate::mem::{Ahead, Aligned};
use crate::tfhe::ginx32::Rows;
use crate::tfhe::ring::{monomial_mul, Ring};

mod duo;
mod key;

pub use duo::blind_rotate_duo;
pub(crate) use duo::{run_on_two, Barrier2, DuoSlot, Shared};
pub(crate) use key::fold_top_digit;
pub use key::{prepare, CpuPrepared};

/// Mod switch `q -> 2N` (both powers of two): round half up.
#[inline]
pub(crate) fn ms_to_2n(x: u32, logq: u32, log2n: u32) -> usize {
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
pub(crate) fn initial_acc_b(ring: &Ring, ct: &LweCiphertext, lut: &Lut, out: &mut [u64]) {
    let p = ring.params;
    let two_n = 2 * p.big_n();
    let b = ms_to_2n(ct.b(), p.lwe_modulus_log.0, two_n.trailing_zeros());
    monomial_mul(lut.coefficients(), (two_n - b) % two_n, ring.modulus.q, out);
}

/// Coefficient 0 of the accumulator as an LWE ciphertext under the ring secret of the
/// key tagged `tag`: `a'_0 = a_0`, `a'_i = -a_(N-i)`, `b' = b_0`.
pub fn sample_extract(ring: &Ring, tag: KeyTag, acc_a: &[u64], acc_b: &[u64]) -> ExtractedLwe {
    sample_extract_at(ring, tag, acc_a, acc_b, 0)
}

/// The LWE ciphertext of coefficient `j < N` of the accumulator `(a, b)`: coefficient `j`
/// of `a z` is `sum_(k <= j) a_(j-k) z_k - sum_(k > j) a_(N+j-k) z_k` (negacyclic), so the
/// mask is `a_j .. a_0` followed by `-a_(N-1) .. -a_(j+1)`. A many-LUT reads one
/// function at each of its offsets.
pub fn sample_extract_at(ring: &Ring, tag: KeyTag, acc_a: &[u64], acc_b: &[u64], j: usize) -> ExtractedLwe {
    let q = ring.modulus.q;
    let big_n = ring.n();
    assert!(j < big_n, "sample extraction at {j}, the ring has N = {big_n}");
    let mut data = Vec::with_capacity(big_n + 1);
    data.extend(acc_a[..=j].iter().rev());
    data.extend(acc_a[j + 1..].iter().rev().map(|&x| if x == 0 { 0 } else { q - x }));
    data.push(acc_b[j]);
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
    /// The GINX kernel on the slots of `rows` (`crate::tfhe::ginx32::ginx_step`).
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
        ring.ntt.forward32_streaming(a, &mut Ahead::none());
    }
    fn digits(ring: &Ring, acc: &[u32], lower: &mut [u32], ahead: &mut Ahead) {
        let q32 = ring.modulus.q as u32;
        crate::tfhe::decompose::decompose(
            ring.isa,
            q32,
            ring.params.bsk_base_log.0,
            ring.params.bsk_levels.0,
            acc,
            lower,
        );
        for d in lower.chunks_exact_mut(ring.n()) {
            ring.ntt.forward32_streaming(d, ahead);
        }
    }
    fn monomials(ring: &Ring, a: usize, plus: &mut [u32], minus: &mut [u32]) {
        ring.monomials_minus_one32(a, plus, minus);
    }
    fn kernel(ring: &Ring, rows: Rows<u32>, pair: &[u32], mono: [&[u32]; 2], upd: &mut [u32], ahead: &mut Ahead) {
        let br = ring.small.expect("the 32-bit path");
        crate::tfhe::ginx32::ginx_step(ring.isa, br, rows, pair, mono, upd, ahead);
    }
    fn finish(ring: &Ring, upd: &mut [u32], acc: &mut [u32], ahead: &mut Ahead) {
        ring.ntt.inverse32_streaming(upd, ahead);
        crate::arith::small::add_mod(ring.isa, ring.modulus.q as u32, acc, upd);
    }
}

impl Word for u64 {
    /// The step's own pair: its 640 KiB (`PN11QP54`) arrive during the step's eight
    /// forward NTTs, and only one pair is in the second-level cache.
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
        crate::tfhe::decompose::decompose_lower(ring.isa, q, ring.params.bsk_base_log.0, levels, acc, lower);
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
        crate::tfhe::ginx64::ginx_step(ring.isa, wide, rows, pair, mono, upd, ahead);
    }
    fn finish(ring: &Ring, upd: &mut [u64], acc: &mut [u64], ahead: &mut Ahead) {
        ring.ntt.inverse_streaming(upd, ahead);
        crate::tfhe::ginx64::add_mod(ring.isa, ring.modulus.q, acc, upd);
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
    // A multi-bit key has another layout: `blind_rotate_batch` sends it to `multi_bit`.
    assert!(ring.params.grouping().is_none(), "GINX rotation of a multi-bit set's key");
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
/// is better served keeping one pair in cache (measurements per window: `docs/perf/2026-12-05.md`,
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
    if ring.params.grouping().is_some() {
        return crate::tfhe::multi_bit::blind_rotate_batch(ring, key, inputs, lut, &[0], threads);
    }
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

/// How many threads one ciphertext's blind rotation and key switch may use: the CPU
/// backend's `LUX_FHE_BOOTSTRAP_THREADS` (`1` or `2`, default `2`). Two threads cut a
/// lone gate's or PBS's latency (measured in `docs/perf/2026-12-05.md`, "a lone gate's blind rotation on two
/// threads"); batches use every core either way.
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

#[cfg(test)]
mod tests;
