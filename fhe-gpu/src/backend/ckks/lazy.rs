//! The lazy ModDown of a sum of rotations on the device (the CPU's `lazy.rs`):
//! rotations left over `Q_l P` (`P sigma(c0) + u0, u1`), multiplied there by extended
//! plaintexts and summed, then divided by `P` once. Limb `t` of an extended polynomial
//! at level `l` is `q_t` for `t <= l`, else `p_{t - l - 1}` (the level's `ext_table`).

use fhe_api::ckks::{Ciphertext, CkksMeta, ExtCiphertext, ExtMeta, Hoisted, PreparedPlaintext, PreparedSwitchKey};
use fhe_api::{Backend, Error, Result};

use super::convert::{mod_down, Finish, SwitchSums};
use super::eltwise::{args, new_ct, run};
use super::keyswitch::{inner_products, GpuHoisted};
use super::plan::GpuLevel;
use super::{offset, Ctx, GpuBackend, GpuPt};
use crate::args::{CkksEltwiseArgs, DevPtr, EltwiseOp, Residue};
use crate::driver::{Buffer, GpuDriver};

/// An extended ciphertext on the device: two polynomials of `l + 1 + K` limbs.
pub struct GpuExt<D: GpuDriver> {
    buf: Buffer<D, u64>,
}

impl<D: GpuDriver> GpuExt<D> {
    fn ptr(&self) -> DevPtr<Residue> {
        DevPtr::new(self.buf.ptr())
    }
}

/// `acc_or_out (=|+=) x * p` over every limb of both parts of an extended ciphertext.
///
/// # Safety
/// `out` and `x` hold two polynomials of `l + 1 + K` limbs; `p` is an extended plaintext
/// with at least `l + 1` limbs over `q` (checked by [`ext_plain`]); inside `on_device`.
unsafe fn ext_mul<D: GpuDriver>(
    c: &Ctx<'_, D>,
    lp: &GpuLevel<D>,
    op: EltwiseOp,
    out: DevPtr<Residue>,
    x: DevPtr<Residue>,
    p: (DevPtr<Residue>, DevPtr<Residue>),
) -> Result<()> {
    let limbs = lp.level + 1 + c.plan.p_len();
    let a = CkksEltwiseArgs {
        out,
        x,
        y: p.0,
        y_hi: p.1,
        y_split: (lp.level + 1) as u32,
        y_stride: 0,
        tables: lp.ext_table.dev_ptr(),
        ..args(c, op, 2, limbs)
    };
    // SAFETY: the caller's contract.
    unsafe { run(c, &a) }
}

impl<D: GpuDriver> GpuBackend<D> {
    fn ext<'a>(&self, x: &'a ExtCiphertext) -> Result<&'a GpuExt<D>> {
        x.downcast::<GpuExt<D>>(&self.name())
    }

    fn wrap_ext(&self, out: CkksMeta, buf: Buffer<D, u64>) -> ExtCiphertext {
        ExtCiphertext::new(self.name(), ExtMeta(out), GpuExt { buf })
    }

    /// An extended plaintext's `q` and `P` limbs, refusing a plain one.
    fn ext_plain(&self, p: &PreparedPlaintext, level: usize) -> Result<(DevPtr<Residue>, DevPtr<Residue>)> {
        let pt = p.downcast::<GpuPt<D>>(&self.name())?;
        let sp = pt.p.as_ref().ok_or_else(|| {
            Error::InvalidInput(
                "a lazy sum multiplies by extended plaintexts (Context::encode_extended), not plain ones".into(),
            )
        })?;
        if pt.m.len() < (level + 1) * p.params().n() {
            return Err(Error::InvalidInput(format!("an extended plaintext below level {level}")));
        }
        Ok((DevPtr::new(pt.m.ptr()), DevPtr::new(sp.ptr())))
    }

    pub(super) fn lazy_rotations(
        &self,
        h: &Hoisted,
        keys: &[&PreparedSwitchKey],
        out: CkksMeta,
    ) -> Result<Vec<ExtCiphertext>> {
        let hc = h.downcast::<GpuHoisted<D>>(&self.name())?;
        let x = self.ct(&hc.src)?;
        let plan = self.ckks_plan(h.params())?;
        let lp = plan.level(&self.drv, h.level())?;
        keys.iter()
            .map(|key| {
                let (k, index) = self.galois_key(key)?;
                let u = self.on_device(&plan, |c| {
                    let n = c.n();
                    let (q_words, limbs) = ((lp.level + 1) * n, lp.level + 1 + plan.p_len());
                    let u = c.alloc(2 * limbs * n)?;
                    // The extended ciphertext's layout: each half's `P` limbs after its `q` limbs.
                    let u0 = DevPtr::new(u.ptr());
                    let u1 = offset(u0, limbs * n);
                    let halves = [(u0, offset(u0, q_words)), (u1, offset(u1, q_words))];
                    inner_products(c, &lp, DevPtr::new(hc.ext.ptr()), k, index, halves)?;
                    // `P sigma(c0)` on `Q`'s limbs (zero on `P`'s), added to `u0` there.
                    let a = CkksEltwiseArgs {
                        out: DevPtr::new(u.ptr()),
                        z: x.ptr(),
                        index,
                        a: lp.p_mod.dev_ptr(),
                        ..args(c, EltwiseOp::PermScaleAdd, 1, lp.level + 1)
                    };
                    // SAFETY: `u`'s first `l + 1` limbs, `c0`'s `l + 1` limbs, N indices.
                    unsafe { run(c, &a)? };
                    Ok(u)
                })?;
                Ok(self.wrap_ext(out.clone(), u))
            })
            .collect()
    }

    pub(super) fn lift_ext(&self, a: &Ciphertext, out: CkksMeta) -> Result<ExtCiphertext> {
        let x = self.ct(a)?;
        if a.degree() != 1 {
            return Err(Error::InvalidInput("a lazy sum takes relinearized ciphertexts (degree 1)".into()));
        }
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(&self.drv, a.level())?;
        let buf = self.on_device(&plan, |c| {
            let n = c.n();
            let (q_limbs, k) = (lp.level + 1, plan.p_len());
            let stride = ((q_limbs + k) * n) as u64;
            let buf = c.alloc(2 * (q_limbs + k) * n)?;
            let scale = CkksEltwiseArgs {
                out: DevPtr::new(buf.ptr()),
                out_stride: stride,
                x: x.ptr(),
                x_stride: (x.limbs * n) as u64,
                a: lp.p_mod.dev_ptr(),
                ..args(c, EltwiseOp::Scale, 2, q_limbs)
            };
            let zero = CkksEltwiseArgs {
                out: offset(DevPtr::new(buf.ptr()), q_limbs * n),
                out_stride: stride,
                tables: plan.p_table(),
                ..args(c, EltwiseOp::Zero, 2, k)
            };
            // SAFETY: `buf` holds two polynomials of `l + 1 + K` limbs; `x` two parts of
            // `l + 1` limbs.
            unsafe {
                run(c, &scale)?;
                run(c, &zero)?;
            }
            Ok(buf)
        })?;
        Ok(self.wrap_ext(out, buf))
    }

    pub(super) fn ext_product(&self, x: &ExtCiphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<ExtCiphertext> {
        let e = self.ext(x)?;
        let pp = self.ext_plain(p, x.level())?;
        let plan = self.ckks_plan(x.params())?;
        let lp = plan.level(&self.drv, x.level())?;
        let buf = self.on_device(&plan, |c| {
            let buf = c.alloc(e.buf.len())?;
            // SAFETY: `buf` is shaped as `e`; `pp` checked by `ext_plain`.
            unsafe { ext_mul(c, &lp, EltwiseOp::Mul, DevPtr::new(buf.ptr()), e.ptr(), pp)? };
            Ok(buf)
        })?;
        Ok(self.wrap_ext(out, buf))
    }

    pub(super) fn ext_accumulate(
        &self,
        acc: &mut ExtCiphertext,
        x: &ExtCiphertext,
        p: &PreparedPlaintext,
    ) -> Result<()> {
        if acc.level() != x.level() {
            return Err(Error::InvalidInput("a lazy sum's terms share one level".into()));
        }
        let (l, name) = (x.level(), self.name());
        let pp = self.ext_plain(p, l)?;
        let e = self.ext(x)?;
        let plan = self.ckks_plan(x.params())?;
        let lp = plan.level(&self.drv, l)?;
        let limbs = 2 * (l + 1 + plan.p_len());
        if e.buf.len() != limbs * plan.n() || self.ext(acc)?.buf.len() != e.buf.len() {
            return Err(Error::InvalidInput("extended ciphertexts of different shapes".into()));
        }
        if let Some(a) = acc.downcast_mut::<GpuExt<D>>(&name)? {
            let a: &GpuExt<D> = a;
            // SAFETY: `a` and `e` have the same shape (checked); `pp` by `ext_plain`.
            return self.on_device(&plan, |c| unsafe { ext_mul(c, &lp, EltwiseOp::MulAdd, a.ptr(), e.ptr(), pp) });
        }
        let buf = self.on_device(&plan, |c| {
            let buf = c.alloc(e.buf.len())?;
            let copy = CkksEltwiseArgs {
                out: DevPtr::new(buf.ptr()),
                x: self.ext(acc)?.ptr(),
                tables: lp.ext_table.dev_ptr(),
                ..args(c, EltwiseOp::Copy, 2, l + 1 + plan.p_len())
            };
            // SAFETY: `buf` is shaped as `acc` and `e` (checked above).
            unsafe {
                run(c, &copy)?;
                ext_mul(c, &lp, EltwiseOp::MulAdd, DevPtr::new(buf.ptr()), e.ptr(), pp)?;
            }
            Ok(buf)
        })?;
        acc.replace(GpuExt { buf });
        Ok(())
    }

    pub(super) fn ext_mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext> {
        let e = self.ext(x)?;
        let plan = self.ckks_plan(x.params())?;
        let lp = plan.level(&self.drv, x.level())?;
        let r = self.on_device(&plan, |c| {
            let (n, limbs) = (c.n(), lp.level + 1 + plan.p_len());
            if e.buf.len() != 2 * limbs * n {
                return Err(Error::InvalidInput("an extended ciphertext of another level's shape".into()));
            }
            // ModDown overwrites its input's P limbs, and takes both halves' P limbs
            // together: it works on a copy in its own layout.
            let (q_limbs, k) = (lp.level + 1, plan.p_len());
            let u = SwitchSums::scratch(c, &lp)?;
            let stride = (limbs * n) as u64;
            let copy_q =
                CkksEltwiseArgs { out: u.q, x: e.ptr(), x_stride: stride, ..args(c, EltwiseOp::Copy, 2, q_limbs) };
            let copy_p = CkksEltwiseArgs {
                out: u.p,
                x: offset(e.ptr(), q_limbs * n),
                x_stride: stride,
                tables: plan.p_table(),
                ..args(c, EltwiseOp::Copy, 2, k)
            };
            // SAFETY: `e` holds two polynomials of `limbs` limbs; `u` two parts of
            // `l + 1` limbs and two of `K`.
            unsafe {
                run(c, &copy_q)?;
                run(c, &copy_p)?;
            }
            let r = new_ct(c, 2, q_limbs)?;
            mod_down(c, &lp, u, r.ptr(), [Finish::Set, Finish::Set])?;
            Ok(r)
        })?;
        self.wrap(out, r)
    }
}
