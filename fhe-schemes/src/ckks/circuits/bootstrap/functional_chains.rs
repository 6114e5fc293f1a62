//! Seed 2's configurations for functional bootstrapping ([`FunctionalChain`],
//! [`seed_two_chains`]): each chain built as seed 2 states it, within the sparse
//! secret's bound.

use fhe_api::ckks::params::{Params, SecretDist};
use fhe_api::error::{Error, Result};

use super::evalmod::{k_bound_for, ModPoly};
use super::functional::FunctionalConfig;
use crate::ckks::circuits::polynomial::chebyshev_depth;

/// A chain for functional bootstrapping, as seed 2 states its configurations: the ring,
/// the scale (the first prime one bit wider), the levels left to compute with after a
/// bootstrap, the level budget; the digit count smallest under the bound unless given.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionalChain {
    pub name: String,
    pub log_n: u32,
    pub scale_bits: u32,
    /// Levels a user computes with between two functional bootstraps (the output is `b`
    /// above them: the next bootstrap's SlotsToCoeffs).
    pub levels_after: usize,
    pub level_budget: (usize, usize),
    /// Key-switching digits; `None`: the fewest that keep log QP within the bound.
    pub dnum: Option<usize>,
    /// The exponential's squarings; `None`: the scale's ([`FunctionalConfig::for_scale`]).
    pub double_angles: Option<u32>,
}

impl FunctionalChain {
    /// The configuration for this chain (budget and the scale's exponential), staying
    /// under the sparse secret to the exponential's output (every chain is within the
    /// sparse secret's bound: [`FunctionalChain::params`]).
    pub fn config(&self) -> FunctionalConfig {
        let d = FunctionalConfig::for_scale(self.scale_bits);
        FunctionalConfig {
            level_budget: self.level_budget,
            double_angles: self.double_angles.or(d.double_angles),
            sparse_keys: true,
            ..d
        }
    }

    /// The parameters for series up to `max_degree`: uniform ternary user secret (raised
    /// through a sparse one), `depth = levels_after + b + a + exponential + series`, and
    /// log QP within the sparse-secret bound of `N` (767 / 1553 / 3104 bits at `N = 2^15
    /// / 2^16 / 2^17`, seed 2's limits), refused with `Error::SecurityBound` naming both
    /// numbers otherwise.
    pub fn params(&self, max_degree: usize) -> Result<Params> {
        let config = self.config();
        let sparse = SecretDist::SparseTernary { hamming_weight: fhe_api::ckks::params::SPARSE_MIN_HAMMING_WEIGHT };
        let bound = fhe_api::ckks::params::security_bound_bits(self.log_n, sparse).ok_or_else(|| {
            Error::InvalidInput(format!("no sparse-secret bound at N = 2^{}: use 2^15 .. 2^17", self.log_n))
        })?;
        let k = k_bound_for(1 << self.log_n, sparse, config.failure_log2);
        let exp = ModPoly::exponential(k, config.exp_bits, config.double_angles)?;
        let (a, b) = self.level_budget;
        let depth = self.levels_after + b + a + exp.depth() + chebyshev_depth(max_degree.max(1));
        let literal = |dnum| fhe_api::ckks::ParamsLiteral {
            name: self.name.clone(),
            log_n: self.log_n,
            scale_bits: self.scale_bits,
            depth,
            first_bits: self.scale_bits + 1,
            special_bits: 60,
            dnum,
            secret: SecretDist::Ternary,
        };
        let fits = |p: &Params| p.log_qp() <= bound;
        let params = match self.dnum {
            Some(d) => Params::new(&literal(d))?,
            None => {
                let mut found = None;
                for d in 1..=depth + 1 {
                    if let Ok(p) = Params::new(&literal(d)) {
                        if fits(&p) {
                            found = Some(p);
                            break;
                        }
                    }
                }
                match found {
                    Some(p) => p,
                    // The most digits give the smallest P: name its log QP (built
                    // unchecked only to count it).
                    None => {
                        let log_qp = Params::insecure_for_tests(&literal(depth + 1))?.log_qp();
                        return Err(Error::SecurityBound { log_qp, bound, n: 1 << self.log_n, secret: sparse.name() });
                    }
                }
            }
        };
        if !fits(&params) {
            return Err(Error::SecurityBound { log_qp: params.log_qp(), bound, n: params.n(), secret: sparse.name() });
        }
        Ok(params)
    }
}

/// Seed 2's five configurations (OpenFHE PR #1372): sparse secret encapsulation, full
/// packing, the first prime one bit wider than the scale. The one-level rows' budgets are
/// not given there: `{3, 2}`, as OpenFHE's FE example. At `N = 2^15` the exponential
/// squares six times, not the scale's seven: the seventh's level (a prime more in every
/// key and diagonal) took the peak from 4.43 to 4.83 GiB, past half of OpenFHE's 9.16,
/// for 0.3 bits where six already reach its precision (`docs/CKKS.md`).
pub fn seed_two_chains() -> Vec<FunctionalChain> {
    let chain = |name: &str, log_n, scale_bits, levels_after, level_budget| FunctionalChain {
        name: name.to_string(),
        log_n,
        scale_bits,
        levels_after,
        level_budget,
        dnum: None,
        double_angles: None,
    };
    vec![
        FunctionalChain { double_angles: Some(6), ..chain("fe-n15-scale29-after1", 15, 29, 1, (3, 2)) },
        chain("fe-n16-scale29-after6", 16, 29, 6, (5, 4)),
        chain("fe-n16-scale59-after1", 16, 59, 1, (3, 2)),
        chain("fe-n17-scale59-after6", 17, 59, 6, (5, 4)),
        chain("fe-n17-scale59-after10", 17, 59, 10, (5, 4)),
    ]
}
