//! Element-wise CKKS arithmetic in evaluation form through `lux_ckks_eltwise`, one
//! launch per form over every part and limb (the CPU's `eltwise.rs`): sums, plaintext
//! and constant products and their accumulating forms, monomials, the tensor product.
//! Every result word is fully reduced below its limb's prime.

use std::sync::Arc;

use fhe_api::ops::ConstResidues;
use fhe_api::{Error, Result};

use super::{check_degree, Ctx, GpuBackend, GpuCkksPlan, GpuCt, Poly};
use crate::args::{CkksEltwiseArgs, DevPtr, EltwiseOp, Residue};
use crate::driver::{Buffer, GpuDriver};

/// The arguments of `op` over `parts` parts of `limbs` limbs over `q_0..`, every
/// operand laid out like the output (`y_split = limbs`): callers set pointers and any
/// other layout.
pub(super) fn args<D: GpuDriver>(c: &Ctx<'_, D>, op: EltwiseOp, parts: usize, limbs: usize) -> CkksEltwiseArgs {
    let stride = (limbs * c.n()) as u64;
    CkksEltwiseArgs {
        op: op as u32,
        parts: parts as u32,
        limbs: limbs as u32,
        log_n: c.plan.log_n(),
        y_split: limbs as u32,
        tables: c.plan.table_at(0),
        out_stride: stride,
        x_stride: stride,
        y_stride: stride,
        z_stride: stride,
        ..CkksEltwiseArgs::default()
    }
}

/// Launches `a` over its `parts * limbs * N` words.
///
/// # Safety
/// Every pointer in `a` is live and covers what `a.op` reads and writes with `a`'s
/// strides; the caller holds the device lock (inside `on_device`).
pub(super) unsafe fn run<D: GpuDriver>(c: &Ctx<'_, D>, a: &CkksEltwiseArgs) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { c.launch(a.parts as usize * a.limbs as usize * c.n(), a) }
}

pub(super) fn ptr<D: GpuDriver>(b: &Buffer<D, u64>) -> DevPtr<Residue> {
    DevPtr::new(b.ptr())
}

/// A new ciphertext of `parts` parts of `limbs` limbs (contents written by the caller).
pub(super) fn new_ct<D: GpuDriver>(c: &Ctx<'_, D>, parts: usize, limbs: usize) -> Result<GpuCt<D>> {
    Ok(GpuCt { buf: c.alloc(parts * limbs * c.n())?, parts, limbs })
}

fn need_limbs(what: &str, have: usize, want: usize) -> Result<()> {
    if have < want {
        return Err(Error::InvalidInput(format!("{what} has {have} limbs where the operation needs {want}")));
    }
    Ok(())
}

/// A copy of `x`.
pub(super) fn copy_ct<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>) -> Result<GpuCt<D>> {
    truncate(c, x, x.limbs)
}

/// `x`'s first `limbs` limbs of every part (drop to a lower level).
pub(super) fn truncate<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, limbs: usize) -> Result<GpuCt<D>> {
    need_limbs("the ciphertext", x.limbs, limbs)?;
    let out = new_ct(c, x.parts, limbs)?;
    let a = CkksEltwiseArgs {
        out: out.ptr(),
        x: x.ptr(),
        x_stride: (x.limbs * c.n()) as u64,
        ..args(c, EltwiseOp::Copy, x.parts, limbs)
    };
    // SAFETY: `out` holds `parts` parts of `limbs` limbs; `x` as many parts of at least
    // `limbs` limbs, `x.limbs` apart.
    unsafe { run(c, &a)? };
    Ok(out)
}

/// `x + y` (or `x - y`); the result has the larger degree (a missing part is zero).
pub(super) fn add_sub<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, y: &GpuCt<D>, sub: bool) -> Result<GpuCt<D>> {
    need_limbs("the second operand", y.limbs, x.limbs)?;
    let (n, limbs) = (c.n(), x.limbs);
    let out = new_ct(c, x.parts.max(y.parts), limbs)?;
    let both = x.parts.min(y.parts);
    let op = if sub { EltwiseOp::Sub } else { EltwiseOp::Add };
    let a = CkksEltwiseArgs {
        out: out.ptr(),
        x: x.ptr(),
        y: y.ptr(),
        y_stride: (y.limbs * n) as u64,
        ..args(c, op, both, limbs)
    };
    // SAFETY: `out` has max(parts) parts, `x` and `y` at least `both`, of at least
    // `limbs` limbs at their own strides.
    unsafe { run(c, &a)? };
    // The parts only one operand has: copied from `x`, or copied (negated) from `y`.
    let (rest, from, op) = if x.parts > y.parts {
        (x.parts - both, x, EltwiseOp::Copy)
    } else {
        (y.parts - both, y, if sub { EltwiseOp::Neg } else { EltwiseOp::Copy })
    };
    if rest > 0 {
        let a = CkksEltwiseArgs {
            out: out.part(both, n),
            x: from.part(both, n),
            x_stride: (from.limbs * n) as u64,
            ..args(c, op, rest, limbs)
        };
        // SAFETY: parts `both..` of `out` and of `from`, which has them.
        unsafe { run(c, &a)? };
    }
    Ok(out)
}

/// `-x`.
pub(super) fn negate<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>) -> Result<GpuCt<D>> {
    let out = new_ct(c, x.parts, x.limbs)?;
    let a = CkksEltwiseArgs { out: out.ptr(), x: x.ptr(), ..args(c, EltwiseOp::Neg, x.parts, x.limbs) };
    // SAFETY: `out` and `x` have the same shape.
    unsafe { run(c, &a)? };
    Ok(out)
}

/// `acc += y` (or `-=`) in place; `y` may not have a higher degree than `acc`.
pub(super) fn accumulate<D: GpuDriver>(c: &Ctx<'_, D>, acc: &GpuCt<D>, y: &GpuCt<D>, sub: bool) -> Result<()> {
    check_degree(acc.parts, y.parts)?;
    need_limbs("the term", y.limbs, acc.limbs)?;
    let op = if sub { EltwiseOp::Sub } else { EltwiseOp::Add };
    let a = CkksEltwiseArgs {
        out: acc.ptr(),
        x: acc.ptr(),
        y: y.ptr(),
        y_stride: (y.limbs * c.n()) as u64,
        ..args(c, op, y.parts, acc.limbs)
    };
    // SAFETY: `acc` has at least `y.parts` parts; each word is read and written by one
    // thread only.
    unsafe { run(c, &a) }
}

/// `(x0 + m, x1, ..)` (or `x0 - m`), `m` over at least `x`'s limbs.
pub(super) fn plus_c0<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, m: Poly, sub: bool) -> Result<GpuCt<D>> {
    need_limbs("the plaintext", m.limbs, x.limbs)?;
    let out = copy_ct(c, x)?;
    let op = if sub { EltwiseOp::Sub } else { EltwiseOp::Add };
    let a = CkksEltwiseArgs { out: out.ptr(), x: out.ptr(), y: m.ptr, ..args(c, op, 1, x.limbs) };
    // SAFETY: part 0 of `out`, and `m`'s first `x.limbs` limbs (checked above).
    unsafe { run(c, &a)? };
    Ok(out)
}

/// `x * m` part by part, `m` one polynomial over at least `x`'s limbs.
pub(super) fn mul<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, m: Poly) -> Result<GpuCt<D>> {
    need_limbs("the plaintext", m.limbs, x.limbs)?;
    let out = new_ct(c, x.parts, x.limbs)?;
    let a = CkksEltwiseArgs {
        out: out.ptr(),
        x: x.ptr(),
        y: m.ptr,
        y_stride: 0,
        ..args(c, EltwiseOp::Mul, x.parts, x.limbs)
    };
    // SAFETY: `out` is shaped as `x`; `m` has the limbs (checked), broadcast over parts.
    unsafe { run(c, &a)? };
    Ok(out)
}

/// `acc += x * m` part by part, in place.
pub(super) fn mul_accumulate<D: GpuDriver>(c: &Ctx<'_, D>, acc: &GpuCt<D>, x: &GpuCt<D>, m: Poly) -> Result<()> {
    check_degree(acc.parts, x.parts)?;
    need_limbs("the term", x.limbs, acc.limbs)?;
    need_limbs("the plaintext", m.limbs, acc.limbs)?;
    let a = CkksEltwiseArgs {
        out: acc.ptr(),
        x: x.ptr(),
        x_stride: (x.limbs * c.n()) as u64,
        y: m.ptr,
        y_stride: 0,
        ..args(c, EltwiseOp::MulAdd, x.parts, acc.limbs)
    };
    // SAFETY: `acc` has at least `x.parts` parts; `x` and `m` at least `acc.limbs` limbs.
    unsafe { run(c, &a) }
}

/// The evaluation form of the constant `k` over `limbs` limbs: `re` in every slot, plus
/// `im` times `w`, the transform of `X^(N/2)` (given when `im` is not empty).
pub(super) fn constant<D: GpuDriver>(
    c: &Ctx<'_, D>,
    limbs: usize,
    k: &ConstResidues,
    w: Option<&Buffer<D, u64>>,
) -> Result<Buffer<D, u64>> {
    let q = &c.plan.params.q()[..limbs];
    let bad = |v: &[u64]| v.len() != limbs || v.iter().zip(q).any(|(&r, q)| r >= q.0);
    if bad(&k.re) || (!k.im.is_empty() && bad(&k.im)) {
        return Err(Error::InvalidInput(format!("a constant needs {limbs} residues per part, each below its prime")));
    }
    let out = c.alloc(limbs * c.n())?;
    let mut a = CkksEltwiseArgs { out: ptr(&out), a: c.upload(&k.re)?, ..args(c, EltwiseOp::Fill, 1, limbs) };
    if let (false, Some(w)) = (k.im.is_empty(), w) {
        a = CkksEltwiseArgs { op: EltwiseOp::Affine as u32, b: c.upload(&k.im)?, y: ptr(w), ..a };
    } else if !k.im.is_empty() {
        return Err(Error::InvalidInput("a complex constant without the table of X^(N/2)".into()));
    }
    // SAFETY: `out` holds `limbs` limbs; `re` (and `im`) one scalar per limb; `w` the
    // table over every prime of q.
    unsafe { run(c, &a)? };
    Ok(out)
}

/// `(x0 y0, x0 y1 + x1 y0, x1 y1)` of two degree-1 ciphertexts.
pub(super) fn tensor<D: GpuDriver>(c: &Ctx<'_, D>, x: &GpuCt<D>, y: &GpuCt<D>) -> Result<GpuCt<D>> {
    need_limbs("the second factor", y.limbs, x.limbs)?;
    let (n, limbs) = (c.n(), x.limbs);
    let out = new_ct(c, 3, limbs)?;
    let a = CkksEltwiseArgs {
        out: out.ptr(),
        x: x.ptr(),
        x_stride: (x.limbs * n) as u64,
        y: y.ptr(),
        y_stride: (y.limbs * n) as u64,
        ..args(c, EltwiseOp::Tensor, 1, limbs)
    };
    // SAFETY: `out` has 3 parts of `limbs` limbs (`args` sets their stride); `x` and
    // `y` have 2 parts of at least `limbs` limbs at their strides.
    unsafe { run(c, &a)? };
    Ok(out)
}

impl<D: GpuDriver> GpuBackend<D> {
    /// The evaluation form of `X^k` over `q_0..q_L` (`k < 2N`, `X^N = -1`): built on the
    /// device once (one word per limb, then its NTT) and kept.
    pub(super) fn monomial(&self, plan: &GpuCkksPlan<D>, k: usize) -> Result<Arc<Buffer<D, u64>>> {
        let n = plan.n();
        if k >= 2 * n {
            return Err(Error::InvalidInput(format!("monomial X^{k}: the exponent must be below 2N = {}", 2 * n)));
        }
        plan.monomials.get_or_try_init(&k, || {
            let limbs = plan.q_len();
            let mut words = vec![0u64; limbs * n];
            for (i, q) in plan.params.q().iter().enumerate() {
                words[i * n + k % n] = if k < n { 1 } else { q.0 - 1 };
            }
            let buf = Buffer::from_slice(&self.drv, &words)?;
            self.on_device(plan, |c| {
                // SAFETY: `buf` holds one limb per prime of q, in the table's order.
                unsafe { c.ntt(ptr(&buf), plan.table_at(0), limbs, limbs, true) }
            })?;
            Ok(buf)
        })
    }

    /// The table a constant with an imaginary part needs (`X^(N/2)`), else none.
    pub(super) fn constant_table(
        &self,
        plan: &GpuCkksPlan<D>,
        k: &ConstResidues,
    ) -> Result<Option<Arc<Buffer<D, u64>>>> {
        if k.im.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.monomial(plan, plan.n() / 2)?))
    }
}
