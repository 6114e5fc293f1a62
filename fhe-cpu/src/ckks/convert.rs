//! The base conversions of key switching, each output limb summed by
//! [`arith::dot_const`] over limb-major rows of a block: on IFMA's 52-bit limbs where the
//! output prime and the sums allow it (the 40-bit scale primes from a digit of scale
//! primes), on the wide IFMA kernel for primes up to `2^60`, else in `u128`.
//!
//! - [`convert`]: ModUp's fast base conversion, the integers of
//!   `fhe_api::ring::rns::BaseConverter` (`t_i = [x_i (Q_A/q_i)^-1]_{q_i}`,
//!   `y_j = sum_i t_i ((Q_A/q_i) mod p_j) mod p_j`).
//! - [`round_down_words`]: ModDown's rounding conversion, the integers pinned by
//!   `fhe_api::ring::moddown::RoundingConverter`.
//!
//! Same words as the API's (tested below).

use fhe_api::ring::moddown::RoundingConverter;
use fhe_api::ring::modulus::{csub, mul_shoup_lazy};
use fhe_api::ring::rns::BaseConverter;

use crate::arith;

/// Coefficients per block: the `la` rows of `t` stay in L1 while every output limb
/// reads them.
const BLOCK: usize = 256;

/// Most input limbs a block holds (a digit; more go to `BaseConverter::convert`).
const MAX_ROWS: usize = 16;

/// `output` (limb-major over the converter's targets) from `input` (limb-major over its
/// sources, coefficient form, words below their primes).
pub fn convert(conv: &BaseConverter, n: usize, input: &[u64], output: &mut [u64]) {
    let (src, dst) = (conv.sources(), conv.targets());
    let la = src.len();
    assert!(input.len() == la * n && output.len() == dst.len() * n, "base conversion lengths");
    let bounds: Vec<u64> = src.iter().map(|m| m.q).collect();
    let paths: Vec<arith::DotConst> =
        dst.iter().enumerate().map(|(j, p)| arith::dot_const_path(p, &bounds, conv.row(j))).collect();
    if !blocked(la, &paths) {
        conv.convert(n, input, output);
        return;
    }
    let mut t = [[0u64; BLOCK]; MAX_ROWS];
    for start in (0..n).step_by(BLOCK) {
        let len = BLOCK.min(n - start);
        for (i, (m, &(w, ws))) in src.iter().zip(conv.q_hat_inv()).enumerate() {
            let x = &input[i * n + start..][..len];
            t[i][..len].iter_mut().zip(x).for_each(|(o, &x)| *o = csub(mul_shoup_lazy(x, w, ws, m.q), m.q));
        }
        let mut rows: [&[u64]; MAX_ROWS] = [&[]; MAX_ROWS];
        rows.iter_mut().zip(&t).for_each(|(r, t)| *r = &t[..len]);
        for (j, p) in dst.iter().enumerate() {
            arith::dot_const(p, &rows[..la], conv.row(j), paths[j], &mut output[j * n + start..][..len]);
        }
    }
}

/// Whether the blocked sums beat the API's coefficient-major ones: at most
/// [`MAX_ROWS`] rows, and a SIMD kernel for most outputs (60-bit primes on a CPU without
/// IFMA are as fast there).
fn blocked(rows: usize, paths: &[arith::DotConst]) -> bool {
    rows <= MAX_ROWS && 2 * paths.iter().filter(|&&p| p != arith::DotConst::Portable).count() >= paths.len()
}

/// [`RoundingConverter::convert_words`] (ModDown's `d_i` for the words `start ..
/// start + len` of each `P` limb, `len` that of every `out` slice), its `t_k` and `v` as
/// the API computes them and each `sum_k t_k (P/p_k mod q_i)` by [`arith::dot_const`].
pub fn round_down_words(down: &RoundingConverter, n: usize, input: &[u64], start: usize, out: &mut [&mut [u64]]) {
    let (src, dst, c) = (down.sources(), down.targets(), down.constants());
    let k = src.len();
    let total = out.first().map_or(0, |o| o.len());
    assert!(
        input.len() == k * n && out.len() == dst.len() && start + total <= n && out.iter().all(|o| o.len() == total),
        "ModDown conversion lengths"
    );
    let bounds: Vec<u64> = src.iter().map(|m| m.q).collect();
    let row = |o: usize| &c.p_hat_mod_q[o * k..][..k];
    let paths: Vec<arith::DotConst> =
        dst.iter().enumerate().map(|(o, q)| arith::dot_const_path(q, &bounds, row(o))).collect();
    if !blocked(k, &paths) {
        down.convert_words(n, input, start, out);
        return;
    }
    let mut t = [[0u64; BLOCK]; MAX_ROWS];
    let mut v = [0usize; BLOCK];
    for at in (0..total).step_by(BLOCK) {
        let len = BLOCK.min(total - at);
        let mut sums = [0u128; BLOCK];
        for (i, (pk, &(h, w, ws))) in src.iter().zip(c.input).enumerate() {
            let (ck, s) = c.frac[i];
            let x = &input[i * n + start + at..][..len];
            for ((ti, sum), &x) in t[i][..len].iter_mut().zip(&mut sums[..len]).zip(x) {
                let z = csub(x + h, pk.q);
                *ti = csub(mul_shoup_lazy(z, w, ws, pk.q), pk.q);
                *sum += (u128::from(*ti) * u128::from(ck)) >> s;
            }
        }
        v[..len].iter_mut().zip(&sums[..len]).for_each(|(v, &f)| *v = (f >> 64) as usize);
        let mut rows: [&[u64]; MAX_ROWS] = [&[]; MAX_ROWS];
        rows.iter_mut().zip(&t).for_each(|(r, t)| *r = &t[..len]);
        for (o, qi) in dst.iter().enumerate() {
            let y = &mut out[o][at..at + len];
            arith::dot_const(qi, &rows[..k], row(o), paths[o], y);
            let off = &c.offset[o * (k + 1)..][..k + 1];
            y.iter_mut().zip(&v[..len]).for_each(|(y, &vj)| *y = qi.sub(*y, off[vj]));
        }
    }
}

#[cfg(test)]
mod tests {
    use fhe_api::ring::moddown::RoundingConverter;
    use fhe_api::ring::prime::primes_below;
    use fhe_api::ring::rns::{BaseConverter, RnsBasis};
    use fhe_api::ring::{PolynomialSize, RingModulus};
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    /// Byte-equal to `BaseConverter::convert` for digits of scale primes (the IFMA path),
    /// digits holding a 60-bit prime, 60-bit targets, and more rows than a block holds.
    #[test]
    fn matches_the_api_converter() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let n14 = PolynomialSize(1 << 14);
        let (p40, p41) = (primes_below(40, n14, 40, &[]).unwrap(), primes_below(41, n14, 4, &[]).unwrap());
        let (p46, p60) = (primes_below(47, n14, 2, &[]).unwrap(), primes_below(60, n14, 6, &[]).unwrap());
        let b = |v: &[u64]| RnsBasis::new(&v.iter().map(|&q| RingModulus(q)).collect::<Vec<_>>()).unwrap();
        let cases: Vec<(Vec<u64>, Vec<u64>)> = vec![
            (p40[..6].to_vec(), [&p40[6..20], &p41[..2], &p60[..5]].concat()),
            (vec![p60[5], p40[20], p41[2]], p40[21..30].to_vec()),
            (p40[30..31].to_vec(), [&p60[..1], &p40[31..33]].concat()),
            (p40[..17].to_vec(), p40[17..20].to_vec()),
            (p41[..2].to_vec(), [&p40[..8], &p46[..]].concat()),
        ];
        for (from, to) in cases {
            let conv = BaseConverter::new(&b(&from), &b(&to));
            for n in [8usize, 264, 1024] {
                let mut input: Vec<u64> =
                    from.iter().flat_map(|&q| (0..n).map(|_| r.next_u64() % q).collect::<Vec<_>>()).collect();
                for (i, &q) in from.iter().enumerate() {
                    input[i * n] = q - 1;
                    input[i * n + 1] = 0;
                }
                let (mut want, mut got) = (vec![0; to.len() * n], vec![0; to.len() * n]);
                conv.convert(n, &input, &mut want);
                super::convert(&conv, n, &input, &mut got);
                assert_eq!(got, want, "{} -> {} primes, n {n}", from.len(), to.len());
            }
        }
    }

    /// ModDown's conversion byte-equal to `RoundingConverter::convert_words`, whole and by
    /// word ranges: 60-bit special primes into 60- and 40-bit chains, 1 to 5 of them.
    #[test]
    fn round_down_matches_the_api_converter() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let n14 = PolynomialSize(1 << 14);
        let (p40, p59) = (primes_below(40, n14, 12, &[]).unwrap(), primes_below(59, n14, 12, &[]).unwrap());
        let p60 = primes_below(60, n14, 5, &p59).unwrap();
        let b = |v: &[u64]| RnsBasis::new(&v.iter().map(|&q| RingModulus(q)).collect::<Vec<_>>()).unwrap();
        for (p, q) in [(&p60[..1], &p59[..]), (&p60[..3], &p59[..7]), (&p60[..], &p40[..]), (&p60[..2], &p40[..3])] {
            let down = RoundingConverter::new(&b(p), &b(q)).unwrap();
            for n in [8usize, 264, 1024] {
                let mut input: Vec<u64> =
                    p.iter().flat_map(|&pk| (0..n).map(|_| r.next_u64() % pk).collect::<Vec<_>>()).collect();
                for (k, &pk) in p.iter().enumerate() {
                    input[k * n] = pk - 1;
                    input[k * n + 1] = 0;
                }
                let mut want = vec![0; q.len() * n];
                down.convert(n, &input, &mut want);
                for (start, len) in [(0, n), (n / 2, n - n / 2)] {
                    let mut got = vec![0; q.len() * len];
                    let mut limbs: Vec<&mut [u64]> = got.chunks_mut(len).collect();
                    super::round_down_words(&down, n, &input, start, &mut limbs);
                    for (i, limb) in got.chunks(len).enumerate() {
                        assert_eq!(limb, &want[i * n + start..][..len], "{} -> {} primes, n {n}", p.len(), q.len());
                    }
                }
            }
        }
    }
}
