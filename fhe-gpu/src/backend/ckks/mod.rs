//! `CkksOps` on the device, written once over [`GpuDriver`]: ciphertexts, plaintexts,
//! switching keys, hoisted decompositions and extended ciphertexts are device buffers
//! that stay resident between calls; only `download` copies words back. Every operation
//! computes the integers the CPU oracle pins (`docs/CKKS.md`, "Evaluation"), so the
//! downloaded words are the oracle's. One file per op family, as in `fhe-cpu/src/ckks/`:
//!
//! | module | holds |
//! |---|---|
//! | `plan` | per preset and level: table entries and RNS constants on the device |
//! | `eltwise` | additions, plaintext and constant products, monomials, the tensor product |
//! | `rescale` | division by the last prime, and ModRaise |
//! | `convert` | ModUp's base conversion and the rounding ModDown |
//! | `keyswitch` | the digit inner product, relinearization, rotations, hoisting |
//! | `lazy` | rotations over `Q_l P` and the lazy ModDown of their sums |
//!
//! Words are laid out `[part][limb][N]` (64-bit), every limb with its own prime's table
//! entry; each operation is a few launches over all limbs and parts, then one
//! synchronize, under the device lock.

mod convert;
mod eltwise;
mod keyswitch;
mod lazy;
mod plan;
mod rescale;

use std::sync::Arc;

use fhe_api::ckks::{
    Ciphertext, CkksMeta, CtMeta, ExtCiphertext, Hoisted, HostCiphertext, Params, PlainMeta, Plaintext,
    PreparedPlaintext, PreparedSwitchKey, SwitchKeyMeta, SwitchKind, SwitchingKey,
};
use fhe_api::ops::{CkksOps, ConstResidues};
use fhe_api::ring::automorphism::EvalPermutation;
use fhe_api::{Backend, Error, LevelNeed, Result};

use super::ring::DeviceNtt;
use super::GpuBackend;
use crate::args::{DevPtr, GpuNttTable, KernelArgs, Residue};
use crate::driver::{Buffer, GpuDriver, LaunchShape};
use crate::source::Program;
pub use plan::GpuCkksPlan;

/// A resident ciphertext: `parts` polynomials of `limbs` limbs, `[part][limb][N]`.
pub struct GpuCt<D: GpuDriver> {
    buf: Buffer<D, u64>,
    parts: usize,
    limbs: usize,
}

impl<D: GpuDriver> GpuCt<D> {
    fn ptr(&self) -> DevPtr<Residue> {
        DevPtr::new(self.buf.ptr())
    }

    /// Part `k`'s first word.
    fn part(&self, k: usize, n: usize) -> DevPtr<Residue> {
        DevPtr::new(self.buf.ptr() + (k * self.limbs * n * 8) as u64)
    }
}

/// A resident plaintext in evaluation form: `limbs` limbs over `q_0..`, and the `P`
/// limbs of an extended plaintext.
pub struct GpuPt<D: GpuDriver> {
    m: Buffer<D, u64>,
    p: Option<Buffer<D, u64>>,
}

/// A resident switching key: both halves as `SwitchingKey::halves_up_to(level)` lays
/// them out, and a Galois key's gather (`EvalPermutation::index`).
pub struct GpuSwitchKey<D: GpuDriver> {
    b: Buffer<D, u64>,
    a: Buffer<D, u64>,
    index: Option<Buffer<D, u32>>,
    /// The highest level it switches at.
    level: usize,
}

/// One polynomial operand on the device: its first word and its number of limbs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Poly {
    ptr: DevPtr<Residue>,
    limbs: usize,
}

impl Poly {
    fn of<D: GpuDriver>(b: &Buffer<D, u64>, n: usize) -> Poly {
        Poly { ptr: DevPtr::new(b.ptr()), limbs: b.len() / n }
    }
}

/// What one operation's launches share: the plan, the module, and the temporaries
/// they use, freed only after the synchronize that ends the operation.
struct Ctx<'a, D: GpuDriver> {
    gpu: &'a GpuBackend<D>,
    plan: &'a GpuCkksPlan<D>,
    module: &'a D::Module,
    keep: std::cell::RefCell<Vec<Buffer<D, u64>>>,
}

impl<D: GpuDriver> Ctx<'_, D> {
    fn n(&self) -> usize {
        self.plan.n()
    }

    /// A temporary of `words` words (contents unspecified), alive until the operation's
    /// synchronize.
    fn scratch(&self, words: usize) -> Result<DevPtr<Residue>> {
        let b = self.alloc(words)?;
        Ok(self.keep(b))
    }

    /// Keeps `b` alive until the operation's synchronize.
    fn keep(&self, b: Buffer<D, u64>) -> DevPtr<Residue> {
        let p = DevPtr::new(b.ptr());
        self.keep.borrow_mut().push(b);
        p
    }

    /// `words` host words uploaded as a temporary.
    fn upload(&self, words: &[u64]) -> Result<DevPtr<u64>> {
        let b = Buffer::from_slice(&self.gpu.drv, words)?;
        Ok(DevPtr::new(self.keep(b).addr()))
    }

    /// A launch over `total` words with a grid-stride loop.
    ///
    /// # Safety
    /// Every pointer in `args` is live and sized for `total` words as the kernel reads
    /// them; the caller holds the device lock and synchronizes before freeing them.
    unsafe fn launch<A: KernelArgs>(&self, total: usize, args: &A) -> Result<()> {
        let block = self.gpu.block_for(total);
        let grid = (total.div_ceil(block as usize)).clamp(1, self.gpu.drv.max_grid().max(1) as usize) as u32;
        // SAFETY: the caller's contract.
        unsafe { self.gpu.drv.launch(self.module, LaunchShape { grid, block, shared_bytes: 0 }, args) }
    }

    /// `transforms` NTTs in place over `data`, transform `t` with entry `t % limbs` of
    /// `tables`.
    ///
    /// # Safety
    /// As [`GpuBackend::ntt_in_place`].
    unsafe fn ntt(
        &self,
        data: DevPtr<Residue>,
        tables: DevPtr<GpuNttTable>,
        transforms: usize,
        limbs: usize,
        forward: bool,
    ) -> Result<()> {
        let ntt = DeviceNtt { log_n: self.plan.log_n(), limbs: limbs as u32, forward, bits: 64 };
        let transforms = u32::try_from(transforms)
            .map_err(|_| Error::InvalidInput(format!("{transforms} transforms in one launch")))?;
        // SAFETY: the caller's contract.
        unsafe { self.gpu.ntt_in_place(self.module, data, tables, transforms, ntt) }
    }

    fn alloc(&self, words: usize) -> Result<Buffer<D, u64>> {
        Buffer::new(&self.gpu.drv, words)
    }
}

/// A word address `words` words past `p`.
fn offset(p: DevPtr<Residue>, words: usize) -> DevPtr<Residue> {
    DevPtr::new(p.addr() + (words * 8) as u64)
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

fn check_degree(acc: usize, x: usize) -> Result<()> {
    if x > acc {
        return Err(Error::InvalidInput(format!(
            "an accumulator of degree {} cannot take a term of degree {}: accumulate products into a degree-2 \
             ciphertext (Evaluator::tensor) or relinearize the term first",
            acc - 1,
            x - 1
        )));
    }
    Ok(())
}

impl<D: GpuDriver> GpuBackend<D> {
    /// The plan of a parameter set, built and uploaded on first use.
    pub fn ckks_plan(&self, params: &Arc<Params>) -> Result<Arc<GpuCkksPlan<D>>> {
        let key: Vec<u64> = [params.n() as u64, params.dnum() as u64]
            .into_iter()
            .chain(params.q().iter().chain(params.p().iter()).map(|q| q.0))
            .collect();
        self.ckks_plans.get_or_try_init(&key, || {
            let rings = params
                .q()
                .iter()
                .chain(params.p().iter())
                .map(|&q| self.ring_tables(params.ring_degree(), q, 64))
                .collect::<Result<Vec<_>>>()?;
            GpuCkksPlan::new(&self.drv, params.clone(), rings)
        })
    }

    fn ct<'a>(&self, a: &'a Ciphertext) -> Result<&'a GpuCt<D>> {
        a.downcast::<GpuCt<D>>(&self.name())
    }

    fn pt<'a>(&self, p: &'a PreparedPlaintext) -> Result<&'a GpuPt<D>> {
        p.downcast::<GpuPt<D>>(&self.name())
    }

    fn wrap(&self, out: CkksMeta, ct: GpuCt<D>) -> Result<Ciphertext> {
        let meta = CtMeta::new(out, ct.parts - 1)?;
        Ok(Ciphertext::new(self.name(), meta, ct))
    }

    /// The plan of `a`'s parameters after checking that `out` is at `level` (the
    /// evaluator computes the result's metadata; a backend never guesses it).
    fn plan_for(&self, a: &CkksMeta, out: &CkksMeta, level: usize) -> Result<Arc<GpuCkksPlan<D>>> {
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

    /// Runs `f` with the CKKS module under the device lock, then synchronizes: every
    /// buffer `f` launched on may be freed once this returns.
    fn on_device<T>(&self, plan: &GpuCkksPlan<D>, f: impl FnOnce(&Ctx<'_, D>) -> Result<T>) -> Result<T> {
        let module = self.module(Program::Ckks)?;
        let _guard = self.device_lock()?;
        let ctx = Ctx { gpu: self, plan, module: &module, keep: Default::default() };
        let out = f(&ctx);
        // Temporaries are freed only once the launches that use them are done, also
        // when one of them failed.
        let synced = self.drv.synchronize();
        drop(ctx);
        let out = out?;
        synced?;
        Ok(out)
    }

    /// `f` on `acc`'s words in place, or (when a clone shares them) on a copy that
    /// replaces them.
    fn in_place(&self, acc: &mut Ciphertext, f: impl FnOnce(&Ctx<'_, D>, &GpuCt<D>) -> Result<()>) -> Result<()> {
        let plan = self.ckks_plan(acc.params())?;
        let name = self.name();
        if let Some(ct) = acc.downcast_mut::<GpuCt<D>>(&name)? {
            let ct: &GpuCt<D> = ct;
            return self.on_device(&plan, |c| f(c, ct));
        }
        let copy = self.on_device(&plan, |c| {
            let x = self.ct(acc)?;
            let copy = eltwise::copy_ct(c, x)?;
            f(c, &copy)?;
            Ok(copy)
        })?;
        acc.replace(copy);
        Ok(())
    }

    /// A Galois key's device form; the relinearization key is refused.
    fn galois_key<'k>(&self, key: &'k PreparedSwitchKey) -> Result<(&'k GpuSwitchKey<D>, DevPtr<u32>)> {
        let relin = || Error::InvalidInput("a relinearization key is not a Galois key".into());
        if key.kind() == SwitchKind::Relin {
            return Err(relin());
        }
        let k = key.downcast::<GpuSwitchKey<D>>(&self.name())?;
        let index = k.index.as_ref().ok_or_else(relin)?;
        Ok((k, index.dev_ptr()))
    }

    fn relin_key<'k>(&self, rlk: &'k PreparedSwitchKey) -> Result<&'k GpuSwitchKey<D>> {
        if rlk.kind() != SwitchKind::Relin {
            return Err(Error::InvalidInput("a product needs the relinearization key, not a Galois key".into()));
        }
        rlk.downcast::<GpuSwitchKey<D>>(&self.name())
    }
}

impl<D: GpuDriver> CkksOps for GpuBackend<D> {
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
        let what = format!("a ciphertext of {} at level {}", ct.params().name(), ct.level());
        self.check_fits(&what, crate::memory::ciphertext_bytes(ct.params(), ct.level()))?;
        let both: Vec<u64> = ct.c0().iter().chain(ct.c1()).copied().collect();
        let buf = Buffer::from_slice(&self.drv, &both)?;
        self.wrap(ct.meta().clone(), GpuCt { buf, parts: 2, limbs })
    }

    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext> {
        degree_one(ct, "download")?;
        let x = self.ct(ct)?;
        let words = x.limbs * self.ckks_plan(ct.params())?.n();
        let mut both = vec![0u64; 2 * words];
        {
            let _guard = self.device_lock()?;
            x.buf.read_into(&mut both)?;
        }
        let c1 = both.split_off(words);
        HostCiphertext::from_reduced(ct.meta.clone(), both, c1)
    }

    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext> {
        let plan = self.ckks_plan(pt.params())?;
        let n = plan.n();
        let (coeffs, special) = (pt.coeffs(), pt.special());
        let what = format!("a plaintext of {} ({} limbs)", pt.params().name(), (coeffs.len() + special.len()) / n);
        self.check_fits(&what, ((coeffs.len() + special.len()) * 8) as u64)?;
        let m = Buffer::from_slice(&self.drv, coeffs)?;
        let p = if special.is_empty() { None } else { Some(Buffer::from_slice(&self.drv, special)?) };
        self.on_device(&plan, |c| {
            // SAFETY: `m` holds `coeffs.len() / n` limbs over q_0.., `p` the K limbs over P
            // (the plaintext's own checks), each prime's entry in the plan's table.
            unsafe {
                c.ntt(DevPtr::new(m.ptr()), plan.table_at(0), coeffs.len() / n, coeffs.len() / n, true)?;
                if let Some(p) = &p {
                    c.ntt(DevPtr::new(p.ptr()), plan.p_table(), special.len() / n, plan.p_len(), true)?;
                }
            }
            Ok(())
        })?;
        Ok(PreparedPlaintext::new(self.name(), PlainMeta(pt.meta().clone()), GpuPt { m, p }))
    }

    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey> {
        self.prepare_key_up_to(key, key.params().max_level())
    }

    fn prepare_key_up_to(&self, key: &SwitchingKey, level: usize) -> Result<PreparedSwitchKey> {
        self.ckks_plan(key.params())?;
        let meta = SwitchKeyMeta::up_to(key, level)?;
        // The whole key is checked before any of its buffers is allocated.
        let (galois, kind) = match key.kind() {
            SwitchKind::Galois(g) => (true, format!("the Galois key of element {g}")),
            SwitchKind::Relin => (false, "the relinearization key".to_string()),
        };
        let what = format!("{kind} of {} up to level {level}", key.params().name());
        self.check_fits(&what, crate::memory::switch_key_bytes(key.params(), level, galois))?;
        let index = match key.kind() {
            SwitchKind::Galois(g) => {
                let p = EvalPermutation::new(key.params().ring_degree(), g)?;
                Some(Buffer::from_slice(&self.drv, p.index())?)
            }
            SwitchKind::Relin => None,
        };
        let (b, a) = key.halves_up_to(level)?;
        let (b, a) = (Buffer::from_slice(&self.drv, &b)?, Buffer::from_slice(&self.drv, &a)?);
        Ok(PreparedSwitchKey::new(self.name(), meta, GpuSwitchKey { b, a, index, level }))
    }

    fn add(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let r = self.on_device(&plan, |c| eltwise::add_sub(c, x, y, false))?;
        self.wrap(out, r)
    }

    fn sub(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let r = self.on_device(&plan, |c| eltwise::add_sub(c, x, y, true))?;
        self.wrap(out, r)
    }

    fn negate(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan, |c| eltwise::negate(c, x))?;
        self.wrap(out, r)
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
        let plan = self.plan_for(a, &out, a.level())?;
        let (x, m) = (self.ct(a)?, self.pt(p)?);
        let r = self.on_device(&plan, |c| eltwise::plus_c0(c, x, Poly::of(&m.m, c.n()), false))?;
        self.wrap(out, r)
    }

    fn sub_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let (x, m) = (self.ct(a)?, self.pt(p)?);
        let r = self.on_device(&plan, |c| eltwise::plus_c0(c, x, Poly::of(&m.m, c.n()), true))?;
        self.wrap(out, r)
    }

    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let (x, m) = (self.ct(a)?, self.pt(p)?);
        let r = self.on_device(&plan, |c| eltwise::mul(c, x, Poly::of(&m.m, c.n())))?;
        self.wrap(out, r)
    }

    fn mul_plain_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, p: &PreparedPlaintext) -> Result<()> {
        let (x, m) = (self.ct(a)?, self.pt(p)?);
        self.in_place(acc, |c, t| eltwise::mul_accumulate(c, t, x, Poly::of(&m.m, c.n())))
    }

    fn add_const(&self, a: &Ciphertext, k: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let x = self.ct(a)?;
        let w = self.constant_table(&plan, k)?;
        let r = self.on_device(&plan, |c| {
            let kc = eltwise::constant(c, a.level() + 1, k, w.as_deref())?;
            let k = Poly::of(&kc, c.n());
            c.keep(kc);
            eltwise::plus_c0(c, x, k, false)
        })?;
        self.wrap(out, r)
    }

    fn mul_const(&self, a: &Ciphertext, k: &ConstResidues, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let x = self.ct(a)?;
        let w = self.constant_table(&plan, k)?;
        let r = self.on_device(&plan, |c| {
            let kc = eltwise::constant(c, a.level() + 1, k, w.as_deref())?;
            let k = Poly::of(&kc, c.n());
            c.keep(kc);
            eltwise::mul(c, x, k)
        })?;
        self.wrap(out, r)
    }

    fn mul_const_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, k: &ConstResidues) -> Result<()> {
        let x = self.ct(a)?;
        let plan = self.ckks_plan(a.params())?;
        let w = self.constant_table(&plan, k)?;
        let kc = self.on_device(&plan, |c| eltwise::constant(c, a.level() + 1, k, w.as_deref()))?;
        self.in_place(acc, |c, t| eltwise::mul_accumulate(c, t, x, Poly::of(&kc, c.n())))
    }

    fn mul_monomial(&self, a: &Ciphertext, k: usize, out: CkksMeta) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let x = self.ct(a)?;
        let table = self.monomial(&plan, k)?;
        let r = self.on_device(&plan, |c| eltwise::mul(c, x, Poly::of(&table, c.n())))?;
        self.wrap(out, r)
    }

    fn tensor(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        degree_one(a, "a product")?;
        degree_one(b, "a product")?;
        let plan = self.plan_for(a, &out, a.level())?;
        let (x, y) = (self.ct(a)?, self.ct(b)?);
        let r = self.on_device(&plan, |c| eltwise::tensor(c, x, y))?;
        self.wrap(out, r)
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
        let lp = plan.level(&self.drv, a.level())?;
        let r = self.on_device(&plan, |c| keyswitch::relinearize(c, &lp, x, key))?;
        self.wrap(out, r)
    }

    fn rescale(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let l = a.level();
        if l == 0 {
            return Err(Error::Level { op: "rescale", found: 0, needed: LevelNeed::AtLeast(1) });
        }
        let plan = self.plan_for(a, &out, l - 1)?;
        let lp = plan.level(&self.drv, l)?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan, |c| rescale::rescale(c, &lp, x))?;
        self.wrap(out, r)
    }

    fn drop_to_level(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        let level = out.level();
        if level > a.level() {
            return Err(Error::Level { op: "drop_to_level", found: a.level(), needed: LevelNeed::AtLeast(level) });
        }
        let plan = self.plan_for(a, &out, level)?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan, |c| eltwise::truncate(c, x, level + 1))?;
        self.wrap(out, r)
    }

    fn mod_raise(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext> {
        if a.level() != 0 {
            return Err(Error::Level { op: "mod_raise", found: a.level(), needed: LevelNeed::Equal(0) });
        }
        degree_one(a, "ModRaise")?;
        let plan = self.plan_for(a, &out, out.level())?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan, |c| rescale::raise(c, x, out.level()))?;
        self.wrap(out, r)
    }

    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.plan_for(a, &out, a.level())?;
        let h = self.hoisted(a)?;
        let mut r = self.galois(&h, &[key], out)?;
        r.pop().ok_or_else(|| Error::InvalidInput("one key gave no rotation".into()))
    }

    fn hoist(&self, a: &Ciphertext) -> Result<Hoisted> {
        Ok(Hoisted::new(self.name(), fhe_api::ckks::HoistMeta(a.meta.clone()), self.hoisted(a)?))
    }

    fn apply_galois_hoisted(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<Ciphertext>> {
        self.plan_for(h, &out, h.level())?;
        self.galois(h.downcast::<keyswitch::GpuHoisted<D>>(&self.name())?, keys, out)
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
