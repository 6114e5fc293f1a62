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

/// Implements [`RingOps`] for a backend whose kernels do not run NTTs over arbitrary
/// rings yet: both calls are `Error::Unsupported` naming the backend (never a silent host
/// fallback). `fhe_api::ring_ops_unsupported!(MyBackend);` for a type that also
/// implements [`crate::Backend`]; generics as `ring_ops_unsupported!(GpuBackend<D> where D: GpuDriver)`.
#[macro_export]
macro_rules! ring_ops_unsupported {
    ($ty:ty $(where $($bound:tt)+)?) => {
        impl$(<$($bound)+>)? $crate::ops::RingOps for $ty {
            fn ring_forward(
                &self,
                _: $crate::params::PolynomialSize,
                _: $crate::params::RingModulus,
                _: &mut [u64],
            ) -> $crate::Result<()> {
                Err($crate::Error::Unsupported {
                    backend: $crate::Backend::name(self),
                    scheme: "NTT over an arbitrary ring (CKKS)",
                })
            }
            fn ring_inverse(
                &self,
                n: $crate::params::PolynomialSize,
                q: $crate::params::RingModulus,
                data: &mut [u64],
            ) -> $crate::Result<()> {
                self.ring_forward(n, q, data)
            }
        }
    };
}
