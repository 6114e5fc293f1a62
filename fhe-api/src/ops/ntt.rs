//! The negacyclic NTT over a parameter set's ring modulus.
//!
//! Conventions, shared by every backend and by the key format:
//! - input of `forward`: coefficients in natural order, each in `[0, Q)`;
//! - output of `forward`: slot `k` holds `A(psi^(2 bitrev(k) + 1))`, fully reduced to
//!   `[0, Q)`, with `psi` from [`crate::math::negacyclic_root`];
//! - `inverse` takes that order back to natural order and includes the `1/N` scaling,
//!   so `inverse(forward(a)) == a`.
//!
//! `data` holds a batch: its length is a multiple of `N`, one polynomial after another.

use crate::error::Result;
use crate::params::ParamSet;

pub trait NttOps {
    fn ntt_forward(&self, params: ParamSet, data: &mut [u64]) -> Result<()>;
    fn ntt_inverse(&self, params: ParamSet, data: &mut [u64]) -> Result<()>;
    /// The NTT variant in use (`reference`, `harvey`, ...).
    fn ntt_variant(&self) -> &str;
}
