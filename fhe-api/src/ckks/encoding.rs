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
use super::params::{mp_bits, mp_cmp, mp_product, pow2, CkksParams};
use crate::error::{Error, Result};
use crate::ring::modulus::{csub, mul_shoup_lazy};
use crate::ring::rns::RnsBasis;

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

    #[allow(clippy::should_implement_trait)]
    pub fn add(self, b: Complex) -> Complex {
        Complex::new(self.re + b.re, self.im + b.im)
    }

    #[allow(clippy::should_implement_trait)]
    pub fn sub(self, b: Complex) -> Complex {
        Complex::new(self.re - b.re, self.im - b.im)
    }

    /// The schoolbook product, in this order of operations (no FMA).
    #[allow(clippy::should_implement_trait)]
    pub fn mul(self, b: Complex) -> Complex {
        Complex::new(self.re * b.re - self.im * b.im, self.re * b.im + self.im * b.re)
    }

    pub fn conj(self) -> Complex {
        Complex::new(self.re, -self.im)
    }

    /// Multiplication by a real.
    pub fn scale(self, s: f64) -> Complex {
        Complex::new(self.re * s, self.im * s)
    }
}

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
    pub fn new(params: &CkksParams) -> Result<Encoder> {
        let n = params.n();
        if !n.is_power_of_two() || !(4..=1 << 17).contains(&n) {
            return Err(Error::InvalidRing(format!("CKKS encoding needs N a power of two in 2^2 .. 2^17, not {n}")));
        }
        Ok(Encoder { n, basis: RnsBasis::new(&params.q)? })
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
        if values.len() > slots {
            return Err(Error::InvalidInput(format!("{} values for {slots} slots", values.len())));
        }
        let mut w = values.to_vec();
        w.resize(slots, Complex::default());
        special_ifft(&mut w, self.n);
        let (n, gap) = (self.n, self.n / (2 * slots));
        let moduli = &self.basis.moduli()[..=level];
        let mut out = vec![0u64; (level + 1) * n];
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
                for (limb, m) in out.chunks_exact_mut(n).zip(moduli) {
                    let r = if mag >> 64 == 0 { m.reduce(mag as u64) } else { (mag % m.q as u128) as u64 };
                    limb[idx] = if neg && r != 0 { m.q - r } else { r };
                }
            }
        }
        Ok(out)
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
mod tests {
    use super::*;
    use crate::ckks::fft::roots;
    use crate::ckks::params::{CkksPreset, SecretDist, CKKS_NOISE_ETA};
    use crate::params::{PolynomialSize, RingModulus};
    use crate::ring::math::{inv_mod, mul_mod};
    use crate::ring::prime::primes_below;
    use num_bigint::BigInt;
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use sha2::{Digest, Sha256};

    fn random_values(seed: u64, count: usize) -> Vec<Complex> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut unit = || (rng.next_u64() >> 11) as f64 * pow2(-52) - 1.0;
        (0..count).map(|_| Complex::new(unit(), unit())).collect()
    }

    fn max_err(a: &[Complex], b: &[Complex]) -> f64 {
        a.iter().zip(b).map(|(x, y)| (x.re - y.re).abs().max((x.im - y.im).abs())).fold(0.0, f64::max)
    }

    /// A tiny ring for hand-checkable identities: N = 16 and two 50-bit primes.
    fn tiny() -> CkksParams {
        let n = PolynomialSize(16);
        CkksParams {
            name: "tiny".into(),
            ring_degree: n,
            scale_bits: 30,
            q: primes_below(50, n, 2, &[]).unwrap().into_iter().map(RingModulus).collect(),
            p: vec![],
            dnum: 1,
            secret: SecretDist::Ternary,
            noise_eta: CKKS_NOISE_ETA,
        }
    }

    #[test]
    fn round_trip_within_2_to_the_minus_30() {
        for preset in [CkksPreset::Slots4096Scale40Depth2, CkksPreset::Slots32768Scale40Depth34] {
            let p = preset.params();
            let enc = Encoder::new(p).unwrap();
            for slots in [p.slots(), 1024, 1] {
                for level in [0, p.max_level()] {
                    let v = random_values(slots as u64, slots);
                    let pt = enc.encode_with_slots(&v, slots, p.default_scale(), level).unwrap();
                    assert_eq!(pt.len(), (level + 1) * p.n());
                    let back = enc.decode(&pt, level, p.default_scale(), slots).unwrap();
                    let e = max_err(&back, &v);
                    assert!(e < pow2(-30), "{preset} slots {slots} level {level}: {e:e}");
                }
            }
        }
    }

    #[test]
    fn sparse_plaintexts_live_in_the_subring() {
        let p = CkksPreset::Slots4096Scale40Depth2.params();
        let enc = Encoder::new(p).unwrap();
        let pt = enc.encode_with_slots(&random_values(7, 64), 64, p.default_scale(), 1).unwrap();
        let gap = p.n() / 128;
        for (i, &c) in pt.iter().enumerate() {
            assert!((i % p.n()).is_multiple_of(gap) || c == 0, "coefficient {i}");
        }
        // Fewer values than slots are zero-padded.
        let short = enc.encode_real(&[1.5, -2.0], p.default_scale(), 0).unwrap();
        let back = enc.decode_real(&short, 0, p.default_scale(), p.slots()).unwrap();
        assert!((back[0] - 1.5).abs() < 1e-9 && (back[1] + 2.0).abs() < 1e-9 && back[2].abs() < 1e-9);
    }

    #[test]
    fn known_vectors() {
        let p = CkksPreset::Slots4096Scale40Depth2.params();
        let enc = Encoder::new(p).unwrap();
        let (n, delta) = (p.n(), 1u64 << 40);
        // All ones is the constant Delta.
        let ones = enc.encode_real(&vec![1.0; p.slots()], p.default_scale(), 2).unwrap();
        for (limb, q) in ones.chunks_exact(n).zip(&p.q) {
            assert_eq!(limb[0], delta % q.0);
            assert!(limb[1..].iter().all(|&c| c == 0));
        }
        // X has slot j = zeta^(5^j mod 2N), and encoding those values gives back X.
        let r = roots(p.log_n() + 1);
        let mut x = vec![0u64; 3 * n];
        for (limb, q) in p.q.iter().enumerate() {
            x[limb * n + 1] = delta % q.0;
        }
        let slots = enc.decode(&x, 2, p.default_scale(), p.slots()).unwrap();
        let mut e = 1usize;
        let expected: Vec<Complex> = (0..p.slots())
            .map(|_| {
                let z = r[e];
                e = e * 5 % (2 * n);
                z
            })
            .collect();
        assert!(max_err(&slots, &expected) < 1e-12);
        assert_eq!(enc.encode(&expected, p.default_scale(), 2).unwrap(), x);
        // With 8 slots, X^(N/16) has slot j = xi^(5^j mod 32), xi = zeta^(N/16).
        let mut y = vec![0u64; n];
        y[n / 16] = delta % p.q[0].0;
        let slots = enc.decode(&y, 0, p.default_scale(), 8).unwrap();
        let mut e = 1usize;
        for z in slots {
            let w = r[e * n / 16];
            assert!((z.re - w.re).abs() < 1e-12 && (z.im - w.im).abs() < 1e-12);
            e = e * 5 % 32;
        }
    }

    /// The cross-platform contract: these words are what every platform must produce.
    #[test]
    fn encoding_is_pinned() {
        let p = CkksPreset::Slots4096Scale40Depth2.params();
        let enc = Encoder::new(p).unwrap();
        // Dyadic inputs, so the vector itself is the same everywhere.
        let v: Vec<Complex> =
            (0..p.slots()).map(|j| Complex::new((j % 7) as f64 / 4.0 - 0.75, (j % 5) as f64 / 8.0)).collect();
        let hash = |words: &[u64]| {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>()
        };
        let full = enc.encode(&v, p.default_scale(), 2).unwrap();
        let sparse = enc.encode_with_slots(&v[..256], 256, p.default_scale(), 1).unwrap();
        assert_eq!(full, enc.encode(&v, p.default_scale(), 2).unwrap());
        assert_eq!(hash(&full), "2941a6bc9da88652ceba1799e8bc752f15e6dfb3c43426d4648765121076bf3a");
        assert_eq!(hash(&sparse), "022899e9cbe0b88e998f42e1a7f8d6a83ad6cbc941f4b15cfae7ed89678665d5");
    }

    /// Naive negacyclic product mod q.
    fn negacyclic(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let t = mul_mod(x, y, q);
                let k = (i + j) % n;
                c[k] = if i + j < n { (c[k] + t) % q } else { (c[k] + q - t) % q };
            }
        }
        c
    }

    #[test]
    fn products_and_automorphisms_act_on_slots() {
        let p = tiny();
        let enc = Encoder::new(&p).unwrap();
        let mut repeated = p.clone();
        repeated.q[1] = repeated.q[0];
        assert!(matches!(Encoder::new(&repeated), Err(Error::InvalidRing(_))));
        let (n, scale) = (p.n(), p.default_scale());
        let (a, b) = (random_values(1, 8), random_values(2, 8));
        let (pa, pb) = (enc.encode(&a, scale, 1).unwrap(), enc.encode(&b, scale, 1).unwrap());
        let prod: Vec<u64> =
            (0..2).flat_map(|l| negacyclic(&pa[l * n..(l + 1) * n], &pb[l * n..(l + 1) * n], p.q[l].0)).collect();
        let got = enc.decode(&prod, 1, scale * scale, 8).unwrap();
        let want: Vec<Complex> = a.iter().zip(&b).map(|(x, y)| x.mul(*y)).collect();
        assert!(max_err(&got, &want) < 1e-7, "{}", max_err(&got, &want));
        // X -> X^g on coefficients (a sign per wrap): g = 5 rotates slots left by one,
        // g = 2N - 1 conjugates them.
        let auto = |pt: &[u64], g: usize| -> Vec<u64> {
            let mut out = vec![0u64; pt.len()];
            for (l, limb) in pt.chunks_exact(n).enumerate() {
                let q = p.q[l].0;
                for (i, &c) in limb.iter().enumerate() {
                    let e = i * g % (2 * n);
                    out[l * n + e % n] = if e < n || c == 0 { c } else { q - c };
                }
            }
            out
        };
        let rot = enc.decode(&auto(&pa, 5), 1, scale, 8).unwrap();
        let want: Vec<Complex> = (0..8).map(|j| a[(j + 1) % 8]).collect();
        assert!(max_err(&rot, &want) < 1e-8);
        let conj = enc.decode(&auto(&pa, 2 * n - 1), 1, scale, 8).unwrap();
        assert!(max_err(&conj, &a.iter().map(|z| z.conj()).collect::<Vec<_>>()) < 1e-8);
    }

    /// |x - r| <= ulp(r) / 2 for the exact integer x and the f64 r (both as BigInt).
    fn is_nearest(x: &BigInt, r: f64) -> bool {
        if r == 0.0 {
            return x == &BigInt::from(0);
        }
        let bits = r.abs().to_bits();
        let (m, e) = ((bits & ((1 << 52) - 1)) | (1 << 52), ((bits >> 52) & 0x7ff) as i64 - 1075);
        let sign = if r < 0.0 { -1 } else { 1 };
        // 2 |x 2^-e - m| <= 1, scaled to integers by 2^-e when e < 0.
        let (xs, ms) = if e >= 0 {
            (x.clone(), BigInt::from(sign * m as i128) << e as usize)
        } else {
            (x.clone() << (-e) as usize, BigInt::from(sign * m as i128))
        };
        let half_ulp = if e >= 0 { BigInt::from(1) << e as usize } else { BigInt::from(1) };
        (xs - ms).magnitude() * 2u32 <= *half_ulp.magnitude()
    }

    #[test]
    fn crt_is_exact_and_rounds_to_nearest() {
        let p = CkksPreset::Slots32768Scale40Depth34.params();
        let q: Vec<u64> = p.q.iter().map(|m| m.0).collect();
        let crt = Crt::new(RnsBasis::new(&p.q).unwrap());
        let mut scratch = crt.scratch();
        let big_q: BigInt = q.iter().map(|&x| BigInt::from(x)).product();
        let residues = |x: &BigInt| -> Vec<u64> {
            q.iter().map(|&qi| (((x % qi) + qi) % qi).try_into().unwrap()).collect::<Vec<u64>>()
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut cases: Vec<BigInt> = [0i64, 1, -1, 12345, -5].iter().map(|&v| BigInt::from(v)).collect();
        cases.push(BigInt::from(1) << 100usize);
        cases.push(-(BigInt::from(3) << 1000usize));
        let half: BigInt = (&big_q - BigInt::from(1)) / BigInt::from(2);
        cases.push(half.clone()); // the largest positive
        cases.push(-half); // the most negative
        for bits in [60usize, 64, 65, 120, 500, 1023, 1100] {
            let mut x = BigInt::from(rng.next_u64() | 1 << 63);
            while (x.bits() as usize) < bits {
                x = (x << 64) + rng.next_u64();
            }
            x >>= x.bits() as usize - bits;
            cases.push(if rng.next_u32() % 2 == 0 { x.clone() } else { -x });
        }
        for x in cases {
            let r = crt.to_f64(&residues(&x), &mut scratch);
            if x.bits() > 1024 {
                assert!(r.is_infinite() && (r < 0.0) == (x < BigInt::from(0)), "{x}");
            } else {
                assert!(is_nearest(&x, r), "{x} -> {r:e}");
            }
        }
        // Random residues: the centered value, whatever it is, is found exactly.
        for _ in 0..50 {
            let c: Vec<u64> = q.iter().map(|&qi| rng.next_u64() % qi).collect();
            let x: BigInt = c.iter().zip(&q).fold(BigInt::from(0), |acc, (&ci, &qi)| {
                let qh = &big_q / qi;
                let inv = inv_mod(((&qh % qi).try_into() as std::result::Result<u64, _>).unwrap(), qi);
                (acc + qh * mul_mod(ci, inv, qi)) % &big_q
            });
            let x = if &x * 2 > big_q { x - &big_q } else { x };
            let r = crt.to_f64(&c, &mut scratch);
            assert!(if x.bits() > 1024 { r.is_infinite() } else { is_nearest(&x, r) });
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        let p = CkksPreset::Slots4096Scale40Depth2.params();
        let enc = Encoder::new(p).unwrap();
        let s = p.default_scale();
        let e = |r: Result<Vec<u64>>| matches!(r, Err(Error::InvalidInput(_)));
        assert!(e(enc.encode(&vec![Complex::default(); p.slots() + 1], s, 0)));
        assert!(e(enc.encode_with_slots(&[], 3, s, 0)));
        assert!(e(enc.encode_with_slots(&[], p.slots() * 2, s, 0)));
        assert!(e(enc.encode(&[], s, 3)));
        assert!(e(enc.encode(&[], 0.0, 0)));
        assert!(e(enc.encode(&[], f64::NAN, 0)));
        assert!(e(enc.encode_real(&[f64::INFINITY], s, 0)));
        // One value spreads over N/2 coefficients: 2^100 / 2^12 * 2^40 = 2^128.
        let msg = enc.encode_real(&[pow2(100)], s, 0).unwrap_err().to_string();
        assert!(msg.contains("2^126"), "{msg}");
        assert!(enc.encode_real(&[pow2(80)], s, 0).is_ok());
        let ok = enc.encode_real(&[1.0], s, 1).unwrap();
        assert!(enc.decode(&ok[..p.n()], 1, s, p.slots()).is_err());
        let mut bad = ok.clone();
        bad[p.n() + 3] = p.q[1].0;
        let msg = enc.decode(&bad, 1, s, p.slots()).unwrap_err().to_string();
        assert!(msg.contains("limb 1"), "{msg}");
        assert!(enc.decode(&ok, 1, s, 5).is_err());
    }

    /// `cargo test --release -p fhe-api --lib ckks::encoding -- --ignored --nocapture timing`
    #[test]
    #[ignore]
    fn timing_at_n_2_to_the_16() {
        let p = CkksPreset::Slots32768Scale40Depth34.params();
        let enc = Encoder::new(p).unwrap();
        let v = random_values(9, p.slots());
        let t = std::time::Instant::now();
        let _ = enc.encode(&v, p.default_scale(), 0).unwrap();
        println!("N = 2^16, first encode at 1 limb (builds the 2^17-entry root table): {:?}", t.elapsed());
        for level in [p.max_level(), 0] {
            let t = std::time::Instant::now();
            let pt = enc.encode(&v, p.default_scale(), level).unwrap();
            let te = t.elapsed();
            let t = std::time::Instant::now();
            let back = enc.decode(&pt, level, p.default_scale(), p.slots()).unwrap();
            let td = t.elapsed();
            println!("N = 2^16, {} limbs: encode {te:?}, decode {td:?}, max error {:e}", level + 1, max_err(&back, &v));
        }
    }
}
