//! Rescale by the last prime, in evaluation form. Pinned: limb `l` to coefficient form;
//! `d` its centered remainder (`r = (x_l + h) mod q_l`, `d = r - h`, `h = floor(q_l / 2)`),
//! taken modulo each `q_i` and to evaluation form; then `y_i = (x_i - d_i) q_l^-1 mod q_i`.
//! So `y = round(x / q_l)`, halves rounding up.

use rayon::prelude::*;

use fhe_api::ring::rns::centered_remainder_to;

use super::plan::{CkksPlan, LevelPlan};
use crate::arith;

/// `l + 1` limbs in, `l` limbs out (a buffer from the plan's pool).
pub fn rescale(plan: &CkksPlan, lp: &LevelPlan, x: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let l = lp.level;
    let mut top = plan.take(n);
    top.copy_from_slice(&x[l * n..(l + 1) * n]);
    plan.primes[l].ntt.inverse(&mut top);
    // Each limb's `d` is built in the result itself and scaled there: no copy of the
    // input and no second buffer per limb.
    let mut out = plan.take_vec(l * n);
    out.par_chunks_mut(n).zip(x.par_chunks(n)).enumerate().for_each(|(i, (d, xi))| {
        let pr = &plan.primes[i];
        centered_remainder_to(&plan.primes[l].m, &pr.m, &top, d);
        pr.ntt.forward(d);
        arith::sub_scale(&pr.m, xi, lp.ql_inv[i], d);
    });
    out
}
