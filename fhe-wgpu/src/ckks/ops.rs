//! The `CkksOps` methods: checks and plumbing on the host, words on the device
//! (`eltwise`, `rescale`, `keyswitch`, `lazy`).

use fhe_api::ckks::{
    Ciphertext, CkksMeta, ExtCiphertext, HoistMeta, Hoisted, HostCiphertext, PlainMeta, Plaintext, PreparedPlaintext,
    PreparedSwitchKey, SwitchKeyMeta, SwitchKind, SwitchingKey,
};
use fhe_api::ops::{CkksOps, ConstResidues};
use fhe_api::ring::automorphism::EvalPermutation;
use fhe_api::{Backend, Error, LevelNeed, Result};

use super::eltwise::{self, Poly};
use super::keyswitch::{self, WgpuHoisted, WgpuSwitchKey};
use super::launch::{download_words, upload_words};
use super::{degree_one, rescale, WgpuCt, WgpuPt};
use crate::WgpuBackend;

impl CkksOps for WgpuBackend {
    fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        let plan = self.ckks_plan(ct.params())?;
        let limbs = ct.level() + 1;
        let words = limbs * plan.n();
        if ct.c0().len() != words || ct.c1().len() != words {
            return Err(Error::InvalidInput(format!(
                "a ciphertext at level {} needs {words} words per part",
                ct.level()
            )));
        }
        let both: Vec<u64> = ct.c0().iter().chain(ct.c1()).copied().collect();
        let buf = upload_words(&self.gpu, "ckks ciphertext", &both)?;
        self.wrap(ct.meta().clone(), WgpuCt { buf, parts: 2, limbs })
    }

    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        degree_one(ct, "download")?;
        let x = self.ct(ct)?;
        let mut both = download_words(&self.gpu, &x.buf)?;
        let words = x.limbs * self.ckks_plan(ct.params())?.n();
        if both.len() != 2 * words {
            return Err(Error::Device {
                backend: fhe_api::BackendKind::Wgpu,
                detail: format!("read back {} words of a {}-word ciphertext", both.len(), 2 * words),
            });
        }
        let c1 = both.split_off(words);
        HostCiphertext::from_reduced(ct.meta.clone(), both, c1)
    }

    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        let plan = self.ckks_plan(pt.params())?;
        let n = plan.n();
        let (coeffs, special) = (pt.coeffs(), pt.special());
        let m = upload_words(&self.gpu, "ckks plaintext", coeffs)?;
        let p = if special.is_empty() { None } else { Some(upload_words(&self.gpu, "ckks plaintext P", special)?) };
        let q_len = plan.q_len();
        self.on_device(&plan.table, |c| {
            let limbs = coeffs.len() / n;
            c.ntt(&m, 0, &c.args(1, limbs), limbs, true)?;
            if let Some(p) = &p {
                let k = special.len() / n;
                c.ntt(p, 0, &launch_args_at(c, q_len, k), k, true)?;
            }
            Ok(())
        })?;
        Ok(PreparedPlaintext::new(self.name(), PlainMeta(pt.meta().clone()), WgpuPt { m, p }))
    }

    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        self.prepare_key_up_to(key, key.params().max_level())
    }

    fn prepare_key_up_to(&self, key: &SwitchingKey, level: usize) -> Result<PreparedSwitchKey> {
        self.ckks_plan(key.params())?;
        let meta = SwitchKeyMeta::up_to(key, level)?;
        let index = match key.kind() {
            SwitchKind::Galois(g) => {
                let p = EvalPermutation::new(key.params().ring_degree(), g)?;
                let bytes: &[u8] = bytemuck::cast_slice(p.index());
                Some(self.gpu.upload("ckks galois gather", bytes, wgpu::BufferUsages::empty())?)
            }
            SwitchKind::Relin => None,
        };
        let (b, a) = key.halves_up_to(level)?;
        let words = b.len();
        if a.len() != words {
            return Err(Error::InvalidInput("a switching key with halves of different sizes".into()));
        }
        let (b, a) = (upload_words(&self.gpu, "ckks key b", &b)?, upload_words(&self.gpu, "ckks key a", &a)?);
        Ok(PreparedSwitchKey::new(self.name(), meta, WgpuSwitchKey { b, a, index, level, words }))
    }

    fn add(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let y = self.ct(b)?;
        self.unary(a, out, |c, x| eltwise::add_sub(c, x, y, false))
    }

    fn sub(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let y = self.ct(b)?;
        self.unary(a, out, |c, x| eltwise::add_sub(c, x, y, true))
    }

    fn negate(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.unary(a, out, eltwise::negate)
    }

    fn add_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let y = self.ct(b)?;
        self.in_place(acc, |c, a| eltwise::accumulate(c, a, y, false))
    }

    fn sub_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let y = self.ct(b)?;
        self.in_place(acc, |c, a| eltwise::accumulate(c, a, y, true))
    }

    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let m = self.pt(p)?;
        self.unary(a, out, |c, x| eltwise::plus_c0(c, x, Poly::of(&m.m, c.n()), false))
    }

    fn sub_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let m = self.pt(p)?;
        self.unary(a, out, |c, x| eltwise::plus_c0(c, x, Poly::of(&m.m, c.n()), true))
    }

    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let m = self.pt(p)?;
        self.unary(a, out, |c, x| eltwise::mul(c, x, Poly::of(&m.m, c.n())))
    }

    fn mul_plain_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, p: &PreparedPlaintext) -> Result<()> {
        let (x, m) = (self.ct(a)?, self.pt(p)?);
        self.in_place(acc, |c, t| eltwise::mul_accumulate(c, t, x, Poly::of(&m.m, c.n())))
    }

    fn add_const(&self, a: &Ciphertext, k: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        let w = self.constant_table(&*self.ckks_plan(a.params())?, k)?;
        self.unary(a, out, |c, x| {
            let kc = eltwise::constant(c, x.limbs, k, w.as_deref())?;
            eltwise::plus_c0(c, x, Poly::of(&kc, c.n()), false)
        })
    }

    fn mul_const(&self, a: &Ciphertext, k: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        let w = self.constant_table(&*self.ckks_plan(a.params())?, k)?;
        self.unary(a, out, |c, x| {
            let kc = eltwise::constant(c, x.limbs, k, w.as_deref())?;
            eltwise::mul(c, x, Poly::of(&kc, c.n()))
        })
    }

    fn mul_const_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, k: &ConstResidues) -> Result<()> {
        let x = self.ct(a)?;
        let w = self.constant_table(&*self.ckks_plan(a.params())?, k)?;
        let limbs = a.level() + 1;
        self.in_place(acc, |c, t| {
            let kc = eltwise::constant(c, limbs, k, w.as_deref())?;
            eltwise::mul_accumulate(c, t, x, Poly::of(&kc, c.n()))
        })
    }

    fn mul_monomial(&self, a: &Ciphertext, k: usize, out: CkksMeta) -> Result<Ciphertext> {
        let table = self.monomial(&*self.ckks_plan(a.params())?, k)?;
        self.unary(a, out, |c, x| eltwise::mul(c, x, Poly::of(&table, c.n())))
    }

    fn tensor(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        degree_one(a, "a product")?;
        degree_one(b, "a product")?;
        let y = self.ct(b)?;
        self.unary(a, out, |c, x| eltwise::tensor(c, x, y))
    }

    fn mul_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        degree_one(a, "a product")?;
        degree_one(b, "a product")?;
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        self.in_place(acc, |c, t| {
            let d = eltwise::tensor(c, x, y)?;
            eltwise::accumulate(c, t, &d, false)
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
        let key = self.relin_key(rlk)?;
        let lp = plan.level(&self.gpu, a.level())?;
        let r = self.on_device(&plan.table, |c| keyswitch::relinearize(c, &lp, x, key))?;
        self.wrap(out, r)
    }

    fn rescale(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let l = a.level();
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let plan = self.plan_for(a, &out, l - 1)?;
        let lp = plan.level(&self.gpu, l)?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan.table, |c| rescale::rescale(c, &lp, x))?;
        self.wrap(out, r)
    }

    fn drop_to_level(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let level = out.level();
        if level > a.level() {
            return Err(Error::Level { op: "drop_to_level", found: a.level(), needed: LevelNeed::AtLeast(level) });
        }
        let plan = self.plan_for(a, &out, level)?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan.table, |c| eltwise::truncate(c, x, level + 1))?;
        self.wrap(out, r)
    }

    fn mod_raise(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        if a.level() != 0 {
            return Err(Error::Level { op: "mod_raise", found: a.level(), needed: LevelNeed::Equal(0) });
        }
        degree_one(a, "ModRaise")?;
        let plan = self.plan_for(a, &out, out.level())?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan.table, |c| rescale::raise(c, x, out.level()))?;
        self.wrap(out, r)
    }

    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.plan_for(a, &out, a.level())?;
        self.galois_key(key)?;
        let h = self.hoisted(a)?;
        let mut r = self.galois(&h, &[key], out)?;
        r.pop().ok_or_else(|| Error::InvalidInput("one key gave no rotation".into()))
    }

    fn hoist(&self, a: &Ciphertext) -> Result<Hoisted> {
        Ok(Hoisted::new(self.name(), HoistMeta(a.meta.clone()), self.hoisted(a)?))
    }

    fn apply_galois_hoisted(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<Ciphertext>> {
        self.plan_for(h, &out, h.level())?;
        self.galois(h.downcast::<WgpuHoisted>(&self.name())?, keys, out)
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

    fn mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext> {
        self.plan_for(x, &out, x.level())?;
        self.ext_mod_down(x, out)
    }
}

/// The arguments of `limbs` limbs over the primes from QP index `first` (P's limbs).
fn launch_args_at(c: &super::launch::Ctx<'_>, first: usize, limbs: usize) -> super::launch::Args {
    super::launch::Args { first: first as u32, ..c.args(1, limbs) }
}
