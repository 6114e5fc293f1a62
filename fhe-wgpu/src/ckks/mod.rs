//! `CkksOps` on wgpu: ciphertexts, plaintexts and switching keys are device buffers
//! that stay resident between calls; only `download` copies words back. Every kernel
//! reads its limb's prime from a table at run time (`shaders/ckks/rns.wgsl`) and returns
//! fully reduced residues, so the downloaded words are the CPU oracle's
//! (`docs/CKKS.md`, "Evaluation"). One file per op family, as in `fhe-cpu/src/ckks/`
//! and `fhe-gpu/src/backend/ckks/`:
//!
//! | module | holds |
//! |---|---|
//! | `launch` | the CKKS shader module, its argument block, an operation's dispatches |
//! | `plan` | per ring and preset: prime tables; per level: RNS constants |
//! | `eltwise` | additions, plaintext and constant products, monomials, the tensor product |
//! | `rescale` | division by the last prime, and ModRaise |
//! | `convert` | ModUp's base conversion and the rounding ModDown |
//! | `keyswitch` | the digit inner product, relinearization, rotations, hoisting |
//! | `lazy` | rotations over `Q_l P` and the lazy ModDown of their sums |
//! | `ops` | the `CkksOps` methods: checks on the host, words from the modules above |
//!
//! Words are laid out `[part][limb][N]` (64-bit); each operation is a few dispatches
//! over all limbs and parts, submitted in one compute pass.

mod convert;
mod eltwise;
mod keyswitch;
pub(crate) mod launch;
mod lazy;
pub(crate) mod plan;
mod rescale;

use std::sync::Arc;

use fhe_api::ckks::{Ciphertext, CkksMeta, CtMeta, Params, PreparedPlaintext};
use fhe_api::ops::ConstResidues;
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::{Backend, Error, Result};

use self::launch::{download_words, upload_words, Ctx, Kernels};
use self::plan::{PrimeTables, WgpuCkksPlan};
use crate::WgpuBackend;

/// A resident ciphertext: `parts` polynomials of `limbs` limbs, `[part][limb][N]`.
pub struct WgpuCt {
    buf: wgpu::Buffer,
    parts: usize,
    limbs: usize,
}

/// A resident plaintext in evaluation form: `m` over `q_0..`, and the `P` limbs of an
/// extended plaintext.
pub struct WgpuPt {
    m: wgpu::Buffer,
    p: Option<wgpu::Buffer>,
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

pub(crate) fn check_degree(acc: usize, x: usize) -> Result<()> {
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

/// What the backend keeps for CKKS: the compiled module, per preset a plan, per ring
/// (an NTT over a prime outside the bit-scheme sets) its table.
#[derive(Default)]
pub(crate) struct CkksState {
    kernels: fhe_api::keyed_cache::KeyedCache<(), Kernels>,
    plans: fhe_api::keyed_cache::KeyedCache<Vec<u64>, WgpuCkksPlan>,
    rings: fhe_api::keyed_cache::KeyedCache<(usize, u64), PrimeTables>,
}

impl WgpuBackend {
    fn kernels(&self) -> Result<Arc<Kernels>> {
        self.ckks.kernels.get_or_try_init(&(), || Kernels::new(&self.gpu))
    }

    /// The plan of a parameter set, built and uploaded on first use.
    fn ckks_plan(&self, params: &Arc<Params>) -> Result<Arc<WgpuCkksPlan>> {
        let key: Vec<u64> = [params.n() as u64, params.dnum() as u64]
            .into_iter()
            .chain(params.q().iter().chain(params.p().iter()).map(|q| q.0))
            .collect();
        self.ckks.plans.get_or_try_init(&key, || WgpuCkksPlan::new(&self.gpu, params.clone()))
    }

    /// Records `f`'s dispatches over `table` and submits them in one pass.
    fn on_device<T>(&self, table: &PrimeTables, f: impl FnOnce(&Ctx<'_>) -> Result<T>) -> Result<T> {
        let kernels = self.kernels()?;
        let ctx = Ctx::new(&self.gpu, &kernels, table);
        let out = f(&ctx)?;
        ctx.submit()?;
        Ok(out)
    }

    /// A negacyclic NTT of a batch over any NTT-friendly ring `(n, q)` below `2^62`
    /// (the CKKS primes): the CKKS module's kernel over that prime's table.
    pub(crate) fn ring_transform_any(
        &self,
        n: PolynomialSize,
        q: RingModulus,
        data: &mut [u64],
        forward: bool,
    ) -> Result<()> {
        fhe_api::ops::check_ring_input(n, q, data)?;
        let table = self.ckks.rings.get_or_try_init(&(n.0, q.0), || PrimeTables::new(&self.gpu, n.0, &[q.0]))?;
        let per_chunk = ((self.gpu.max_binding() / (8 * n.0 as u64)) as usize).max(1);
        for chunk in data.chunks_mut(per_chunk * n.0) {
            let buf = upload_words(&self.gpu, "ntt data", chunk)?;
            self.on_device(&table, |c| c.ntt(&buf, 0, &c.args(1, 1), chunk.len() / n.0, forward))?;
            chunk.copy_from_slice(&download_words(&self.gpu, &buf)?);
        }
        Ok(())
    }

    fn ct<'a>(&self, a: &'a Ciphertext) -> Result<&'a WgpuCt> {
        a.downcast::<WgpuCt>(&self.name())
    }

    fn pt<'a>(&self, p: &'a PreparedPlaintext) -> Result<&'a WgpuPt> {
        p.downcast::<WgpuPt>(&self.name())
    }

    fn wrap(&self, out: CkksMeta, ct: WgpuCt) -> Result<Ciphertext> {
        let meta = CtMeta::new(out, ct.parts - 1)?;
        Ok(Ciphertext::new(self.name(), meta, ct))
    }

    /// The plan of `a`'s parameters after checking that `out` is at `level` (the
    /// evaluator computes the result's metadata; a backend never guesses it).
    fn plan_for(&self, a: &CkksMeta, out: &CkksMeta, level: usize) -> Result<Arc<WgpuCkksPlan>> {
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

    /// `f` over `a`'s plan, its result wrapped with `out`.
    fn unary(
        &self,
        a: &Ciphertext,
        out: CkksMeta,
        f: impl FnOnce(&Ctx<'_>, &WgpuCt) -> Result<WgpuCt>,
    ) -> Result<Ciphertext> {
        let plan = self.plan_for(a, &out, a.level())?;
        let x = self.ct(a)?;
        let r = self.on_device(&plan.table, |c| f(c, x))?;
        self.wrap(out, r)
    }

    /// `f` on `acc`'s words in place, or (when a clone shares them) on a copy that
    /// replaces them.
    fn in_place(&self, acc: &mut Ciphertext, f: impl FnOnce(&Ctx<'_>, &WgpuCt) -> Result<()>) -> Result<()> {
        let plan = self.ckks_plan(acc.params())?;
        let name = self.name();
        if let Some(ct) = acc.downcast_mut::<WgpuCt>(&name)? {
            let ct: &WgpuCt = ct;
            return self.on_device(&plan.table, |c| f(c, ct));
        }
        let copy = self.on_device(&plan.table, |c| {
            let copy = eltwise::copy_ct(c, self.ct(acc)?)?;
            f(c, &copy)?;
            Ok(copy)
        })?;
        acc.replace(copy);
        Ok(())
    }

    /// The evaluation form of `X^k` over `q_0..q_L` (`k < 2N`, `X^N = -1`): built on the
    /// device once (one word per limb, then its NTT) and kept.
    fn monomial(&self, plan: &WgpuCkksPlan, k: usize) -> Result<Arc<wgpu::Buffer>> {
        let n = plan.n();
        if k >= 2 * n {
            return Err(Error::InvalidInput(format!("monomial X^{k}: the exponent must be below 2N = {}", 2 * n)));
        }
        plan.monomials.get_or_try_init(&k, || {
            let limbs = plan.q_len();
            let mut words = vec![0u64; limbs * n];
            for (i, q) in plan.params.q().iter().enumerate() {
                words[i * n + k % n] = if k < n { 1 } else { q.0 - 1 };
            }
            let buf = upload_words(&self.gpu, "ckks monomial", &words)?;
            self.on_device(&plan.table, |c| c.ntt(&buf, 0, &c.args(1, limbs), limbs, true))?;
            Ok(buf)
        })
    }

    /// The table a constant with an imaginary part needs (`X^(N/2)`), else none.
    fn constant_table(&self, plan: &WgpuCkksPlan, k: &ConstResidues) -> Result<Option<Arc<wgpu::Buffer>>> {
        if k.im.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.monomial(plan, plan.n() / 2)?))
    }

    /// Every word of a resident ciphertext of any degree, `[part][limb][N]` (tests read
    /// degree-2 results, which `download` refuses).
    #[cfg(test)]
    fn raw_words(&self, a: &Ciphertext) -> Result<Vec<u64>> {
        download_words(&self.gpu, &self.ct(a)?.buf)
    }
}

mod ops;
#[cfg(test)]
mod tests;
