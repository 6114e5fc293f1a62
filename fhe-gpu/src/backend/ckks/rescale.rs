//! Rescale by the last prime and bootstrapping's ModRaise (the CPU's `rescale.rs`):
//! Pinned: limb `l` to coefficient form; `d` its centered remainder taken modulo each
//! `q_i` (`lux_ckks_center`) and to evaluation form; then `y_i = (x_i - d_i) q_l^-1 mod
//! q_i`. ModRaise: limb 0 to coefficient form, its centered remainder modulo each prime
//! up to the target level, to evaluation form.

use fhe_api::Result;

use super::eltwise::{args, new_ct, run};
use super::plan::GpuLevel;
use super::{offset, Ctx, GpuCt};
use crate::args::{CkksCenterArgs, CkksEltwiseArgs, DevPtr, EltwiseOp, GpuNttTable, Residue};
use crate::driver::GpuDriver;

/// Every part's limb `limb` of `x`, to coefficient form, in a new `[part][N]` buffer.
fn limb_to_coeff<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, limb: usize) -> Result<DevPtr<Residue>> {
    let n = c.n();
    let top = c.scratch(x.parts * n)?;
    let table = c.plan.table_at(limb);
    let a = CkksEltwiseArgs {
        out: top,
        out_stride: n as u64,
        x: offset(x.ptr(), limb * n),
        x_stride: (x.limbs * n) as u64,
        tables: table,
        ..args(c, EltwiseOp::Copy, x.parts, 1)
    };
    // SAFETY: `top` holds one limb per part; `x` has limb `limb` in each part.
    unsafe {
        run(c, &a)?;
        c.ntt(top, table, x.parts, 1, false)?;
    }
    Ok(top)
}

/// `lux_ckks_center` of `parts` coefficient-form limbs over `source` into `limbs` limbs
/// per part of `out`, over the primes from `q_0`.
///
/// # Safety
/// `out` holds `parts * limbs` limbs, `input` `parts` limbs; inside `on_device`.
unsafe fn center<D: GpuDriver>(
    c: &Ctx<'_, D>,
    out: DevPtr<Residue>,
    input: DevPtr<Residue>,
    source: DevPtr<GpuNttTable>,
    parts: usize,
    limbs: usize,
) -> Result<()> {
    let a = CkksCenterArgs {
        out,
        input,
        source,
        tables: c.plan.table_at(0),
        parts: parts as u32,
        limbs: limbs as u32,
        log_n: c.plan.log_n(),
        reserved: 0,
    };
    // SAFETY: the caller's contract.
    unsafe { c.launch(parts * limbs * c.n(), &a) }
}

/// `l + 1` limbs in, `l` limbs out, every part.
pub(super) fn rescale<D: GpuDriver>(c: &Ctx<'_, D>, lp: &GpuLevel<D>, x: &GpuCt<D>) -> Result<GpuCt<D>> {
    let (n, l, parts) = (c.n(), lp.level, x.parts);
    let top = limb_to_coeff(c, x, l)?;
    let out = new_ct(c, parts, l)?;
    let finish = CkksEltwiseArgs {
        out: out.ptr(),
        x: x.ptr(),
        x_stride: (x.limbs * n) as u64,
        y: out.ptr(),
        a: lp.ql_inv.dev_ptr(),
        ..args(c, EltwiseOp::SubScale, parts, l)
    };
    // SAFETY: `out` holds `parts` parts of `l` limbs, `top` one limb per part, `x` its
    // `l + 1` limbs per part; `d` is built in `out` and scaled there, word by word.
    unsafe {
        center(c, out.ptr(), top, c.plan.table_at(l), parts, l)?;
        c.ntt(out.ptr(), c.plan.table_at(0), parts * l, l, true)?;
        run(c, &finish)?;
    }
    Ok(out)
}

/// ModRaise of a degree-1 ciphertext at level 0 to `level`.
pub(super) fn raise<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, level: usize) -> Result<GpuCt<D>> {
    let limbs = level + 1;
    let coeffs = limb_to_coeff(c, x, 0)?;
    let out = new_ct(c, x.parts, limbs)?;
    // SAFETY: `out` holds `parts` parts of `limbs` limbs; `coeffs` one limb per part.
    unsafe {
        center(c, out.ptr(), coeffs, c.plan.table_at(0), x.parts, limbs)?;
        c.ntt(out.ptr(), c.plan.table_at(0), x.parts * limbs, limbs, true)?;
    }
    Ok(out)
}
