//! Hybrid key switching (ModUp, `dnum`-digit inner product, ModDown), the part of
//! multiplication and rotation where the time goes. The exact order of operations is the
//! byte contract (`docs/CKKS.md`, "Evaluation"):
//!
//! 1. ModUp of `d` (evaluation form over `q_0..q_l`): every limb to coefficient form; for
//!    each digit `j` (primes `D_j`), the fast base conversion of `d`'s `D_j` limbs to every
//!    other prime of `q_0..q_l` and to `P`, each converted limb taken to evaluation form;
//!    `d`'s own evaluation-form limbs stand for `D_j`. That is `E_j` over `q_0..q_l, P`.
//! 2. (Rotations: every limb of every `E_j` permuted by `sigma_g` in evaluation form.)
//! 3. `u = sum_j E_j * key_j` for both halves, prime by prime.
//! 4. ModDown of `u`: `u`'s `P` limbs to coefficient form, converted to `q_0..q_l`, taken
//!    to evaluation form `w`; then `(u_i - w_i) * P^-1 mod q_i`.

use rayon::prelude::*;

use fhe_api::ring::automorphism::EvalPermutation;
use fhe_api::ring::modulus::mul_shoup_lazy;

use super::plan::{CkksPlan, LevelPlan};

/// The extended digits of one polynomial: `E_j` for each digit, each `(l + 1 + K)` limbs
/// of `N` words in evaluation form (`q_0..q_l`, then `P`).
pub struct Extended {
    pub digits: Vec<Vec<u64>>,
}

/// A prepared switching key: both halves, digit-major over all of QP.
pub struct CpuSwitchKey {
    pub b: Vec<u64>,
    pub a: Vec<u64>,
}

/// Limb `t` of an extended polynomial at level `l` is QP prime `qp_index(t)`.
#[inline]
fn qp_index(plan: &CkksPlan, level: usize, t: usize) -> usize {
    if t <= level {
        t
    } else {
        plan.q_len() + (t - level - 1)
    }
}

/// Step 1: ModUp of `d` (evaluation form, `l + 1` limbs).
pub fn mod_up(plan: &CkksPlan, lp: &LevelPlan, d: &[u64]) -> Extended {
    let n = plan.params.n();
    let l = lp.level;
    let k = plan.params.p.len();
    let mut coeff = d.to_vec();
    coeff.par_chunks_mut(n).enumerate().for_each(|(i, limb)| plan.primes[i].ntt.inverse(limb));
    let digits = lp
        .digits
        .iter()
        .map(|dp| {
            let mut conv = vec![0u64; dp.targets.len() * n];
            dp.conv.convert(n, &coeff[dp.range.start * n..dp.range.end * n], &mut conv);
            let mut ext = vec![0u64; (l + 1 + k) * n];
            // The digit's own limbs as they were; converted limbs to evaluation form.
            // `targets` lists the other limbs in ascending order of `t`.
            ext.par_chunks_mut(n).enumerate().for_each(|(t, limb)| {
                if dp.range.contains(&t) {
                    limb.copy_from_slice(&d[t * n..(t + 1) * n]);
                    return;
                }
                let qp = qp_index(plan, l, t);
                let pos = t - if t >= dp.range.end { dp.range.len() } else { 0 };
                debug_assert_eq!(dp.targets[pos], qp);
                limb.copy_from_slice(&conv[pos * n..(pos + 1) * n]);
                plan.primes[qp].ntt.forward(limb);
            });
            ext
        })
        .collect();
    Extended { digits }
}

/// Steps 2-4: the key-switched pair `(u0, u1)` over `q_0..q_l`, evaluation form.
pub fn switch(
    plan: &CkksPlan,
    lp: &LevelPlan,
    ext: &Extended,
    key: &CpuSwitchKey,
    perm: Option<&EvalPermutation>,
) -> (Vec<u64>, Vec<u64>) {
    let n = plan.params.n();
    let l = lp.level;
    let k = plan.params.p.len();
    let qp = plan.q_len() + k;
    let limbs = l + 1 + k;
    let mut u0 = vec![0u64; limbs * n];
    let mut u1 = vec![0u64; limbs * n];
    u0.par_chunks_mut(n).zip(u1.par_chunks_mut(n)).enumerate().for_each(|(t, (o0, o1))| {
        let i = qp_index(plan, l, t);
        let m = &plan.primes[i].m;
        let mut permuted = vec![0u64; if perm.is_some() { n } else { 0 }];
        for (j, e) in ext.digits.iter().enumerate() {
            let mut e = &e[t * n..(t + 1) * n];
            if let Some(p) = perm {
                p.apply(e, &mut permuted);
                e = &permuted;
            }
            let kb = &key.b[(j * qp + i) * n..(j * qp + i + 1) * n];
            let ka = &key.a[(j * qp + i) * n..(j * qp + i + 1) * n];
            for s in 0..n {
                o0[s] = m.add(o0[s], m.mul(e[s], kb[s]));
                o1[s] = m.add(o1[s], m.mul(e[s], ka[s]));
            }
        }
    });
    (mod_down(plan, lp, u0), mod_down(plan, lp, u1))
}

/// Step 4 on one polynomial of `l + 1 + K` limbs: `l + 1` limbs out.
fn mod_down(plan: &CkksPlan, lp: &LevelPlan, mut u: Vec<u64>) -> Vec<u64> {
    let n = plan.params.n();
    let l = lp.level;
    let mut p_part = u.split_off((l + 1) * n);
    p_part.par_chunks_mut(n).enumerate().for_each(|(k, limb)| plan.primes[plan.p_index(k)].ntt.inverse(limb));
    let mut w = vec![0u64; (l + 1) * n];
    lp.down.convert(n, &p_part, &mut w);
    u.par_chunks_mut(n).zip(w.par_chunks_mut(n)).enumerate().for_each(|(i, (ui, wi))| {
        let pr = &plan.primes[i];
        pr.ntt.forward(wi);
        let q = pr.m.q;
        let (inv, inv_s) = lp.p_inv[i];
        for (x, &y) in ui.iter_mut().zip(wi.iter()) {
            let diff = *x + q - y;
            let r = mul_shoup_lazy(diff, inv, inv_s, q);
            *x = if r >= q { r - q } else { r };
        }
    });
    u
}
