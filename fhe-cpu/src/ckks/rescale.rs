//! Rescale by the last prime, in evaluation form. Pinned: limb `l` to coefficient form;
//! `d` its centered remainder (`r = (x_l + h) mod q_l`, `d = r - h`, `h = floor(q_l / 2)`),
//! taken modulo each `q_i` and to evaluation form; then `y_i = (x_i - d_i) q_l^-1 mod q_i`.
//! So `y = round(x / q_l)`, halves rounding up.

use rayon::prelude::*;

use fhe_api::ring::modulus::mul_shoup_lazy;
use fhe_api::ring::rns::centered_remainder_to;

use super::plan::{CkksPlan, LevelPlan};

/// `l + 1` limbs in, `l` limbs out.
pub fn rescale(plan: &CkksPlan, lp: &LevelPlan, x: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let l = lp.level;
    let mut top = plan.take(n);
    top.copy_from_slice(&x[l * n..(l + 1) * n]);
    plan.primes[l].ntt.inverse(&mut top);
    let mut out = vec![0u64; l * n];
    out.par_chunks_mut(n).zip(x.par_chunks(n)).enumerate().for_each(|(i, (limb, xi))| {
        let pr = &plan.primes[i];
        // `d` built in the output limb, then the output computed over it.
        centered_remainder_to(&plan.primes[l].m, &pr.m, &top, limb);
        pr.ntt.forward(limb);
        let q = pr.m.q;
        let (inv, inv_s) = lp.ql_inv[i];
        for (y, &xv) in limb.iter_mut().zip(xi) {
            let r = mul_shoup_lazy(xv + q - *y, inv, inv_s, q);
            *y = if r >= q { r - q } else { r };
        }
    });
    out
}
