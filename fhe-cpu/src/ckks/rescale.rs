//! Rescale by the last prime, in evaluation form. Pinned: limb `l` to coefficient form;
//! `d` its centered remainder (`r = (x_l + h) mod q_l`, `d = r - h`, `h = floor(q_l / 2)`),
//! taken modulo each `q_i` and to evaluation form; then `y_i = (x_i - d_i) q_l^-1 mod q_i`.
//! So `y = round(x / q_l)`, halves rounding up.

use rayon::prelude::*;

use fhe_api::ring::rns::{centered_remainder_to, sub_and_scale};

use super::plan::{CkksPlan, LevelPlan};

/// `l + 1` limbs in, `l` limbs out.
pub fn rescale(plan: &CkksPlan, lp: &LevelPlan, x: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let l = lp.level;
    let mut top = plan.take(n);
    top.copy_from_slice(&x[l * n..(l + 1) * n]);
    plan.primes[l].ntt.inverse(&mut top);
    // A copy of the input's limbs (a reused heap block: a zeroed allocation of this size
    // is fresh pages, one fault per 4 KiB, measured slower at N = 2^16).
    let mut out = x[..l * n].to_vec();
    out.par_chunks_mut(n).enumerate().for_each(|(i, limb)| {
        let pr = &plan.primes[i];
        let mut d = plan.take(n);
        centered_remainder_to(&plan.primes[l].m, &pr.m, &top, &mut d);
        pr.ntt.forward(&mut d);
        let (inv, inv_s) = lp.ql_inv[i];
        sub_and_scale(&pr.m, limb, &d, inv, inv_s);
    });
    out
}
