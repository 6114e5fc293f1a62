//! ModUp's fast base conversion: the integers of `fhe_api::ring::rns::BaseConverter`
//! (`t_i = [x_i (Q_A/q_i)^-1]_{q_i}`, `y_j = sum_i t_i ((Q_A/q_i) mod p_j) mod p_j`), with
//! each output limb summed by [`arith::dot_const`]: on IFMA's 52-bit limbs where the
//! output prime and the sums allow it (the 40-bit scale primes from a digit of scale
//! primes), on the wide IFMA kernel for primes up to `2^60`, else in `u128`. Same words as
//! `BaseConverter::convert` (tested below).

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
    // Outputs mostly without a SIMD kernel (60-bit primes on a CPU without IFMA) are as
    // fast through the API's unrolled coefficient-major sums.
    if la > MAX_ROWS || 2 * paths.iter().filter(|&&p| p != arith::DotConst::Portable).count() < dst.len() {
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

#[cfg(test)]
mod tests {
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
}
