//! FE functional bootstrapping (Fourier extensions, as OpenFHE's `EvalFEFuncBootstrap`,
//! ia.cr/2026/367): a bootstrap that evaluates a continuous function while it refreshes.
//!
//! | step | levels | what |
//! |---|---|---|
//! | SlotsToCoeffs | `b` (the input's) | the slots `x` into the coefficients: `(q_0 / 2) x` |
//! | ModRaise | - | coefficients `t q_0`, `t = x / 2 + I` (through a sparse secret: `encapsulation`) |
//! | CoeffsToSlots | `a` | back to the slots, real parts only: `t / (K + 1)` |
//! | exponential | `d + r` | `z = exp(2 pi i t) = exp(i pi x)`: a complex Chebyshev interpolant, squared `r` times |
//! | series | `ceil(log2(deg + 1))` | `2 Re(sum c_j z^j)`: the function's Fourier extension ([`FourierSeries`]) |
//!
//! SlotsToCoeffs runs first (OpenFHE's order for it): the output is the series' value in
//! the slots, with no transform after it, and only the real parts are raised, so one
//! exponential serves all `N/2` slots (a plain bootstrap reduces the real and the
//! imaginary halves separately). The integer `I` vanishes in `z` (`exp(2 pi i I) = 1`),
//! which is why the first prime is one bit wider than the scale: `t` keeps `x / 2` whole.
//! Inputs: real values `x` in `[-1/2, 1/2)` (a function on `[-R, R]` takes `v / 2R`), at
//! level `b` or above; the output holds `f(2 R x)` at [`FunctionalBootstrapper::output_level`].

use fhe_api::ckks::params::{Params, SecretDist};
use fhe_api::ckks::{Ciphertext, Scale, SecretKey};
use fhe_api::error::{Error, LevelNeed, Result};
use fhe_api::rng::Seed;

use super::dft;
use super::encapsulation::{self, effective_weight, make_keys, EncapsulationKeys, PreparedEncapsulation};
use super::evalmod::{k_bound, k_bound_for, ModPoly, FAILURE_LOG2};
use super::memory::{check_fits, check_fits_on, key_levels, keys_bytes, limb_bytes, pool_bytes, MemoryEstimate};
use super::prepare_factors;
use crate::ckks::circuits::fourier::FourierSeries;
use crate::ckks::circuits::linear::{LinearTransform, PreparedLinearTransform};
use crate::ckks::circuits::polynomial::chebyshev_depth;
use crate::ckks::context::Context;
use crate::ckks::evaluator::{Evaluator, KeyLevels};
use crate::ckks::keygen::KeygenOptions;

/// How to bootstrap functionally; [`FunctionalConfig::for_scale`] sets the precision of
/// the exponential from the scale.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionalConfig {
    /// Levels of CoeffsToSlots and of SlotsToCoeffs (OpenFHE's `{a, b}`; `b` is spent
    /// from the input's levels).
    pub level_budget: (usize, usize),
    /// `log2` of the failure probability per bootstrap the range `K` is set for.
    pub failure_log2: f64,
    /// Bits of the exponential's interpolant (its error times `2^r` after the squarings).
    pub exp_bits: u32,
    /// The exponential's squarings `r`: `None` takes the fewest levels
    /// ([`ModPoly::exponential`]), `Some(r)` exactly `r` (see [`FunctionalConfig::for_scale`]).
    pub double_angles: Option<u32>,
    /// With a uniform ternary secret, raise through a sparse secret of this weight (as
    /// [`super::BootstrapConfig::encapsulation`]).
    pub encapsulation: Option<usize>,
    /// Bits CoeffsToSlots' scale rises at each of its factors but the last (see
    /// [`FunctionalConfig::for_scale`]).
    pub cts_growth_bits: u32,
}

impl FunctionalConfig {
    /// The defaults for a scale of `2^scale_bits`: budget `{5, 4}`, encapsulation with
    /// weight 192, and the exponential by the scale:
    /// - up to 40 bits, where the rescales' rounding limits the precision: seven
    ///   squarings of an interpolant within `2^-(scale_bits - 9)` (at least 20 bits,
    ///   degree 11 at `K = 36`). A rounding error `e` in the basis term `T_2` of an
    ///   interpolant of `exp(i a u)` moves the result by about `a^2 e / 4`, and the
    ///   squarings double that `r` times: with `a = 2 pi (K + 1) / 2^r` the gain is
    ///   `(pi (K + 1))^2 / 2^r`, against `2^r` for the squarings' own rounding, so the
    ///   best `r` is near `log2(pi (K + 1))`, 6.9 at `K = 36`. Seven cost two levels more
    ///   than the fewest (three, degree 50) and gave 0.3-0.5 bits more than six at `N =
    ///   2^15` and `2^16` (`docs/CKKS.md`). CoeffsToSlots' scale grows a bit a factor;
    /// - above 40 bits, where the series' own precision floor is reached either way: the
    ///   fewest levels, within `2^-(scale_bits - 6)` (26 to 44 bits), and no growth.
    pub fn for_scale(scale_bits: u32) -> FunctionalConfig {
        let small = scale_bits <= 40;
        FunctionalConfig {
            level_budget: (5, 4),
            failure_log2: FAILURE_LOG2,
            exp_bits: if small {
                scale_bits.saturating_sub(9).max(20)
            } else {
                scale_bits.saturating_sub(6).clamp(26, 44)
            },
            double_angles: small.then_some(7),
            encapsulation: Some(fhe_api::ckks::params::SPARSE_MIN_HAMMING_WEIGHT),
            cts_growth_bits: u32::from(small),
        }
    }
}

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
    /// The configuration for this chain (budget and the scale's exponential).
    pub fn config(&self) -> FunctionalConfig {
        let d = FunctionalConfig::for_scale(self.scale_bits);
        FunctionalConfig { level_budget: self.level_budget, double_angles: self.double_angles.or(d.double_angles), ..d }
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

/// The transforms and the exponential of one configuration, before encoding.
struct Plan {
    cts: Vec<LinearTransform>,
    stc: Vec<LinearTransform>,
    exp: ModPoly,
    encapsulation: Option<usize>,
}

impl Plan {
    fn new(params: &Params, config: &FunctionalConfig) -> Result<Plan> {
        let n = params.slots();
        let encapsulation = effective_weight(params, config.encapsulation)?;
        let k = match encapsulation {
            Some(h) => k_bound_for(params.n(), SecretDist::SparseTernary { hamming_weight: h }, config.failure_log2),
            None => k_bound(params, config.failure_log2),
        };
        let exp = ModPoly::exponential(k, config.exp_bits, config.double_angles)?;
        // SlotsToCoeffs writes the coefficients (q_0 / 2) x, as 2x at the scale q_0 / 4
        // (a scale of q_0 / 2 is refused as a possible wrap: 2x is within [-1, 1]).
        // After ModRaise the slots read 2x + 4I; CoeffsToSlots times 1 / 8(K + 1),
        // doubled by the real-part extraction: t / (K + 1) in [-1, 1].
        let cts = dft::coeffs_to_slots(n, config.level_budget.0, 1.0 / (8.0 * (k as f64 + 1.0)))?;
        let stc = dft::slots_to_coeffs(n, config.level_budget.1, 2.0)?;
        Ok(Plan { cts, stc, exp, encapsulation })
    }

    fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self.cts.iter().chain(&self.stc).flat_map(|t| t.rotations()).collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Each Galois key's highest level: SlotsToCoeffs from `b`, CoeffsToSlots from the
    /// top, conjugation before its last rescale (and lower, in the series' real part).
    fn key_levels(&self, params: &Params) -> KeyLevels {
        let top = params.max_level();
        key_levels(params, (&self.cts, top), (&self.stc, self.stc.len()), &[], top + 1 - self.cts.len())
    }

    /// As the plain bootstrap's (`memory`'s module docs), SlotsToCoeffs at levels `b .. 1`.
    fn memory(&self, params: &Params) -> MemoryEstimate {
        let (top, special) = (params.max_level(), params.p().len());
        let limb = limb_bytes(params);
        let (whole, low) = if self.encapsulation.is_some() { (1, 1) } else { (0, 0) };
        let keys = keys_bytes(params, &self.key_levels(params), whole, low);
        let cts_levels = (0..self.cts.len()).map(|i| top - i);
        let stc_levels = (0..self.stc.len()).map(|i| self.stc.len() - i);
        let plaintexts = self
            .cts
            .iter()
            .zip(cts_levels)
            .chain(self.stc.iter().zip(stc_levels))
            .map(|(t, l)| t.diagonals().len() as u64 * (l + 1 + special) as u64 * limb)
            .sum();
        let babies = self.cts.iter().chain(&self.stc).map(|t| t.baby_count()).max().unwrap_or(0) as u64;
        let working = (2 * babies * (top + 1 + special) as u64 + 24 * (top + 1) as u64) * limb + pool_bytes(params);
        MemoryEstimate { keys, plaintexts, working }
    }

    /// Levels from the top to the output, for a series of `degree`.
    fn depth(&self, degree: usize) -> usize {
        self.cts.len() + self.exp.depth() + chebyshev_depth(degree)
    }
}

/// Everything a functional bootstrap needs, prepared once; any series up to the degree
/// it was made for.
#[derive(Debug)]
pub struct FunctionalBootstrapper {
    config: FunctionalConfig,
    cts: Vec<PreparedLinearTransform>,
    stc: Vec<PreparedLinearTransform>,
    exp: ModPoly,
    s0: Scale,
    max_degree: usize,
    encapsulation: Option<usize>,
    prepared_encapsulation: Option<PreparedEncapsulation>,
}

impl FunctionalBootstrapper {
    /// The evaluation keys it needs: relinearization, conjugation and both transforms'
    /// rotations. Make them with `Context::eval_keys`.
    pub fn key_options(params: &Params, config: &FunctionalConfig) -> Result<KeygenOptions> {
        let plan = Plan::new(params, config)?;
        check_fits("functional bootstrapping (keys, diagonals, working set)", &plan.memory(params))?;
        Ok(KeygenOptions { relin: true, rotations: plan.rotations(), conjugation: true })
    }

    /// The highest level each Galois key is switched at
    /// ([`super::Bootstrapper::key_levels`]): the SlotsToCoeffs keys serve levels `b ..
    /// 1` only.
    pub fn key_levels(params: &Params, config: &FunctionalConfig) -> Result<KeyLevels> {
        Ok(Plan::new(params, config)?.key_levels(params))
    }

    /// What a configuration holds in memory ([`super::Bootstrapper::memory_estimate`]).
    pub fn memory_estimate(params: &Params, config: &FunctionalConfig) -> Result<MemoryEstimate> {
        Ok(Plan::new(params, config)?.memory(params))
    }

    /// Levels a functional bootstrap spends from the top for a series of `degree` (`a`,
    /// the exponential's and the series'); the input's `b` come on top.
    pub fn depth(params: &Params, config: &FunctionalConfig, degree: usize) -> Result<usize> {
        Ok(Plan::new(params, config)?.depth(degree))
    }

    /// Encodes the transforms at their levels for series up to `max_degree`:
    /// `Error::Level` when the chain is too short (naming the depth it needs).
    pub fn new(ctx: &Context, ev: &Evaluator, config: &FunctionalConfig, max_degree: usize) -> Result<Self> {
        let params = ctx.params().clone();
        let plan = Plan::new(&params, config)?;
        check_fits_on(
            ctx.backend().as_ref(),
            "functional bootstrapping's diagonals and working set",
            &MemoryEstimate { keys: 0, ..plan.memory(&params) },
        )?;
        let (top, b) = (params.max_level(), plan.stc.len());
        let depth = plan.depth(max_degree.max(1));
        if top < depth + b {
            return Err(Error::Level { op: "functional bootstrap", found: top, needed: LevelNeed::AtLeast(depth + b) });
        }
        // SlotsToCoeffs from level b to 0, landing on q_0 / 4 (`Plan::new`): t = x / 2.
        let s0 = Scale::new(params.q()[0].0 as f64 / 4.0)?;
        let (stc, _) = prepare_factors(ctx, ev, &plan.stc, b, params.scale_at(b).value(), Some(s0.value()), 0)?;
        let (cts, _) = prepare_factors(ctx, ev, &plan.cts, top, s0.value(), None, config.cts_growth_bits)?;
        Ok(FunctionalBootstrapper {
            config: config.clone(),
            cts,
            stc,
            exp: plan.exp,
            s0,
            max_degree,
            encapsulation: plan.encapsulation,
            prepared_encapsulation: None,
        })
    }

    /// The encapsulation keys `config` needs for `sk` (`None` when it needs none), from
    /// the randomness of `seed`.
    pub fn encapsulation_keys_seeded(
        ctx: &Context,
        sk: &SecretKey,
        config: &FunctionalConfig,
        seed: &Seed,
    ) -> Result<Option<EncapsulationKeys>> {
        match effective_weight(ctx.params(), config.encapsulation)? {
            Some(h) => make_keys(ctx, sk, seed, h).map(Some),
            None => Ok(None),
        }
    }

    /// [`FunctionalBootstrapper::encapsulation_keys_seeded`] with OS randomness.
    pub fn encapsulation_keys(
        ctx: &Context,
        sk: &SecretKey,
        config: &FunctionalConfig,
    ) -> Result<Option<EncapsulationKeys>> {
        Self::encapsulation_keys_seeded(ctx, sk, config, &Seed::from_os()?)
    }

    /// Prepares the encapsulation keys (needed before a bootstrap when it encapsulates).
    pub fn set_encapsulation_keys(&mut self, ev: &Evaluator, keys: &EncapsulationKeys) -> Result<()> {
        let h = self.encapsulation.ok_or_else(|| {
            Error::InvalidInput("this bootstrap raises under the user's secret: it takes no encapsulation keys".into())
        })?;
        self.prepared_encapsulation = Some(PreparedEncapsulation::new(ev, keys, h)?);
        Ok(())
    }

    pub fn config(&self) -> &FunctionalConfig {
        &self.config
    }

    /// The level inputs are taken at (`b`): one at or above it is brought down.
    pub fn input_level(&self) -> usize {
        self.stc.len()
    }

    /// The output's level for a series of `degree`.
    pub fn output_level(&self, ev: &Evaluator, degree: usize) -> usize {
        ev.params().max_level() - self.cts.len() - self.exp.depth() - chebyshev_depth(degree)
    }

    /// The range `K` of the integer part after ModRaise.
    pub fn k(&self) -> u32 {
        self.exp.k
    }

    /// Degree of the exponential's interpolant and its squarings.
    pub fn exp_shape(&self) -> (usize, u32) {
        (self.exp.poly.degree(), self.exp.double_angles)
    }

    /// `f(2 R x)` for the series of `f` on `[-R, R]`: `ct` holds real `x` in `[-1/2,
    /// 1/2)` at level [`FunctionalBootstrapper::input_level`] or above (its imaginary
    /// parts are dropped). The output is at [`FunctionalBootstrapper::output_level`],
    /// at that level's canonical scale.
    pub fn bootstrap(&self, ev: &Evaluator, ct: &Ciphertext, series: &FourierSeries) -> Result<Ciphertext> {
        self.check_series(series)?;
        let z = self.exponential(ev, ct)?;
        self.apply(ev, &z, series)
    }

    /// The refresh without the series: `exp(i pi x)` in the slots (OpenFHE's
    /// `EvalFEFuncBootstrapPrecompute`), for several functions of one input with
    /// [`FunctionalBootstrapper::apply`].
    pub fn exponential(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        let b = self.stc.len();
        if ct.level() < b {
            return Err(Error::Level { op: "functional bootstrap", found: ct.level(), needed: LevelNeed::AtLeast(b) });
        }
        let mut x = ev.canonical_at(ct, b)?;
        for t in &self.stc {
            x = ev.rescale(&ev.linear_transform_unscaled(&x, t)?)?;
        }
        if !x.scale().same_as(self.s0) {
            return Err(Error::ScaleMismatch {
                op: "functional bootstrap",
                left: x.scale().value(),
                right: self.s0.value(),
            });
        }
        let at0 = ev.relabel(&x, self.s0)?;
        let mut x = encapsulation::raise(
            ev,
            &at0,
            self.encapsulation,
            self.prepared_encapsulation.as_ref(),
            "FunctionalBootstrapper",
        )?;
        let last = self.cts.len() - 1;
        for (i, t) in self.cts.iter().enumerate() {
            let y = ev.linear_transform_unscaled(&x, t)?;
            x = if i == last { y } else { ev.rescale(&y)? };
        }
        // The real parts only, coefficient j's t / (K + 1), taken before the last rescale:
        // a conjugation's key switch leaves an error that is the same in every
        // coefficient on average (ModUp's overflow), which piles up in the slots whose
        // roots lie near 1 (3.9e-3 at slot 0 at a 29-bit scale, multiplied by 2 pi (K + 1)
        // in the exponential); at the product's scale it is 2^29 times smaller.
        let u = ev.canonical_label(ev.rescale(&ev.add(&x, &ev.conjugate(&x)?)?)?)?;
        let sine = self.exp.sine.as_ref().expect("the exponential's plan has a sine");
        let mut z = ev.eval_chebyshev_complex(&u, &self.exp.poly, sine)?;
        for _ in 0..self.exp.double_angles {
            z = ev.canonical_product(&z, &z)?;
        }
        Ok(z)
    }

    /// `2 Re(sum_j c_j z^j)` on an [`FunctionalBootstrapper::exponential`]'s output.
    pub fn apply(&self, ev: &Evaluator, z: &Ciphertext, series: &FourierSeries) -> Result<Ciphertext> {
        self.check_series(series)?;
        let mut c = series.coeffs.clone();
        let c0 = std::mem::take(&mut c[0]);
        let w = ev.eval_power_series(z, &c)?;
        let re = ev.add(&w, &ev.conjugate(&w)?)?;
        ev.add_const(&re, 2.0 * c0.re)
    }

    fn check_series(&self, series: &FourierSeries) -> Result<()> {
        let d = series.degree();
        if d == 0 || d > self.max_degree {
            return Err(Error::InvalidInput(format!(
                "a Fourier series of degree {d}: this functional bootstrapper takes 1 ..= {}",
                self.max_degree
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "functional_tests.rs"]
mod tests;
