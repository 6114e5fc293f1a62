//! Hybrid key switching on the device (the CPU's and the GPU backend's
//! `keyswitch.rs`): ModUp ([`super::convert`]), the `dnum`-digit inner product (the
//! `inner_product` kernel, a rotation's permutation fused in as a gather), ModDown;
//! relinearization, rotations and the kept decomposition of hoisted rotations.

use fhe_api::ckks::{Ciphertext, CkksMeta, PreparedSwitchKey, SwitchKind};
use fhe_api::{Backend, Error, LevelNeed, Result};

use super::convert::{ext_args, ext_words, mod_down, mod_up, Finish, SwitchSums};
use super::eltwise::{new_ct, run, Op};
use super::launch::{Args, Bind, Ctx, Kernel};
use super::plan::WgpuLevel;
use super::{degree_one, WgpuCt};
use crate::WgpuBackend;

/// A resident switching key: both halves as `SwitchingKey::halves_up_to(level)` lays
/// them out, and a Galois key's gather (`EvalPermutation::index`).
pub struct WgpuSwitchKey {
    pub(crate) b: wgpu::Buffer,
    pub(crate) a: wgpu::Buffer,
    pub(crate) index: Option<wgpu::Buffer>,
    /// The highest level it switches at, and its words per half.
    pub(crate) level: usize,
    pub(crate) words: usize,
}

/// A kept decomposition: the ciphertext (a shared handle: its words are never changed
/// while shared) and the ModUp of its `c1`, resident.
pub struct WgpuHoisted {
    pub(crate) src: Ciphertext,
    pub(crate) ext: wgpu::Buffer,
}

/// Where the inner product writes: `u0`'s and `u1`'s limbs over `q` and over `P`, as
/// word offsets into `out`.
pub(crate) struct SumsAt {
    pub u0: usize,
    pub u1: usize,
    pub u0_hi: usize,
    pub u1_hi: usize,
}

/// Step 3: the sums `(u0, u1)` over `q_0..q_l, P` of `ext` with `key`, gathered by the
/// key's permutation when `gather`.
pub(crate) fn inner_products(
    c: &Ctx<'_>,
    lp: &WgpuLevel,
    ext: &wgpu::Buffer,
    key: &WgpuSwitchKey,
    gather: bool,
    out: &wgpu::Buffer,
    at: SumsAt,
) -> Result<()> {
    let (n, k, digits) = (c.n(), lp.p_len, lp.digits);
    // A key prepared up to `key.level` holds `q_0..q_key.level, P` per digit.
    if key.level < lp.level {
        return Err(Error::Level { op: "key switch", found: lp.level, needed: LevelNeed::KeyUpTo(key.level) });
    }
    let q_len = key.level + 1;
    if key.words < digits * (q_len + k) * n {
        return Err(Error::InvalidInput(format!("a switching key of {} words for {digits} digits", key.words)));
    }
    let index = match (gather, &key.index) {
        (false, _) => None,
        (true, Some(i)) => Some(i),
        (true, None) => return Err(Error::InvalidInput("a relinearization key is not a Galois key".into())),
    };
    let ea = ext_args(c, lp, 1);
    let a = Args {
        out_off: at.u0 as u32,
        w: [at.u1 as u32, at.u0_hi as u32, at.u1_hi as u32, 0],
        aux: [digits as u32, q_len as u32, (q_len + k) as u32, 0],
        gather: gather as u32,
        ..ea
    };
    let b = Bind { out: Some(out), x: Some(ext), y: Some(&key.b), yhi: Some(&key.a), index, ..Bind::default() };
    c.run(Kernel::InnerProduct, &a, b, ea.limbs as usize * n)
}

/// [`inner_products`] into sums laid out for [`mod_down`].
fn switched(c: &Ctx<'_>, lp: &WgpuLevel, ext: &wgpu::Buffer, key: &WgpuSwitchKey, gather: bool) -> Result<SwitchSums> {
    let u = SwitchSums::new(c, lp)?;
    let (q, k) = ((lp.level + 1) * c.n(), lp.p_len * c.n());
    let at = SumsAt { u0: 0, u1: q, u0_hi: u.p, u1_hi: u.p + k };
    inner_products(c, lp, ext, key, gather, &u.buf, at)?;
    Ok(u)
}

/// A degree-2 ciphertext back to degree 1: `(c0, c1) + ModDown(<ModUp(c2), rlk>)`.
pub(crate) fn relinearize(c: &Ctx<'_>, lp: &WgpuLevel, x: &WgpuCt, key: &WgpuSwitchKey) -> Result<WgpuCt> {
    let (n, q_limbs) = (c.n(), lp.level + 1);
    let out = new_ct(c, 2, q_limbs)?;
    let copy = Args { x_stride: (x.limbs * n) as u32, ..c.args(2, q_limbs) };
    run(c, Op::Copy, copy, Bind { out: Some(&out.buf), x: Some(&x.buf), ..Bind::default() })?;
    let ext = c.alloc(ext_words(c, lp))?;
    mod_up(c, lp, &x.buf, 2 * x.limbs * n, &ext)?;
    let u = switched(c, lp, &ext, key, false)?;
    mod_down(c, lp, &u, &out.buf, [Finish::Add, Finish::Add])?;
    Ok(out)
}

impl WgpuBackend {
    /// A Galois key's device form; the relinearization key is refused.
    pub(crate) fn galois_key<'k>(&self, key: &'k PreparedSwitchKey) -> Result<&'k WgpuSwitchKey> {
        let relin = || Error::InvalidInput("a relinearization key is not a Galois key".into());
        if key.kind() == SwitchKind::Relin {
            return Err(relin());
        }
        let k = key.downcast::<WgpuSwitchKey>(&self.name())?;
        k.index.as_ref().ok_or_else(relin)?;
        Ok(k)
    }

    pub(crate) fn relin_key<'k>(&self, rlk: &'k PreparedSwitchKey) -> Result<&'k WgpuSwitchKey> {
        if rlk.kind() != SwitchKind::Relin {
            return Err(Error::InvalidInput("a product needs the relinearization key, not a Galois key".into()));
        }
        rlk.downcast::<WgpuSwitchKey>(&self.name())
    }

    /// The ModUp of `a`'s `c1`, kept with `a`.
    pub(crate) fn hoisted(&self, a: &Ciphertext) -> Result<WgpuHoisted> {
        degree_one(a, "a rotation")?;
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(&self.gpu, a.level())?;
        let ext = self.on_device(&plan.table, |c| {
            let ext = c.alloc(ext_words(c, &lp))?;
            mod_up(c, &lp, &x.buf, x.limbs * c.n(), &ext)?;
            Ok(ext)
        })?;
        Ok(WgpuHoisted { src: a.clone(), ext })
    }

    /// Rotations of the kept decomposition `h`, one per key.
    pub(crate) fn galois(
        &self,
        h: &WgpuHoisted,
        keys: &[&PreparedSwitchKey],
        out: CkksMeta,
    ) -> Result<Vec<Ciphertext>> {
        let x = self.ct(&h.src)?;
        let plan = self.ckks_plan(h.src.params())?;
        let lp = plan.level(&self.gpu, h.src.level())?;
        keys.iter()
            .map(|key| {
                let k = self.galois_key(key)?;
                let index =
                    k.index.as_ref().ok_or_else(|| Error::InvalidInput("a Galois key without its gather".into()))?;
                let r = self.on_device(&plan.table, |c| {
                    let r = new_ct(c, 2, lp.level + 1)?;
                    let u = switched(c, &lp, &h.ext, k, true)?;
                    mod_down(c, &lp, &u, &r.buf, [Finish::AddPermuted(&x.buf, index), Finish::Set])?;
                    Ok(r)
                })?;
                self.wrap(out.clone(), r)
            })
            .collect()
    }
}
