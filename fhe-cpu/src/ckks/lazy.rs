//! The lazy ModDown of a sum of rotations: rotations left over `Q_l P` (`P sigma(c0) +
//! u0, u1`), multiplied there by extended plaintexts and summed, then divided by `P` once.
//! Limb `t` of an extended polynomial at level `l` is `q_t` for `t <= l`, else
//! `p_{t - l - 1}` (`keyswitch::limb_prime`).

use std::sync::Arc;

use rayon::prelude::*;

use fhe_api::ckks::{Ciphertext, CkksMeta, ExtCiphertext, ExtMeta, Hoisted, PreparedPlaintext, PreparedSwitchKey};
use fhe_api::ring::modulus::{csub, mul_shoup_lazy};
use fhe_api::{Backend, Error, Result};

use super::keyswitch::{inner_products, limb_prime, mod_down, Finish};
use super::plaintext::{with_scratch, CpuPt};
use super::plan::CkksPlan;
use super::{CpuCt, CpuHoisted};
use crate::{arith, CpuBackend};

/// An extended ciphertext in CPU memory: two polynomials of `l + 1 + K` limbs.
pub(super) struct CpuExt {
    parts: [Vec<u64>; 2],
    plan: Arc<CkksPlan>,
}

impl Drop for CpuExt {
    fn drop(&mut self) {
        self.parts.iter_mut().for_each(|p| self.plan.recycle(std::mem::take(p)));
    }
}

impl CpuBackend {
    fn ext<'a>(&self, x: &'a ExtCiphertext) -> Result<&'a CpuExt> {
        x.downcast::<CpuExt>(&self.name())
    }

    fn wrap_ext(&self, plan: &Arc<CkksPlan>, out: CkksMeta, parts: [Vec<u64>; 2]) -> ExtCiphertext {
        ExtCiphertext::new(self.name(), ExtMeta(out), CpuExt { parts, plan: plan.clone() })
    }

    /// An extended plaintext (whole or compact), for a lazy sum's products.
    fn ext_plain<'a>(&self, p: &'a PreparedPlaintext) -> Result<&'a CpuPt> {
        let pt = p.downcast::<CpuPt>(&self.name())?;
        if !pt.extended {
            return Err(Error::InvalidInput(
                "a lazy sum multiplies by extended plaintexts (Context::encode_extended), not plain ones".into(),
            ));
        }
        Ok(pt)
    }

    pub(super) fn lazy_rotations(
        &self,
        h: &Hoisted,
        keys: &[&PreparedSwitchKey],
        out: CkksMeta,
    ) -> Result<Vec<ExtCiphertext>> {
        let hc = h.downcast::<CpuHoisted>(&self.name())?;
        let plan = &hc.plan;
        let (l, n) = (h.level(), plan.params.n());
        let lp = plan.level(l)?;
        let ext = hc.up()?.of(&hc.c1);
        keys.par_iter()
            .map(|key| {
                let (k, perm) = self.galois_key(key, l)?;
                let (mut u0, u1) = inner_products(plan, &lp, &ext, k, Some(perm));
                // `P sigma(c0)` on `Q`'s limbs (zero on `P`'s): added to `u0` there.
                let index = perm.index();
                u0[..(l + 1) * n].par_chunks_mut(n).enumerate().for_each(|(i, u)| {
                    let (m, (pm, pms)) = (&plan.primes[i].m, lp.p_mod[i]);
                    let c0 = &hc.c0[i * n..(i + 1) * n];
                    u.iter_mut().zip(index).for_each(|(u, &k)| {
                        *u = m.add(*u, csub(mul_shoup_lazy(c0[k as usize], pm, pms, m.q), m.q));
                    });
                });
                Ok(self.wrap_ext(plan, out.clone(), [u0, u1]))
            })
            .collect()
    }

    pub(super) fn lift_ext(&self, a: &Ciphertext, out: CkksMeta) -> Result<ExtCiphertext> {
        let x = a.downcast::<CpuCt>(&self.name())?;
        if a.degree() != 1 {
            return Err(Error::InvalidInput("a lazy sum takes relinearized ciphertexts (degree 1)".into()));
        }
        let plan = self.ckks_plan(a.params())?;
        let (l, n, k) = (a.level(), plan.params.n(), plan.params.p().len());
        let lp = plan.level(l)?;
        let parts = [0, 1].map(|j| {
            let mut e = plan.take_vec((l + 1 + k) * n);
            let (q, p) = e.split_at_mut((l + 1) * n);
            q.par_chunks_mut(n).zip(x.parts[j].par_chunks(n)).enumerate().for_each(|(i, (o, x))| {
                let (m, (pm, pms)) = (&plan.primes[i].m, lp.p_mod[i]);
                o.iter_mut().zip(x).for_each(|(o, &x)| *o = csub(mul_shoup_lazy(x, pm, pms, m.q), m.q));
            });
            p.fill(0);
            e
        });
        Ok(self.wrap_ext(&plan, out, parts))
    }

    pub(super) fn ext_product(&self, x: &ExtCiphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<ExtCiphertext> {
        let e = self.ext(x)?;
        let pt = self.ext_plain(p)?;
        let plan = &e.plan;
        let (l, n) = (x.level(), plan.params.n());
        let scratch = if pt.is_compact() { n } else { 0 };
        let (mut o0, mut o1) = (plan.take_vec(e.parts[0].len()), plan.take_vec(e.parts[1].len()));
        o0.par_chunks_mut(n).zip(o1.par_chunks_mut(n)).enumerate().for_each(|(t, (o0, o1))| {
            let m = &plan.primes[limb_prime(plan, l, t)].m;
            with_scratch(scratch, |buf| {
                let b = pt.ext_limb(plan, l, t, buf);
                for (o, a) in [(o0, &e.parts[0]), (o1, &e.parts[1])] {
                    let a = &a[t * n..(t + 1) * n];
                    o.iter_mut().zip(a.iter().zip(b)).for_each(|(o, (&a, &b))| *o = m.mul(a, b));
                }
            });
        });
        Ok(self.wrap_ext(plan, out, [o0, o1]))
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
        let pt = self.ext_plain(p)?;
        let e = self.ext(x)?;
        let plan = e.plan.clone();
        let n = plan.params.n();
        let scratch = if pt.is_compact() { n } else { 0 };
        let sum = |a: &mut [Vec<u64>; 2]| {
            let [a0, a1] = a;
            a0.par_chunks_mut(n).zip(a1.par_chunks_mut(n)).enumerate().for_each(|(t, (a0, a1))| {
                let m = &plan.primes[limb_prime(&plan, l, t)].m;
                with_scratch(scratch, |buf| {
                    let b = pt.ext_limb(&plan, l, t, buf);
                    arith::mul_add(m, &e.parts[0][t * n..(t + 1) * n], b, a0);
                    arith::mul_add(m, &e.parts[1][t * n..(t + 1) * n], b, a1);
                });
            });
        };
        match acc.downcast_mut::<CpuExt>(&name)? {
            Some(a) => sum(&mut a.parts),
            None => {
                let mut parts = self.ext(acc)?.parts.clone();
                sum(&mut parts);
                acc.replace(CpuExt { parts, plan: plan.clone() });
            }
        }
        Ok(())
    }

    pub(super) fn ext_mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext> {
        let e = self.ext(x)?;
        let plan = &e.plan;
        let (l, n) = (x.level(), plan.params.n());
        let lp = plan.level(l)?;
        let (mut u0, mut u1) = (super::copy(plan, &e.parts[0]), super::copy(plan, &e.parts[1]));
        let (mut c0, mut c1) = (plan.take_vec((l + 1) * n), plan.take_vec((l + 1) * n));
        rayon::join(
            || mod_down(plan, &lp, &mut u0, &mut c0, Finish::Set),
            || mod_down(plan, &lp, &mut u1, &mut c1, Finish::Set),
        );
        plan.recycle(u0);
        plan.recycle(u1);
        self.wrap(plan, out, vec![c0, c1])
    }
}

impl CpuBackend {
    /// `sum_i xs[i] * ps[i]`, each word's products summed in 128 bits and reduced once.
    pub(super) fn ext_dot(
        &self,
        xs: &[&ExtCiphertext],
        ps: &[&PreparedPlaintext],
        out: CkksMeta,
    ) -> Result<ExtCiphertext> {
        if xs.is_empty() || xs.len() != ps.len() {
            return Err(Error::InvalidInput(format!(
                "a lazy dot product of {} ciphertexts and {} plaintexts",
                xs.len(),
                ps.len()
            )));
        }
        let l = xs[0].level();
        let mut terms = Vec::with_capacity(xs.len());
        for (x, p) in xs.iter().zip(ps) {
            if x.level() != l {
                return Err(Error::InvalidInput("a lazy sum's terms share one level".into()));
            }
            terms.push((self.ext(x)?, self.ext_plain(p)?));
        }
        let plan = terms[0].0.plan.clone();
        let n = plan.params.n();
        // A compact plaintext's limb is brought to evaluation form once for both parts.
        let scratch = terms.iter().filter(|(_, p)| p.is_compact()).count() * n;
        let (mut o0, mut o1) = (plan.take_vec(terms[0].0.parts[0].len()), plan.take_vec(terms[0].0.parts[1].len()));
        o0.par_chunks_mut(n).zip(o1.par_chunks_mut(n)).enumerate().for_each(|(t, (o0, o1))| {
            let m = &plan.primes[limb_prime(&plan, l, t)].m;
            with_scratch(scratch, |buf| {
                let mut bufs = buf.chunks_mut(n);
                let ps: Vec<&[u64]> = terms
                    .iter()
                    .map(|(_, p)| match p.is_compact() {
                        true => p.ext_limb(&plan, l, t, bufs.next().expect("a scratch limb per compact term")),
                        false => p.ext_limb(&plan, l, t, &mut []),
                    })
                    .collect();
                for (j, o) in [o0, o1].into_iter().enumerate() {
                    let xs: Vec<&[u64]> = terms.iter().map(|(e, _)| &e.parts[j][t * n..(t + 1) * n]).collect();
                    arith::dot(m, &xs, &ps, o);
                }
            });
        });
        let parts = [o0, o1];
        Ok(self.wrap_ext(&plan, out, parts))
    }
}
