//! What the device keeps per CKKS parameter set and level (the CPU's `plan.rs`): the
//! table entries of every prime of QP (`q_0..q_L` and `P` as two runs, and per level
//! `q_0..q_l, P` for extended polynomials), and per level the constants of ModUp's
//! digits, the rounding ModDown and rescale, all computed once on the host by
//! `fhe_api::ring` and uploaded once. Nothing here depends on a ciphertext.

use std::sync::Arc;

use fhe_api::ckks::params::Params;
use fhe_api::keyed_cache::KeyedCache;
use fhe_api::ring::math::{inv_mod, product_mod};
use fhe_api::ring::moddown::RoundingConverter;
use fhe_api::ring::modulus::Modulus;
use fhe_api::ring::rns::{BaseConverter, RnsBasis};
use fhe_api::ring::RingModulus;
use fhe_api::Result;

use crate::args::{DevPtr, GpuNttTable};
use crate::backend::ring::RingTables;
use crate::driver::{Buffer, GpuDriver};

/// Every digit's ModUp constants at a level, in one run each (`CkksModUpArgs`).
pub struct DigitConsts<D: GpuDriver> {
    /// The number of digits.
    pub count: usize,
    /// `(Q_D / q_i)^-1 mod q_i` per limb `i` of `q_0..q_l`, `D` its digit.
    pub q_hat_inv: Buffer<D, u64>,
    /// `(Q_D / q_i) mod p_o`, per digit `len` words per target, from `row_offsets`.
    pub rows: Buffer<D, u64>,
    pub row_offsets: Buffer<D, u64>,
    /// Digit `j` covers limbs `starts[j] .. starts[j + 1]`.
    pub starts: Buffer<D, u32>,
}

/// The rounding ModDown's constants (`RoundingConverter::constants`).
pub struct DownConsts<D: GpuDriver> {
    pub half: Buffer<D, u64>,
    pub p_hat_inv: Buffer<D, u64>,
    pub frac_c: Buffer<D, u64>,
    pub frac_s: Buffer<D, u32>,
    pub p_hat_mod_q: Buffer<D, u64>,
    pub offset: Buffer<D, u64>,
}

/// Everything per level `l`.
pub struct GpuLevel<D: GpuDriver> {
    pub level: usize,
    /// `q_0..q_l, P`.
    pub ext_table: Buffer<D, GpuNttTable>,
    pub digits: DigitConsts<D>,
    pub down: DownConsts<D>,
    /// `P^-1 mod q_i`, `P mod q_i` (`i <= l`), `q_l^-1 mod q_i` (`i < l`).
    pub p_inv: Buffer<D, u64>,
    pub p_mod: Buffer<D, u64>,
    pub ql_inv: Buffer<D, u64>,
}

/// Everything per parameter set.
pub struct GpuCkksPlan<D: GpuDriver> {
    pub params: Arc<Params>,
    /// Keeps every prime's twiddles alive while the entries below point at them.
    _rings: Vec<Arc<RingTables<D>>>,
    entries: Vec<GpuNttTable>,
    /// `q_0..q_L` then `p_0..p_{K-1}`, one run: a limb's entry is an offset into it.
    qp_table: Buffer<D, GpuNttTable>,
    levels: KeyedCache<usize, GpuLevel<D>>,
    /// The evaluation form of `X^k` over `q_0..q_L`, by `k`.
    pub(super) monomials: KeyedCache<usize, Buffer<D, u64>>,
}

fn basis(primes: &[u64]) -> Result<RnsBasis> {
    RnsBasis::new(&primes.iter().map(|&q| RingModulus(q)).collect::<Vec<_>>())
}

impl<D: GpuDriver> GpuCkksPlan<D> {
    pub fn new(drv: &Arc<D>, params: Arc<Params>, rings: Vec<Arc<RingTables<D>>>) -> Result<Self> {
        let entries: Vec<GpuNttTable> = rings.iter().map(|r| r.entry).collect();
        let qp_table = Buffer::from_slice(drv, &entries)?;
        Ok(GpuCkksPlan {
            params,
            _rings: rings,
            entries,
            qp_table,
            levels: KeyedCache::new(),
            monomials: KeyedCache::new(),
        })
    }

    pub fn n(&self) -> usize {
        self.params.n()
    }

    pub fn log_n(&self) -> u32 {
        self.params.n().trailing_zeros()
    }

    pub fn q_len(&self) -> usize {
        self.params.q().len()
    }

    pub fn p_len(&self) -> usize {
        self.params.p().len()
    }

    /// The entries of `q_i, q_{i+1}, ...` (QP index `i`), as a device pointer.
    pub fn table_at(&self, i: usize) -> DevPtr<GpuNttTable> {
        DevPtr::new(self.qp_table.ptr() + (i * std::mem::size_of::<GpuNttTable>()) as u64)
    }

    /// The entries of `p_0..p_{K-1}`.
    pub fn p_table(&self) -> DevPtr<GpuNttTable> {
        self.table_at(self.q_len())
    }

    fn prime(&self, i: usize) -> u64 {
        self.entries[i].modulus.q
    }

    pub fn level(&self, drv: &Arc<D>, level: usize) -> Result<Arc<GpuLevel<D>>> {
        self.levels.get_or_try_init(&level, || self.build_level(drv, level))
    }

    fn build_level(&self, drv: &Arc<D>, level: usize) -> Result<GpuLevel<D>> {
        let (q_len, k) = (self.q_len(), self.p_len());
        let q: Vec<u64> = (0..=level).map(|i| self.prime(i)).collect();
        let p: Vec<u64> = (q_len..q_len + k).map(|i| self.prime(i)).collect();
        let ext: Vec<GpuNttTable> = (0..=level).chain(q_len..q_len + k).map(|i| self.entries[i]).collect();
        let ranges = self.params.digits(level);
        let (mut q_hat_inv, mut rows, mut row_offsets) = (Vec::new(), Vec::new(), Vec::new());
        let mut starts: Vec<u32> = ranges.iter().map(|r| r.start as u32).collect();
        starts.push(ranges.last().map_or(0, |r| r.end) as u32);
        for range in &ranges {
            let from: Vec<u64> = q[range.clone()].to_vec();
            let targets: Vec<u64> =
                (0..=level).filter(|i| !range.contains(i)).map(|i| q[i]).chain(p.iter().copied()).collect();
            let conv = BaseConverter::new(&basis(&from)?, &basis(&targets)?);
            q_hat_inv.extend(conv.q_hat_inv().iter().map(|&(w, _)| w));
            row_offsets.push(rows.len() as u64);
            rows.extend((0..targets.len()).flat_map(|j| conv.row(j).to_vec()));
        }
        let digits = DigitConsts {
            count: ranges.len(),
            q_hat_inv: Buffer::from_slice(drv, &q_hat_inv)?,
            rows: Buffer::from_slice(drv, &rows)?,
            row_offsets: Buffer::from_slice(drv, &row_offsets)?,
            starts: Buffer::from_slice(drv, &starts)?,
        };
        let down = RoundingConverter::new(&basis(&p)?, &basis(&q)?)?;
        let c = down.constants();
        let down = DownConsts {
            half: Buffer::from_slice(drv, &c.input.iter().map(|x| x.0).collect::<Vec<_>>())?,
            p_hat_inv: Buffer::from_slice(drv, &c.input.iter().map(|x| x.1).collect::<Vec<_>>())?,
            frac_c: Buffer::from_slice(drv, &c.frac.iter().map(|x| x.0).collect::<Vec<_>>())?,
            frac_s: Buffer::from_slice(drv, &c.frac.iter().map(|x| x.1).collect::<Vec<_>>())?,
            p_hat_mod_q: Buffer::from_slice(drv, c.p_hat_mod_q)?,
            offset: Buffer::from_slice(drv, c.offset)?,
        };
        let p_mod: Vec<u64> = q.iter().map(|&qi| product_mod(p.iter().copied(), qi)).collect();
        let p_inv: Vec<u64> = p_mod.iter().zip(&q).map(|(&pm, &qi)| inv_mod(pm, qi)).collect();
        let ql = q[level];
        let ql_inv: Vec<u64> = q[..level].iter().map(|&qi| inv_mod(Modulus::new(qi).reduce(ql), qi)).collect();
        Ok(GpuLevel {
            level,
            ext_table: Buffer::from_slice(drv, &ext)?,
            digits,
            down,
            p_inv: Buffer::from_slice(drv, &p_inv)?,
            p_mod: Buffer::from_slice(drv, &p_mod)?,
            ql_inv: Buffer::from_slice(drv, &ql_inv)?,
        })
    }
}
