//! Hybrid key switching on the device (the CPU's `keyswitch.rs`): ModUp
//! ([`super::convert`]), the `dnum`-digit inner product (`lux_ckks_inner_product`, a
//! rotation's permutation fused in as a gather), ModDown; relinearization, rotations
//! and the kept decomposition of hoisted rotations.

use fhe_api::ckks::{Ciphertext, CkksMeta, PreparedSwitchKey};
use fhe_api::{Error, LevelNeed, Result};

use super::convert::{ext_words, mod_down, mod_up, Finish, SwitchSums};
use super::eltwise::{args, new_ct, run};
use super::plan::GpuLevel;
use super::{degree_one, offset, Ctx, GpuBackend, GpuCt, GpuSwitchKey};
use crate::args::{CkksEltwiseArgs, CkksInnerArgs, DevPtr, EltwiseOp, Residue};
use crate::driver::{Buffer, GpuDriver};

/// A kept decomposition: the ciphertext (a shared handle: its words are never changed
/// while shared) and the ModUp of its `c1`, resident.
pub struct GpuHoisted<D: GpuDriver> {
    pub(super) src: Ciphertext,
    pub(super) ext: Buffer<D, u64>,
}

/// Step 3: the sums `(u0, u1)` over `q_0..q_l, P`: limbs over `q` to `u[k].0`, over `P`
/// to `u[k].1`; `index` a Galois gather, or null.
pub(super) fn inner_products<D: GpuDriver>(
    c: &Ctx<'_, D>,
    lp: &GpuLevel<D>,
    ext: DevPtr<Residue>,
    key: &GpuSwitchKey<D>,
    index: DevPtr<u32>,
    u: [(DevPtr<Residue>, DevPtr<Residue>); 2],
) -> Result<()> {
    let n = c.n();
    let k = c.plan.p_len();
    let limbs = lp.level + 1 + k;
    let digits = lp.digits.count;
    // A key prepared up to `key.level` holds `q_0..q_key.level, P` per digit.
    if key.level < lp.level {
        return Err(Error::Level { op: "key switch", found: lp.level, needed: LevelNeed::KeyUpTo(key.level) });
    }
    let q_len = key.level + 1;
    if key.b.len() < digits * (q_len + k) * n || key.a.len() != key.b.len() {
        return Err(Error::InvalidInput(format!("a switching key of {} words for {digits} digits", key.b.len())));
    }
    let a = CkksInnerArgs {
        u0: u[0].0,
        u1: u[1].0,
        u0_hi: u[0].1,
        u1_hi: u[1].1,
        ext,
        key_b: DevPtr::new(key.b.ptr()),
        key_a: DevPtr::new(key.a.ptr()),
        index,
        tables: lp.ext_table.dev_ptr(),
        limbs: limbs as u32,
        q_limbs: (lp.level + 1) as u32,
        q_len: q_len as u32,
        qp: (q_len + k) as u32,
        digits: digits as u32,
        log_n: c.plan.log_n(),
    };
    // SAFETY: `u` holds two polynomials of `limbs` limbs, `ext` one per digit, the key
    // `digits` digits over QP (checked above), `index` N words when not null.
    unsafe { c.launch(limbs * n, &a) }
}

/// [`inner_products`] into a temporary laid out for [`mod_down`].
fn switched<D: GpuDriver>(
    c: &Ctx<'_, D>,
    lp: &GpuLevel<D>,
    ext: DevPtr<Residue>,
    key: &GpuSwitchKey<D>,
    index: DevPtr<u32>,
) -> Result<SwitchSums> {
    let u = SwitchSums::scratch(c, lp)?;
    let (q, k) = ((lp.level + 1) * c.n(), c.plan.p_len() * c.n());
    inner_products(c, lp, ext, key, index, [(u.q, u.p), (offset(u.q, q), offset(u.p, k))])?;
    Ok(u)
}

/// A degree-2 ciphertext back to degree 1: `(c0, c1) + ModDown(<ModUp(c2), rlk>)`.
pub(super) fn relinearize<D: GpuDriver>(
    c: &Ctx<'_, D>,
    lp: &GpuLevel<D>,
    x: &GpuCt<D>,
    key: &GpuSwitchKey<D>,
) -> Result<GpuCt<D>> {
    let (n, q_limbs) = (c.n(), lp.level + 1);
    let out = new_ct(c, 2, q_limbs)?;
    let copy = CkksEltwiseArgs {
        out: out.ptr(),
        x: x.ptr(),
        x_stride: (x.limbs * n) as u64,
        ..args(c, EltwiseOp::Copy, 2, q_limbs)
    };
    // SAFETY: `out` holds 2 parts of `l + 1` limbs and `x` 3 parts of as many.
    unsafe { run(c, &copy)? };
    let ext = c.scratch(ext_words(c, lp))?;
    mod_up(c, lp, x.part(2, n), ext)?;
    let u = switched(c, lp, ext, key, DevPtr::default())?;
    mod_down(c, lp, u, out.ptr(), [Finish::Add, Finish::Add])?;
    Ok(out)
}

impl<D: GpuDriver> GpuBackend<D> {
    /// The ModUp of `a`'s `c1`, kept with `a`.
    pub(super) fn hoisted(&self, a: &Ciphertext) -> Result<GpuHoisted<D>> {
        degree_one(a, "a rotation")?;
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(&self.drv, a.level())?;
        let ext = self.on_device(&plan, |c| {
            let ext = c.alloc(ext_words(c, &lp))?;
            mod_up(c, &lp, x.part(1, c.n()), DevPtr::new(ext.ptr()))?;
            Ok(ext)
        })?;
        Ok(GpuHoisted { src: a.clone(), ext })
    }

    /// Rotations of the kept decomposition `h`, one per key.
    pub(super) fn galois(
        &self,
        h: &GpuHoisted<D>,
        keys: &[&PreparedSwitchKey],
        out: CkksMeta,
    ) -> Result<Vec<Ciphertext>> {
        let x = self.ct(&h.src)?;
        let plan = self.ckks_plan(h.src.params())?;
        let lp = plan.level(&self.drv, h.src.level())?;
        keys.iter()
            .map(|key| {
                let (k, index) = self.galois_key(key)?;
                let r = self.on_device(&plan, |c| {
                    let r = new_ct(c, 2, lp.level + 1)?;
                    let u = switched(c, &lp, DevPtr::new(h.ext.ptr()), k, index)?;
                    mod_down(c, &lp, u, r.ptr(), [Finish::AddPermuted(x.ptr(), index), Finish::Set])?;
                    Ok(r)
                })?;
                self.wrap(out.clone(), r)
            })
            .collect()
    }
}
