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
use super::encapsulation::{
    self, check_sparse_bound, effective_weight, make_keys, EncapsulationKeys, PreparedEncapsulation, SparseSpan,
};
use super::evalmod::{k_bound, k_bound_for, ModPoly, FAILURE_LOG2};
use super::memory::{
    check_fits, check_fits_on, diagonal_bytes, half_key_bytes, key_levels, keys_bytes, limb_bytes, pool_bytes,
    settle_form, MemoryEstimate,
};
use super::{prepare_factors, Factors};
use crate::ckks::circuits::fourier::FourierSeries;
use crate::ckks::circuits::linear::{DiagonalForm, LinearTransform, PreparedLinearTransform};
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
    /// With encapsulation, stay under the sparse secret from ModRaise to the exponential's
    /// output, with evaluation keys of its own there, and switch back to the user's
    /// secret then (instead of at the top): CoeffsToSlots' rescales and key switches
    /// round under a secret of weight 192 instead of about `2N/3`, which is what limits
    /// the precision at 29-bit scales (`docs/CKKS.md`). Those keys sample the sparse
    /// secret over the whole chain, so the chain's log QP must be within the sparse
    /// secret's bound (`Error::SecurityBound` otherwise). Off in
    /// [`FunctionalConfig::for_scale`]; on for seed 2's chains ([`super::FunctionalChain::config`]),
    /// which are all within it.
    pub sparse_keys: bool,
    /// How the transforms' diagonals are kept ([`super::BootstrapConfig::diagonals`]).
    pub diagonals: Option<DiagonalForm>,
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
            sparse_keys: false,
            diagonals: None,
        }
    }
}

/// Every transform's rotations, once each.
fn rotations_of<'a>(ts: impl Iterator<Item = &'a LinearTransform>) -> Vec<i64> {
    let mut r: Vec<i64> = ts.flat_map(|t| t.rotations()).collect();
    r.sort_unstable();
    r.dedup();
    r
}

/// The transforms and the exponential of one configuration, before encoding; `sparse`:
/// it stays under the sparse secret to the exponential's output.
struct Plan {
    cts: Vec<LinearTransform>,
    stc: Vec<LinearTransform>,
    exp: ModPoly,
    encapsulation: Option<usize>,
    sparse: bool,
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
        let sparse = match encapsulation {
            // Keys under s' span the whole chain (insecure test parameters pass).
            Some(h) if config.sparse_keys => {
                if !params.is_insecure() {
                    let fix = "FunctionalConfig::sparse_keys to false";
                    check_sparse_bound(params, h, params.log_qp(), "keys under a sparse secret", fix)?;
                }
                true
            }
            _ => false,
        };
        Ok(Plan { cts, stc, exp, encapsulation, sparse })
    }

    /// The level the exponential's output is at, where a sparse plan switches back.
    fn dense_level(&self, params: &Params) -> usize {
        params.max_level() - self.cts.len() - self.exp.depth()
    }

    /// The transforms whose rotations switch under the user's secret: both, or only
    /// SlotsToCoeffs when CoeffsToSlots runs under the sparse secret.
    fn user_transforms(&self) -> (&[LinearTransform], &[LinearTransform]) {
        (if self.sparse { &[] } else { &self.cts }, &self.stc)
    }

    fn rotations(&self) -> Vec<i64> {
        let (cts, stc) = self.user_transforms();
        rotations_of(cts.iter().chain(stc))
    }

    /// Each Galois key's highest level: SlotsToCoeffs from `b`, CoeffsToSlots from the
    /// top, conjugation before its last rescale (and lower, in the series' real part;
    /// only there for a sparse plan, whose CoeffsToSlots conjugates under `s'`).
    fn key_levels(&self, params: &Params) -> KeyLevels {
        let top = params.max_level();
        let (cts, stc) = self.user_transforms();
        let conj = if self.sparse { self.dense_level(params) } else { top + 1 - self.cts.len() };
        key_levels(params, (cts, top), (stc, self.stc.len()), &[], conj)
    }

    /// What a sparse plan does under the sparse secret: its keys there (relinearization
    /// for the exponential, conjugation and CoeffsToSlots' rotations) with their levels,
    /// and the level it switches back at.
    fn sparse_span(&self, params: &Params) -> Option<SparseSpan> {
        if !self.sparse {
            return None;
        }
        let top = params.max_level();
        let levels = key_levels(params, (&self.cts, top), (&[], 0), &[], top + 1 - self.cts.len());
        let options = KeygenOptions { relin: true, rotations: rotations_of(self.cts.iter()), conjugation: true };
        Some(SparseSpan { options, levels, dense_level: self.dense_level(params) })
    }

    /// As the plain bootstrap's (`memory`'s module docs), SlotsToCoeffs at levels `b .. 1`;
    /// a sparse plan holds a second relinearization key and `to_dense` up to the
    /// exponential's output. `compact`: the diagonals kept compact.
    fn memory(&self, params: &Params, compact: bool) -> MemoryEstimate {
        let (top, special) = (params.max_level(), params.p().len());
        let limb = limb_bytes(params);
        let keys = match self.sparse_span(params) {
            Some(span) => {
                // The user's relinearization key and theirs; to_sparse at level 0, then
                // to_dense at the exponential's output and one key being made (counted
                // once in each keys_bytes).
                keys_bytes(params, &self.key_levels(params), 0, 1) + keys_bytes(params, &span.levels, 0, 0)
                    - 4 * half_key_bytes(params, top)
                    + 2 * half_key_bytes(params, span.dense_level)
            }
            None => {
                let (whole, low) = if self.encapsulation.is_some() { (1, 1) } else { (0, 0) };
                keys_bytes(params, &self.key_levels(params), whole, low)
            }
        };
        let cts_levels = (0..self.cts.len()).map(|i| top - i);
        let stc_levels = (0..self.stc.len()).map(|i| self.stc.len() - i);
        let factors = self.cts.iter().zip(cts_levels).chain(self.stc.iter().zip(stc_levels));
        let plaintexts = diagonal_bytes(params, factors, compact);
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
    /// How its diagonals are kept ([`super::Bootstrapper::diagonal_form`]).
    form: DiagonalForm,
    cts: Vec<PreparedLinearTransform>,
    stc: Vec<PreparedLinearTransform>,
    exp: ModPoly,
    s0: Scale,
    max_degree: usize,
    encapsulation: Option<usize>,
    /// A sparse plan's work under `s'` ([`Plan::sparse_span`]).
    sparse: Option<SparseSpan>,
    prepared_encapsulation: Option<PreparedEncapsulation>,
}

impl FunctionalBootstrapper {
    /// The evaluation keys it needs under the user's secret: relinearization,
    /// conjugation and both transforms' rotations (SlotsToCoeffs' only with
    /// [`FunctionalConfig::sparse_keys`], whose other keys come with the encapsulation
    /// keys). Make them with `Context::eval_keys`.
    pub fn key_options(params: &Params, config: &FunctionalConfig) -> Result<KeygenOptions> {
        let plan = Plan::new(params, config)?;
        let (_, estimate) = settle_form(config.diagonals, true, false, |c| plan.memory(params, c));
        check_fits("functional bootstrapping (keys, diagonals, working set)", &estimate)?;
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
        let plan = Plan::new(params, config)?;
        Ok(settle_form(config.diagonals, true, false, |c| plan.memory(params, c)).1)
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
        let keeps = ctx.backend().ckks().is_some_and(|o| o.keeps_compact_plaintexts());
        let (form, rest) = settle_form(config.diagonals, keeps, true, |c| plan.memory(&params, c));
        check_fits_on(ctx.backend().as_ref(), "functional bootstrapping's diagonals and working set", &rest)?;
        let (top, b) = (params.max_level(), plan.stc.len());
        let depth = plan.depth(max_degree.max(1));
        if top < depth + b {
            return Err(Error::Level { op: "functional bootstrap", found: top, needed: LevelNeed::AtLeast(depth + b) });
        }
        // SlotsToCoeffs from level b to 0, landing on q_0 / 4 (`Plan::new`): t = x / 2.
        let s0 = Scale::new(params.q()[0].0 as f64 / 4.0)?;
        let stc_how = Factors { last: Some(s0.value()), growth_bits: 0, form };
        let (stc, _) = prepare_factors(ctx, ev, &plan.stc, b, params.scale_at(b).value(), stc_how)?;
        let cts_how = Factors { last: None, growth_bits: config.cts_growth_bits, form };
        let (cts, _) = prepare_factors(ctx, ev, &plan.cts, top, s0.value(), cts_how)?;
        let sparse = plan.sparse_span(&params);
        Ok(FunctionalBootstrapper {
            config: config.clone(),
            form,
            cts,
            stc,
            exp: plan.exp,
            s0,
            max_degree,
            encapsulation: plan.encapsulation,
            sparse,
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
        let Some(h) = effective_weight(ctx.params(), config.encapsulation)? else { return Ok(None) };
        // Only a sparse plan needs the transforms' rotations.
        let span = match config.sparse_keys {
            true => Plan::new(ctx.params(), config)?.sparse_span(ctx.params()),
            false => None,
        };
        make_keys(ctx, sk, seed, h, span.as_ref().map(|s| &s.options)).map(Some)
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
        self.prepared_encapsulation = Some(PreparedEncapsulation::new(ev, keys, h, self.sparse.as_ref())?);
        Ok(())
    }

    /// The encapsulation keys of [`FunctionalBootstrapper::encapsulation_keys_seeded`]
    /// (the same words) made from `sk` and prepared here, those under the sparse secret
    /// one at a time as made: the host never holds them all beside the prepared ones
    /// (what the memory estimate assumes). Nothing to do without encapsulation.
    pub fn set_encapsulation_from_secret(
        &mut self,
        ctx: &Context,
        ev: &Evaluator,
        sk: &SecretKey,
        seed: &Seed,
    ) -> Result<()> {
        let Some(h) = self.encapsulation else { return Ok(()) };
        let prepared = match &self.sparse {
            Some(span) => PreparedEncapsulation::from_secret(ctx, ev, sk, seed, h, span)?,
            None => PreparedEncapsulation::new(ev, &make_keys(ctx, sk, seed, h, None)?, h, None)?,
        };
        self.prepared_encapsulation = Some(prepared);
        Ok(())
    }

    /// Whether it raises through a sparse secret (and needs encapsulation keys).
    pub fn encapsulates(&self) -> bool {
        self.encapsulation.is_some()
    }

    /// Keys prepared under the sparse secret (relinearization and Galois keys; 0 unless
    /// [`FunctionalConfig::sparse_keys`] and the encapsulation keys are set).
    pub fn sparse_key_count(&self) -> usize {
        let ev = self.prepared_encapsulation.as_ref().and_then(|p| p.sparse());
        ev.map_or(0, |ev| ev.galois_elements().len() + usize::from(ev.has_relin()))
    }

    /// How the transforms' diagonals are kept ([`super::Bootstrapper::diagonal_form`]).
    pub fn diagonal_form(&self) -> DiagonalForm {
        self.form
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
        let (ev, mut x) = self.raise(ev, &at0)?;
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
        match self.prepared_encapsulation.as_ref().filter(|p| p.sparse().is_some()) {
            Some(keys) => keys.to_dense(ev, &z),
            None => Ok(z),
        }
    }

    /// ModRaise of `at0` to the top, and the evaluator to go on with: `ev` under the
    /// user's secret, or, for a sparse plan, the one under `s'` (the ciphertext stays
    /// there).
    pub(super) fn raise<'a>(&'a self, ev: &'a Evaluator, at0: &Ciphertext) -> Result<(&'a Evaluator, Ciphertext)> {
        // Prepared keys hold an evaluator under s' exactly for a sparse plan.
        let prepared = self.prepared_encapsulation.as_ref();
        match prepared.and_then(|p| p.sparse().map(|s| (p, s))) {
            Some((keys, sparse)) => {
                let raised = ev.mod_raise(&keys.to_sparse(ev, at0)?, ev.params().max_level())?;
                Ok((sparse, raised))
            }
            None => {
                let raised = encapsulation::raise(ev, at0, self.encapsulation, prepared, "FunctionalBootstrapper")?;
                Ok((ev, raised))
            }
        }
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
