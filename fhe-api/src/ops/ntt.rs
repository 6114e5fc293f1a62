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

use crate::error::{Error, Result};
use crate::params::ParamSet;

pub trait NttOps {
    fn ntt_forward(&self, params: ParamSet, data: &mut [u64]) -> Result<()>;
    fn ntt_inverse(&self, params: ParamSet, data: &mut [u64]) -> Result<()>;
    /// The NTT variant in use (`reference`, `harvey`, ...).
    fn ntt_variant(&self) -> &str;
}

/// The input contract of both transforms, checked by every backend before it touches
/// `data`: a whole number of polynomials, every coefficient below `Q`.
pub fn check_ntt_input(params: ParamSet, data: &[u64]) -> Result<()> {
    let p = params.params();
    if !data.len().is_multiple_of(p.big_n()) {
        return Err(Error::InvalidInput(format!(
            "NTT batch length {} is not a multiple of N = {}",
            data.len(),
            p.big_n()
        )));
    }
    // A branch-free pass (it vectorizes); the position only on the error path.
    let q = p.q_ring();
    if data.iter().fold(false, |bad, &x| bad | (x >= q)) {
        let i = data.iter().position(|&x| x >= q).expect("an input at or above Q");
        return Err(Error::InvalidInput(format!("NTT input {i} is not below Q = {q}")));
    }
    Ok(())
}
