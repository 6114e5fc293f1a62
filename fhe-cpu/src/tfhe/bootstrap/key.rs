//! The prepared key: every coefficient's RGSW key pair, folded ([`fold_top_digit`]) and
//! interleaved for one front-to-back read per step, and the key-switching samples.

use super::*;

/// The CPU's form of an evaluation key: every coefficient's RGSW key pair, folded
/// ([`fold_top_digit`]) and interleaved, and full key-switching samples.
pub struct CpuPrepared {
    /// For the 54-bit ring (empty otherwise): `[coefficient][pair]`, each pair `(K+, K-)`
    /// in the [`crate::tfhe::ginx64::interleave_pair`] layout; for a multi-bit set,
    /// `[group][...]` in the [`crate::tfhe::multi_bit::prepare_keys`] layout.
    pub(crate) bsk: Aligned<u64>,
    /// For moduli below `2^29` (empty otherwise): 32-bit words, `[coefficient][pair]`,
    /// each pair `(K+, K-)` in the [`crate::tfhe::ginx32::interleave_pair`] layout.
    pub(crate) bsk32: Aligned<u32>,
    /// `[sample][n + 1]`, `a` then `b`.
    pub(crate) ksk: crate::tfhe::keyswitch::PreparedKsk,
    /// The evaluation key's tag, carried by every output.
    pub(crate) tag: KeyTag,
}

pub fn prepare(ring: &Ring, ek: &EvaluationKey) -> Result<CpuPrepared> {
    let ksk = crate::tfhe::keyswitch::prepare_ksk(ring, ek)?;
    if ring.params.grouping().is_some() {
        let bsk = crate::tfhe::multi_bit::prepare_keys(ring, ek)?;
        Ok(CpuPrepared { bsk, bsk32: Aligned::default(), ksk, tag: ek.tag() })
    } else if ring.small.is_some() {
        // Residues below 2^29: 32-bit words (half the memory to stream per bootstrap).
        let bsk32 = interleaved_pairs(ring, ek, |kp, km, n, out| {
            let [kp, km] = [kp, km].map(|k| k.iter().map(|&x| x as u32).collect::<Vec<u32>>());
            crate::tfhe::ginx32::interleave_pair(&kp, &km, n, crate::tfhe::ginx32::CHUNK, out);
        });
        Ok(CpuPrepared { bsk: Aligned::default(), bsk32, ksk, tag: ek.tag() })
    } else {
        let bsk = interleaved_pairs(ring, ek, crate::tfhe::ginx64::interleave_pair);
        Ok(CpuPrepared { bsk, bsk32: Aligned::default(), ksk, tag: ek.tag() })
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
/// `l < top`, `K_top <- B^-(D + top) K_top` (`D` the dropped digits, whose gadget
/// factors the kept rows' carry: [`fhe_api::tfhe::params::Params::bsk_gadget`]).
pub(crate) fn fold_top_digit(ring: &Ring, key: &mut [u64]) {
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
        let c = pow_mod(b_inv, (ring.params.bsk_dropped_levels() + top) as u64, q);
        top_row.iter_mut().for_each(|x| *x = mul_mod(c, *x, q));
    }
}
