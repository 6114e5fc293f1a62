//! What the CPU builds once per CKKS parameter set and level: the NTT engine and fast
//! modulus of every prime of QP, and per level the base converters of hybrid key
//! switching (ModUp per digit, ModDown) and the rescale constants.

use std::ops::{Deref, DerefMut, Range};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use fhe_api::ckks::params::Params;
use fhe_api::keyed_cache::KeyedCache;
use fhe_api::ops::WORK_POOL_POLYS;
use fhe_api::ring::math::{inv_mod, product_mod};
use fhe_api::ring::moddown::RoundingConverter;
use fhe_api::ring::modulus::{shoup, Modulus};
use fhe_api::ring::rns::{BaseConverter, RnsBasis};
use fhe_api::{ring::RingModulus, Result};

use crate::ntt::NttEngine;

/// One prime of QP with its transform.
pub struct Prime {
    pub m: Modulus,
    pub ntt: Arc<Box<dyn NttEngine>>,
}

/// Everything per parameter set.
pub struct CkksPlan {
    pub params: Arc<Params>,
    /// `q_0 .. q_L, p_0 .. p_{K-1}`.
    pub primes: Vec<Prime>,
    levels: KeyedCache<usize, LevelPlan>,
    /// The transform of `X^k` over `q_0 .. q_L`, by `k` (`X^(N/2)`: multiplication by `i`).
    monomials: KeyedCache<usize, Vec<u64>>,
    /// Recycled work buffers (ModUp digits, key-switching sums): at N = 2^16 each is tens
    /// of megabytes, and fresh ones cost a page fault per 4 KiB.
    scratch: Mutex<Vec<Vec<u64>>>,
    /// Contexts and evaluators open on this plan ([`CkksPlan::open`]).
    users: AtomicUsize,
    /// Whether one ever was: from then on the pool and monomials live only while one is.
    opened: AtomicBool,
}

/// Buffers [`CkksPlan::take`] keeps for reuse: a bootstrap's baby steps (two extended
/// halves each) and temporaries, so big buffers are not handed back to the system and
/// faulted in again zeroed. The pool holds only what was once in use at the same time,
/// bounded in bytes by [`SCRATCH_KEEP_POLYS`] (growing kept buffers without that bound
/// once inflated the pool to 3 GiB at `N = 2^16`).
const SCRATCH_KEEP: usize = 96;

/// At most [`WORK_POOL_POLYS`] extended polynomials at the top level in the pool,
/// whatever the count.
const SCRATCH_KEEP_POLYS: usize = WORK_POOL_POLYS;

/// A work buffer from [`CkksPlan::take`]; goes back to the plan on drop.
pub struct Scratch<'a> {
    plan: &'a CkksPlan,
    words: Vec<u64>,
}

impl Deref for Scratch<'_> {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.words
    }
}

impl DerefMut for Scratch<'_> {
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        self.plan.recycle(std::mem::take(&mut self.words));
    }
}

/// One digit's ModUp at a level: its primes (indices into `q`) and the converter to the
/// others (`q_0..q_l` without the digit, then `P`).
pub struct DigitPlan {
    pub range: Range<usize>,
    pub conv: BaseConverter,
    /// QP indices of the converter's output limbs, in order.
    pub targets: Vec<usize>,
}

/// Everything per level `l`.
pub struct LevelPlan {
    pub level: usize,
    pub digits: Vec<DigitPlan>,
    /// `P -> q_0 .. q_l`: the centered remainder modulo `P` (ModDown rounds).
    pub down: RoundingConverter,
    /// `P^-1 mod q_i` and Shoup companions.
    pub p_inv: Vec<(u64, u64)>,
    /// `P mod q_i` and Shoup companions (a lazy ModDown's lift).
    pub p_mod: Vec<(u64, u64)>,
    /// `q_l^-1 mod q_i` for `i < l` (rescale), with Shoup companions.
    pub ql_inv: Vec<(u64, u64)>,
}

impl CkksPlan {
    pub fn new(params: Arc<Params>, engine: &dyn Fn(u64) -> Result<Arc<Box<dyn NttEngine>>>) -> Result<Self> {
        let primes = params
            .q()
            .iter()
            .chain(params.p().iter())
            .map(|q| Ok(Prime { m: Modulus::new(q.0), ntt: engine(q.0)? }))
            .collect::<Result<Vec<_>>>()?;
        Ok(CkksPlan {
            params,
            primes,
            levels: KeyedCache::new(),
            monomials: KeyedCache::new(),
            scratch: Mutex::new(Vec::new()),
            users: AtomicUsize::new(0),
            opened: AtomicBool::new(false),
        })
    }

    /// A buffer of `len` words whose contents are unspecified (stale words of an earlier
    /// use): every caller overwrites all of it before reading.
    pub fn take(&self, len: usize) -> Scratch<'_> {
        Scratch { plan: self, words: self.take_vec(len) }
    }

    /// [`CkksPlan::take`] detached from the plan: an owned buffer of `len` words with
    /// unspecified contents, for a result (a ciphertext's halves go back through
    /// [`CkksPlan::recycle`] when its handle drops).
    pub fn take_vec(&self, len: usize) -> Vec<u64> {
        let reused = {
            let mut free = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            // The smallest buffer that holds `len` words; else the largest that holds at
            // least half, grown: a big buffer grows by remapping its pages, so only the
            // new words fault in (the request sizes shift by a limb or two between
            // levels, and a fresh buffer at each shift faulted in gigabytes a bootstrap).
            let fit = (0..free.len()).filter(|&i| free[i].capacity() >= len).min_by_key(|&i| free[i].capacity());
            let fit = fit.or_else(|| {
                (0..free.len()).filter(|&i| 2 * free[i].capacity() >= len).max_by_key(|&i| free[i].capacity())
            });
            fit.map(|i| free.swap_remove(i))
        };
        let mut words = reused.unwrap_or_default();
        if words.len() >= len {
            words.truncate(len);
        } else {
            words.reserve_exact(len - words.len());
            words.resize(len, 0);
        }
        words
    }

    /// A context or evaluator uses this plan (`CkksOps::context_opened`).
    pub fn open(&self) {
        self.opened.store(true, Ordering::Release);
        self.users.fetch_add(1, Ordering::AcqRel);
    }

    /// The match of one [`CkksPlan::open`]: after the last, the kept work buffers and
    /// monomials are freed (both are rebuilt on demand), so a dropped bootstrap's
    /// gigabyte is not held for the backend's life.
    pub fn close(&self) {
        let was = self.users.fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| u.checked_sub(1));
        if was == Ok(1) {
            let freed = std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|e| e.into_inner()));
            drop(freed);
            self.monomials.clear();
        }
    }

    /// Bytes of the work buffers kept for reuse now.
    pub fn kept_bytes(&self) -> usize {
        let free = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        8 * free.iter().map(Vec::capacity).sum::<usize>()
    }

    /// Whether buffers handed back are kept: always before any context opened (the
    /// backend used directly), afterwards only while one is open.
    fn keeps(&self) -> bool {
        !self.opened.load(Ordering::Acquire) || self.users.load(Ordering::Acquire) > 0
    }

    /// Keeps `words` for a later [`CkksPlan::take`] (up to [`SCRATCH_KEEP`] buffers; the
    /// rest are freed). They hold ciphertext and key-switching words, never a secret.
    pub fn recycle(&self, words: Vec<u64>) {
        if !self.keeps() {
            return;
        }
        let cap = SCRATCH_KEEP_POLYS * (self.q_len() + self.params.p().len()) * self.params.n();
        let mut free = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let kept: usize = free.iter().map(Vec::capacity).sum();
        if free.len() < SCRATCH_KEEP && words.capacity() > 0 && kept + words.capacity() <= cap {
            free.push(words);
        }
    }

    /// The evaluation form of `X^k` over `q_0 .. q_L` (`k < 2N`, `X^N = -1`), built once.
    pub fn monomial(&self, k: usize) -> Result<Arc<Vec<u64>>> {
        let n = self.params.n();
        Ok(self.monomials.get_or_init(&k, || {
            let mut t = vec![0u64; self.q_len() * n];
            t.chunks_mut(n).enumerate().for_each(|(i, limb)| {
                let q = self.primes[i].m.q;
                limb[k % n] = if k < n { 1 } else { q - 1 };
                self.primes[i].ntt.forward(limb);
            });
            t
        }))
    }

    /// Number of primes of `q` (`L + 1`).
    pub fn q_len(&self) -> usize {
        self.params.q().len()
    }

    /// QP index of special prime `k`.
    pub fn p_index(&self, k: usize) -> usize {
        self.q_len() + k
    }

    pub fn level(&self, level: usize) -> Result<Arc<LevelPlan>> {
        self.levels.get_or_try_init(&level, || self.build_level(level))
    }

    fn basis(&self, idx: &[usize]) -> Result<RnsBasis> {
        let all: Vec<RingModulus> = self.params.q().iter().chain(self.params.p().iter()).copied().collect();
        RnsBasis::new(&idx.iter().map(|&i| all[i]).collect::<Vec<_>>())
    }

    fn build_level(&self, level: usize) -> Result<LevelPlan> {
        let p_idx: Vec<usize> = (0..self.params.p().len()).map(|k| self.p_index(k)).collect();
        let q_idx: Vec<usize> = (0..=level).collect();
        let mut digits = Vec::new();
        for range in self.params.digits(level) {
            let from: Vec<usize> = range.clone().collect();
            let targets: Vec<usize> =
                q_idx.iter().filter(|i| !range.contains(i)).chain(p_idx.iter()).copied().collect();
            let conv = BaseConverter::new(&self.basis(&from)?, &self.basis(&targets)?);
            digits.push(DigitPlan { range, conv, targets });
        }
        let down = RoundingConverter::new(&self.basis(&p_idx)?, &self.basis(&q_idx)?)?;
        let p_mod: Vec<(u64, u64)> = (0..=level)
            .map(|i| {
                let q = self.primes[i].m.q;
                let p = product_mod(self.params.p().iter().map(|p| p.0), q);
                (p, shoup(p, q))
            })
            .collect();
        let p_inv = p_mod
            .iter()
            .zip(&self.primes)
            .map(|(&(p, _), pr)| {
                let inv = inv_mod(p, pr.m.q);
                (inv, shoup(inv, pr.m.q))
            })
            .collect();
        let ql = self.primes[level].m.q;
        let ql_inv = (0..level)
            .map(|i| {
                let m = &self.primes[i].m;
                let inv = inv_mod(m.reduce(ql), m.q);
                (inv, shoup(inv, m.q))
            })
            .collect();
        Ok(LevelPlan { level, digits, down, p_inv, p_mod, ql_inv })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ckks::params::Preset;

    fn plan() -> CkksPlan {
        let backend = crate::CpuBackend::new(None).unwrap();
        let params = Arc::new(Preset::Slots4096Scale40Depth2.params().clone());
        let ring = params.ring_degree();
        CkksPlan::new(params, &|q| backend.engine(ring, fhe_api::ring::RingModulus(q))).unwrap()
    }

    fn kept(plan: &CkksPlan) -> (usize, usize) {
        let free = plan.scratch.lock().unwrap();
        (free.len(), free.iter().map(Vec::capacity).sum())
    }

    #[test]
    fn the_pool_reuses_grows_and_stays_bounded() {
        let plan = plan();
        let n = plan.params.n();
        // A smaller request takes the kept buffer; a larger one grows a kept buffer of at
        // least half its size instead of making a new one; a tiny one is not grown.
        plan.recycle(plan.take_vec(4 * n));
        assert_eq!(kept(&plan).0, 1);
        let small = plan.take_vec(3 * n);
        assert_eq!((small.len(), kept(&plan).0), (3 * n, 0));
        plan.recycle(small);
        let grown = plan.take_vec(5 * n);
        assert_eq!((grown.len(), kept(&plan).0), (5 * n, 0));
        plan.recycle(plan.take_vec(n));
        let big = plan.take_vec(4 * n);
        assert_eq!(kept(&plan).0, 1, "a buffer below half the request stays kept");
        plan.recycle(big);
        plan.recycle(grown);
        // Never more than SCRATCH_KEEP buffers or SCRATCH_KEEP_POLYS extended polynomials.
        let cap = SCRATCH_KEEP_POLYS * (plan.q_len() + plan.params.p().len()) * n;
        let many: Vec<Vec<u64>> = (0..3 * SCRATCH_KEEP).map(|i| vec![0; (1 + i % 5) * n]).collect();
        many.into_iter().for_each(|v| plan.recycle(v));
        let (count, words) = kept(&plan);
        assert!(count <= SCRATCH_KEEP && words <= cap, "{count} buffers, {words} words, cap {cap}");
    }

    #[test]
    fn the_pool_and_monomials_live_while_a_context_is_open() {
        let plan = plan();
        let n = plan.params.n();
        plan.open();
        plan.open();
        plan.recycle(vec![0; 2 * n]);
        plan.monomial(n / 2).unwrap();
        plan.close();
        assert_eq!((kept(&plan).0, plan.monomials.len()), (1, 1), "one context is still open");
        plan.close();
        assert_eq!((kept(&plan).0, plan.monomials.len()), (0, 0), "the last close frees both");
        // A ciphertext dropped after its context does not refill the pool; an unmatched
        // close is ignored; a new context keeps buffers again.
        plan.recycle(vec![0; 2 * n]);
        plan.close();
        assert_eq!(kept(&plan).0, 0);
        plan.open();
        plan.recycle(vec![0; 2 * n]);
        assert_eq!(kept(&plan).0, 1);
    }
}
