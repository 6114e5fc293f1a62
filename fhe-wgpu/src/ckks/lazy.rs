//! The lazy ModDown of a sum of rotations on the device (the CPU's and the GPU
//! backend's `lazy.rs`): rotations left over `Q_l P` (`P sigma(c0) + u0, u1`),
//! multiplied there by extended plaintexts and summed, then divided by `P` once. Limb
//! `t` of an extended polynomial at level `l` is `q_t` for `t <= l`, else `p_{t - l - 1}`
//! ([`super::convert::ext_args`]).

use fhe_api::ckks::{Ciphertext, CkksMeta, ExtCiphertext, ExtMeta, Hoisted, PreparedPlaintext, PreparedSwitchKey};
use fhe_api::{Backend, Error, Result};

use super::convert::{ext_args, mod_down, p_args, Finish, SwitchSums};
use super::eltwise::{new_ct, run, Op};
use super::keyswitch::{inner_products, SumsAt, WgpuHoisted};
use super::launch::{Args, Bind, Ctx};
use super::plan::WgpuLevel;
use super::WgpuPt;
use crate::WgpuBackend;

/// An extended ciphertext on the device: two polynomials of `l + 1 + K` limbs.
pub struct WgpuExt {
    buf: wgpu::Buffer,
}

fn words(b: &wgpu::Buffer) -> usize {
    b.size() as usize / 8
}

/// `out (=|+=) x * p` over every limb of both parts of an extended ciphertext, `p` an
/// extended plaintext (`m` over `q`, `sp` over `P`).
fn ext_mul(
    c: &Ctx<'_>,
    lp: &WgpuLevel,
    op: Op,
    out: &wgpu::Buffer,
    x: &wgpu::Buffer,
    p: (&wgpu::Buffer, &wgpu::Buffer),
) -> Result<()> {
    let a = Args { y_split: (lp.level + 1) as u32, y_stride: 0, ..ext_args(c, lp, 2) };
    run(c, op, a, Bind { out: Some(out), x: Some(x), y: Some(p.0), yhi: Some(p.1), ..Bind::default() })
}

impl WgpuBackend {
    fn ext<'a>(&self, x: &'a ExtCiphertext) -> Result<&'a WgpuExt> {
        x.downcast::<WgpuExt>(&self.name())
    }

    fn wrap_ext(&self, out: CkksMeta, buf: wgpu::Buffer) -> ExtCiphertext {
        ExtCiphertext::new(self.name(), ExtMeta(out), WgpuExt { buf })
    }

    /// An extended plaintext's `q` and `P` limbs, refusing a plain one.
    fn ext_plain<'p>(&self, p: &'p PreparedPlaintext, level: usize) -> Result<(&'p wgpu::Buffer, &'p wgpu::Buffer)> {
        let pt = p.downcast::<WgpuPt>(&self.name())?;
        let sp = pt.p.as_ref().ok_or_else(|| {
            Error::InvalidInput(
                "a lazy sum multiplies by extended plaintexts (Context::encode_extended), not plain ones".into(),
            )
        })?;
        if words(&pt.m) < (level + 1) * p.params().n() {
            return Err(Error::InvalidInput(format!("an extended plaintext below level {level}")));
        }
        Ok((&pt.m, sp))
    }

    pub(crate) fn lazy_rotations(
        &self,
        h: &Hoisted,
        keys: &[&PreparedSwitchKey],
        out: CkksMeta,
    ) -> Result<Vec<ExtCiphertext>> {
        let hc = h.downcast::<WgpuHoisted>(&self.name())?;
        let x = self.ct(&hc.src)?;
        let plan = self.ckks_plan(h.params())?;
        let lp = plan.level(&self.gpu, h.level())?;
        keys.iter()
            .map(|key| {
                let k = self.galois_key(key)?;
                let index =
                    k.index.as_ref().ok_or_else(|| Error::InvalidInput("a Galois key without its gather".into()))?;
                let u = self.on_device(&plan.table, |c| {
                    let n = c.n();
                    let (q_words, limbs) = ((lp.level + 1) * n, lp.level + 1 + lp.p_len);
                    let u = c.alloc(2 * limbs * n)?;
                    // The extended ciphertext's layout: each half's `P` limbs after its `q` limbs.
                    let at = SumsAt { u0: 0, u0_hi: q_words, u1: limbs * n, u1_hi: limbs * n + q_words };
                    inner_products(c, &lp, &hc.ext, k, true, &u, at)?;
                    // `P sigma(c0)` on `Q`'s limbs (zero on `P`'s), added to `u0` there.
                    let a = Args { gather: 1, a_off: lp.at.p_mod as u32, ..c.args(1, lp.level + 1) };
                    let b = Bind {
                        out: Some(&u),
                        z: Some(&x.buf),
                        index: Some(index),
                        sc: Some(&lp.scalars),
                        ..Bind::default()
                    };
                    run(c, Op::PermScaleAdd, a, b)?;
                    Ok(u)
                })?;
                Ok(self.wrap_ext(out.clone(), u))
            })
            .collect()
    }

    pub(crate) fn lift_ext(&self, a: &Ciphertext, out: CkksMeta) -> Result<ExtCiphertext> {
        let x = self.ct(a)?;
        if a.degree() != 1 {
            return Err(Error::InvalidInput("a lazy sum takes relinearized ciphertexts (degree 1)".into()));
        }
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(&self.gpu, a.level())?;
        let buf = self.on_device(&plan.table, |c| {
            let n = c.n();
            let (q_limbs, k) = (lp.level + 1, lp.p_len);
            let stride = ((q_limbs + k) * n) as u32;
            // A new buffer is zeroed: `P`'s limbs are already the zero they must be.
            let buf = c.alloc(2 * (q_limbs + k) * n)?;
            let scale = Args {
                out_stride: stride,
                x_stride: (x.limbs * n) as u32,
                a_off: lp.at.p_mod as u32,
                ..c.args(2, q_limbs)
            };
            run(
                c,
                Op::Scale,
                scale,
                Bind { out: Some(&buf), x: Some(&x.buf), sc: Some(&lp.scalars), ..Bind::default() },
            )?;
            Ok(buf)
        })?;
        Ok(self.wrap_ext(out, buf))
    }

    pub(crate) fn ext_product(&self, x: &ExtCiphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<ExtCiphertext> {
        let e = self.ext(x)?;
        let pp = self.ext_plain(p, x.level())?;
        let plan = self.ckks_plan(x.params())?;
        let lp = plan.level(&self.gpu, x.level())?;
        let buf = self.on_device(&plan.table, |c| {
            let buf = c.alloc(words(&e.buf))?;
            ext_mul(c, &lp, Op::Mul, &buf, &e.buf, pp)?;
            Ok(buf)
        })?;
        Ok(self.wrap_ext(out, buf))
    }

    pub(crate) fn ext_accumulate(
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
        let lp = plan.level(&self.gpu, l)?;
        let limbs = 2 * (l + 1 + plan.p_len());
        if words(&e.buf) != limbs * plan.n() || words(&self.ext(acc)?.buf) != words(&e.buf) {
            return Err(Error::InvalidInput("extended ciphertexts of different shapes".into()));
        }
        if let Some(a) = acc.downcast_mut::<WgpuExt>(&name)? {
            let a: &WgpuExt = a;
            return self.on_device(&plan.table, |c| ext_mul(c, &lp, Op::MulAdd, &a.buf, &e.buf, pp));
        }
        let buf = self.on_device(&plan.table, |c| {
            let buf = c.alloc(words(&e.buf))?;
            run(
                c,
                Op::Copy,
                ext_args(c, &lp, 2),
                Bind { out: Some(&buf), x: Some(&self.ext(acc)?.buf), ..Bind::default() },
            )?;
            ext_mul(c, &lp, Op::MulAdd, &buf, &e.buf, pp)?;
            Ok(buf)
        })?;
        acc.replace(WgpuExt { buf });
        Ok(())
    }

    pub(crate) fn ext_mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext> {
        let e = self.ext(x)?;
        let plan = self.ckks_plan(x.params())?;
        let lp = plan.level(&self.gpu, x.level())?;
        let r = self.on_device(&plan.table, |c| {
            let (n, q_limbs, k) = (c.n(), lp.level + 1, lp.p_len);
            let limbs = q_limbs + k;
            if words(&e.buf) != 2 * limbs * n {
                return Err(Error::InvalidInput("an extended ciphertext of another level's shape".into()));
            }
            // ModDown overwrites its input's P limbs, and takes both halves' P limbs
            // together: it works on a copy in its own layout.
            let u = SwitchSums::new(c, &lp)?;
            let stride = (limbs * n) as u32;
            let copy_q = Args { x_stride: stride, ..c.args(2, q_limbs) };
            run(c, Op::Copy, copy_q, Bind { out: Some(&u.buf), x: Some(&e.buf), ..Bind::default() })?;
            let copy_p =
                Args { out_off: u.p as u32, x_off: (q_limbs * n) as u32, x_stride: stride, ..p_args(c, &lp, 2) };
            run(c, Op::Copy, copy_p, Bind { out: Some(&u.buf), x: Some(&e.buf), ..Bind::default() })?;
            let r = new_ct(c, 2, q_limbs)?;
            mod_down(c, &lp, &u, &r.buf, [Finish::Set, Finish::Set])?;
            Ok(r)
        })?;
        self.wrap(out, r)
    }
}
