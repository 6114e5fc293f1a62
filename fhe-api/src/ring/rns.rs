//! Residue number system (RNS) bases and the exact integer maps of full-RNS CKKS: fast
//! base conversion (the core of ModUp), ModDown by the special primes `P`, and rescale by
//! the last prime.
//!
//! A polynomial over `Q = q_0 ... q_{L-1}` is stored **limb-major**: limb `i` (its residues
//! modulo `q_i`, `n` words each `< q_i`) occupies `words[i*n .. (i+1)*n]`.
//!
//! Every map here is pinned by a formula over the integers (written at each item); any
//! implementation that computes the same integers mod the same primes produces the same
//! words, which is what lets GPU backends match the CPU oracle byte for byte. How lazily
//! the intermediate sums are reduced is free; the residues they reduce to are not.

use crate::error::{Error, LevelNeed, Result};
use crate::ring::math::{inv_mod, is_prime, product_mod};
use crate::ring::moddown::RoundingConverter;
use crate::ring::modulus::{csub, mul_shoup_lazy, shoup, Modulus};
use crate::ring::ntt::MAX_MODULUS_BITS;
use crate::ring::RingModulus;

/// A constant `w < q` with its Shoup companion `floor(w 2^64 / q)`.
pub type ShoupConst = (u64, u64);

fn shoup_const(w: u64, q: u64) -> ShoupConst {
    (w, shoup(w, q))
}

/// `(Q / q_i) mod m` for a basis `moduli` of `Q`.
fn q_hat_mod(moduli: &[Modulus], i: usize, m: u64) -> u64 {
    product_mod(moduli.iter().enumerate().filter(|&(k, _)| k != i).map(|(_, qk)| qk.q), m)
}

/// A basis of distinct primes `q_0, ..., q_{L-1}`, each in `(2, 2^62)`, with
/// `q_hat_inv[i] = (Q / q_i)^{-1} mod q_i` (`Q` the product), the CRT constants that
/// [`BaseConverter`] needs. The order of the primes is the order of the limbs.
#[derive(Clone, Debug)]
pub struct RnsBasis {
    moduli: Vec<Modulus>,
    q_hat_inv: Vec<ShoupConst>,
}

impl RnsBasis {
    /// The basis of `primes`, in that order. An empty list, a repeated prime, a
    /// non-prime, or a prime outside `(2, 2^62)` is `Error::InvalidRing`. (No `N` is
    /// involved: whether each prime is `= 1 mod 2N` is the NTT tables' check.)
    pub fn new(primes: &[RingModulus]) -> Result<RnsBasis> {
        if primes.is_empty() {
            return Err(Error::InvalidRing("an RNS basis needs at least one prime".into()));
        }
        for (i, &RingModulus(q)) in primes.iter().enumerate() {
            if q <= 2 || q >= 1 << MAX_MODULUS_BITS || !is_prime(q) {
                return Err(Error::InvalidRing(format!(
                    "RNS basis entry {i}: q = {q} is not an odd prime below 2^{MAX_MODULUS_BITS}"
                )));
            }
            if primes[..i].iter().any(|p| p.0 == q) {
                return Err(Error::InvalidRing(format!("RNS basis entry {i}: q = {q} appears twice")));
            }
        }
        Ok(Self::from_moduli(primes.iter().map(|p| Modulus::new(p.0)).collect()))
    }

    /// Distinct primes are coprime, so every `Q / q_i` is invertible mod `q_i`.
    fn from_moduli(moduli: Vec<Modulus>) -> RnsBasis {
        let q_hat_inv = (0..moduli.len())
            .map(|i| {
                let q = moduli[i].q;
                shoup_const(inv_mod(q_hat_mod(&moduli, i, q), q), q)
            })
            .collect();
        RnsBasis { moduli, q_hat_inv }
    }

    /// Number of primes (limbs).
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always false: a basis has at least one prime.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The arithmetic of prime `i`. Panics when `i >= len()`, like slice indexing.
    pub fn modulus(&self, i: usize) -> &Modulus {
        &self.moduli[i]
    }

    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    pub fn primes(&self) -> Vec<u64> {
        self.moduli.iter().map(|m| m.q).collect()
    }

    /// `log2(Q)`, for reports and security checks only (never for a ciphertext word).
    pub fn log2_product(&self) -> f64 {
        self.moduli.iter().map(|m| (m.q as f64).log2()).sum()
    }

    /// The basis of the first `k` primes (a CKKS level), with its own `q_hat_inv`.
    /// Panics unless `1 <= k <= len()`: levels are checked where the caller can say which.
    pub fn prefix(&self, k: usize) -> RnsBasis {
        assert!(k >= 1 && k <= self.len(), "prefix({k}) of a basis of {} primes", self.len());
        Self::from_moduli(self.moduli[..k].to_vec())
    }

    /// `(Q / q_i)^{-1} mod q_i` with Shoup companions, one per prime.
    pub fn q_hat_inv(&self) -> &[ShoupConst] {
        &self.q_hat_inv
    }
}

/// Coefficients per block in [`BaseConverter`]: the block's `la` scaled limbs stay in L1
/// (`256 * 8 * la` bytes) while every output prime sweeps them.
const BLOCK: usize = 256;

/// Fast base conversion (Bajard et al. 2016; Halevi-Polyakov-Shoup 2019) from a basis
/// `A = {q_i}` (product `Q_A`) to a basis `B = {p_j}`, the ModUp step of hybrid key
/// switching. For each coefficient with residues `x_i < q_i`:
///
/// ```text
/// t_i = [x_i * (Q_A/q_i)^{-1}]_{q_i}                   (in [0, q_i))
/// y_j = ( sum_i t_i * ((Q_A/q_i) mod p_j) ) mod p_j
/// ```
///
/// Over the integers `sum_i t_i (Q_A/q_i) = x + u Q_A` with `x in [0, Q_A)` the CRT value
/// and `0 <= u < len(A)` (each term is below `Q_A`, and the sum is `x mod Q_A`), so
/// `y_j = (x + u Q_A) mod p_j`: the conversion is exact up to a small multiple of `Q_A`,
/// which hybrid key switching absorbs as noise. `B` may be any basis; for key switching
/// it is disjoint from `A`.
#[derive(Clone, Debug)]
pub struct BaseConverter {
    from: Vec<Modulus>,
    q_hat_inv: Vec<ShoupConst>,
    to: Vec<Modulus>,
    /// `q_hat_mod_p[j * len(A) + i] = (Q_A / q_i) mod p_j`: one contiguous row per output
    /// prime, read `n` times per conversion.
    q_hat_mod_p: Vec<u64>,
    /// How many products `t_i * w_ij < (max q_i)(max p_j) <= (2^62 - 1)^2 < 2^124` a
    /// `u128` holds on top of a folded value `< 2^62`: at least 15 (at least 255 for
    /// primes below `2^60`), so with a few input limbs one reduction per word suffices.
    lazy_terms: usize,
}

impl BaseConverter {
    pub fn new(from: &RnsBasis, to: &RnsBasis) -> BaseConverter {
        let q_hat_mod_p =
            to.moduli.iter().flat_map(|p| (0..from.len()).map(move |i| q_hat_mod(&from.moduli, i, p.q))).collect();
        let max_q = from.moduli.iter().map(|m| m.q - 1).max().unwrap_or(1) as u128;
        let max_p = to.moduli.iter().map(|m| m.q - 1).max().unwrap_or(1) as u128;
        let lazy_terms = ((u128::MAX - (1u128 << MAX_MODULUS_BITS)) / (max_q * max_p).max(1)) as usize;
        BaseConverter {
            from: from.moduli.clone(),
            q_hat_inv: from.q_hat_inv.clone(),
            to: to.moduli.clone(),
            q_hat_mod_p,
            lazy_terms: lazy_terms.max(1),
        }
    }

    /// Number of input limbs (`len(A)`).
    pub fn from_len(&self) -> usize {
        self.from.len()
    }

    /// Number of output limbs (`len(B)`).
    pub fn to_len(&self) -> usize {
        self.to.len()
    }

    /// The input primes `q_i` (basis `A`), in limb order.
    pub fn sources(&self) -> &[Modulus] {
        &self.from
    }

    /// The output primes `p_j` (basis `B`), in limb order.
    pub fn targets(&self) -> &[Modulus] {
        &self.to
    }

    /// `(Q_A / q_i)^{-1} mod q_i` with Shoup companions, one per input prime.
    pub fn q_hat_inv(&self) -> &[ShoupConst] {
        &self.q_hat_inv
    }

    /// Output prime `j`'s constants `(Q_A / q_i) mod p_j`, one per input prime. Panics
    /// when `j >= to_len()`.
    pub fn row(&self, j: usize) -> &[u64] {
        let la = self.from.len();
        &self.q_hat_mod_p[j * la..(j + 1) * la]
    }

    /// `output` (limb-major over `B`, `len(B) * n` words) from `input` (limb-major over
    /// `A`, coefficient form, `len(A) * n` words, each `< q_i`). Single-threaded: callers
    /// parallelise over polynomials or coefficient ranges. Panics on wrong lengths.
    pub fn convert(&self, n: usize, input: &[u64], output: &mut [u64]) {
        assert_eq!(output.len(), self.to.len() * n, "output must hold len(B) * n words");
        self.convert_blocks(n, input, |j, start, y| output[j * n + start..][..y.len()].copy_from_slice(y));
    }

    /// The conversion, handing each finished run of output words to `sink(j, start, y)`
    /// (`y` = limb `j`, coefficients `start ..`), so ModDown fuses its subtraction.
    fn convert_blocks(&self, n: usize, input: &[u64], mut sink: impl FnMut(usize, usize, &[u64])) {
        let la = self.from.len();
        assert_eq!(input.len(), la * n, "input must hold len(A) * n words");
        let mut t = vec![0u64; la * BLOCK.min(n)];
        let mut y = [0u64; BLOCK];
        for start in (0..n).step_by(BLOCK) {
            let len = BLOCK.min(n - start);
            // Coefficient-major inside the block, so each output word reads `la` adjacent words.
            for (i, (qi, &(w, ws))) in self.from.iter().zip(&self.q_hat_inv).enumerate() {
                for (c, &x) in input[i * n + start..][..len].iter().enumerate() {
                    debug_assert!(x < qi.q);
                    t[c * la + i] = csub(mul_shoup_lazy(x, w, ws, qi.q), qi.q);
                }
            }
            let t = &t[..len * la];
            for (j, p) in self.to.iter().enumerate() {
                let row = &self.q_hat_mod_p[j * la..][..la];
                if la <= self.lazy_terms {
                    dot_block(la, t, row, &mut y[..len], p);
                } else {
                    for (yc, tc) in y.iter_mut().zip(t.chunks_exact(la)) {
                        let mut folded = 0u64;
                        for (tk, wk) in tc.chunks(self.lazy_terms).zip(row.chunks(self.lazy_terms)) {
                            let acc = tk.iter().zip(wk).fold(folded as u128, |a, (&t, &w)| a + t as u128 * w as u128);
                            folded = p.reduce_u128(acc);
                        }
                        *yc = folded;
                    }
                }
                sink(j, start, &y[..len]);
            }
        }
    }
}

/// One output limb's words for a block: `y[c] = sum_k t[c la + k] row[k] mod p`, with
/// the sum of `la` products fitting a `u128` (the caller checks). Up to 8 terms (the
/// common digit and special-prime counts) the count is a compile-time constant, so the
/// dot product unrolls.
pub(crate) fn dot_block(la: usize, t: &[u64], row: &[u64], y: &mut [u64], p: &Modulus) {
    match la {
        1 => dot_rows::<1>(t, row, y, p),
        2 => dot_rows::<2>(t, row, y, p),
        3 => dot_rows::<3>(t, row, y, p),
        4 => dot_rows::<4>(t, row, y, p),
        5 => dot_rows::<5>(t, row, y, p),
        6 => dot_rows::<6>(t, row, y, p),
        7 => dot_rows::<7>(t, row, y, p),
        8 => dot_rows::<8>(t, row, y, p),
        _ => {
            for (yc, tc) in y.iter_mut().zip(t.chunks_exact(la)) {
                let acc = tc.iter().zip(row).fold(0u128, |a, (&t, &w)| a + t as u128 * w as u128);
                *yc = p.reduce_u128(acc);
            }
        }
    }
}

/// [`dot_block`] with the term count `LA` known at compile time.
#[inline(always)]
fn dot_rows<const LA: usize>(t: &[u64], row: &[u64], y: &mut [u64], p: &Modulus) {
    let row: &[u64; LA] = row.try_into().expect("row of len(A) constants");
    for (yc, tc) in y.iter_mut().zip(t.chunks_exact(LA)) {
        let mut acc = 0u128;
        for k in 0..LA {
            acc += tc[k] as u128 * row[k] as u128;
        }
        *yc = p.reduce_u128(acc);
    }
}

/// `x[k] = (x[k] - y[k]) * scale mod q` for words `x[k], y[k] < q`, `scale < q` with
/// `scale_shoup = shoup(scale, q)`; results `< q`. The last step of ModDown and rescale,
/// in either coefficient or evaluation form (it is elementwise).
pub fn sub_and_scale(q: &Modulus, x: &mut [u64], y: &[u64], scale: u64, scale_shoup: u64) {
    assert_eq!(x.len(), y.len());
    for (a, &b) in x.iter_mut().zip(y) {
        debug_assert!(*a < q.q && b < q.q);
        // `a + q - b` is in `(0, 2q)`: no wrap, and `mul_shoup_lazy` takes any 64-bit input.
        *a = csub(mul_shoup_lazy(*a + q.q - b, scale, scale_shoup, q.q), q.q);
    }
}

/// ModDown: from `x` over `Q ∪ P` to `round(x / P)` over `Q`:
///
/// ```text
/// y_i = (x_i - d_i) * P^{-1} mod q_i
/// ```
///
/// with `d` the centered remainder of `x` modulo `P` from the
/// [`crate::ring::moddown::RoundingConverter`] (its doc pins the formula).
#[derive(Clone, Debug)]
pub struct ModDown {
    conv: RoundingConverter,
    p_inv_mod_q: Vec<ShoupConst>,
}

impl ModDown {
    /// `Q` and `P` must share no prime (else `P` has no inverse mod `Q`): `Error::InvalidRing`.
    pub fn new(q: &RnsBasis, p: &RnsBasis) -> Result<ModDown> {
        let conv = RoundingConverter::new(p, q)?;
        let p_inv_mod_q = q
            .moduli
            .iter()
            .map(|qi| shoup_const(inv_mod(product_mod(p.moduli.iter().map(|p| p.q), qi.q), qi.q), qi.q))
            .collect();
        Ok(ModDown { conv, p_inv_mod_q })
    }

    /// In place on `q_limbs` (`len(Q) * n` words), given `p_limbs` (`len(P) * n` words),
    /// both limb-major in coefficient form.
    pub fn apply(&self, n: usize, q_limbs: &mut [u64], p_limbs: &[u64]) {
        let mut d = vec![0u64; q_limbs.len()];
        self.conv.convert(n, p_limbs, &mut d);
        let primes = self.conv.to_primes();
        for (i, (x, d)) in q_limbs.chunks_mut(n).zip(d.chunks(n)).enumerate() {
            let (s, ss) = self.p_inv_mod_q[i];
            sub_and_scale(&Modulus::new(primes[i]), x, d, s, ss);
        }
    }

    /// The `P -> Q` centered-remainder map, for callers that NTT its output before
    /// subtracting in evaluation form (then [`sub_and_scale`] with [`ModDown::p_inv_mod_q`]).
    pub fn converter(&self) -> &RoundingConverter {
        &self.conv
    }

    /// `P^{-1} mod q_i` with Shoup companions, one per prime of `Q`.
    pub fn p_inv_mod_q(&self) -> &[ShoupConst] {
        &self.p_inv_mod_q
    }
}

/// `d mod q_i` for each word `x < q_last` of a limb of `q_last`, where `d` is the centered
/// remainder: with `h = floor(q_last / 2)`, `r = (x + h) mod q_last` and `d = r - h`, a
/// signed integer in `[-h, q_last - h)`. `q_last` may be larger or smaller than `q_i`.
/// Computed as `d mod q_i = ((r mod q_i) - (h mod q_i)) mod q_i`.
pub fn centered_remainder_to(q_last: &Modulus, q_i: &Modulus, input: &[u64], out: &mut [u64]) {
    assert_eq!(input.len(), out.len());
    let h = q_last.q / 2;
    let h_mod = q_i.reduce(h);
    for (o, &x) in out.iter_mut().zip(input) {
        *o = centered_mod(x, q_last.q, h, q_i, h_mod);
    }
}

#[inline(always)]
fn centered_mod(x: u64, q_last: u64, h: u64, q_i: &Modulus, h_mod: u64) -> u64 {
    debug_assert!(x < q_last);
    // `x + h < 2 q_last < 2^63`, so `r` is one conditional subtraction.
    let r = csub(x + h, q_last);
    q_i.sub(q_i.reduce(r), h_mod)
}

/// Rescale by the last prime of a basis `q_0, ..., q_l` (`l >= 1`): divide by `q_l` with
/// rounding, leaving a polynomial over `q_0, ..., q_{l-1}`. Per coefficient, with `d` the
/// centered remainder of `x_l` ([`centered_remainder_to`]):
///
/// ```text
/// y_i = (x_i - (d mod q_i)) * q_l^{-1} mod q_i          (i < l)
/// ```
///
/// so `y = (x - d) / q_l = round(x / q_l)` exactly (halves would round up; an odd `q_l`
/// has none), for `x` read as its centered representative mod `Q` as well.
#[derive(Clone, Debug)]
pub struct Rescaler {
    last: Modulus,
    rest: Vec<Modulus>,
    q_last_inv: Vec<ShoupConst>,
}

impl Rescaler {
    /// A basis of one prime has nothing to rescale by: `Error::Level`.
    pub fn new(basis: &RnsBasis) -> Result<Rescaler> {
        let l = basis.len() - 1;
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let last = basis.moduli[l];
        let rest = basis.moduli[..l].to_vec();
        let q_last_inv = rest.iter().map(|qi| shoup_const(inv_mod(last.q % qi.q, qi.q), qi.q)).collect();
        Ok(Rescaler { last, rest, q_last_inv })
    }

    /// In place, coefficient form: `limbs` holds `(l + 1) * n` words, limb-major; the first
    /// `l * n` become the result and the last limb is left as it was.
    pub fn apply_coeff(&self, n: usize, limbs: &mut [u64]) {
        let l = self.rest.len();
        assert_eq!(limbs.len(), (l + 1) * n, "limbs must hold (l + 1) * n words");
        let (head, last) = limbs.split_at_mut(l * n);
        let h = self.last.q / 2;
        for ((qi, &(s, ss)), xi) in self.rest.iter().zip(&self.q_last_inv).zip(head.chunks_exact_mut(n)) {
            let h_mod = qi.reduce(h);
            for (a, &xl) in xi.iter_mut().zip(last.iter()) {
                let d = centered_mod(xl, self.last.q, h, qi, h_mod);
                *a = csub(mul_shoup_lazy(*a + qi.q - d, s, ss, qi.q), qi.q);
            }
        }
    }

    /// The prime divided out, `q_l`.
    pub fn last_modulus(&self) -> &Modulus {
        &self.last
    }

    /// `q_l^{-1} mod q_i` with Shoup companions, for `i < l`.
    pub fn q_last_inv_mod_q(&self) -> &[ShoupConst] {
        &self.q_last_inv
    }
}

#[cfg(test)]
mod tests;
