//! Rescale by the last prime and bootstrapping's ModRaise (the CPU's and the GPU
//! backend's `rescale.rs`). Pinned: limb `l` to coefficient form; `d` its centered
//! remainder taken modulo each `q_i` (`center`) and to evaluation form; then `y_i =
//! (x_i - d_i) q_l^-1 mod q_i`. ModRaise: limb 0 to coefficient form, its centered
//! remainder modulo each prime up to the target level, to evaluation form.

use fhe_api::Result;

use super::eltwise::{new_ct, run, Op};
use super::launch::{Args, Bind, Ctx, Kernel};
use super::plan::WgpuLevel;
use super::WgpuCt;

/// Every part's limb `limb` of `x`, to coefficient form, in a new `[part][N]` buffer.
fn limb_to_coeff(c: &Ctx<'_>, x: &WgpuCt, limb: usize) -> Result<wgpu::Buffer> {
    let n = c.n();
    let top = c.alloc(x.parts * n)?;
    let one = Args { first: limb as u32, out_stride: n as u32, x_off: (limb * n) as u32, ..c.args(x.parts, 1) };
    let one = Args { x_stride: (x.limbs * n) as u32, ..one };
    run(c, Op::Copy, one, Bind { out: Some(&top), x: Some(&x.buf), ..Bind::default() })?;
    c.ntt(&top, 0, &one, x.parts, false)?;
    Ok(top)
}

/// The centered remainders of `parts` coefficient-form limbs of `input` over prime
/// `source`, modulo the first `limbs` primes, into `out` (`[part][limbs][N]`), then to
/// evaluation form.
fn center(
    c: &Ctx<'_>,
    out: &wgpu::Buffer,
    input: &wgpu::Buffer,
    source: usize,
    parts: usize,
    limbs: usize,
) -> Result<()> {
    let a = Args { aux: [source as u32, 0, 0, 0], ..c.args(parts, limbs) };
    c.run(Kernel::Center, &a, Bind { out: Some(out), x: Some(input), ..Bind::default() }, parts * limbs * c.n())?;
    c.ntt(out, 0, &a, parts * limbs, true)
}

/// `l + 1` limbs in, `l` limbs out, every part.
pub(crate) fn rescale(c: &Ctx<'_>, lp: &WgpuLevel, x: &WgpuCt) -> Result<WgpuCt> {
    let (n, l, parts) = (c.n(), lp.level, x.parts);
    let top = limb_to_coeff(c, x, l)?;
    let out = new_ct(c, parts, l)?;
    center(c, &out.buf, &top, l, parts, l)?;
    // out = (x - d) q_l^-1, d built in `out`.
    let a = Args { x_stride: (x.limbs * n) as u32, a_off: lp.at.ql_inv as u32, ..c.args(parts, l) };
    run(c, Op::Rescale, a, Bind { out: Some(&out.buf), x: Some(&x.buf), sc: Some(&lp.scalars), ..Bind::default() })?;
    Ok(out)
}

/// ModRaise of a degree-1 ciphertext at level 0 to `level`.
pub(crate) fn raise(c: &Ctx<'_>, x: &WgpuCt, level: usize) -> Result<WgpuCt> {
    let limbs = level + 1;
    let coeffs = limb_to_coeff(c, x, 0)?;
    let out = new_ct(c, x.parts, limbs)?;
    center(c, &out.buf, &coeffs, 0, x.parts, limbs)?;
    Ok(out)
}
