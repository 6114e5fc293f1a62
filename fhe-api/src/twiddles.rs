//! The negacyclic NTT's tables for one parameter set, as [`crate::ops::NttOps`] defines
//! the transform: `psi^bitrev(k)` and `psi^-bitrev(k)` with their Shoup companions, and
//! `1/N`. Every backend builds its NTT from these (the CPU variants read them; GPU
//! backends upload them), so all agree on the root and the order.

use crate::math::{bit_reverse, inv_mod, negacyclic_root, pow_mod};
use crate::modulus::{shoup, Modulus};
use crate::params::Params;

/// Tables shared by every variant: `psi^bitrev(k)` and `psi^-bitrev(k)` with their
/// Shoup companions, and `1/N`.
#[derive(Debug)]
pub struct NttTables {
    pub n: usize,
    pub log_n: u32,
    pub modulus: Modulus,
    pub psi: u64,
    pub psi_rev: Vec<u64>,
    pub psi_rev_shoup: Vec<u64>,
    pub ipsi_rev: Vec<u64>,
    pub ipsi_rev_shoup: Vec<u64>,
    pub n_inv: u64,
    pub n_inv_shoup: u64,
}

impl NttTables {
    pub fn new(params: &Params) -> NttTables {
        let q = params.q_ring();
        let n = params.big_n();
        let log_n = n.trailing_zeros();
        let psi = negacyclic_root(q, n).expect("parameter sets are validated: Q prime, Q = 1 mod 2N");
        let ipsi = inv_mod(psi, q);
        let psi_rev: Vec<u64> = (0..n).map(|k| pow_mod(psi, bit_reverse(k, log_n) as u64, q)).collect();
        let ipsi_rev: Vec<u64> = (0..n).map(|k| pow_mod(ipsi, bit_reverse(k, log_n) as u64, q)).collect();
        let n_inv = inv_mod(n as u64, q);
        NttTables {
            n,
            log_n,
            modulus: Modulus::new(q),
            psi,
            psi_rev_shoup: psi_rev.iter().map(|&w| shoup(w, q)).collect(),
            psi_rev,
            ipsi_rev_shoup: ipsi_rev.iter().map(|&w| shoup(w, q)).collect(),
            ipsi_rev,
            n_inv,
            n_inv_shoup: shoup(n_inv, q),
        }
    }
}
