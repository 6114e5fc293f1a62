//! CKKS on the CPU oracle: [`CkksOps`] over host memory. Its words define the CKKS byte
//! contract for every backend (`docs/CKKS.md`, "Evaluation"). Work runs on all cores
//! through rayon, limb by limb; benches pin one thread with a one-thread pool.
//!
//! | module | holds |
//! |---|---|
//! | `plan` | per preset and level: primes, converters, the buffer pool |
//! | `eltwise` | additions, plaintext and constant products, monomials, the tensor product |
//! | `keyswitch` | ModUp, the digit inner product, ModDown (relinearization, rotations) |
//! | `convert` | ModUp's fast base conversion |
//! | `rescale` | division by the last prime |
//! | `plaintext` | prepared plaintexts, whole or compact (integers transformed at each use) |

mod convert;
mod eltwise;
mod keyswitch;
mod lazy;
mod plaintext;
mod plan;
mod rescale;

use std::sync::Arc;

use rayon::prelude::*;

use fhe_api::ckks::{
    Ciphertext, CkksMeta, CtMeta, ExtCiphertext, HoistMeta, Hoisted, HostCiphertext, Params, PlainMeta, Plaintext,
    PreparedPlaintext, PreparedSwitchKey, SwitchKeyMeta, SwitchKind, SwitchingKey,
};
use fhe_api::ops::{CkksOps, ConstResidues};
use fhe_api::ring::automorphism::EvalPermutation;
use fhe_api::{Backend, Error, Result};

use crate::CpuBackend;
use keyswitch::{mod_up, switch, CpuSwitchKey, Finish, ModUp};
use plaintext::CpuPt;
pub use plan::CkksPlan;

/// A ciphertext in CPU memory: `degree + 1` polynomials in evaluation form over
/// `q_0..q_level` (`(c0, c1)`, or `(c0, c1, c2)` before relinearization).
struct CpuCt {
    parts: Vec<Vec<u64>>,
    /// Where the parts go when the object drops: at N = 2^16 each is megabytes, and a
    /// fresh buffer costs a page fault per 4 KiB on first touch (`CkksPlan::recycle`).
    pool: Option<Arc<CkksPlan>>,
}

impl Drop for CpuCt {
    fn drop(&mut self) {
        if let Some(plan) = &self.pool {
            self.parts.drain(..).for_each(|p| plan.recycle(p));
        }
    }
}

/// A kept decomposition: the ciphertext's halves and the ModUp of `c1`.
struct CpuHoisted {
    c0: Vec<u64>,
    c1: Vec<u64>,
    up: Option<ModUp>,
    plan: Arc<CkksPlan>,
}

impl CpuHoisted {
    /// The extended decomposition of `c1` (taken only while the handle is dropped).
    fn up(&self) -> Result<&ModUp> {
        self.up.as_ref().ok_or_else(|| Error::InvalidInput("a hoisted ciphertext without its ModUp".into()))
    }
}

impl CpuBackend {
    /// A Galois key's CPU form and its permutation (built at prepare time for every
    /// Galois key); the relinearization key is refused.
    /// `level`: the switch's (a key prepared below it is `Error::Level`).
    fn galois_key<'k>(
        &self,
        key: &'k PreparedSwitchKey,
        level: usize,
    ) -> Result<(&'k CpuSwitchKey, &'k EvalPermutation)> {
        let relin = || Error::InvalidInput("a relinearization key is not a Galois key".into());
        if key.kind() == SwitchKind::Relin {
            return Err(relin());
        }
        key.check_covers("rotation", level)?;
        let k = key.downcast::<CpuSwitchKey>(&self.name())?;
        Ok((k, k.perm.as_ref().ok_or_else(relin)?))
    }
}

impl CpuBackend {
    /// A prepared plaintext's limbs up to `level` (or its own, if lower), in evaluation form.
    fn plain<'a>(
        &self,
        p: &'a PreparedPlaintext,
        plan: &CkksPlan,
        level: usize,
    ) -> Result<std::borrow::Cow<'a, [u64]>> {
        Ok(p.downcast::<CpuPt>(&self.name())?.q_limbs(plan, level.min(p.level())))
    }
}

impl Drop for CpuHoisted {
    fn drop(&mut self) {
        self.plan.recycle(std::mem::take(&mut self.c0));
        self.plan.recycle(std::mem::take(&mut self.c1));
        if let Some(up) = self.up.take() {
            up.recycle(&self.plan);
        }
    }
}

impl CpuBackend {
    /// The plan of a parameter set, built on first use.
    pub fn ckks_plan(&self, params: &Arc<Params>) -> Result<Arc<CkksPlan>> {
        let key: Vec<u64> = [params.n() as u64, params.dnum() as u64]
            .into_iter()
            .chain(params.q().iter().chain(params.p().iter()).map(|q| q.0))
            .collect();
        self.ckks_plans.get_or_try_init(&key, || {
            CkksPlan::new(params.clone(), &|q| self.engine(params.ring_degree(), fhe_api::ring::RingModulus(q)))
        })
    }

    fn ct<'a>(&self, a: &'a Ciphertext) -> Result<&'a CpuCt> {
        a.downcast::<CpuCt>(&self.name())
    }

    /// A resident ciphertext of `parts` with metadata `out` (degree `parts.len() - 1`).
    fn wrap(&self, plan: &Arc<CkksPlan>, out: CkksMeta, parts: Vec<Vec<u64>>) -> Result<Ciphertext> {
        let meta = CtMeta::new(out, parts.len() - 1)?;
        Ok(Ciphertext::new(self.name(), meta, CpuCt { parts, pool: Some(plan.clone()) }))
    }

    /// The plan of `a`'s parameters, after checking that `out` is at `level` (the
    /// evaluator computes the result's metadata; a backend never guesses it).
    fn plan_for(&self, a: &CkksMeta, out: &CkksMeta, level: usize) -> Result<Arc<CkksPlan>> {
        if out.level() != level || out.params() != a.params() {
            return Err(Error::InvalidInput(format!(
                "result metadata at level {} of {} for an operation whose result is at level {level} of {}",
                out.level(),
                out.params().name(),
                a.params().name()
            )));
        }
        self.ckks_plan(a.params())
    }

    /// `f` on `acc`'s parts in place, or (when a clone shares them) on a copy that
    /// replaces them.
    fn in_place(
        &self,
        acc: &mut Ciphertext,
        f: impl FnOnce(&CkksPlan, &mut Vec<Vec<u64>>) -> Result<()>,
    ) -> Result<()> {
        let plan = self.ckks_plan(acc.params())?;
        if let Some(ct) = acc.downcast_mut::<CpuCt>(&self.name())? {
            return f(&plan, &mut ct.parts);
        }
        let mut parts: Vec<Vec<u64>> = self.ct(acc)?.parts.iter().map(|p| copy(&plan, p)).collect();
        f(&plan, &mut parts)?;
        acc.replace(CpuCt { parts, pool: Some(plan) });
        Ok(())
    }

    /// Rotations of the kept decomposition `h`, one per key.
    fn galois(
        &self,
        h: &CpuHoisted,
        level: usize,
        keys: &[&PreparedSwitchKey],
        out: CkksMeta,
    ) -> Result<Vec<Ciphertext>> {
        let plan = &h.plan;
        let lp = plan.level(level)?;
        let ext = h.up()?.of(&h.c1);
        // One rotation per core: each key's switch is independent of the others'.
        keys.par_iter()
            .map(|key| {
                let (k, perm) = self.galois_key(key, level)?;
                // Every word of both is written by `switch` (AddPermuted and Set).
                let (mut c0, mut c1) = (plan.take_vec(h.c0.len()), plan.take_vec(h.c1.len()));
                let finish0 = Finish::AddPermuted(&h.c0, perm.index());
                switch(plan, &lp, &ext, k, Some(perm), &mut c0, finish0, &mut c1, Finish::Set);
                self.wrap(plan, out.clone(), vec![c0, c1])
            })
            .collect()
    }

    fn hoisted(&self, a: &Ciphertext) -> Result<CpuHoisted> {
        let x = self.ct(a)?;
        degree_one(a, "a rotation")?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(a.level())?;
        let up = mod_up(&plan, &lp, &x.parts[1]);
        Ok(CpuHoisted { c0: copy(&plan, &x.parts[0]), c1: copy(&plan, &x.parts[1]), up: Some(up), plan })
    }
}

/// What a relinearized product starts from: the tensor `(c0, c1, d2)` at `a`'s level and
/// the ModUp of `d2`, with the relinearization key ([`CpuBackend::product_front`]); the
/// caller returns the buffers to the pool.
struct ProductFront<'k> {
    plan: Arc<CkksPlan>,
    lp: Arc<plan::LevelPlan>,
    key: &'k CpuSwitchKey,
    c0: Vec<u64>,
    c1: Vec<u64>,
    d2: Vec<u64>,
    up: ModUp,
}

impl CpuBackend {
    /// The checks and first steps `mul_relin` and `mul_relin_rescale` share; `meta` is the
    /// product's before any rescale.
    fn product_front<'k>(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rlk: &'k PreparedSwitchKey,
        meta: &CkksMeta,
    ) -> Result<ProductFront<'k>> {
        degree_one(a, "a product")?;
        degree_one(b, "a product")?;
        let plan = self.plan_for(a, meta, a.level())?;
        let key = relin_key(self, rlk, a.level())?;
        let lp = plan.level(a.level())?;
        let [c0, c1, d2] = eltwise::tensor(&plan, &self.ct(a)?.parts, &self.ct(b)?.parts);
        let up = mod_up(&plan, &lp, &d2);
        Ok(ProductFront { plan, lp, key, c0, c1, d2, up })
    }
}

/// `words` in a buffer from the pool.
fn copy(plan: &CkksPlan, words: &[u64]) -> Vec<u64> {
    let mut v = plan.take_vec(words.len());
    v.copy_from_slice(words);
    v
}

fn degree_one(a: &Ciphertext, what: &str) -> Result<()> {
    if a.degree() != 1 {
        return Err(Error::InvalidInput(format!(
            "{what} needs a relinearized ciphertext (degree 1), not degree {}",
            a.degree()
        )));
    }
    Ok(())
}

impl CkksOps for CpuBackend {
    fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        let plan = self.ckks_plan(ct.params())?;
        self.wrap(&plan, ct.meta().clone(), vec![copy(&plan, ct.c0()), copy(&plan, ct.c1())])
    }

    fn upload_owned(&self, ct: HostCiphertext) -> Result<Ciphertext> {
        let meta = ct.meta().clone();
        let plan = self.ckks_plan(meta.params())?;
        let (c0, c1) = ct.into_parts();
        self.wrap(&plan, meta, vec![c0, c1])
    }

    fn result_buffer(&self, params: &Arc<Params>, len: usize) -> Vec<u64> {
        match self.ckks_plan(params) {
            Ok(plan) => plan.take_vec(len),
            Err(_) => vec![0; len],
        }
    }

    fn context_opened(&self, params: &Arc<Params>) {
        // A plan that cannot be built is refused again by the first operation.
        if let Ok(plan) = self.ckks_plan(params) {
            plan.open();
        }
    }

    fn context_closed(&self, params: &Arc<Params>) {
        if let Ok(plan) = self.ckks_plan(params) {
            plan.close();
        }
    }

    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        degree_one(ct, "download")?;
        let c = self.ct(ct)?;
        let plan = self.ckks_plan(ct.params())?;
        HostCiphertext::from_reduced(ct.meta.clone(), copy(&plan, &c.parts[0]), copy(&plan, &c.parts[1]))
    }

    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        let plan = self.ckks_plan(pt.params())?;
        let m = eltwise::to_eval(&plan, pt.coeffs());
        let n = plan.params.n();
        let mut p = pt.special().to_vec();
        p.par_chunks_mut(n).enumerate().for_each(|(k, limb)| plan.primes[plan.p_index(k)].ntt.forward(limb));
        let extended = !p.is_empty();
        Ok(PreparedPlaintext::new(
            self.name(),
            PlainMeta(pt.meta().clone()),
            CpuPt { m, p, ints: Vec::new(), max_abs: 0, extended, pool: plan },
        ))
    }

    fn upload_plaintext_compact(&self, pt: &Plaintext, ints: &[i64]) -> Result<PreparedPlaintext> {
        let plan = self.ckks_plan(pt.params())?;
        let n = plan.params.n();
        if ints.len() != n {
            return Err(Error::InvalidInput(format!("a compact plaintext of {} integers for N = {n}", ints.len())));
        }
        // The first limb (and the first over P) checked against the residues: integers
        // that are not the plaintext's would give other words at every use.
        let extended = !pt.special().is_empty();
        let mut checks = vec![(0, &pt.coeffs()[..n])];
        if extended {
            checks.push((plan.p_index(0), &pt.special()[..n]));
        }
        for (prime, limb) in checks {
            let m = &plan.primes[prime].m;
            if ints.iter().zip(limb).any(|(&c, &r)| m.from_i64(c) != r) {
                return Err(Error::InvalidInput(format!(
                    "a compact plaintext's integers do not reduce to its residues modulo {}",
                    m.q
                )));
            }
        }
        let max_abs = ints.iter().map(|c| c.unsigned_abs()).max().unwrap_or(0);
        let cpu = CpuPt { m: Vec::new(), p: Vec::new(), ints: ints.to_vec(), max_abs, extended, pool: plan };
        Ok(PreparedPlaintext::new(self.name(), PlainMeta(pt.meta().clone()), cpu))
    }

    fn keeps_compact_plaintexts(&self) -> bool {
        true
    }

    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        self.prepare_key_up_to(key, key.params().max_level())
    }

    fn prepare_key_up_to(&self, key: &SwitchingKey, max_level: usize) -> Result<PreparedSwitchKey> {
        let meta = SwitchKeyMeta::up_to(key, max_level)?;
        let params = key.params();
        let n = params.n();
        let (b, a) = key.halves_up_to(max_level)?;
        let mut k = CpuSwitchKey { b, a, perm: None, level: max_level, q_len: params.q().len() };
        if let SwitchKind::Galois(g) = key.kind() {
            // Kept as `sigma_g^-1(key)` limb by limb, so the rotation's inner product streams
            // (see `keyswitch::switch`).
            let p = EvalPermutation::new(params.ring_degree(), g)?;
            let mut from = vec![0u64; n];
            for limb in k.b.chunks_mut(n).chain(k.a.chunks_mut(n)) {
                from.copy_from_slice(limb);
                p.index().iter().zip(&from).for_each(|(&k, &x)| limb[k as usize] = x);
            }
            k.perm = Some(p);
        }
        Ok(PreparedSwitchKey::new(self.name(), meta, k))
    }

    fn add(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let parts = eltwise::add_sub(&plan, &self.ct(a)?.parts, &self.ct(b)?.parts, false);
        self.wrap(&plan, out, parts)
    }

    fn sub(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let parts = eltwise::add_sub(&plan, &self.ct(a)?.parts, &self.ct(b)?.parts, true);
        self.wrap(&plan, out, parts)
    }

    fn negate(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let parts = self.ct(a)?.parts.iter().map(|p| eltwise::negate(&plan, p)).collect();
        self.wrap(&plan, out, parts)
    }

    fn add_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let y = self.ct(b)?;
        self.in_place(acc, |plan, parts| eltwise::accumulate(plan, parts, &y.parts, false))
    }

    fn sub_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let y = self.ct(b)?;
        self.in_place(acc, |plan, parts| eltwise::accumulate(plan, parts, &y.parts, true))
    }

    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let m = self.plain(p, &plan, a.level())?;
        let parts = eltwise::plus_c0(&plan, &self.ct(a)?.parts, &m, false);
        self.wrap(&plan, out, parts)
    }

    fn sub_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let m = self.plain(p, &plan, a.level())?;
        let parts = eltwise::plus_c0(&plan, &self.ct(a)?.parts, &m, true);
        self.wrap(&plan, out, parts)
    }

    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let m = self.plain(p, &plan, a.level())?;
        let parts = self.ct(a)?.parts.iter().map(|x| eltwise::mul(&plan, x, &m)).collect();
        self.wrap(&plan, out, parts)
    }

    fn mul_plain_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, p: &PreparedPlaintext) -> Result<()> {
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let m = self.plain(p, &plan, a.level())?;
        self.in_place(acc, |plan, parts| eltwise::mul_accumulate(plan, parts, &x.parts, &m))
    }

    fn add_const(&self, a: &Ciphertext, c: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let k = eltwise::constant(&plan, a.level(), c)?;
        let parts = eltwise::plus_c0(&plan, &self.ct(a)?.parts, &k, false);
        plan.recycle(k);
        self.wrap(&plan, out, parts)
    }

    fn mul_const(&self, a: &Ciphertext, c: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let k = eltwise::constant(&plan, a.level(), c)?;
        let parts = self.ct(a)?.parts.iter().map(|x| eltwise::mul(&plan, x, &k)).collect();
        plan.recycle(k);
        self.wrap(&plan, out, parts)
    }

    fn mul_const_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, c: &ConstResidues) -> Result<()> {
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let k = eltwise::constant(&plan, a.level(), c)?;
        let r = self.in_place(acc, |plan, parts| eltwise::mul_accumulate(plan, parts, &x.parts, &k));
        plan.recycle(k);
        r
    }

    fn mul_monomial(&self, a: &Ciphertext, k: usize, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let table = eltwise::monomial(&plan, a.level(), k)?;
        let parts = self.ct(a)?.parts.iter().map(|x| eltwise::mul(&plan, x, &table)).collect();
        plan.recycle(table);
        self.wrap(&plan, out, parts)
    }

    fn tensor(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        degree_one(a, "a product")?;
        degree_one(b, "a product")?;
        let plan = self.plan_for(a, &out, a.level())?;
        let parts = eltwise::tensor(&plan, &self.ct(a)?.parts, &self.ct(b)?.parts);
        self.wrap(&plan, out, parts.to_vec())
    }

    fn mul_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        degree_one(a, "a product")?;
        degree_one(b, "a product")?;
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        self.in_place(acc, |plan, parts| {
            let t = eltwise::tensor(plan, &x.parts, &y.parts);
            let r = eltwise::accumulate(plan, parts, &t, false);
            t.into_iter().for_each(|p| plan.recycle(p));
            r
        })
    }

    fn relinearize(&self, a: &Ciphertext, rlk: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let x = self.ct(a)?;
        if a.degree() != 2 {
            return Err(Error::InvalidInput(format!(
                "relinearize needs a degree-2 ciphertext, not degree {}",
                a.degree()
            )));
        }
        let key = relin_key(self, rlk, a.level())?;
        let lp = plan.level(a.level())?;
        let (mut c0, mut c1) = (copy(&plan, &x.parts[0]), copy(&plan, &x.parts[1]));
        let up = mod_up(&plan, &lp, &x.parts[2]);
        switch(&plan, &lp, &up.of(&x.parts[2]), key, None, &mut c0, Finish::Add, &mut c1, Finish::Add);
        up.recycle(&plan);
        self.wrap(&plan, out, vec![c0, c1])
    }

    /// The product's two ModDowns carry the rescale (`keyswitch::mod_down_rescale`): `2l`
    /// forward transforms fewer than `mul_relin` then `rescale`, the same words.
    fn mul_relin_rescale(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rlk: &PreparedSwitchKey,
        mid: CkksMeta,
        out: CkksMeta,
    ) -> Result<Ciphertext> {
        let l = a.level();
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: fhe_api::LevelNeed::AtLeast(1) });
        }
        self.plan_for(a, &out, l - 1)?;
        let ProductFront { plan, lp, key, c0, c1, d2, up } = self.product_front(a, b, rlk, &mid)?;
        let (mut u0, mut u1) = keyswitch::inner_products(&plan, &lp, &up.of(&d2), key, None);
        up.recycle(&plan);
        plan.recycle(d2);
        let (y0, y1) = rayon::join(
            || keyswitch::mod_down_rescale(&plan, &lp, &mut u0, &c0),
            || keyswitch::mod_down_rescale(&plan, &lp, &mut u1, &c1),
        );
        [u0, u1, c0, c1].into_iter().for_each(|v| plan.recycle(v));
        self.wrap(&plan, out, vec![y0, y1])
    }

    /// The tensor product and the key switch of `c1 c1'` in one pass (the same words as
    /// `tensor` then `relinearize`, without the degree-2 copy).
    fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rlk: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        let ProductFront { plan, lp, key, mut c0, mut c1, d2, up } = self.product_front(a, b, rlk, &out)?;
        switch(&plan, &lp, &up.of(&d2), key, None, &mut c0, Finish::Add, &mut c1, Finish::Add);
        up.recycle(&plan);
        plan.recycle(d2);
        self.wrap(&plan, out, vec![c0, c1])
    }

    fn rescale(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let l = a.level();
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: fhe_api::LevelNeed::AtLeast(1) });
        }
        let plan = self.plan_for(a, &out, l - 1)?;
        let lp = plan.level(l)?;
        let parts = self.ct(a)?.parts.iter().map(|x| rescale::rescale(&plan, &lp, x)).collect();
        self.wrap(&plan, out, parts)
    }

    fn drop_to_level(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let level = out.level();
        if level > a.level() {
            return Err(Error::Level {
                op: "drop_to_level",
                found: a.level(),
                needed: fhe_api::LevelNeed::AtLeast(level),
            });
        }
        let plan = self.plan_for(a, &out, level)?;
        let words = (level + 1) * a.params().n();
        let parts = self.ct(a)?.parts.iter().map(|x| copy(&plan, &x[..words])).collect();
        self.wrap(&plan, out, parts)
    }

    fn mod_raise(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        if a.level() != 0 {
            return Err(Error::Level { op: "mod_raise", found: a.level(), needed: fhe_api::LevelNeed::Equal(0) });
        }
        degree_one(a, "ModRaise")?;
        let plan = self.plan_for(a, &out, out.level())?;
        let parts = self.ct(a)?.parts.iter().map(|x| rescale::raise(&plan, out.level(), x)).collect();
        self.wrap(&plan, out, parts)
    }

    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.plan_for(a, &out, a.level())?;
        let h = self.hoisted(a)?;
        Ok(self.galois(&h, a.level(), &[key], out)?.pop().expect("one key, one result"))
    }

    fn hoist(&self, a: &Ciphertext) -> Result<Hoisted> {
        Ok(Hoisted::new(self.name(), HoistMeta(a.meta.clone()), self.hoisted(a)?))
    }

    fn apply_galois_hoisted(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<Ciphertext>> {
        self.plan_for(h, &out, h.level())?;
        self.galois(h.downcast::<CpuHoisted>(&self.name())?, h.level(), keys, out)
    }

    fn apply_galois_lazy(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<ExtCiphertext>> {
        self.plan_for(h, &out, h.level())?;
        self.lazy_rotations(h, keys, out)
    }

    fn lift(&self, a: &Ciphertext, out: CkksMeta) -> Result<ExtCiphertext> {
        self.plan_for(a, &out, a.level())?;
        self.lift_ext(a, out)
    }

    fn ext_mul_plain(&self, x: &ExtCiphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<ExtCiphertext> {
        self.plan_for(x, &out, x.level())?;
        self.ext_product(x, p, out)
    }

    fn ext_mul_plain_then_add(&self, acc: &mut ExtCiphertext, x: &ExtCiphertext, p: &PreparedPlaintext) -> Result<()> {
        self.ext_accumulate(acc, x, p)
    }

    fn ext_dot_plain(&self, xs: &[&ExtCiphertext], ps: &[&PreparedPlaintext], out: CkksMeta) -> Result<ExtCiphertext> {
        let first = xs.first().ok_or_else(|| Error::InvalidInput("an empty lazy dot product".into()))?;
        self.plan_for(first, &out, first.level())?;
        self.ext_dot(xs, ps, out)
    }

    fn mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.plan_for(x, &out, x.level())?;
        self.ext_mod_down(x, out)
    }
}

fn relin_key<'a>(b: &CpuBackend, rlk: &'a PreparedSwitchKey, level: usize) -> Result<&'a CpuSwitchKey> {
    if rlk.kind() != SwitchKind::Relin {
        return Err(Error::InvalidInput("a product needs the relinearization key, not a Galois key".into()));
    }
    rlk.check_covers("relinearization", level)?;
    rlk.downcast::<CpuSwitchKey>(&b.name())
}

#[cfg(test)]
mod tests;
