//! CKKS on the CPU oracle: [`CkksOps`] over host memory. Its words define the CKKS byte
//! contract for every backend (`docs/CKKS.md`, "Evaluation"). Work runs on all cores
//! through rayon, limb by limb; benches pin one thread with a one-thread pool.

mod keyswitch;
mod plan;
mod rescale;

use std::sync::Arc;

use rayon::prelude::*;

use fhe_api::ckks::entities::{CkksCiphertext, CkksPlaintext, SwitchKind, SwitchingKey};
use fhe_api::ckks::params::CkksParams;
use fhe_api::ops::{CkksHandle, CkksOps, PlainHandle, PreparedSwitchKey};
use fhe_api::ring::automorphism::EvalPermutation;
use fhe_api::ring::modulus::Modulus;
use fhe_api::{Backend, Error, Result};

use crate::CpuBackend;
use keyswitch::{mod_up, switch, CpuSwitchKey};
pub use plan::CkksPlan;

/// A ciphertext in CPU memory: `(c0, c1)` in evaluation form over `q_0..q_level`.
struct CpuCt {
    c0: Vec<u64>,
    c1: Vec<u64>,
}

/// A plaintext in evaluation form.
struct CpuPt {
    m: Vec<u64>,
}

impl CpuBackend {
    /// The plan of a parameter set, built on first use.
    pub fn ckks_plan(&self, params: &Arc<CkksParams>) -> Result<Arc<CkksPlan>> {
        let key: Vec<u64> = [params.n() as u64, params.dnum as u64]
            .into_iter()
            .chain(params.q.iter().chain(params.p.iter()).map(|q| q.0))
            .collect();
        self.ckks_plans.get_or_try_init(&key, || {
            CkksPlan::new(params.clone(), &|q| self.engine(params.ring_degree, fhe_api::params::RingModulus(q)))
        })
    }

    fn ct<'a>(&self, a: &'a CkksHandle) -> Result<&'a CpuCt> {
        a.downcast::<CpuCt>(&self.name())
    }

    fn wrap(&self, like: &CkksHandle, level: usize, scale: f64, c0: Vec<u64>, c1: Vec<u64>) -> CkksHandle {
        CkksHandle::new(self.name(), like.params().clone(), level, scale, CpuCt { c0, c1 })
    }

    /// `f(x, y, modulus)` on every word of two limb-major polynomials over `q_0..`.
    fn zip_limbs(
        &self,
        plan: &CkksPlan,
        x: &[u64],
        y: &[u64],
        f: impl Fn(&Modulus, u64, u64) -> u64 + Sync,
    ) -> Vec<u64> {
        let n = plan.params.n();
        let mut out = vec![0u64; x.len()];
        out.par_chunks_mut(n).zip(x.par_chunks(n).zip(y.par_chunks(n))).enumerate().for_each(|(i, (o, (x, y)))| {
            let m = &plan.primes[i].m;
            o.iter_mut().zip(x.iter().zip(y)).for_each(|(o, (&x, &y))| *o = f(m, x, y));
        });
        out
    }

    fn map_limbs(&self, plan: &CkksPlan, x: &[u64], f: impl Fn(&Modulus, usize, u64) -> u64 + Sync) -> Vec<u64> {
        let n = plan.params.n();
        let mut out = x.to_vec();
        out.par_chunks_mut(n).enumerate().for_each(|(i, o)| {
            let m = &plan.primes[i].m;
            o.iter_mut().for_each(|o| *o = f(m, i, *o));
        });
        out
    }

    fn galois(&self, a: &CkksHandle, keys: &[&PreparedSwitchKey]) -> Result<Vec<CkksHandle>> {
        let ct = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(a.level())?;
        let n = plan.params.n();
        let ext = mod_up(&plan, &lp, &ct.c1);
        keys.iter()
            .map(|key| {
                let g = match key.kind() {
                    SwitchKind::Galois(g) => g,
                    SwitchKind::Relin => {
                        return Err(Error::InvalidInput("a relinearization key is not a Galois key".into()))
                    }
                };
                let k = key.downcast::<CpuSwitchKey>(&self.name())?;
                let perm = EvalPermutation::new(plan.params.ring_degree, g)?;
                let (u0, u1) = switch(&plan, &lp, &ext, k, Some(&perm));
                let mut c0 = vec![0u64; ct.c0.len()];
                c0.par_chunks_mut(n).zip(ct.c0.par_chunks(n)).zip(u0.par_chunks(n)).enumerate().for_each(
                    |(i, ((o, x), u))| {
                        perm.apply(x, o);
                        let m = &plan.primes[i].m;
                        o.iter_mut().zip(u).for_each(|(o, &u)| *o = m.add(*o, u));
                    },
                );
                Ok(self.wrap(a, a.level(), a.scale(), c0, u1))
            })
            .collect()
    }
}

impl CkksOps for CpuBackend {
    fn upload(&self, ct: &CkksCiphertext) -> Result<CkksHandle> {
        Ok(CkksHandle::new(
            self.name(),
            ct.params().clone(),
            ct.level(),
            ct.scale(),
            CpuCt { c0: ct.c0().to_vec(), c1: ct.c1().to_vec() },
        ))
    }

    fn download(&self, ct: &CkksHandle) -> Result<CkksCiphertext> {
        let c = self.ct(ct)?;
        CkksCiphertext::from_raw(ct.params().clone(), ct.level(), ct.scale(), c.c0.clone(), c.c1.clone())
    }

    fn upload_plaintext(&self, pt: &CkksPlaintext) -> Result<PlainHandle> {
        let plan = self.ckks_plan(pt.params())?;
        let n = plan.params.n();
        let mut m = pt.coeffs().to_vec();
        m.par_chunks_mut(n).enumerate().for_each(|(i, limb)| plan.primes[i].ntt.forward(limb));
        Ok(PlainHandle::new(self.name(), pt.params().clone(), pt.level(), pt.scale(), CpuPt { m }))
    }

    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        Ok(PreparedSwitchKey::new(
            self.name(),
            key.params().clone(),
            key.kind(),
            CpuSwitchKey { b: key.b().to_vec(), a: key.a() },
        ))
    }

    fn add(&self, a: &CkksHandle, b: &CkksHandle) -> Result<CkksHandle> {
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &y.c0, |m, x, y| m.add(x, y));
        let c1 = self.zip_limbs(&plan, &x.c1, &y.c1, |m, x, y| m.add(x, y));
        Ok(self.wrap(a, a.level(), a.scale(), c0, c1))
    }

    fn sub(&self, a: &CkksHandle, b: &CkksHandle) -> Result<CkksHandle> {
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &y.c0, |m, x, y| m.sub(x, y));
        let c1 = self.zip_limbs(&plan, &x.c1, &y.c1, |m, x, y| m.sub(x, y));
        Ok(self.wrap(a, a.level(), a.scale(), c0, c1))
    }

    fn negate(&self, a: &CkksHandle) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.map_limbs(&plan, &x.c0, |m, _, x| m.sub(0, x));
        let c1 = self.map_limbs(&plan, &x.c1, |m, _, x| m.sub(0, x));
        Ok(self.wrap(a, a.level(), a.scale(), c0, c1))
    }

    fn add_plain(&self, a: &CkksHandle, p: &PlainHandle) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        let pt = p.downcast::<CpuPt>(&self.name())?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &pt.m, |m, x, y| m.add(x, y));
        Ok(self.wrap(a, a.level(), a.scale(), c0, x.c1.clone()))
    }

    fn mul_plain(&self, a: &CkksHandle, p: &PlainHandle) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        let pt = p.downcast::<CpuPt>(&self.name())?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &pt.m, |m, x, y| m.mul(x, y));
        let c1 = self.zip_limbs(&plan, &x.c1, &pt.m, |m, x, y| m.mul(x, y));
        Ok(self.wrap(a, a.level(), a.scale() * p.scale(), c0, c1))
    }

    fn add_scalar(&self, a: &CkksHandle, residues: &[u64]) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        check_residues(a, residues)?;
        let plan = self.ckks_plan(a.params())?;
        // A constant polynomial is the same value in every evaluation slot.
        let c0 = self.map_limbs(&plan, &x.c0, |m, i, x| m.add(x, residues[i]));
        Ok(self.wrap(a, a.level(), a.scale(), c0, x.c1.clone()))
    }

    fn mul_scalar(&self, a: &CkksHandle, residues: &[u64], factor_scale: f64) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        check_residues(a, residues)?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.map_limbs(&plan, &x.c0, |m, i, x| m.mul(x, residues[i]));
        let c1 = self.map_limbs(&plan, &x.c1, |m, i, x| m.mul(x, residues[i]));
        Ok(self.wrap(a, a.level(), a.scale() * factor_scale, c0, c1))
    }

    fn mul_relin(&self, a: &CkksHandle, b: &CkksHandle, rlk: &PreparedSwitchKey) -> Result<CkksHandle> {
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        if rlk.kind() != SwitchKind::Relin {
            return Err(Error::InvalidInput("mul_relin needs the relinearization key".into()));
        }
        let key = rlk.downcast::<CpuSwitchKey>(&self.name())?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(a.level())?;
        let d0 = self.zip_limbs(&plan, &x.c0, &y.c0, |m, x, y| m.mul(x, y));
        let d1a = self.zip_limbs(&plan, &x.c0, &y.c1, |m, x, y| m.mul(x, y));
        let d1 = self.zip_limbs(&plan, &x.c1, &y.c0, |m, x, y| m.mul(x, y));
        let d1 = self.zip_limbs(&plan, &d1a, &d1, |m, x, y| m.add(x, y));
        let d2 = self.zip_limbs(&plan, &x.c1, &y.c1, |m, x, y| m.mul(x, y));
        let ext = mod_up(&plan, &lp, &d2);
        let (u0, u1) = switch(&plan, &lp, &ext, key, None);
        let c0 = self.zip_limbs(&plan, &d0, &u0, |m, x, y| m.add(x, y));
        let c1 = self.zip_limbs(&plan, &d1, &u1, |m, x, y| m.add(x, y));
        Ok(self.wrap(a, a.level(), a.scale() * b.scale(), c0, c1))
    }

    fn rescale(&self, a: &CkksHandle) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let l = a.level();
        if l == 0 {
            return Err(Error::Level("cannot rescale at level 0".into()));
        }
        let lp = plan.level(l)?;
        let c0 = rescale::rescale(&plan, &lp, &x.c0);
        let c1 = rescale::rescale(&plan, &lp, &x.c1);
        let ql = plan.primes[l].m.q as f64;
        Ok(self.wrap(a, l - 1, a.scale() / ql, c0, c1))
    }

    fn drop_to_level(&self, a: &CkksHandle, level: usize) -> Result<CkksHandle> {
        let x = self.ct(a)?;
        if level > a.level() {
            return Err(Error::Level(format!("cannot raise level {} to {level}", a.level())));
        }
        let words = (level + 1) * a.params().n();
        Ok(self.wrap(a, level, a.scale(), x.c0[..words].to_vec(), x.c1[..words].to_vec()))
    }

    fn apply_galois(&self, a: &CkksHandle, key: &PreparedSwitchKey) -> Result<CkksHandle> {
        Ok(self.galois(a, &[key])?.pop().expect("one key, one result"))
    }

    fn apply_galois_hoisted(&self, a: &CkksHandle, keys: &[&PreparedSwitchKey]) -> Result<Vec<CkksHandle>> {
        self.galois(a, keys)
    }
}

fn check_residues(a: &CkksHandle, residues: &[u64]) -> Result<()> {
    if residues.len() != a.level() + 1 || residues.iter().zip(&a.params().q).any(|(&r, q)| r >= q.0) {
        return Err(Error::InvalidInput(format!("a scalar needs {} residues, each below its prime", a.level() + 1)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ckks::params::CkksPreset;
    use fhe_api::testing::ckks::setup;

    /// Where one multiplication's time goes at the big preset, one thread:
    /// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_profile`.
    #[test]
    #[ignore = "timing, not a check"]
    fn ckks_profile() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        pool.install(|| {
            let preset = std::env::var("LUX_CKKS_PRESET")
                .ok()
                .map(|s| s.parse().unwrap())
                .unwrap_or(CkksPreset::Slots32768Scale40Depth34);
            let backend = Arc::new(CpuBackend::new(None).unwrap());
            let (ctx, keys, ev) = setup(backend.clone(), preset, 1);
            let x = fhe_api::testing::ckks::random_values(ctx.params().slots(), 1);
            let pt = ctx.encode(&x).unwrap();
            let ct = ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("p", 1)).unwrap();
            let plan = backend.ckks_plan(ctx.params()).unwrap();
            let lp = plan.level(ct.level()).unwrap();
            let c = backend.ct(&ct).unwrap();
            let t = std::time::Instant::now();
            for _ in 0..10 {
                let mut v = c.c0[..plan.params.n()].to_vec();
                plan.primes[0].ntt.forward(&mut v);
            }
            eprintln!("one NTT: {:?}", t.elapsed() / 10);
            let t = std::time::Instant::now();
            let ext = mod_up(&plan, &lp, &c.c1);
            eprintln!("mod_up: {:?}", t.elapsed());
            let key = ev_key(&backend, &keys);
            let t = std::time::Instant::now();
            let _ = switch(&plan, &lp, &ext, &key, None);
            eprintln!("inner product + mod_down: {:?}", t.elapsed());
            for _ in 0..3 {
                let t = std::time::Instant::now();
                let _ = ev.mul(&ct, &ct).unwrap();
                eprintln!("mul_relin: {:?}", t.elapsed());
            }
        });
    }

    fn ev_key(backend: &CpuBackend, keys: &fhe_api::ckks::entities::CkksKeySet) -> CpuSwitchKey {
        let k = keys.eval.relin.as_ref().unwrap();
        let _ = backend;
        CpuSwitchKey { b: k.b().to_vec(), a: k.a() }
    }
}
