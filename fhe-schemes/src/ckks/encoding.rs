//! Canonical-embedding encode and decode, deterministic on every platform.
//!
//! Slot `j` of a plaintext `m(X)` is `m(zeta^(5^j mod 2N))`, `zeta = exp(i pi / N)`, so a
//! rotation by `k` slots is the automorphism `X -> X^(5^k)` and conjugation is
//! `X -> X^(2N - 1)` (`ring::automorphism` uses this convention). With `n < N/2` slots
//! the message lives in the subring of `X^(N/2n)` (sparse packing, as Lattigo and
//! OpenFHE do) and every slot repeats `N/2n` times in the full embedding.
//!
//! Encoding: special inverse FFT ([`super::fft`], roots from double-double arithmetic,
//! no libm), times the scale, rounded to the nearest integer (`f64::round`, halves away
//! from zero, exact), reduced mod each prime. Decoding: the exact CRT to the centered
//! integer in multiprecision, rounded once to `f64` (correctly), divided by the scale,
//! then the special FFT. Only IEEE-rounded operations in a fixed order touch the words,
//! so every platform encodes a vector to the same plaintext.

use std::cmp::Ordering;

use super::fft::{special_fft, special_ifft};
use fhe_api::ckks::params::{mp_bits, mp_cmp, mp_product, Params};
use fhe_api::ckks::scale::pow2;
use fhe_api::error::{Error, Result};
use fhe_api::ring::modulus::{csub, mul_shoup_lazy, Modulus};
use fhe_api::ring::rns::RnsBasis;
use fhe_api::ring::{PolynomialSize, RingModulus};

/// A complex number: the value of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Complex {
    pub re: f64,
    pub im: f64,
}

impl Complex {
    pub const fn new(re: f64, im: f64) -> Complex {
        Complex { re, im }
    }

    /// The imaginary unit.
    pub const I: Complex = Complex::new(0.0, 1.0);

    pub fn conj(self) -> Complex {
        Complex::new(self.re, -self.im)
    }

    /// `|z|`.
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
}

impl From<f64> for Complex {
    fn from(re: f64) -> Complex {
        Complex::new(re, 0.0)
    }
}

impl std::ops::Add for Complex {
    type Output = Complex;
    fn add(self, b: Complex) -> Complex {
        Complex::new(self.re + b.re, self.im + b.im)
    }
}

impl std::ops::Sub for Complex {
    type Output = Complex;
    fn sub(self, b: Complex) -> Complex {
        Complex::new(self.re - b.re, self.im - b.im)
    }
}

impl std::ops::Neg for Complex {
    type Output = Complex;
    fn neg(self) -> Complex {
        Complex::new(-self.re, -self.im)
    }
}

/// The schoolbook product, in this order of operations (no FMA): the encoding's FFT
/// relies on it for the same words on every platform.
impl std::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, b: Complex) -> Complex {
        Complex::new(self.re * b.re - self.im * b.im, self.re * b.im + self.im * b.re)
    }
}

/// Multiplication by a real.
impl std::ops::Mul<f64> for Complex {
    type Output = Complex;
    fn mul(self, s: f64) -> Complex {
        Complex::new(self.re * s, self.im * s)
    }
}

impl std::ops::AddAssign for Complex {
    fn add_assign(&mut self, b: Complex) {
        *self = *self + b;
    }
}

impl std::ops::SubAssign for Complex {
    fn sub_assign(&mut self, b: Complex) {
        *self = *self - b;
    }
}

impl std::ops::MulAssign for Complex {
    fn mul_assign(&mut self, b: Complex) {
        *self = *self * b;
    }
}

/// An extended plaintext's limbs over `Q_level`, over `P`, and its integers when each
/// is below `2^63` in magnitude ([`Encoder::encode_extended`]).
pub type ExtendedInts = (Vec<u64>, Vec<u64>, Option<Vec<i64>>);

/// Coefficients, once scaled and rounded, must be below this in magnitude (they pass
/// through `i128`).
const MAX_COEFF_LOG2: i32 = 126;

/// Encodes slot vectors to RNS plaintext polynomials of one parameter set, and back.
#[derive(Clone, Debug)]
pub struct Encoder {
    n: usize,
    /// The whole chain `q[0..=max_level]`; level `l` uses its first `l + 1` primes.
    basis: RnsBasis,
}

impl Encoder {
    /// An encoder for `params`: any `N = 2^2 .. 2^17` and any RNS basis (distinct primes
    /// below `2^62`). A security check is not its business, so tests may build tiny rings.
    pub fn new(params: &Params) -> Result<Encoder> {
        Encoder::for_ring(params.ring_degree(), params.q())
    }

    /// An encoder for the ring of degree `n` over the primes `q` (level `l` uses the first
    /// `l + 1`).
    pub fn for_ring(n: PolynomialSize, q: &[RingModulus]) -> Result<Encoder> {
        let n = n.0;
        if !n.is_power_of_two() || !(4..=1 << 17).contains(&n) {
            return Err(Error::InvalidRing(format!("CKKS encoding needs N a power of two in 2^2 .. 2^17, not {n}")));
        }
        Ok(Encoder { n, basis: RnsBasis::new(q)? })
    }

    /// Slots at full packing, `N / 2`.
    pub fn slots(&self) -> usize {
        self.n / 2
    }

    /// [`Encoder::encode_with_slots`] at full packing.
    pub fn encode(&self, values: &[Complex], scale: f64, level: usize) -> Result<Vec<u64>> {
        self.encode_with_slots(values, self.slots(), scale, level)
    }

    /// Real values at full packing (imaginary parts zero).
    pub fn encode_real(&self, values: &[f64], scale: f64, level: usize) -> Result<Vec<u64>> {
        let v: Vec<Complex> = values.iter().map(|&re| Complex::new(re, 0.0)).collect();
        self.encode(&v, scale, level)
    }

    /// `values` (zero-padded to `slots`, a power of two `<= N/2`) times `scale`, as a
    /// plaintext in RNS coefficient form: `level + 1` limbs of `N` words, limb `i`
    /// reduced mod `q_i` (limb-major; a backend NTTs it). Errors: too many values, a bad
    /// slot count, level or scale, or a scaled coefficient not finite or `>= 2^126`.
    pub fn encode_with_slots(&self, values: &[Complex], slots: usize, scale: f64, level: usize) -> Result<Vec<u64>> {
        self.check_shape(slots, scale, level)?;
        self.encode_over(values, slots, scale, &self.basis.moduli()[..=level])
    }

    /// [`Encoder::encode_with_slots`] over `q_0 .. q_level` and over `special` (the
    /// special primes): the same integers reduced mod each, for an extended plaintext;
    /// and the `N` integers themselves when every one is below `2^63` in magnitude
    /// (`None` otherwise: what a compact plaintext keeps,
    /// `CkksOps::upload_plaintext_compact`).
    pub fn encode_extended(
        &self,
        values: &[Complex],
        slots: usize,
        scale: f64,
        level: usize,
        special: &[Modulus],
    ) -> Result<ExtendedInts> {
        self.check_shape(slots, scale, level)?;
        let mut moduli = self.basis.moduli()[..=level].to_vec();
        moduli.extend_from_slice(special);
        let (mut all, ints) = self.encode_over_ints(values, slots, scale, &moduli, true)?;
        let p = all.split_off((level + 1) * self.n);
        Ok((all, p, ints))
    }

    /// The rounded coefficients of `values` at `scale`, reduced mod each of `moduli`.
    fn encode_over(&self, values: &[Complex], slots: usize, scale: f64, moduli: &[Modulus]) -> Result<Vec<u64>> {
        Ok(self.encode_over_ints(values, slots, scale, moduli, false)?.0)
    }

    /// [`Encoder::encode_over`], and with `want_ints` the integers when all are below
    /// `2^63` in magnitude.
    fn encode_over_ints(
        &self,
        values: &[Complex],
        slots: usize,
        scale: f64,
        moduli: &[Modulus],
        want_ints: bool,
    ) -> Result<(Vec<u64>, Option<Vec<i64>>)> {
        if values.len() > slots {
            return Err(Error::InvalidInput(format!("{} values for {slots} slots", values.len())));
        }
        let mut w = values.to_vec();
        w.resize(slots, Complex::default());
        special_ifft(&mut w, self.n);
        let (n, gap) = (self.n, self.n / (2 * slots));
        let mut out = vec![0u64; moduli.len() * n];
        let mut ints = want_ints.then(|| vec![0i64; n]);
        let bound = pow2(MAX_COEFF_LOG2);
        for (i, wi) in w.iter().enumerate() {
            for (idx, x) in [(i * gap, wi.re), (n / 2 + i * gap, wi.im)] {
                let c = (x * scale).round();
                if !c.is_finite() || c.abs() >= bound {
                    return Err(Error::InvalidInput(format!(
                        "encoded coefficient {c:e} (value x scale {scale:e}) is not finite or not below 2^{MAX_COEFF_LOG2}"
                    )));
                }
                let (neg, mag) = (c < 0.0, c.abs() as u128); // exact: an integer below 2^126
                if let Some(v) = ints.as_mut() {
                    match i64::try_from(mag) {
                        Ok(m) => v[idx] = if neg { -m } else { m },
                        Err(_) => ints = None,
                    }
                }
                for (limb, m) in out.chunks_exact_mut(n).zip(moduli) {
                    let r = if mag >> 64 == 0 { m.reduce(mag as u64) } else { (mag % m.q as u128) as u64 };
                    limb[idx] = if neg && r != 0 { m.q - r } else { r };
                }
            }
        }
        Ok((out, ints))
    }

    /// The slots of a plaintext in RNS coefficient form (`level + 1` limbs of `N` words,
    /// limb-major, each word below its prime), at `scale`, read with `slots` slots.
    /// Coefficients outside the `slots`-subring are not read: that projection averages
    /// each slot over its `N / 2slots` replicas (`j, j + slots, ...` of the full
    /// embedding), which is the slot itself for a polynomial in the subring.
    pub fn decode(&self, coeffs: &[u64], level: usize, scale: f64, slots: usize) -> Result<Vec<Complex>> {
        self.check_shape(slots, scale, level)?;
        let n = self.n;
        if coeffs.len() != (level + 1) * n {
            return Err(Error::InvalidInput(format!(
                "{} words for level {level}: need {} limbs of N = {n}",
                coeffs.len(),
                level + 1
            )));
        }
        for (i, (limb, m)) in coeffs.chunks_exact(n).zip(self.basis.moduli()).enumerate() {
            let q = m.q;
            if let Some(j) = limb.iter().position(|&c| c >= q) {
                return Err(Error::InvalidInput(format!("word {} of limb {i} is {} >= q_{i} = {q}", j, limb[j])));
            }
        }
        let crt = Crt::new(self.basis.prefix(level + 1));
        let gap = n / (2 * slots);
        let mut scratch = crt.scratch();
        let mut residues = vec![0u64; level + 1];
        let mut value = |idx: usize| {
            for (r, limb) in residues.iter_mut().zip(coeffs.chunks_exact(n)) {
                *r = limb[idx];
            }
            crt.to_f64(&residues, &mut scratch) / scale
        };
        let mut w: Vec<Complex> = (0..slots).map(|i| Complex::new(value(i * gap), value(n / 2 + i * gap))).collect();
        special_fft(&mut w, n);
        Ok(w)
    }

    /// The real parts of [`Encoder::decode`].
    pub fn decode_real(&self, coeffs: &[u64], level: usize, scale: f64, slots: usize) -> Result<Vec<f64>> {
        Ok(self.decode(coeffs, level, scale, slots)?.into_iter().map(|z| z.re).collect())
    }

    fn check_shape(&self, slots: usize, scale: f64, level: usize) -> Result<()> {
        if !slots.is_power_of_two() || slots > self.n / 2 {
            return Err(Error::InvalidInput(format!(
                "{slots} slots: must be a power of two up to N/2 = {}",
                self.n / 2
            )));
        }
        if level >= self.basis.len() {
            return Err(Error::InvalidInput(format!(
                "level {level}: the chain's top level is {}",
                self.basis.len() - 1
            )));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidInput(format!("scale {scale}: must be positive and finite")));
        }
        Ok(())
    }
}

/// The CRT of one basis `q_0 .. q_l`: `x = sum_i [c_i (Q/q_i)^-1]_{q_i} (Q/q_i) mod Q`,
/// in 64-bit limbs. The sum is below `(l + 1) Q`, so a quotient estimate from the top
/// 128 bits (low by at most one or two) and a final comparison reduce it exactly.
struct Crt {
    /// The primes with `(Q / q_i)^-1 mod q_i`.
    basis: RnsBasis,
    big_q: Vec<u64>,
    /// `floor(Q / 2)`: residues above it are negative.
    half_q: Vec<u64>,
    /// `Q / q_i`, each padded to `big_q.len()` limbs.
    q_hat: Vec<Vec<u64>>,
    /// Bit offset of the top 64 bits of `Q`, and those bits plus one (the divisor of the
    /// quotient estimate, rounded up so the estimate never exceeds the quotient).
    shift: u32,
    q_top: u128,
}

impl Crt {
    fn new(basis: RnsBasis) -> Crt {
        let q = basis.primes();
        let big_q = mp_product(&q);
        let len = big_q.len();
        let mut half_q = big_q.clone();
        shr1(&mut half_q);
        let q_hat = (0..q.len())
            .map(|i| {
                let others: Vec<u64> = q.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &x)| x).collect();
                let mut h = mp_product(&others);
                h.resize(len, 0);
                h
            })
            .collect();
        let shift = mp_bits(&big_q).saturating_sub(64);
        let q_top = extract_u128(&big_q, shift) + 1;
        Crt { basis, big_q, half_q, q_hat, shift, q_top }
    }

    /// A buffer for [`Crt::to_f64`]: `Q`'s limbs plus one for the sum's carry.
    fn scratch(&self) -> Vec<u64> {
        vec![0; self.big_q.len() + 1]
    }

    /// The centered integer with residues `c_i`, rounded to the nearest `f64`.
    fn to_f64(&self, c: &[u64], acc: &mut [u64]) -> f64 {
        acc.fill(0);
        for (i, (&ci, &(w, ws))) in c.iter().zip(self.basis.q_hat_inv()).enumerate() {
            let qi = self.basis.modulus(i).q;
            let y = csub(mul_shoup_lazy(ci, w, ws, qi), qi);
            add_mul_small(acc, &self.q_hat[i], y);
        }
        // acc < (l + 1) Q: subtract floor-estimate * Q, then at most a few Q.
        let t = extract_u128(acc, self.shift) / self.q_top;
        sub_mul_small(acc, &self.big_q, t as u64);
        while mp_cmp(acc, &self.big_q) != Ordering::Less {
            sub_mul_small(acc, &self.big_q, 1);
        }
        if mp_cmp(acc, &self.half_q) == Ordering::Greater {
            // x - Q < 0: its magnitude is Q - x.
            sub_from(&self.big_q, acc);
            -to_f64_rounded(acc)
        } else {
            to_f64_rounded(acc)
        }
    }
}

/// `acc += a * y` (`acc` one limb longer than `a`; the caller bounds the sum).
fn add_mul_small(acc: &mut [u64], a: &[u64], y: u64) {
    let mut carry = 0u128;
    for (s, &x) in acc.iter_mut().zip(a) {
        let t = *s as u128 + x as u128 * y as u128 + carry;
        *s = t as u64;
        carry = t >> 64;
    }
    for s in acc[a.len()..].iter_mut() {
        let t = *s as u128 + carry;
        *s = t as u64;
        carry = t >> 64;
    }
    debug_assert_eq!(carry, 0);
}

/// `acc -= a * y`, given `a * y <= acc`.
fn sub_mul_small(acc: &mut [u64], a: &[u64], y: u64) {
    let mut borrow = 0u128; // what the next limb still owes, < 2^64
    for (i, s) in acc.iter_mut().enumerate() {
        let sub = a.get(i).map_or(0, |&x| x as u128 * y as u128) + borrow;
        let (lo, hi) = (sub as u64, (sub >> 64) as u64);
        let (d, under) = s.overflowing_sub(lo);
        *s = d;
        borrow = hi as u128 + under as u128;
    }
    debug_assert_eq!(borrow, 0);
}

/// `x <- a - x`, given `x <= a` (`x` may be longer, with zero high limbs).
fn sub_from(a: &[u64], x: &mut [u64]) {
    let mut borrow = false;
    for (i, s) in x.iter_mut().enumerate() {
        let (d, u1) = a.get(i).copied().unwrap_or(0).overflowing_sub(*s);
        let (d, u2) = d.overflowing_sub(borrow as u64);
        *s = d;
        borrow = u1 || u2;
    }
    debug_assert!(!borrow);
}

/// Bits `[shift, shift + 128)` of `x`.
fn extract_u128(x: &[u64], shift: u32) -> u128 {
    let (limb, bit) = ((shift / 64) as usize, shift % 64);
    let get = |i: usize| x.get(i).copied().unwrap_or(0) as u128;
    let lo = get(limb) | get(limb + 1) << 64;
    if bit == 0 {
        lo
    } else {
        lo >> bit | get(limb + 2) << (128 - bit)
    }
}

/// `x >>= 1`.
fn shr1(x: &mut [u64]) {
    let mut carry = 0;
    for limb in x.iter_mut().rev() {
        let next = *limb & 1;
        *limb = *limb >> 1 | carry << 63;
        carry = next;
    }
}

/// The `f64` nearest a non-negative multiprecision integer (ties to even; infinity at
/// `2^1024` and above): its top 64 bits with a sticky bit for the rest, converted by
/// the correctly rounded `u64 -> f64`, then scaled by an exact power of two.
fn to_f64_rounded(x: &[u64]) -> f64 {
    let bits = mp_bits(x);
    if bits <= 64 {
        return x[0] as f64;
    }
    if bits > 1024 {
        return f64::INFINITY;
    }
    let shift = bits - 64;
    let top = extract_u128(x, shift) as u64;
    let (limb, bit) = ((shift / 64) as usize, shift % 64);
    let sticky = x[..limb].iter().any(|&l| l != 0) || x[limb] & ((1u64 << bit) - 1) != 0;
    (top | sticky as u64) as f64 * pow2(shift as i32)
}

#[cfg(test)]
mod tests;
