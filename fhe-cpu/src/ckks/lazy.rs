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
use super::plan::CkksPlan;
use super::{CpuCt, CpuHoisted, CpuPt};
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

    /// The plaintext's evaluation-form limbs in an extended polynomial's order at `level`.
    fn ext_plain<'a>(&self, p: &'a PreparedPlaintext, level: usize) -> Result<(&'a [u64], &'a [u64])> {
        let pt = p.downcast::<CpuPt>(&self.name())?;
        if pt.p.is_empty() {
            return Err(Error::InvalidInput(
                "a lazy sum multiplies by extended plaintexts (Context::encode_extended), not plain ones".into(),
            ));
        }
        Ok((&pt.m[..(level + 1) * p.params().n()], &pt.p))
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
        let (q, sp) = self.ext_plain(p, x.level())?;
        let plan = &e.plan;
        let (l, n) = (x.level(), plan.params.n());
        let parts = [0, 1].map(|j| {
            let mut o = plan.take_vec(e.parts[j].len());
            o.par_chunks_mut(n).zip(e.parts[j].par_chunks(n)).enumerate().for_each(|(t, (o, a))| {
                let m = &plan.primes[limb_prime(plan, l, t)].m;
                let b = plain_limb(q, sp, l, n, t);
                o.iter_mut().zip(a.iter().zip(b)).for_each(|(o, (&a, &b))| *o = m.mul(a, b));
            });
            o
        });
        Ok(self.wrap_ext(plan, out, parts))
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
        let (q, sp) = self.ext_plain(p, l)?;
        let e = self.ext(x)?;
        let plan = e.plan.clone();
        let n = plan.params.n();
        let sum = |a: &mut [Vec<u64>; 2]| {
            for j in 0..2 {
                a[j].par_chunks_mut(n).zip(e.parts[j].par_chunks(n)).enumerate().for_each(|(t, (a, x))| {
                    let m = &plan.primes[limb_prime(&plan, l, t)].m;
                    arith::mul_add(m, x, plain_limb(q, sp, l, n, t), a);
                });
            }
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
            terms.push((self.ext(x)?, self.ext_plain(p, l)?));
        }
        let plan = terms[0].0.plan.clone();
        let n = plan.params.n();
        let parts = [0, 1].map(|j| {
            let mut o = plan.take_vec(terms[0].0.parts[j].len());
            o.par_chunks_mut(n).enumerate().for_each(|(t, o)| {
                let m = &plan.primes[limb_prime(&plan, l, t)].m;
                let xs: Vec<&[u64]> = terms.iter().map(|(e, _)| &e.parts[j][t * n..(t + 1) * n]).collect();
                let ps: Vec<&[u64]> = terms.iter().map(|(_, (q, sp))| plain_limb(q, sp, l, n, t)).collect();
                arith::dot(m, &xs, &ps, o);
            });
            o
        });
        Ok(self.wrap_ext(&plan, out, parts))
    }
}

/// Limb `t` of an extended plaintext in an extended polynomial's order at level `l`.
fn plain_limb<'a>(q: &'a [u64], p: &'a [u64], l: usize, n: usize, t: usize) -> &'a [u64] {
    if t <= l {
        &q[t * n..(t + 1) * n]
    } else {
        &p[(t - l - 1) * n..(t - l) * n]
    }
}
