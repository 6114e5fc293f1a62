//! CKKS on the CPU oracle: [`CkksOps`] over host memory. Its words define the CKKS byte
//! contract for every backend (`docs/CKKS.md`, "Evaluation"). Work runs on all cores
//! through rayon, limb by limb; benches pin one thread with a one-thread pool.

mod convert;
mod keyswitch;
mod plan;
mod rescale;

use std::sync::Arc;

use rayon::prelude::*;

use fhe_api::ckks::entities::{HostCiphertext, Plaintext, SwitchKind, SwitchingKey};
use fhe_api::ckks::meta::CkksMeta;
use fhe_api::ckks::params::Params;
use fhe_api::ckks::{Ciphertext, PlainMeta, PreparedPlaintext, PreparedSwitchKey, SwitchKeyMeta};
use fhe_api::ops::CkksOps;
use fhe_api::ring::automorphism::EvalPermutation;
use fhe_api::ring::modulus::Modulus;
use fhe_api::{Backend, Error, Result};

use crate::CpuBackend;
use keyswitch::{mod_up, switch, CpuSwitchKey, Finish};
pub use plan::CkksPlan;

/// A ciphertext in CPU memory: `(c0, c1)` in evaluation form over `q_0..q_level`.
struct CpuCt {
    c0: Vec<u64>,
    c1: Vec<u64>,
    /// Where the halves go when the handle drops: at N = 2^16 each is megabytes, and a
    /// fresh buffer costs a page fault per 4 KiB on first touch (`CkksPlan::recycle`).
    pool: Option<Arc<CkksPlan>>,
}

impl Drop for CpuCt {
    fn drop(&mut self) {
        if let Some(plan) = &self.pool {
            plan.recycle(std::mem::take(&mut self.c0));
            plan.recycle(std::mem::take(&mut self.c1));
        }
    }
}

/// A plaintext in evaluation form.
struct CpuPt {
    m: Vec<u64>,
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

    fn wrap(&self, like: &Ciphertext, level: usize, scale: f64, c0: Vec<u64>, c1: Vec<u64>) -> Result<Ciphertext> {
        let pool = self.ckks_plan(like.params()).ok();
        let meta = CkksMeta::new(like.params().clone(), level, scale)?;
        Ok(Ciphertext::new(self.name(), meta, CpuCt { c0, c1, pool }))
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

    fn galois(&self, a: &Ciphertext, keys: &[&PreparedSwitchKey]) -> Result<Vec<Ciphertext>> {
        let ct = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(a.level())?;
        let ext = mod_up(&plan, &lp, &ct.c1);
        keys.iter()
            .map(|key| {
                let relin = || Error::InvalidInput("a relinearization key is not a Galois key".into());
                if key.kind() == SwitchKind::Relin {
                    return Err(relin());
                }
                let k = key.downcast::<CpuSwitchKey>(&self.name())?;
                // Built at prepare time for every Galois key.
                let perm = k.perm.as_ref().ok_or_else(relin)?;
                // Every word of both is written by `switch` (AddPermuted and Set).
                let (mut c0, mut c1) = (plan.take_vec(ct.c0.len()), plan.take_vec(ct.c1.len()));
                let finish0 = Finish::AddPermuted(&ct.c0, perm.index());
                switch(&plan, &lp, &ext, k, Some(perm), &mut c0, finish0, &mut c1, Finish::Set);
                self.wrap(a, a.level(), a.scale(), c0, c1)
            })
            .collect()
    }
}

impl CkksOps for CpuBackend {
    fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext> {
        Ok(Ciphertext::new(
            self.name(),
            ct.meta().clone(),
            CpuCt { c0: ct.c0().to_vec(), c1: ct.c1().to_vec(), pool: self.ckks_plan(ct.params()).ok() },
        ))
    }

    fn upload_owned(&self, ct: HostCiphertext) -> Result<Ciphertext> {
        let meta = ct.meta().clone();
        let pool = self.ckks_plan(meta.params()).ok();
        let (c0, c1) = ct.into_parts();
        Ok(Ciphertext::new(self.name(), meta, CpuCt { c0, c1, pool }))
    }

    fn result_buffer(&self, params: &Arc<Params>, len: usize) -> Vec<u64> {
        match self.ckks_plan(params) {
            Ok(plan) => plan.take_vec(len),
            Err(_) => vec![0; len],
        }
    }

    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        let c = self.ct(ct)?;
        HostCiphertext::from_reduced(ct.meta().clone(), c.c0.clone(), c.c1.clone())
    }

    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        let plan = self.ckks_plan(pt.params())?;
        let n = plan.params.n();
        let mut m = pt.coeffs().to_vec();
        m.par_chunks_mut(n).enumerate().for_each(|(i, limb)| plan.primes[i].ntt.forward(limb));
        Ok(PreparedPlaintext::new(self.name(), PlainMeta(pt.meta().clone()), CpuPt { m }))
    }

    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        let (mut b, mut a) = (key.b().to_vec(), key.a());
        let mut perm = None;
        if let SwitchKind::Galois(g) = key.kind() {
            // Kept as `sigma_g^-1(key)` limb by limb, so the rotation's inner product streams
            // (see `keyswitch::switch`).
            let p = EvalPermutation::new(key.params().ring_degree(), g)?;
            let n = key.params().n();
            let mut from = vec![0u64; n];
            for limb in b.chunks_mut(n).chain(a.chunks_mut(n)) {
                from.copy_from_slice(limb);
                p.index().iter().zip(&from).for_each(|(&k, &x)| limb[k as usize] = x);
            }
            perm = Some(p);
        }
        Ok(PreparedSwitchKey::new(self.name(), SwitchKeyMeta::of(key), CpuSwitchKey { b, a, perm }))
    }

    fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &y.c0, |m, x, y| m.add(x, y));
        let c1 = self.zip_limbs(&plan, &x.c1, &y.c1, |m, x, y| m.add(x, y));
        self.wrap(a, a.level(), a.scale(), c0, c1)
    }

    fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &y.c0, |m, x, y| m.sub(x, y));
        let c1 = self.zip_limbs(&plan, &x.c1, &y.c1, |m, x, y| m.sub(x, y));
        self.wrap(a, a.level(), a.scale(), c0, c1)
    }

    fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.map_limbs(&plan, &x.c0, |m, _, x| m.sub(0, x));
        let c1 = self.map_limbs(&plan, &x.c1, |m, _, x| m.sub(0, x));
        self.wrap(a, a.level(), a.scale(), c0, c1)
    }

    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext) -> Result<Ciphertext> {
        let x = self.ct(a)?;
        let pt = p.downcast::<CpuPt>(&self.name())?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &pt.m, |m, x, y| m.add(x, y));
        self.wrap(a, a.level(), a.scale(), c0, x.c1.clone())
    }

    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext) -> Result<Ciphertext> {
        let x = self.ct(a)?;
        let pt = p.downcast::<CpuPt>(&self.name())?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.zip_limbs(&plan, &x.c0, &pt.m, |m, x, y| m.mul(x, y));
        let c1 = self.zip_limbs(&plan, &x.c1, &pt.m, |m, x, y| m.mul(x, y));
        self.wrap(a, a.level(), a.scale() * p.scale(), c0, c1)
    }

    fn add_scalar(&self, a: &Ciphertext, residues: &[u64]) -> Result<Ciphertext> {
        let x = self.ct(a)?;
        check_residues(a, residues)?;
        let plan = self.ckks_plan(a.params())?;
        // A constant polynomial is the same value in every evaluation slot.
        let c0 = self.map_limbs(&plan, &x.c0, |m, i, x| m.add(x, residues[i]));
        self.wrap(a, a.level(), a.scale(), c0, x.c1.clone())
    }

    fn mul_scalar(&self, a: &Ciphertext, residues: &[u64], factor_scale: f64) -> Result<Ciphertext> {
        let x = self.ct(a)?;
        check_residues(a, residues)?;
        let plan = self.ckks_plan(a.params())?;
        let c0 = self.map_limbs(&plan, &x.c0, |m, i, x| m.mul(x, residues[i]));
        let c1 = self.map_limbs(&plan, &x.c1, |m, i, x| m.mul(x, residues[i]));
        self.wrap(a, a.level(), a.scale() * factor_scale, c0, c1)
    }

    fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rlk: &PreparedSwitchKey) -> Result<Ciphertext> {
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        if rlk.kind() != SwitchKind::Relin {
            return Err(Error::InvalidInput("mul_relin needs the relinearization key".into()));
        }
        let key = rlk.downcast::<CpuSwitchKey>(&self.name())?;
        let plan = self.ckks_plan(a.params())?;
        let lp = plan.level(a.level())?;
        let n = plan.params.n();
        // The tensor product in one pass: `d0 = x0 y0`, `d1 = x0 y1 + x1 y0`, `d2 = x1 y1`.
        // Every word of the three is written by the tensor product.
        let (mut c0, mut c1) = (plan.take_vec(x.c0.len()), plan.take_vec(x.c0.len()));
        let mut d2 = plan.take(x.c0.len());
        c0.par_chunks_mut(n).zip(c1.par_chunks_mut(n)).zip(d2.par_chunks_mut(n)).enumerate().for_each(
            |(i, ((o0, o1), o2))| {
                let m = &plan.primes[i].m;
                let r = i * n..(i + 1) * n;
                let xy = [&x.c0[r.clone()], &x.c1[r.clone()], &y.c0[r.clone()], &y.c1[r]];
                crate::arith::tensor(m, xy, [o0, o1, o2]);
            },
        );
        let ext = mod_up(&plan, &lp, &d2);
        switch(&plan, &lp, &ext, key, None, &mut c0, Finish::Add, &mut c1, Finish::Add);
        self.wrap(a, a.level(), a.scale() * b.scale(), c0, c1)
    }

    fn rescale(&self, a: &Ciphertext) -> Result<Ciphertext> {
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
        self.wrap(a, l - 1, a.scale() / ql, c0, c1)
    }

    fn drop_to_level(&self, a: &Ciphertext, level: usize) -> Result<Ciphertext> {
        let x = self.ct(a)?;
        if level > a.level() {
            return Err(Error::Level(format!("cannot raise level {} to {level}", a.level())));
        }
        let words = (level + 1) * a.params().n();
        self.wrap(a, level, a.scale(), x.c0[..words].to_vec(), x.c1[..words].to_vec())
    }

    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey) -> Result<Ciphertext> {
        Ok(self.galois(a, &[key])?.pop().expect("one key, one result"))
    }

    fn apply_galois_hoisted(&self, a: &Ciphertext, keys: &[&PreparedSwitchKey]) -> Result<Vec<Ciphertext>> {
        self.galois(a, keys)
    }
}

fn check_residues(a: &Ciphertext, residues: &[u64]) -> Result<()> {
    if residues.len() != a.level() + 1 || residues.iter().zip(a.params().q()).any(|(&r, q)| r >= q.0) {
        return Err(Error::InvalidInput(format!("a scalar needs {} residues, each below its prime", a.level() + 1)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ckks::params::Preset;
    use fhe_schemes::testing::ckks::setup;

    /// Where one multiplication's time goes at the big preset, one thread:
    /// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_profile`.
    #[test]
    #[ignore = "timing, not a check"]
    fn ckks_profile() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        pool.install(|| {
            let preset = fhe_schemes::testing::ckks::preset_from_env();
            let backend = Arc::new(CpuBackend::new(None).unwrap());
            let (ctx, keys, ev) = setup(backend.clone(), preset, 1);
            let x = fhe_schemes::testing::ckks::random_values(ctx.params().slots(), 1);
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
            let mut out = (vec![0u64; c.c0.len()], vec![0u64; c.c0.len()]);
            let t = std::time::Instant::now();
            switch(&plan, &lp, &ext, &key, None, &mut out.0, Finish::Set, &mut out.1, Finish::Set);
            eprintln!("inner product + mod_down: {:?}", t.elapsed());
            drop(ext);
            for _ in 0..2 {
                let t = std::time::Instant::now();
                let ext = mod_up(&plan, &lp, &c.c1);
                eprintln!("mod_up (warm): {:?}", t.elapsed());
                let t = std::time::Instant::now();
                switch(&plan, &lp, &ext, &key, None, &mut out.0, Finish::Set, &mut out.1, Finish::Set);
                eprintln!("inner product + mod_down (warm): {:?}", t.elapsed());
            }
            let reps: usize = std::env::var("LUX_CKKS_REPS").ok().map(|s| s.parse().unwrap()).unwrap_or(3);
            let only = std::env::var("LUX_CKKS_OPS").ok();
            let time = |what: &str, f: &mut dyn FnMut()| {
                if only.as_ref().is_some_and(|o| !o.split(',').any(|o| what.starts_with(o))) {
                    return;
                }
                let mut ts: Vec<_> = (0..reps)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        f();
                        t.elapsed()
                    })
                    .collect();
                ts.sort();
                eprintln!("{what}: median {:?} (min {:?}, max {:?})", ts[reps / 2], ts[0], ts[reps - 1]);
            };
            time("mul_relin", &mut || drop(ev.mul(&ct, &ct).unwrap()));
            time("rescale", &mut || drop(ev.rescale(&ct).unwrap()));
            time("rotate", &mut || drop(ev.rotate(&ct, 1).unwrap()));
            time("hoisted4", &mut || drop(ev.rotate_hoisted(&ct, &[1, 2, 3, 4]).unwrap()));
            time("encrypt", &mut || drop(ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("p", 2)).unwrap()));
            time("decrypt (to plaintext)", &mut || drop(ctx.decrypt_plaintext(&keys.sk, &ct).unwrap()));
            time("decrypt + decode", &mut || drop(ctx.decrypt(&keys.sk, &ct).unwrap()));
            if std::env::var("LUX_CKKS_KEYGEN").is_ok() {
                let options =
                    fhe_schemes::ckks::KeygenOptions { relin: true, rotations: vec![1, 2, 3, 4], conjugation: false };
                time("keygen relin + 4 rotations", &mut || {
                    drop(ctx.keygen_from_seed(&fhe_api::Seed::derive("k", 1), &options).unwrap())
                });
            }
        });
    }

    /// Writes the words of every CKKS operation (fixed seeds) to `$LUX_CKKS_DUMP/<preset>-<op>.bin`
    /// so optimisations can be checked word for word (`sha256sum` the files before and after):
    /// `LUX_CKKS_DUMP=/tmp/d cargo test -p fhe-cpu --release --lib -- --ignored ckks_words_dump`.
    #[test]
    #[ignore = "writes files for a manual before/after comparison"]
    fn ckks_words_dump() {
        let Ok(dir) = std::env::var("LUX_CKKS_DUMP") else { return };
        std::fs::create_dir_all(&dir).unwrap();
        let presets = std::env::var("LUX_CKKS_DUMP_PRESETS")
            .unwrap_or("slots4096-scale40-depth2,slots8192-scale40-depth6".into());
        for name in presets.split(',') {
            let preset: Preset = name.parse().unwrap();
            let backend = Arc::new(CpuBackend::new(None).unwrap());
            let (ctx, keys, ev) = setup(backend.clone(), preset, 7);
            let write = |op: &str, words: &[&[u64]]| {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.iter().flat_map(|x| x.to_le_bytes())).collect();
                std::fs::write(format!("{dir}/{name}-{op}.bin"), bytes).unwrap();
            };
            let ct_words = |op: &str, h: &fhe_api::ckks::Ciphertext| {
                let c = ev.download(h).unwrap();
                write(op, &[c.c0(), c.c1()]);
            };
            write("pk", &[keys.pk.b()]);
            write("relin", &[keys.eval.relin.as_ref().unwrap().b()]);
            for (g, k) in &keys.eval.galois {
                write(&format!("galois{g}"), &[k.b()]);
            }
            let slots = ctx.params().slots();
            let (x, y) = (
                fhe_schemes::testing::ckks::random_values(slots, 71),
                fhe_schemes::testing::ckks::random_values(slots, 72),
            );
            let enc = |v: &[fhe_schemes::ckks::Complex], s: u64| {
                let pt = ctx.encode(v).unwrap();
                ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("dump", s)).unwrap()
            };
            let (cx, cy) = (enc(&x, 1), enc(&y, 2));
            ct_words("encrypt", &cx);
            let pt = ctx.encode(&x).unwrap();
            let csk = ctx.encrypt_sk_seeded(&keys.sk, &pt, &fhe_api::Seed::derive("dump", 3)).unwrap();
            ct_words("encrypt_sk", &csk);
            let m = ev.mul(&cx, &cy).unwrap();
            ct_words("mul_relin", &m);
            let r = ev.rescale(&m).unwrap();
            ct_words("rescale", &r);
            ct_words("rotate", &ev.rotate(&cx, 3).unwrap());
            ct_words("rotate_after_mul", &ev.rotate(&r, 1).unwrap());
            for (k, h) in ev.rotate_hoisted(&cx, &[1, 2, 3, 4]).unwrap().iter().enumerate() {
                ct_words(&format!("hoisted{k}"), h);
            }
            write("decrypt", &[ctx.decrypt_plaintext(&keys.sk, &r).unwrap().coeffs()]);
            write("decrypt_top", &[ctx.decrypt_plaintext(&keys.sk, &cx).unwrap().coeffs()]);
        }
    }

    /// The spread of a fresh public-key encryption's precision (bits, the worst slot) over
    /// key sets and encryption seeds, since one seeded bench row is one draw:
    /// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_fresh_precision_spread`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn ckks_fresh_precision_spread() {
        use fhe_schemes::ckks::precision_bits;
        let preset = fhe_schemes::testing::ckks::preset_from_env();
        let backend = Arc::new(CpuBackend::new(None).unwrap());
        let (mut all, mut means) = (Vec::new(), Vec::new());
        for key_seed in 1..=4 {
            let (ctx, keys, _) = setup(backend.clone(), preset, key_seed);
            let x = fhe_schemes::testing::ckks::random_values(ctx.params().slots(), 11);
            let pt = ctx.encode(&x).unwrap();
            for s in 1..=4 {
                let c = ctx.encrypt_seeded(&keys.pk, &pt, &fhe_api::Seed::derive("spread", s)).unwrap();
                let got = ctx.decrypt(&keys.sk, &c).unwrap();
                all.push(precision_bits(&got, &x));
                // The mean error is a far steadier statistic than the worst slot's.
                let mean =
                    got.iter().zip(&x).map(|(g, w)| (g.re - w.re).hypot(g.im - w.im)).sum::<f64>() / x.len() as f64;
                means.push(-mean.log2());
            }
        }
        means.sort_by(f64::total_cmp);
        eprintln!("{preset}: mean error over the slots: {:.3}..{:.3} bits", means[0], means[means.len() - 1]);
        all.sort_by(f64::total_cmp);
        eprintln!(
            "{preset}: fresh encryption, {} draws: min {:.2}, median {:.2}, max {:.2} bits",
            all.len(),
            all[0],
            all[all.len() / 2],
            all[all.len() - 1]
        );
    }

    /// Where the noise of mul-then-rotate comes from at a preset (default the big one):
    /// the precision in bits of each step, and the coefficient noise (bits of its largest
    /// magnitude) of encryption and of one rotation of a fresh ciphertext.
    /// `cargo test -p fhe-cpu --release --lib -- --ignored --nocapture ckks_noise_breakdown`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn ckks_noise_breakdown() {
        use fhe_schemes::ckks::precision_bits;
        use fhe_schemes::ckks::Complex;
        let preset = fhe_schemes::testing::ckks::preset_from_env();
        let backend = Arc::new(CpuBackend::new(None).unwrap());
        let (ctx, keys, ev) = setup(backend, preset, 1);
        let p = ctx.params();
        let bits = |v: &[fhe_api::ring::RingModulus]| v.iter().map(|q| 64 - q.0.leading_zeros()).collect::<Vec<_>>();
        eprintln!(
            "{preset}: N = {}, q bits {:?}, p bits {:?}, dnum {}, eta {}",
            p.n(),
            bits(p.q()),
            bits(p.p()),
            p.dnum(),
            p.noise_eta()
        );
        let slots = p.slots();
        let (x, y) = (
            fhe_schemes::testing::ckks::random_values(slots, 11),
            fhe_schemes::testing::ckks::random_values(slots, 12),
        );
        let rot = |v: &[Complex], k: usize| (0..v.len()).map(|i| v[(i + k) % v.len()]).collect::<Vec<_>>();
        let xy: Vec<Complex> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
        let px = ctx.encode(&x).unwrap();
        eprintln!("encode -> decode: {:.2} bits", precision_bits(&ctx.decode(&px).unwrap(), &x));
        let enc = |v: &[Complex], s| {
            ctx.encrypt_seeded(&keys.pk, &ctx.encode(v).unwrap(), &fhe_api::Seed::derive("n", s)).unwrap()
        };
        let (cx, cy) = (enc(&x, 1), enc(&y, 2));
        let dec = |h: &fhe_api::ckks::Ciphertext| ctx.decrypt(&keys.sk, h).unwrap();
        // Coefficient noise against a plaintext: centered difference modulo q_0.
        let coeff_noise = |h: &fhe_api::ckks::Ciphertext, want: &[Complex]| {
            let got = ctx.decrypt_plaintext(&keys.sk, h).unwrap();
            let mut pw = ctx.encode(want).unwrap();
            pw = ctx.decode(&pw).map(|_| pw).unwrap();
            let q0 = p.q()[0].0;
            let e = fhe_schemes::testing::ckks::coefficient_noise(&got, &pw);
            let mx = e.iter().map(|&e| e.unsigned_abs()).max().unwrap_or(0) as f64;
            let sq: f64 = e.iter().map(|&e| (e as f64) * (e as f64)).sum();
            let n = e.len();
            // The noise alone as a plaintext at level 0 (scale 1): its slot values, with and
            // without its mean coefficient.
            let mean = e.iter().sum::<i64>() as f64 / n as f64;
            let noise = |demean: bool| {
                let shift = if demean { mean.round() as i64 } else { 0 };
                let w: Vec<u64> = e.iter().map(|&e| (e - shift).rem_euclid(q0 as i64) as u64).collect();
                let pt = fhe_api::ckks::entities::Plaintext::from_raw(p.clone(), 0, 1.0, w).unwrap();
                let v = ctx.decode(&pt).unwrap();
                let (mut best, mut at) = (0f64, 0);
                for (i, c) in v.iter().enumerate() {
                    let a = (c.re * c.re + c.im * c.im).sqrt();
                    if a > best {
                        best = a;
                        at = i;
                    }
                }
                format!("2^{:.2} at slot {at}", best.log2())
            };
            format!(
                "coefficient noise max 2^{:.2}, rms 2^{:.2}, mean {mean:.2}; slot noise max {}, demeaned {}",
                mx.log2(),
                (sq / n as f64).sqrt().log2(),
                noise(false),
                noise(true)
            )
        };
        eprintln!("encrypt: {:.2} bits; {}", precision_bits(&dec(&cx), &x), coeff_noise(&cx, &x));
        let c0 = ev.drop_to_level(&cx, 0).unwrap();
        eprintln!("encrypt, dropped to level 0: {:.2} bits", precision_bits(&dec(&c0), &x));
        let r = ev.rotate(&cx, 3).unwrap();
        eprintln!(
            "rotate(fresh, 3): {:.2} bits; {}",
            precision_bits(&dec(&r), &rot(&x, 3)),
            coeff_noise(&r, &rot(&x, 3))
        );
        let m = ev.mul(&cx, &cy).unwrap();
        eprintln!("mul (no rescale): {:.2} bits", precision_bits(&dec(&m), &xy));
        let mr = ev.rescale(&m).unwrap();
        eprintln!("mul + rescale: {:.2} bits", precision_bits(&dec(&mr), &xy));
        let mr0 = ev.drop_to_level(&mr, 0).unwrap();
        eprintln!("mul + rescale, dropped to level 0: {:.2} bits", precision_bits(&dec(&mr0), &xy));
        let mrr = ev.rotate(&mr, 3).unwrap();
        eprintln!("mul + rescale + rotate 3: {:.2} bits", precision_bits(&dec(&mrr), &rot(&xy, 3)));
        let sk_x = ctx.encrypt_sk_seeded(&keys.sk, &px, &fhe_api::Seed::derive("n", 5)).unwrap();
        eprintln!("secret-key encrypt: {:.2} bits; {}", precision_bits(&dec(&sk_x), &x), coeff_noise(&sk_x, &x));
    }

    fn ev_key(backend: &CpuBackend, keys: &fhe_api::ckks::entities::KeySet) -> CpuSwitchKey {
        let k = keys.eval.relin.as_ref().unwrap();
        let _ = backend;
        CpuSwitchKey { b: k.b().to_vec(), a: k.a(), perm: None }
    }
}
