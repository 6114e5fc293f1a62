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
use fhe_api::ring::modulus::Modulus;

use super::plan::{CkksPlan, LevelPlan, Scratch};
use crate::arith;

/// The converted limbs of one polynomial's ModUp: for each digit `j`, the limbs of
/// `E_j` outside the digit (`targets` of the digit's plan, in order). Owned, so a
/// rotation's decomposition can be kept (hoisting); its buffer goes back to the plan's
/// pool with [`ModUp::recycle`].
pub struct ModUp {
    conv: Vec<u64>,
    /// Limb offset of digit `j`'s converted limbs in `conv`.
    offsets: Vec<usize>,
}

impl ModUp {
    /// The extended digits of `own`, the polynomial this ModUp was made from.
    pub fn of<'a>(&'a self, own: &'a [u64]) -> Extended<'a> {
        Extended { own, conv: &self.conv, offsets: &self.offsets }
    }

    pub fn recycle(self, plan: &CkksPlan) {
        plan.recycle(self.conv);
    }
}

/// The extended digits of one polynomial: `E_j` for each digit over `q_0..q_l, P`. A
/// digit's own limbs are the input's evaluation-form limbs, read in place; the converted
/// ones come from its [`ModUp`].
pub struct Extended<'a> {
    own: &'a [u64],
    conv: &'a [u64],
    offsets: &'a [usize],
}

impl Extended<'_> {
    /// Limb `t` (`0..l+1+K`) of digit `j`.
    #[inline]
    fn limb(&self, lp: &LevelPlan, n: usize, j: usize, t: usize) -> &[u64] {
        let range = &lp.digits[j].range;
        if range.contains(&t) {
            return &self.own[t * n..(t + 1) * n];
        }
        let pos = self.offsets[j] + t - if t >= range.end { range.len() } else { 0 };
        &self.conv[pos * n..(pos + 1) * n]
    }
}

/// A prepared switching key: both halves, digit-major over `q_0..q_level, P` for the
/// digits covering `q_0..q_level` (all of QP for a whole key, `level` the chain's top).
pub struct CpuSwitchKey {
    pub b: Vec<u64>,
    pub a: Vec<u64>,
    /// A Galois key's evaluation-form permutation, built once at prepare time (`None` for
    /// relinearization).
    pub perm: Option<EvalPermutation>,
    /// The highest level it switches at.
    pub level: usize,
    /// Primes in the chain's `q`: a `P` prime's QP index less this plus `level + 1` is its
    /// limb in a digit.
    pub q_len: usize,
}

impl CpuSwitchKey {
    /// Word offset of QP prime `i`'s limb in digit `j` (`i` at most `level`, or a `P` prime).
    #[inline]
    fn start(&self, p_len: usize, j: usize, i: usize, n: usize) -> usize {
        let slot = if i <= self.level { i } else { i - self.q_len + self.level + 1 };
        (j * (self.level + 1 + p_len) + slot) * n
    }
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

/// Step 1: ModUp of `d` (evaluation form, `l + 1` limbs); `ModUp::of(d)` is `E`.
pub fn mod_up(plan: &CkksPlan, lp: &LevelPlan, d: &[u64]) -> ModUp {
    let n = plan.params.n();
    let mut coeff = plan.take(d.len());
    coeff.copy_from_slice(d);
    coeff.par_chunks_mut(n).enumerate().for_each(|(i, limb)| plan.primes[i].ntt.inverse(limb));
    let mut offsets = Vec::with_capacity(lp.digits.len());
    let mut total = 0;
    for dp in &lp.digits {
        offsets.push(total);
        total += dp.targets.len();
    }
    let mut conv = plan.take_vec(total * n);
    // Each digit's conversion into its own run of limbs, then every converted limb to
    // evaluation form.
    let mut runs = Vec::with_capacity(lp.digits.len());
    let mut rest: &mut [u64] = &mut conv;
    for dp in &lp.digits {
        let (run, tail) = rest.split_at_mut(dp.targets.len() * n);
        runs.push(run);
        rest = tail;
    }
    runs.into_par_iter().zip(lp.digits.par_iter()).for_each(|(run, dp)| {
        super::convert::convert(&dp.conv, n, &coeff[dp.range.start * n..dp.range.end * n], run);
    });
    let qp: Vec<usize> = lp.digits.iter().flat_map(|dp| dp.targets.iter().copied()).collect();
    conv.par_chunks_mut(n).zip(qp.par_iter()).for_each(|(limb, &i)| plan.primes[i].ntt.forward(limb));
    ModUp { conv, offsets }
}

/// Step 3 for limb `t`: `o0 = sum_j E_j[t] * b_j`, `o1 = sum_j E_j[t] * a_j` mod the
/// limb's prime ([`arith::dot_pair`]).
#[allow(clippy::too_many_arguments)]
fn inner_product(
    m: &Modulus,
    n: usize,
    lp: &LevelPlan,
    ext: &Extended,
    key: &CpuSwitchKey,
    (p_len, i): (usize, usize),
    t: usize,
    o0: &mut [u64],
    o1: &mut [u64],
) {
    let digits = lp.digits.len();
    let e: Vec<&[u64]> = (0..digits).map(|j| ext.limb(lp, n, j, t)).collect();
    fn limbs(k: &[u64], digits: usize, start: impl Fn(usize) -> usize, n: usize) -> Vec<&[u64]> {
        (0..digits).map(|j| &k[start(j)..start(j) + n]).collect()
    }
    let start = |j: usize| key.start(p_len, j, i, n);
    let (kb, ka) = (limbs(&key.b, digits, start, n), limbs(&key.a, digits, start, n));
    arith::dot_pair(m, &e, &kb, &ka, o0, o1);
}

/// How the key-switched limbs `r_i` (ModDown's output) meet the rest of the result: the
/// finishing step writes `out_i` from `r_i`.
#[derive(Clone, Copy)]
pub enum Finish<'a> {
    /// `out_i = r_i`.
    Set,
    /// `out_i = out_i + r_i`.
    Add,
    /// `out_i = x_i[index] + r_i` (a rotation's `c0` part, the permutation fused in).
    AddPermuted(&'a [u64], &'a [u32]),
}

/// Steps 2-4: the key-switched pair `(u0, u1)` over `q_0..q_l` (evaluation form) combined
/// into `out0` and `out1` as `finish0` and `finish1` say. With `perm` (a rotation), `key`
/// is a Galois key as `prepare_key` keeps it: every limb permuted by `sigma_g^-1`.
#[allow(clippy::too_many_arguments)]
pub fn switch(
    plan: &CkksPlan,
    lp: &LevelPlan,
    ext: &Extended,
    key: &CpuSwitchKey,
    perm: Option<&EvalPermutation>,
    out0: &mut [u64],
    finish0: Finish,
    out1: &mut [u64],
    finish1: Finish,
) {
    let (mut u0, mut u1) = inner_products(plan, lp, ext, key, perm);
    // The two halves' ModDowns are independent: one per core when there are two.
    rayon::join(|| mod_down(plan, lp, &mut u0, out0, finish0), || mod_down(plan, lp, &mut u1, out1, finish1));
    plan.recycle(u0);
    plan.recycle(u1);
}

/// Steps 2-3: the sums `(u0, u1)` over `q_0..q_l, P` (pooled buffers), before ModDown.
pub fn inner_products(
    plan: &CkksPlan,
    lp: &LevelPlan,
    ext: &Extended,
    key: &CpuSwitchKey,
    perm: Option<&EvalPermutation>,
) -> (Vec<u64>, Vec<u64>) {
    let n = plan.params.n();
    let l = lp.level;
    let k = plan.params.p().len();
    let limbs = l + 1 + k;
    let index = perm.map(|p| p.index());
    let mut u0 = plan.take_vec(limbs * n);
    let mut u1 = plan.take_vec(limbs * n);
    u0.par_chunks_mut(n).zip(u1.par_chunks_mut(n)).enumerate().for_each(|(t, (o0, o1))| {
        let i = qp_index(plan, l, t);
        let m = &plan.primes[i].m;
        match index {
            None => inner_product(m, n, lp, ext, key, (k, i), t, o0, o1),
            Some(index) => {
                // A Galois key is prepared as `sigma^-1(k_j)` (`k'[index[s]] = k[s]`), so
                // `sum_j E_j[index[s]] k_j[s] = (sum_j E_j k'_j)[index[s]]`: one gather per
                // limb instead of one per digit, the same words.
                let (mut v0, mut v1) = (plan.take(n), plan.take(n));
                inner_product(m, n, lp, ext, key, (k, i), t, &mut v0, &mut v1);
                o0.iter_mut().zip(o1.iter_mut()).zip(index).for_each(|((a, b), &k)| {
                    *a = v0[k as usize];
                    *b = v1[k as usize];
                });
            }
        }
    });
    (u0, u1)
}

/// The QP index of limb `t` of an extended polynomial at `level`.
pub fn limb_prime(plan: &CkksPlan, level: usize, t: usize) -> usize {
    qp_index(plan, level, t)
}

/// Words per task of ModDown's conversion: a few blocks of its converter each.
const CONVERT_RUN: usize = 2048;

/// ModDown's conversion: the `P` limbs (evaluation form, overwritten) to coefficients,
/// and their centered remainder modulo `P` taken to `q_0 .. q_l` (coefficient form).
fn convert_down<'a>(plan: &'a CkksPlan, lp: &LevelPlan, p_part: &mut [u64]) -> Scratch<'a> {
    let n = plan.params.n();
    p_part.par_chunks_mut(n).enumerate().for_each(|(k, limb)| plan.primes[plan.p_index(k)].ntt.inverse(limb));
    let mut w = plan.take((lp.level + 1) * n);
    // The conversion by word ranges on all cores: each range's output words, in every
    // limb, depend on that range of the input alone (`convert::round_down_words`).
    let mut runs: Vec<Vec<&mut [u64]>> =
        (0..n.div_ceil(CONVERT_RUN)).map(|_| Vec::with_capacity(lp.level + 1)).collect();
    for limb in w.chunks_mut(n) {
        limb.chunks_mut(CONVERT_RUN).zip(runs.iter_mut()).for_each(|(piece, run)| run.push(piece));
    }
    let p_part = &*p_part;
    runs.into_par_iter().enumerate().for_each(|(r, mut pieces)| {
        super::convert::round_down_words(&lp.down, n, p_part, r * CONVERT_RUN, &mut pieces)
    });
    w
}

/// ModDown with `Finish::Add` onto `c` (over `q_0..q_l`), then the rescale by `q_l`, on
/// one polynomial `u` of `l + 1 + K` limbs (its limbs are overwritten): the words of
/// [`mod_down`] then `rescale::rescale`, over `q_0..q_(l-1)`. Below the top limb the
/// rescale's correction `d_i` rides in ModDown's forward transform: the NTT is linear,
/// so `NTT(w_i) + P NTT(d_i) = NTT(w_i + P d_i)`, one transform a limb instead of two.
pub fn mod_down_rescale(plan: &CkksPlan, lp: &LevelPlan, u: &mut [u64], c: &[u64]) -> Vec<u64> {
    let n = plan.params.n();
    let l = lp.level;
    let (u, p_part) = u.split_at_mut((l + 1) * n);
    let mut w = convert_down(plan, lp, p_part);
    let (w_low, w_top) = w.split_at_mut(l * n);
    let (u_low, u_top) = u.split_at_mut(l * n);
    // The top limb as ModDown leaves it, `c_l + (u_l - NTT(w_l)) P^-1`, to coefficients.
    let top_prime = &plan.primes[l];
    let mt = &top_prime.m;
    top_prime.ntt.forward(w_top);
    arith::sub_scale(mt, u_top, lp.p_inv[l], w_top);
    w_top.iter_mut().zip(&c[l * n..(l + 1) * n]).for_each(|(r, &x)| *r = mt.add(x, *r));
    top_prime.ntt.inverse(w_top);
    let top = &*w_top;
    let mut out = plan.take_vec(l * n);
    out.par_chunks_mut(n).zip(u_low.par_chunks_mut(n)).zip(w_low.par_chunks(n)).enumerate().for_each(
        |(i, ((o, ui), wi))| {
            let pr = &plan.primes[i];
            let mut d = plan.take(n);
            arith::centered(mt, &pr.m, top, &mut d);
            // o = NTT(w_i + P d_i); u_i = (o - u_i) P^-1, the negated ModDown term plus
            // NTT(d_i); then (c_i - u_i) q_l^-1 is rescale's `(x_i - d_i) q_l^-1`.
            let consts = [1, lp.p_mod[i].0];
            let path = arith::dot_const_path(&pr.m, &[pr.m.q, pr.m.q], &consts);
            arith::dot_const(&pr.m, &[wi, &d[..]], &consts, path, o);
            pr.ntt.forward(o);
            arith::sub_scale(&pr.m, o, lp.p_inv[i], ui);
            arith::sub_scale(&pr.m, &c[i * n..(i + 1) * n], lp.ql_inv[i], ui);
            o.copy_from_slice(ui);
        },
    );
    out
}

/// Step 4 on one polynomial `u` of `l + 1 + K` limbs (its `P` limbs are overwritten):
/// `r_i = (u_i - w_i) * P^-1 mod q_i`, handed to `finish` with `out`'s limb `i`.
pub fn mod_down(plan: &CkksPlan, lp: &LevelPlan, u: &mut [u64], out: &mut [u64], finish: Finish) {
    let n = plan.params.n();
    let l = lp.level;
    let (u, p_part) = u.split_at_mut((l + 1) * n);
    let mut w = convert_down(plan, lp, p_part);
    out.par_chunks_mut(n).zip(u.par_chunks(n)).zip(w.par_chunks_mut(n)).enumerate().for_each(|(i, ((oi, ui), wi))| {
        let pr = &plan.primes[i];
        pr.ntt.forward(wi);
        arith::sub_scale(&pr.m, ui, lp.p_inv[i], wi);
        let m = &pr.m;
        match finish {
            Finish::Set => oi.copy_from_slice(wi),
            Finish::Add => oi.iter_mut().zip(wi.iter()).for_each(|(o, &r)| *o = m.add(*o, r)),
            Finish::AddPermuted(x, index) => {
                let x = &x[i * n..(i + 1) * n];
                oi.iter_mut().zip(wi.iter().zip(index)).for_each(|(o, (&r, &k))| *o = m.add(x[k as usize], r));
            }
        }
    });
}
