//! ModUp and the rounding ModDown of hybrid key switching on the device (steps 1 and 4
//! of the CPU's `keyswitch.rs`, with its `convert.rs`):
//!
//! 1. ModUp of `d` (evaluation form over `q_0..q_l`): every limb to coefficient form;
//!    one `lux_ckks_mod_up` launch writes every `E_j` over `q_0..q_l, P` in coefficient
//!    form (own limbs copied, the others converted); then one forward NTT over every
//!    digit's limbs, which gives back `d`'s own limbs exactly.
//! 4. ModDown of both halves `u` over `q_0..q_l, P` at once: their `P` limbs to
//!    coefficient form, the rounding conversion to `q_0..q_l` (`lux_ckks_mod_down`), to
//!    evaluation form `w`, then `(u_i - w_i) P^-1 mod q_i` combined into the output as
//!    [`Finish`] says.

use fhe_api::Result;

use super::eltwise::{args, run};
use super::plan::GpuLevel;
use super::{offset, Ctx};
use crate::args::{CkksEltwiseArgs, CkksModDownArgs, CkksModUpArgs, DevPtr, EltwiseOp, Residue};
use crate::driver::GpuDriver;

/// How ModDown's result `r_i` meets the output limb `out_i`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Finish {
    /// `out_i = r_i`.
    Set,
    /// `out_i = out_i + r_i`.
    Add,
    /// `out_i = z_i[index] + r_i` (a rotation's `c0`, the permutation fused in).
    AddPermuted(DevPtr<Residue>, DevPtr<u32>),
}

/// Words of a level's `E`: `[digit][l + 1 + K][N]`.
pub(super) fn ext_words<D: GpuDriver>(c: &Ctx<'_, D>, lp: &GpuLevel<D>) -> usize {
    lp.digits.count * (lp.level + 1 + c.plan.p_len()) * c.n()
}

/// Step 1: `E` of `d` (`l + 1` limbs in evaluation form) into `ext`
/// ([`ext_words`] words).
pub(super) fn mod_up<D: GpuDriver>(
    c: &Ctx<'_, D>,
    lp: &GpuLevel<D>,
    d: DevPtr<Residue>,
    ext: DevPtr<Residue>,
) -> Result<()> {
    let n = c.n();
    let q_limbs = lp.level + 1;
    let limbs = q_limbs + c.plan.p_len();
    let coeff = c.scratch(q_limbs * n)?;
    let copy = CkksEltwiseArgs { out: coeff, x: d, ..args(c, EltwiseOp::Copy, 1, q_limbs) };
    // SAFETY: `coeff` and `d` hold `l + 1` limbs; `ext` one run of `limbs` limbs per
    // digit; the constants were sized for this level by the plan.
    unsafe {
        run(c, &copy)?;
        c.ntt(coeff, c.plan.table_at(0), q_limbs, q_limbs, false)?;
        let a = CkksModUpArgs {
            out: ext,
            input: coeff,
            tables: lp.ext_table.dev_ptr(),
            q_hat_inv: lp.digits.q_hat_inv.dev_ptr(),
            rows: lp.digits.rows.dev_ptr(),
            row_offsets: lp.digits.row_offsets.dev_ptr(),
            starts: lp.digits.starts.dev_ptr(),
            limbs: limbs as u32,
            digits: lp.digits.count as u32,
            log_n: c.plan.log_n(),
            reserved: 0,
        };
        c.launch(lp.digits.count * limbs * n, &a)?;
        c.ntt(ext, lp.ext_table.dev_ptr(), lp.digits.count * limbs, limbs, true)?;
    }
    Ok(())
}

/// The key-switching sums of both halves, ModDown's input: their limbs over `q_0..q_l`
/// (`[2][l + 1][N]`) and over `P` (`[2][K][N]`, so one launch sequence transforms both).
#[derive(Clone, Copy, Debug)]
pub(super) struct SwitchSums {
    pub q: DevPtr<Residue>,
    pub p: DevPtr<Residue>,
}

impl SwitchSums {
    /// Sums in a temporary of the operation.
    pub(super) fn scratch<D: GpuDriver>(c: &Ctx<'_, D>, lp: &GpuLevel<D>) -> Result<SwitchSums> {
        let q_words = 2 * (lp.level + 1) * c.n();
        let u = c.scratch(q_words + 2 * c.plan.p_len() * c.n())?;
        Ok(SwitchSums { q: u, p: offset(u, q_words) })
    }
}

/// Step 4 on both halves `u` (their `P` limbs are overwritten), into `out`'s two parts
/// of `l + 1` limbs, part `k` finished as `finish[k]` says.
pub(super) fn mod_down<D: GpuDriver>(
    c: &Ctx<'_, D>,
    lp: &GpuLevel<D>,
    u: SwitchSums,
    out: DevPtr<Residue>,
    finish: [Finish; 2],
) -> Result<()> {
    let n = c.n();
    let (q_limbs, k) = (lp.level + 1, c.plan.p_len());
    let w = c.scratch(2 * q_limbs * n)?;
    let down = CkksModDownArgs {
        out: w,
        input: u.p,
        tables: lp.ext_table.dev_ptr(),
        half: lp.down.half.dev_ptr(),
        p_hat_inv: lp.down.p_hat_inv.dev_ptr(),
        frac_c: lp.down.frac_c.dev_ptr(),
        frac_s: lp.down.frac_s.dev_ptr(),
        p_hat_mod_q: lp.down.p_hat_mod_q.dev_ptr(),
        offset: lp.down.offset.dev_ptr(),
        q_limbs: q_limbs as u32,
        p_limbs: k as u32,
        log_n: c.plan.log_n(),
        parts: 2,
    };
    let finishing = |parts: usize, at: usize, f: Finish| {
        let base = CkksEltwiseArgs {
            out: offset(out, at),
            x: offset(u.q, at),
            y: offset(w, at),
            a: lp.p_inv.dev_ptr(),
            ..args(c, EltwiseOp::SubScale, parts, q_limbs)
        };
        match f {
            Finish::Set => base,
            Finish::Add => CkksEltwiseArgs { op: EltwiseOp::SubScaleAdd as u32, ..base },
            Finish::AddPermuted(z, index) => CkksEltwiseArgs { op: EltwiseOp::SubScalePerm as u32, z, index, ..base },
        }
    };
    // One launch for both parts when they finish alike (a gather's `z` is one part's).
    let lasts = match finish {
        [Finish::Set, Finish::Set] | [Finish::Add, Finish::Add] => vec![finishing(2, 0, finish[0])],
        [f0, f1] => vec![finishing(1, 0, f0), finishing(1, q_limbs * n, f1)],
    };
    // SAFETY: `u.q`, `w` and `out` hold two parts of `l + 1` limbs, `u.p` two of `K`
    // (and `z` one part of `l + 1`, `index` N words); the level's constants are sized
    // for it.
    unsafe {
        c.ntt(u.p, c.plan.p_table(), 2 * k, k, false)?;
        c.launch(2 * q_limbs * n, &down)?;
        c.ntt(w, c.plan.table_at(0), 2 * q_limbs, q_limbs, true)?;
        for last in &lasts {
            run(c, last)?;
        }
    }
    Ok(())
}
