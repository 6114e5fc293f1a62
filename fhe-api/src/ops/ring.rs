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
    /// `acc[i] = (acc[i] + a[i] b[i]) mod q` elementwise: the pointwise product of two
    /// polynomials in evaluation form, accumulated. Words must be below `q` (not checked:
    /// a pass over every word would cost as much as the product; other words give
    /// unspecified words, never a panic). The default runs the portable host code; the
    /// CPU backend has a SIMD kernel.
    fn ring_mul_add(&self, q: RingModulus, a: &[u64], b: &[u64], acc: &mut [u64]) -> Result<()> {
        let m = checked_modulus(q, a, b, acc)?;
        acc.iter_mut().zip(a.iter().zip(b)).for_each(|(c, (&a, &b))| *c = m.add(*c, m.mul(a, b)));
        Ok(())
    }
}

/// The [`Modulus`](crate::ring::modulus::Modulus) of `q` for [`RingOps::ring_mul_add`],
/// once the lengths agree and `q` is one it takes (`2 < q < 2^62`).
pub fn checked_modulus(q: RingModulus, a: &[u64], b: &[u64], acc: &[u64]) -> Result<crate::ring::modulus::Modulus> {
    if a.len() != acc.len() || b.len() != acc.len() {
        return Err(Error::InvalidInput(format!(
            "pointwise product lengths differ: {}, {} and {} words",
            a.len(),
            b.len(),
            acc.len()
        )));
    }
    if q.0 <= 2 || q.0 >= 1 << 62 {
        return Err(Error::InvalidInput(format!("modulus {} is not in (2, 2^62)", q.0)));
    }
    Ok(crate::ring::modulus::Modulus::new(q.0))
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
