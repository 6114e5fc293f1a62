//! NTTs over any ring `Z_q[X]/(X^N + 1)` (any NTT prime `q < 2^62`, `N` up to `2^17`):
//! what CKKS runs on every prime of its chain. Same conventions as [`crate::ops::NttOps`]
//! (natural-order input below `q`, output slot `k` = `A(psi^(2 bitrev(k) + 1))` fully
//! reduced, `1/N` in the inverse), with the ring named by its newtypes instead of a
//! bit-scheme parameter set.

use crate::error::{Error, Result};
use crate::params::{PolynomialSize, RingModulus};

pub trait RingOps: Send + Sync {
    /// Forward NTT of a batch (a whole number of polynomials of `n` words, each `< q`).
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()>;
    /// The exact inverse of [`RingOps::ring_forward`], `1/N` included.
    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()>;
}

/// The input contract of both transforms: whole polynomials, every word below `q`.
pub fn check_ring_input(n: PolynomialSize, q: RingModulus, data: &[u64]) -> Result<()> {
    if n.0 == 0 || !data.len().is_multiple_of(n.0) {
        return Err(Error::InvalidInput(format!("NTT batch length {} is not a multiple of N = {}", data.len(), n.0)));
    }
    if let Some(i) = data.iter().position(|&x| x >= q.0) {
        return Err(Error::InvalidInput(format!("NTT input {i} is not below q = {}", q.0)));
    }
    Ok(())
}
