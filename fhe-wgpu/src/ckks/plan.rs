//! What the device keeps per ring and per CKKS parameter set and level (the GPU
//! backend's `plan.rs`): [`PrimeTables`], one record per prime as `shaders/ckks/rns.wgsl`
//! reads it (the prime, its Montgomery constants, `1/N`, the twiddles and their Shoup
//! companions), and per level the RNS constants of rescale, ModUp's digits and the
//! rounding ModDown in one scalar buffer, all computed once on the host by
//! `fhe_api::ring` and uploaded once. Nothing here depends on a ciphertext.

use std::sync::Arc;

use fhe_api::ckks::params::Params;
use fhe_api::keyed_cache::KeyedCache;
use fhe_api::ring::math::{inv_mod, product_mod};
use fhe_api::ring::moddown::RoundingConverter;
use fhe_api::ring::modulus::Modulus;
use fhe_api::ring::ntt::NttTables;
use fhe_api::ring::rns::{BaseConverter, RnsBasis};
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::{Error, Result};

use super::launch::upload_words;
use crate::device::Gpu;

/// Words of one prime's record before its twiddles.
const HEADER: usize = 8;

/// The records of a run of primes of one ring degree, resident.
pub struct PrimeTables {
    pub n: usize,
    pub primes: Vec<u64>,
    pub buf: wgpu::Buffer,
}

/// `q^-1 mod 2^64` for odd `q` (Newton: each step doubles the correct low bits).
fn inv_2_64(q: u64) -> u64 {
    let mut inv: u64 = 1;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(inv)));
    }
    inv
}

/// One prime's record (`rns.wgsl`): `[q, q^-1 mod 2^64, 2^128 mod q, N^-1,
/// shoup(N^-1), 0, 0, 0]`, forward and inverse twiddles, then their companions.
fn record(n: usize, q: u64) -> Result<Vec<u64>> {
    let t = NttTables::new(PolynomialSize(n), RingModulus(q))?;
    let r2 = ((1u128 << 64) % q as u128) * ((1u128 << 64) % q as u128) % q as u128;
    let mut w = vec![q, inv_2_64(q), r2 as u64, t.n_inv, t.n_inv_shoup, 0, 0, 0];
    w.extend(&t.psi_rev);
    w.extend(&t.ipsi_rev);
    w.extend(&t.psi_rev_shoup);
    w.extend(&t.ipsi_rev_shoup);
    Ok(w)
}

impl PrimeTables {
    pub fn new(gpu: &Gpu, n: usize, primes: &[u64]) -> Result<PrimeTables> {
        let mut words = Vec::with_capacity(primes.len() * (HEADER + 4 * n));
        for &q in primes {
            words.extend(record(n, q)?);
        }
        let buf = upload_words(gpu, "ckks prime tables", &words)?;
        Ok(PrimeTables { n, primes: primes.to_vec(), buf })
    }
}

/// The per-level constants' offsets (words) into [`WgpuLevel::scalars`]. ModUp's four
/// runs and ModDown's six follow each other in the order below: the kernels take the
/// first offset of each group and the lengths (`shaders/ckks/convert.wgsl`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LevelOffsets {
    /// `q_l^-1 mod q_i` (`i < l`).
    pub ql_inv: usize,
    /// `P^-1 mod q_i`, `P mod q_i` (`i <= l`).
    pub p_inv: usize,
    pub p_mod: usize,
    /// ModUp: digit starts (`digits + 1`), `(Q_D/q_i)^-1 mod q_i` per limb, each
    /// digit's row offset (from `rows`), the rows `(Q_D/q_i) mod p_o`.
    pub starts: usize,
    pub q_hat_inv: usize,
    pub row_offsets: usize,
    pub rows: usize,
    /// ModDown (`RoundingConverter::constants`): `half`, `p_hat_inv`, `frac_c`,
    /// `frac_s` (K each), `p_hat_mod_q` (`(l + 1) K`), `offset` (`(l + 1)(K + 1)`).
    pub half: usize,
    pub p_hat_inv: usize,
    pub frac_c: usize,
    pub frac_s: usize,
    pub p_hat_mod_q: usize,
    pub offset: usize,
}

/// Everything per level `l`.
pub struct WgpuLevel {
    pub level: usize,
    pub digits: usize,
    /// The preset's `L + 1` and `K` (where `P`'s records start, and how many).
    pub q_len: usize,
    pub p_len: usize,
    pub at: LevelOffsets,
    pub scalars: wgpu::Buffer,
}

/// Everything per parameter set.
pub struct WgpuCkksPlan {
    pub params: Arc<Params>,
    /// `q_0..q_L` then `p_0..p_{K-1}`, one run: a limb's record is an index into it.
    pub table: PrimeTables,
    levels: KeyedCache<usize, WgpuLevel>,
    /// The evaluation form of `X^k` over `q_0..q_L`, by `k`.
    pub monomials: KeyedCache<usize, wgpu::Buffer>,
}

fn basis(primes: &[u64]) -> Result<RnsBasis> {
    RnsBasis::new(&primes.iter().map(|&q| RingModulus(q)).collect::<Vec<_>>())
}

impl WgpuCkksPlan {
    pub fn new(gpu: &Gpu, params: Arc<Params>) -> Result<WgpuCkksPlan> {
        let primes: Vec<u64> = params.q().iter().chain(params.p()).map(|q| q.0).collect();
        let table = PrimeTables::new(gpu, params.n(), &primes)?;
        Ok(WgpuCkksPlan { params, table, levels: KeyedCache::new(), monomials: KeyedCache::new() })
    }

    pub fn n(&self) -> usize {
        self.params.n()
    }

    pub fn q_len(&self) -> usize {
        self.params.q().len()
    }

    pub fn p_len(&self) -> usize {
        self.params.p().len()
    }

    pub fn level(&self, gpu: &Gpu, level: usize) -> Result<Arc<WgpuLevel>> {
        if level >= self.q_len() {
            return Err(Error::InvalidInput(format!("level {level} of a chain of {} primes", self.q_len())));
        }
        self.levels.get_or_try_init(&level, || self.build_level(gpu, level))
    }

    fn build_level(&self, gpu: &Gpu, level: usize) -> Result<WgpuLevel> {
        let primes = &self.table.primes;
        let q: Vec<u64> = primes[..=level].to_vec();
        let p: Vec<u64> = primes[self.q_len()..].to_vec();
        let mut s: Vec<u64> = Vec::new();
        let mut at = LevelOffsets::default();
        let ql = q[level];
        at.ql_inv = s.len();
        s.extend(q[..level].iter().map(|&qi| inv_mod(Modulus::new(qi).reduce(ql), qi)));
        let p_mod: Vec<u64> = q.iter().map(|&qi| product_mod(p.iter().copied(), qi)).collect();
        at.p_inv = s.len();
        s.extend(p_mod.iter().zip(&q).map(|(&pm, &qi)| inv_mod(pm, qi)));
        at.p_mod = s.len();
        s.extend(&p_mod);
        let ranges = self.params.digits(level);
        at.starts = s.len();
        s.extend(ranges.iter().map(|r| r.start as u64));
        s.push(ranges.last().map_or(0, |r| r.end) as u64);
        let (mut q_hat_inv, mut rows, mut row_offsets) = (Vec::new(), Vec::new(), Vec::new());
        for range in &ranges {
            let from: Vec<u64> = q[range.clone()].to_vec();
            let targets: Vec<u64> =
                (0..=level).filter(|i| !range.contains(i)).map(|i| q[i]).chain(p.iter().copied()).collect();
            let conv = BaseConverter::new(&basis(&from)?, &basis(&targets)?);
            q_hat_inv.extend(conv.q_hat_inv().iter().map(|&(w, _)| w));
            row_offsets.push(rows.len() as u64);
            rows.extend((0..targets.len()).flat_map(|j| conv.row(j).to_vec()));
        }
        at.q_hat_inv = s.len();
        s.extend(q_hat_inv);
        at.row_offsets = s.len();
        s.extend(row_offsets);
        at.rows = s.len();
        s.extend(rows);
        let down = RoundingConverter::new(&basis(&p)?, &basis(&q)?)?;
        let c = down.constants();
        at.half = s.len();
        s.extend(c.input.iter().map(|x| x.0));
        at.p_hat_inv = s.len();
        s.extend(c.input.iter().map(|x| x.1));
        at.frac_c = s.len();
        s.extend(c.frac.iter().map(|x| x.0));
        at.frac_s = s.len();
        s.extend(c.frac.iter().map(|x| x.1 as u64));
        at.p_hat_mod_q = s.len();
        s.extend(c.p_hat_mod_q);
        at.offset = s.len();
        s.extend(c.offset);
        let scalars = upload_words(gpu, "ckks level constants", &s)?;
        Ok(WgpuLevel { level, digits: ranges.len(), q_len: self.q_len(), p_len: p.len(), at, scalars })
    }
}
