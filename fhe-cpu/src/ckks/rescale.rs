//! Rescale by the last prime, and bootstrapping's ModRaise, in evaluation form.
//!
//! Rescale: Pinned: limb `l` to coefficient form;
//! `d` its centered remainder (`r = (x_l + h) mod q_l`, `d = r - h`, `h = floor(q_l / 2)`),
//! taken modulo each `q_i` and to evaluation form; then `y_i = (x_i - d_i) q_l^-1 mod q_i`.
//! So `y = round(x / q_l)`, halves rounding up.

use rayon::prelude::*;

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
        arith::centered(&plan.primes[l].m, &pr.m, &top, d);
        pr.ntt.forward(d);
        arith::sub_scale(&pr.m, xi, lp.ql_inv[i], d);
    });
    out
}

/// ModRaise: the one limb of `x` (evaluation form mod `q_0`) to coefficient form, its
/// centered remainder (`(-q_0/2, q_0/2]`, as rescale's) reduced mod each of `q_0 ..
/// q_level` and taken to evaluation form. Limb 0 comes back unchanged.
pub fn raise(plan: &CkksPlan, level: usize, x: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let mut coeffs = plan.take(n);
    coeffs.copy_from_slice(&x[..n]);
    plan.primes[0].ntt.inverse(&mut coeffs);
    let mut out = plan.take_vec((level + 1) * n);
    out.par_chunks_mut(n).enumerate().for_each(|(i, limb)| {
        let pr = &plan.primes[i];
        arith::centered(&plan.primes[0].m, &pr.m, &coeffs, limb);
        pr.ntt.forward(limb);
    });
    out
}
