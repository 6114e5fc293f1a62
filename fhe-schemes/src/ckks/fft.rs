//! Roots of unity computed without libm, and the special FFT of the canonical embedding.
//!
//! **Roots.** `cos(2 pi t / M)` and `sin(2 pi t / M)` for `M = 2N` come from
//! double-double arithmetic (Dekker's two-product, Knuth's two-sum) built only on IEEE
//! `+ - *` and `/`, which every platform rounds correctly: the angle is a pinned
//! double-double `pi` times the exact dyadic `2t / M`, reduced to `[0, pi/4]` by the
//! exact symmetries of the circle (swaps and sign changes), and fed to 16 Taylor terms
//! (the first omitted term is below `2^-110`). The double-double result is rounded to
//! `f64` once. Platform `sin`/`cos` differ in the last bit between libms, and one bit
//! in a root can change a rounded plaintext coefficient: a ciphertext byte.
//!
//! **Special FFT.** Slot `j` of a polynomial `m` is `m(zeta^(5^j mod 2N))`, `zeta =
//! exp(i pi / N)`. With `n` slots the message lives in the subring of `Y = X^g`,
//! `g = N / 2n`: writing `m(Y) = sum_{i<n} (a_i + b_i Y^n) Y^i` and `w_i = a_i + i b_i`,
//! and using `Y^n = i` at every point `xi^(5^j)` (`xi = zeta^g`, `5^j = 1 mod 4`), slot
//! `j` is `sum_i w_i xi^(i (1 + 4k))` with `1 + 4k = 5^j mod 4n`: a twisted length-`n`
//! DFT, `sum_i (w_i xi^i) omega^(ik)`, `omega = xi^4`, read in the order of `k(j)`.
//! Every operation is IEEE `+ - *` in a fixed order (no FMA), so the result is the same
//! on every platform.

use std::sync::OnceLock;

use super::encoding::Complex;

/// A double-double `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug)]
struct Dd {
    hi: f64,
    lo: f64,
}

/// `pi` as a double-double: the `f64` nearest `pi` and the `f64` nearest the rest.
const PI: Dd = Dd { hi: f64::from_bits(0x4009_21FB_5444_2D18), lo: f64::from_bits(0x3CA1_A626_3314_5C07) };

/// `a + b = s + e` exactly (Knuth).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + b = s + e` exactly, given `|a| >= |b|` (Dekker).
fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// Veltkamp split of `a` into two 26-bit halves.
fn split(a: f64) -> (f64, f64) {
    let t = 134_217_729.0 * a; // 2^27 + 1
    let hi = t - (t - a);
    (hi, a - hi)
}

/// `a * b = p + e` exactly (Dekker), without FMA.
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

impl Dd {
    const fn from(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    fn add(self, b: Dd) -> Dd {
        let (s1, s2) = two_sum(self.hi, b.hi);
        let (t1, t2) = two_sum(self.lo, b.lo);
        let (s1, s2) = quick_two_sum(s1, s2 + t1);
        let (hi, lo) = quick_two_sum(s1, s2 + t2);
        Dd { hi, lo }
    }

    fn neg(self) -> Dd {
        Dd { hi: -self.hi, lo: -self.lo }
    }

    fn mul(self, b: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, b.hi);
        let (hi, lo) = quick_two_sum(p, e + (self.hi * b.lo + self.lo * b.hi));
        Dd { hi, lo }
    }

    /// Division by an `f64` (one Newton correction of the quotient).
    fn div_f64(self, b: f64) -> Dd {
        let q1 = self.hi / b;
        let (p, e) = two_prod(q1, b);
        let (s, f) = two_sum(self.hi, -p);
        let q2 = (s + (f - e + self.lo)) / b;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo }
    }
}

/// `(cos x, sin x)` for `x` in `[0, pi/4]` by Taylor series in double-double.
fn cos_sin_dd(x: Dd) -> (Dd, Dd) {
    let x2 = x.mul(x);
    let (mut c, mut s) = (Dd::from(1.0), x);
    let (mut tc, mut ts) = (Dd::from(1.0), x);
    for k in 1..=16u32 {
        // tc = x^2k / (2k)!, ts = x^(2k+1) / (2k+1)!; denominators are exact in f64.
        tc = tc.mul(x2).div_f64(((2 * k - 1) * (2 * k)) as f64);
        ts = ts.mul(x2).div_f64(((2 * k) * (2 * k + 1)) as f64);
        if k % 2 == 1 {
            (c, s) = (c.add(tc.neg()), s.add(ts.neg()));
        } else {
            (c, s) = (c.add(tc), s.add(ts));
        }
    }
    (c, s)
}

/// The `M` roots `exp(2 pi i t / M)`, `t = 0 .. M`, for `M` a power of two `>= 8`.
fn build_roots(log_m: u32) -> Vec<Complex> {
    let m = 1usize << log_m;
    let (quarter, octant) = (m / 4, m / 8);
    // The first octant directly: angle = pi * (2t / M), with 2t / M an exact f64.
    let first: Vec<(f64, f64)> = (0..=octant)
        .map(|t| {
            let r = (2 * t) as f64 / m as f64;
            let (c, s) = cos_sin_dd(PI.mul(Dd::from(r)));
            (c.hi, s.hi)
        })
        .collect();
    // Exact symmetries: cos(pi/2 - a) = sin a, then the half and the full circle.
    let quarter_tab: Vec<(f64, f64)> = (0..=quarter)
        .map(|u| if u <= octant { first[u] } else { (first[quarter - u].1, first[quarter - u].0) })
        .collect();
    let half = |u: usize| {
        if u <= quarter {
            quarter_tab[u]
        } else {
            let (c, s) = quarter_tab[u - quarter]; // angle pi/2 + a
            (-s, c)
        }
    };
    (0..m)
        .map(|t| {
            let (re, im) = if t <= m / 2 {
                half(t)
            } else {
                let (c, s) = half(m - t); // angle 2 pi - a
                (c, -s)
            };
            Complex::new(re, im)
        })
        .collect()
}

/// `(cos 2 pi t, sin 2 pi t)` for an angle of `t` turns, the same on every platform (no
/// libm): `t` reduced to `[0, 1/8]` turns by exact operations (`t - round(t)`, and
/// `1/2 - r`, `1/4 - r` by Sterbenz's lemma), then [`cos_sin_dd`] once, rounded to `f64`.
/// Exact for `|t| < 2^52`; beyond that every `f64` is an integer (angle 0).
pub fn cos_sin_turns(t: f64) -> (f64, f64) {
    if !t.is_finite() {
        return (f64::NAN, f64::NAN);
    }
    let r = t - t.round(); // exact, in [-1/2, 1/2]
    let (neg_sin, r) = if r < 0.0 { (true, -r) } else { (false, r) };
    // r in [0, 1/2]: cos(2 pi r) = -cos(2 pi (1/2 - r)), sin the same.
    let (neg_cos, r) = if r > 0.25 { (true, 0.5 - r) } else { (false, r) };
    // r in [0, 1/4]: swap cos and sin about 1/8.
    let (c, s) = if r > 0.125 {
        let (c, s) = cos_sin_dd(PI.mul(Dd::from(2.0 * (0.25 - r))));
        (s.hi, c.hi)
    } else {
        let (c, s) = cos_sin_dd(PI.mul(Dd::from(2.0 * r)));
        (c.hi, s.hi)
    };
    (if neg_cos { -c } else { c }, if neg_sin { -s } else { s })
}

/// The table `exp(2 pi i t / M)`, `t = 0 .. M`, `M = 2^log_m` (`3 <= log_m <= 18`),
/// built once per `M` for the process.
pub fn roots(log_m: u32) -> &'static [Complex] {
    static TABLES: [OnceLock<Vec<Complex>>; 19] = [const { OnceLock::new() }; 19];
    assert!((3..=18).contains(&log_m), "root table for M = 2^{log_m}: M must be 2^3 .. 2^18");
    TABLES[log_m as usize].get_or_init(|| build_roots(log_m))
}

/// `k(j) = (5^j mod 4n - 1) / 4` for `j < n`: the DFT index of slot `j`.
fn slot_order(n: usize) -> Vec<usize> {
    let mask = 4 * n - 1;
    let mut e = 1usize;
    (0..n)
        .map(|_| {
            let k = (e - 1) / 4;
            e = (e * 5) & mask;
            k
        })
        .collect()
}

/// In-place length-`n` DFT `a_k <- sum_i a_i omega^(+-ik)`, `omega = exp(2 pi i / n)`,
/// iterative radix 2 with the twiddles read from `roots` (`M` entries, `n | M`).
fn dft(a: &mut [Complex], roots: &[Complex], inverse: bool) {
    let (n, m) = (a.len(), roots.len());
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = if bits == 0 { 0 } else { i.reverse_bits() >> (usize::BITS - bits) };
        if i < j {
            a.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let step = m / len;
        for start in (0..n).step_by(len) {
            for j in 0..len / 2 {
                let w = roots[(j * step) % m];
                let w = if inverse { w.conj() } else { w };
                let (u, v) = (a[start + j], a[start + j + len / 2] * w);
                a[start + j] = u + v;
                a[start + j + len / 2] = u - v;
            }
        }
        len *= 2;
    }
}

/// Slots to the packed coefficients (encoding's special inverse FFT): `values` (`n`
/// slots, `n` a power of two `<= N/2`) becomes `w_i = a_i + i b_i`, where the real
/// polynomial has `a_i` at `X^(g i)` and `b_i` at `X^(N/2 + g i)`, `g = N / 2n`.
pub fn special_ifft(values: &mut [Complex], ring_degree: usize) {
    let n = values.len();
    let roots = roots(ring_degree.trailing_zeros() + 1);
    let (m, g) = (roots.len(), ring_degree / (2 * n));
    let mut z = vec![Complex::default(); n];
    for (j, k) in slot_order(n).into_iter().enumerate() {
        z[k] = values[j];
    }
    dft(&mut z, roots, true);
    let inv_n = 1.0 / n as f64; // exact: n is a power of two
    for (i, (out, u)) in values.iter_mut().zip(z).enumerate() {
        // w_i = u_i xi^-i / n, xi = zeta^g.
        let twist = roots[(m - (g * i) % m) % m];
        *out = u * twist * inv_n;
    }
}

/// The inverse of [`special_ifft`] (decoding's special FFT): packed `w_i` to slots.
pub fn special_fft(values: &mut [Complex], ring_degree: usize) {
    let n = values.len();
    let roots = roots(ring_degree.trailing_zeros() + 1);
    let (m, g) = (roots.len(), ring_degree / (2 * n));
    let mut z: Vec<Complex> = values.iter().enumerate().map(|(i, &w)| w * roots[(g * i) % m]).collect();
    dft(&mut z, roots, false);
    for (out, k) in values.iter_mut().zip(slot_order(n)) {
        *out = z[k];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_constant_is_pi_to_106_bits() {
        // pi * 10^40 = 31415926535897932384626433832795028841971.69...; hi + lo as an exact
        // dyadic rational A / 2^s is compared with it in integers.
        use num_bigint::BigInt;
        let digits: BigInt = "31415926535897932384626433832795028841971".parse().unwrap();
        let exact = |x: f64| -> (BigInt, i32) {
            let bits = x.to_bits();
            let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
            (BigInt::from((bits & ((1 << 52) - 1)) | (1 << 52)), e)
        };
        let ((mh, eh), (ml, el)) = (exact(PI.hi), exact(PI.lo));
        // hi + lo = (mh 2^(eh - el) + ml) 2^el with el < eh.
        let a = (mh << (eh - el) as usize) + ml;
        let s = (-el) as usize;
        let lhs = a * BigInt::from(10u32).pow(40);
        let rhs = digits << s;
        let diff = (lhs - rhs).magnitude().bits() as i64;
        // |hi + lo - pi| 10^40 2^s < 2^(s + 133 - 106): the pair carries ~106 bits.
        assert!(diff < s as i64 + 133 - 104, "{diff} vs {s}");
    }

    #[test]
    fn roots_match_std_and_the_symmetries() {
        for log_m in [3u32, 5, 12, 18] {
            let r = roots(log_m);
            let m = r.len();
            assert_eq!(m, 1 << log_m);
            assert_eq!((r[0].re, r[0].im), (1.0, 0.0));
            assert_eq!((r[m / 4].re.abs(), r[m / 4].im), (0.0, 1.0));
            assert_eq!((r[m / 2].re, r[m / 2].im.abs()), (-1.0, 0.0));
            let h = std::f64::consts::FRAC_1_SQRT_2;
            assert_eq!((r[m / 8].re, r[m / 8].im), (h, h));
            for t in (0..m).step_by((m / 4096).max(1)) {
                let a = 2.0 * std::f64::consts::PI * t as f64 / m as f64;
                assert!((r[t].re - a.cos()).abs() <= 1e-15 && (r[t].im - a.sin()).abs() <= 1e-15, "{t}/{m}");
                let c = r[(m - t) % m];
                assert_eq!((c.re, c.im), (r[t].re, -r[t].im), "conjugate {t}/{m}");
                let q = r[(t + m / 4) % m];
                assert_eq!((q.re, q.im), (-r[t].im, r[t].re), "quarter turn {t}/{m}");
            }
        }
    }

    #[test]
    fn double_double_series_is_accurate_to_about_2_to_the_minus_100() {
        let close = |a: Dd, b: Dd| {
            let d = a.add(b.neg());
            (d.hi + d.lo).abs() < 1e-30
        };
        let one = Dd::from(1.0);
        for x in [Dd::from(0.0), Dd::from(0.1), PI.div_f64(6.0), PI.div_f64(4.0), PI.div_f64(5.0)] {
            let (c, s) = cos_sin_dd(x);
            assert!(close(c.mul(c).add(s.mul(s)), one), "{x:?}");
        }
        // sin(pi/6) = 1/2; cos(pi/4) = sin(pi/4) = sqrt(1/2) (IEEE sqrt is correctly rounded).
        assert!(close(cos_sin_dd(PI.div_f64(6.0)).1, Dd::from(0.5)));
        let (c, s) = cos_sin_dd(PI.div_f64(4.0));
        assert!(close(c, s));
        assert_eq!(c.hi, 0.5f64.sqrt());
    }

    #[test]
    fn turns_match_std_and_are_exact_at_the_octants() {
        for k in -4000..4000 {
            let t = k as f64 * 0.013 + 0.0007;
            let (c, s) = cos_sin_turns(t);
            // The reference rounds 2 pi t first: its own error grows with |t|.
            let a = 2.0 * std::f64::consts::PI * t;
            let tol = 4e-15 + a.abs() * 2.5e-16;
            assert!((c - a.cos()).abs() < tol && (s - a.sin()).abs() < tol, "{t}");
        }
        assert_eq!(cos_sin_turns(0.0), (1.0, 0.0));
        assert_eq!(cos_sin_turns(0.25).0.abs(), 0.0);
        assert_eq!(cos_sin_turns(0.25).1, 1.0);
        assert_eq!(cos_sin_turns(-0.5), (-1.0, 0.0));
        assert_eq!(cos_sin_turns(3.0), (1.0, 0.0));
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert_eq!(cos_sin_turns(0.125), (h, h));
        assert!(cos_sin_turns(f64::NAN).0.is_nan());
    }

    #[test]
    fn special_fft_inverts_special_ifft() {
        for (log_n, slots) in [(4u32, 8usize), (4, 2), (10, 512), (10, 1), (10, 64)] {
            let vals: Vec<Complex> =
                (0..slots).map(|j| Complex::new((j % 7) as f64 - 3.0, (j % 3) as f64 * 0.25)).collect();
            let mut w = vals.clone();
            special_ifft(&mut w, 1 << log_n);
            special_fft(&mut w, 1 << log_n);
            for (a, b) in w.iter().zip(&vals) {
                assert!((a.re - b.re).abs() < 1e-12 && (a.im - b.im).abs() < 1e-12, "{log_n} {slots}");
            }
        }
    }

    #[test]
    fn special_fft_evaluates_at_the_slot_roots() {
        // m(X) = X at N = 16, 8 slots: w_1 = 1 (a_1 = 1), slot j is zeta^(5^j mod 32).
        let n = 16;
        let mut w = vec![Complex::default(); 8];
        w[1] = Complex::new(1.0, 0.0);
        special_fft(&mut w, n);
        let r = roots(5);
        let mut e = 1;
        for z in &w {
            assert!((z.re - r[e].re).abs() < 1e-15 && (z.im - r[e].im).abs() < 1e-15);
            e = e * 5 % 32;
        }
    }
}
