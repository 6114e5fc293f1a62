//! Element-wise CKKS arithmetic in evaluation form through the `eltwise` kernel, one
//! dispatch per form over every part and limb (the CPU's and the GPU backend's
//! `eltwise.rs`): sums, plaintext and constant products and their accumulating forms,
//! monomials, the tensor product. Every result word is fully reduced below its limb's
//! prime.

use fhe_api::ops::ConstResidues;
use fhe_api::{Error, Result};

use super::launch::{Args, Bind, Ctx, Kernel};
use super::{check_degree, WgpuCt};

/// The kernel's operation codes (`OP_*` in `shaders/ckks/eltwise.wgsl`).
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub(crate) enum Op {
    Copy = 0,
    Add = 1,
    Sub = 2,
    Neg = 3,
    Mul = 4,
    MulAdd = 5,
    AddTo = 6,
    SubFrom = 7,
    Fill = 8,
    Affine = 9,
    Rescale = 10,
    Tensor = 11,
    SubScaleAdd = 12,
    SubScalePerm = 13,
    PermScaleAdd = 14,
    SubScale = 16,
    Scale = 17,
}

/// One polynomial operand: its buffer, first word and number of limbs.
#[derive(Clone, Copy)]
pub(crate) struct Poly<'b> {
    pub buf: &'b wgpu::Buffer,
    pub off: usize,
    pub limbs: usize,
}

impl<'b> Poly<'b> {
    pub(crate) fn of(buf: &'b wgpu::Buffer, n: usize) -> Poly<'b> {
        Poly { buf, off: 0, limbs: (buf.size() as usize / 8) / n }
    }
}

/// Records `op` over `a.parts * a.limbs * N` words.
pub(crate) fn run(c: &Ctx<'_>, op: Op, a: Args, b: Bind<'_>) -> Result<()> {
    let words = a.parts as usize * a.limbs as usize * c.n();
    c.run(Kernel::Eltwise, &Args { op: op as u32, ..a }, b, words)
}

/// A new ciphertext of `parts` parts of `limbs` limbs (contents written by the caller).
pub(crate) fn new_ct(c: &Ctx<'_>, parts: usize, limbs: usize) -> Result<WgpuCt> {
    Ok(WgpuCt { buf: c.alloc(parts * limbs * c.n())?, parts, limbs })
}

pub(crate) fn need_limbs(what: &str, have: usize, want: usize) -> Result<()> {
    if have < want {
        return Err(Error::InvalidInput(format!("{what} has {have} limbs where the operation needs {want}")));
    }
    Ok(())
}

/// A copy of `x`.
pub(crate) fn copy_ct(c: &Ctx<'_>, x: &WgpuCt) -> Result<WgpuCt> {
    truncate(c, x, x.limbs)
}

/// `x`'s first `limbs` limbs of every part (drop to a lower level).
pub(crate) fn truncate(c: &Ctx<'_>, x: &WgpuCt, limbs: usize) -> Result<WgpuCt> {
    need_limbs("the ciphertext", x.limbs, limbs)?;
    let out = new_ct(c, x.parts, limbs)?;
    let a = Args { x_stride: (x.limbs * c.n()) as u32, ..c.args(x.parts, limbs) };
    run(c, Op::Copy, a, Bind { out: Some(&out.buf), x: Some(&x.buf), ..Bind::default() })?;
    Ok(out)
}

/// `x + y` (or `x - y`); the result has the larger degree (a missing part is zero).
pub(crate) fn add_sub(c: &Ctx<'_>, x: &WgpuCt, y: &WgpuCt, sub: bool) -> Result<WgpuCt> {
    need_limbs("the second operand", y.limbs, x.limbs)?;
    let (n, limbs) = (c.n(), x.limbs);
    let out = new_ct(c, x.parts.max(y.parts), limbs)?;
    let both = x.parts.min(y.parts);
    let a = Args { x_stride: (x.limbs * n) as u32, y_stride: (y.limbs * n) as u32, ..c.args(both, limbs) };
    let b = Bind { out: Some(&out.buf), x: Some(&x.buf), y: Some(&y.buf), ..Bind::default() };
    run(c, if sub { Op::Sub } else { Op::Add }, a, b)?;
    // The parts only one operand has: copied from `x`, or copied (negated) from `y`.
    let (rest, from, op) = if x.parts > y.parts {
        (x.parts - both, x, Op::Copy)
    } else {
        (y.parts - both, y, if sub { Op::Neg } else { Op::Copy })
    };
    if rest > 0 {
        let a = Args {
            out_off: (both * limbs * n) as u32,
            x_off: (both * from.limbs * n) as u32,
            x_stride: (from.limbs * n) as u32,
            ..c.args(rest, limbs)
        };
        run(c, op, a, Bind { out: Some(&out.buf), x: Some(&from.buf), ..Bind::default() })?;
    }
    Ok(out)
}

/// `-x`.
pub(crate) fn negate(c: &Ctx<'_>, x: &WgpuCt) -> Result<WgpuCt> {
    let out = new_ct(c, x.parts, x.limbs)?;
    run(c, Op::Neg, c.args(x.parts, x.limbs), Bind { out: Some(&out.buf), x: Some(&x.buf), ..Bind::default() })?;
    Ok(out)
}

/// `acc += y` (or `-=`) in place; `y` may not have a higher degree than `acc`.
pub(crate) fn accumulate(c: &Ctx<'_>, acc: &WgpuCt, y: &WgpuCt, sub: bool) -> Result<()> {
    check_degree(acc.parts, y.parts)?;
    need_limbs("the term", y.limbs, acc.limbs)?;
    let a = Args { x_stride: (y.limbs * c.n()) as u32, ..c.args(y.parts, acc.limbs) };
    let op = if sub { Op::SubFrom } else { Op::AddTo };
    run(c, op, a, Bind { out: Some(&acc.buf), x: Some(&y.buf), ..Bind::default() })
}

/// `(x0 + m, x1, ..)` (or `x0 - m`), `m` over at least `x`'s limbs.
pub(crate) fn plus_c0(c: &Ctx<'_>, x: &WgpuCt, m: Poly<'_>, sub: bool) -> Result<WgpuCt> {
    need_limbs("the plaintext", m.limbs, x.limbs)?;
    let out = copy_ct(c, x)?;
    let a = Args { x_off: m.off as u32, x_stride: 0, ..c.args(1, x.limbs) };
    let op = if sub { Op::SubFrom } else { Op::AddTo };
    run(c, op, a, Bind { out: Some(&out.buf), x: Some(m.buf), ..Bind::default() })?;
    Ok(out)
}

/// `x * m` part by part, `m` one polynomial over at least `x`'s limbs.
pub(crate) fn mul(c: &Ctx<'_>, x: &WgpuCt, m: Poly<'_>) -> Result<WgpuCt> {
    need_limbs("the plaintext", m.limbs, x.limbs)?;
    let out = new_ct(c, x.parts, x.limbs)?;
    let a = Args { y_off: m.off as u32, y_stride: 0, ..c.args(x.parts, x.limbs) };
    run(c, Op::Mul, a, Bind { out: Some(&out.buf), x: Some(&x.buf), y: Some(m.buf), ..Bind::default() })?;
    Ok(out)
}

/// `acc += x * m` part by part, in place.
pub(crate) fn mul_accumulate(c: &Ctx<'_>, acc: &WgpuCt, x: &WgpuCt, m: Poly<'_>) -> Result<()> {
    check_degree(acc.parts, x.parts)?;
    need_limbs("the term", x.limbs, acc.limbs)?;
    need_limbs("the plaintext", m.limbs, acc.limbs)?;
    let a = Args { x_stride: (x.limbs * c.n()) as u32, y_off: m.off as u32, y_stride: 0, ..c.args(x.parts, acc.limbs) };
    run(c, Op::MulAdd, a, Bind { out: Some(&acc.buf), x: Some(&x.buf), y: Some(m.buf), ..Bind::default() })
}

/// The evaluation form of the constant `k` over `limbs` limbs: `re` in every slot, plus
/// `im` times `w`, the transform of `X^(N/2)` (given when `im` is not empty).
pub(crate) fn constant(c: &Ctx<'_>, limbs: usize, k: &ConstResidues, w: Option<&wgpu::Buffer>) -> Result<wgpu::Buffer> {
    let q = &c.table.primes[..limbs.min(c.table.primes.len())];
    let bad = |v: &[u64]| v.len() != limbs || v.iter().zip(q).any(|(&r, &q)| r >= q);
    if bad(&k.re) || (!k.im.is_empty() && bad(&k.im)) {
        return Err(Error::InvalidInput(format!("a constant needs {limbs} residues per part, each below its prime")));
    }
    let out = c.alloc(limbs * c.n())?;
    let scalars: Vec<u64> = k.re.iter().chain(&k.im).copied().collect();
    let sc = c.upload(&scalars)?;
    let a = Args { a_off: 0, b_off: limbs as u32, ..c.args(1, limbs) };
    let b = Bind { out: Some(&out), sc: Some(&sc), ..Bind::default() };
    match (k.im.is_empty(), w) {
        (true, _) => run(c, Op::Fill, a, b)?,
        (false, Some(w)) => run(c, Op::Affine, a, Bind { y: Some(w), ..b })?,
        (false, None) => return Err(Error::InvalidInput("a complex constant without the table of X^(N/2)".into())),
    }
    Ok(out)
}

/// `(x0 y0, x0 y1 + x1 y0, x1 y1)` of two degree-1 ciphertexts.
pub(crate) fn tensor(c: &Ctx<'_>, x: &WgpuCt, y: &WgpuCt) -> Result<WgpuCt> {
    need_limbs("the second factor", y.limbs, x.limbs)?;
    let (n, limbs) = (c.n(), x.limbs);
    let out = new_ct(c, 3, limbs)?;
    let a = Args { x_stride: (x.limbs * n) as u32, y_stride: (y.limbs * n) as u32, ..c.args(1, limbs) };
    run(c, Op::Tensor, a, Bind { out: Some(&out.buf), x: Some(&x.buf), y: Some(&y.buf), ..Bind::default() })?;
    Ok(out)
}
