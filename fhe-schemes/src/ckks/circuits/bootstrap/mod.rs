//! CKKS bootstrapping (full or sparse packing): a ciphertext near the bottom of the chain
//! back to a high level, written once over the evaluator, so every backend with the CKKS
//! capability runs it with no kernel of its own.
//!
//! | step | levels | what |
//! |---|---|---|
//! | prescale | 1 (input's) | `x * k` rescaled to level 0 at scale `q_0 / 2^c` |
//! | ModRaise | - | level 0 read as integers mod `q_L`: `m + q_0 I` (through a sparse secret: `encapsulation`) |
//! | SubSum | - | sparse packing only: the sum of the packing's `N / 2n` copies |
//! | CoeffsToSlots | `a` | the coefficients into the slots (`dft`), as `(K + 1)`-normalized reals |
//! | EvalMod | `d + r` | `sin(2 pi x) / 2 pi` on the real and imaginary halves (`evalmod`) |
//! | SlotsToCoeffs | `b` | back to slots, times `2^c` |
//!
//! `{a, b}` is the level budget (OpenFHE's), `c` the prescale bits: the message is
//! `2^-c` of `q_0`, so the sine is close to linear (its error, relative, is
//! `(2 pi 2^-c)^2 / 6`), while the noise of the steps after ModRaise is multiplied by
//! `2^c`. Inputs: values of magnitude at most 1, at level 1 or above. The output is at
//! level [`Bootstrapper::output_level`], at that level's canonical scale.

pub mod dft;
mod encapsulation;
pub mod evalmod;
mod functional;
mod functional_chains;
pub mod memory;

pub use encapsulation::EncapsulationKeys;
pub use functional::{FunctionalBootstrapper, FunctionalConfig};
pub use functional_chains::{seed_two_chains, FunctionalChain};

use std::time::Instant;

use fhe_api::ckks::params::SecretDist;
use fhe_api::ckks::{Ciphertext, Params, Scale, SecretKey};
use fhe_api::error::{Error, LevelNeed, Result};
use fhe_api::rng::Seed;

use crate::ckks::circuits::linear::{DiagonalForm, LinearTransform, PreparedLinearTransform};
use crate::ckks::circuits::sums::sum_rotations;
use crate::ckks::context::Context;
use crate::ckks::evaluator::{Evaluator, KeyLevels};
use crate::ckks::keygen::KeygenOptions;
use encapsulation::{effective_weight, make_keys, PreparedEncapsulation};
use evalmod::{k_bound, k_bound_for, ModPoly, FAILURE_LOG2};
use memory::{
    check_fits, check_fits_on, diagonal_bytes, key_levels, keys_bytes, limb_bytes, pool_bytes, settle_form,
    MemoryEstimate,
};

/// How to bootstrap; [`BootstrapConfig::default`] is OpenFHE's `{3, 3}`.
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrapConfig {
    /// Levels of CoeffsToSlots and of SlotsToCoeffs.
    pub level_budget: (usize, usize),
    /// The message is `2^-prescale_bits` of `q_0` during EvalMod.
    pub prescale_bits: u32,
    /// `log2` of the failure probability per bootstrap the range `K` is set for.
    pub failure_log2: f64,
    /// Bits of the EvalMod approximation of the cosine (its error times `2^r` after the
    /// double angles): fewer bits, lower degrees; the coefficient errors it leaves are
    /// amplified by about `2^c sqrt(N/2) / 2 pi` in the slots.
    pub eval_mod_bits: u32,
    /// With a uniform ternary secret, bootstrap through a sparse secret of this weight
    /// (sparse secret encapsulation, `encapsulation`'s docs): `K` of the sparse secret
    /// (36 instead of 537 at `N = 2^16`), so a lower EvalMod degree and fewer levels.
    /// `None`: raise under the user's secret. Ignored for a sparse user secret.
    pub encapsulation: Option<usize>,
    /// Slots of the packing bootstrapped: `None` for all `N/2`, or a power of two below
    /// (sparse packing, `Context::encode_sparse`): a sum over the `N / 2n` copies first,
    /// then transforms on `n` slots (fewer stages, fewer rotations).
    pub slots: Option<usize>,
    /// Corrects the sine towards the identity with `arcsin(s) ~ s + s^3 / 6` (two levels):
    /// the sine's relative error `(2 pi m 2^-c)^2 / 6` becomes `3 (2 pi m 2^-c)^4 / 40`.
    pub arcsine: bool,
    /// How the transforms' diagonals are kept ([`DiagonalForm`]; the same words either
    /// way). `None`: whole where the configuration fits the machine's available memory
    /// so, compact where it does not.
    pub diagonals: Option<DiagonalForm>,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        BootstrapConfig {
            level_budget: (3, 3),
            prescale_bits: 8,
            failure_log2: FAILURE_LOG2,
            eval_mod_bits: 36,
            encapsulation: Some(fhe_api::ckks::params::SPARSE_MIN_HAMMING_WEIGHT),
            slots: None,
            arcsine: false,
            diagonals: None,
        }
    }
}

/// The linear transforms and the polynomial of one configuration, before encoding.
struct Plan {
    cts: Vec<LinearTransform>,
    stc: Vec<LinearTransform>,
    modp: ModPoly,
    /// The scale of level 0 after the prescale: `q_0 / 2^c`.
    s0: f64,
    arcsine: bool,
    /// The sparse secret's weight when bootstrapping encapsulates.
    encapsulation: Option<usize>,
    /// Slots bootstrapped, and the copies of them in the `N/2` slots.
    slots: usize,
    copies: usize,
}

impl Plan {
    fn new(params: &Params, config: &BootstrapConfig) -> Result<Plan> {
        let full = params.slots();
        let n = config.slots.unwrap_or(full);
        if !n.is_power_of_two() || n > full || n < 2 {
            return Err(Error::InvalidInput(format!("bootstrapping {n} slots: a power of two from 2 to {full} (N/2)")));
        }
        let q0 = params.q()[0].0 as f64;
        let s0 = q0 / (1u64 << config.prescale_bits) as f64;
        let encapsulation = effective_weight(params, config.encapsulation)?;
        let k = match encapsulation {
            Some(h) => k_bound_for(params.n(), SecretDist::SparseTernary { hamming_weight: h }, config.failure_log2),
            None => k_bound(params, config.failure_log2),
        };
        let modp = ModPoly::new(k, config.eval_mod_bits)?;
        // CoeffsToSlots: u = (s0 / (q0 (K + 1))) U^-1 z, halved for the real and
        // imaginary extraction (`ct + conj(ct)` doubles).
        // A sparse packing is first summed over its N / 2n copies: divided back here.
        let copies = (full / n) as f64;
        let alpha = s0 / (q0 * (k as f64 + 1.0)) / 2.0 / copies;
        let cts = dft::coeffs_to_slots(n, config.level_budget.0, alpha)?;
        // SlotsToCoeffs: m = (q0 / (2 pi s0)) U y.
        let beta = q0 / (2.0 * std::f64::consts::PI * s0);
        let stc = dft::slots_to_coeffs(n, config.level_budget.1, beta)?;
        Ok(Plan { cts, stc, modp, s0, arcsine: config.arcsine, encapsulation, slots: n, copies: full / n })
    }

    fn depth(&self) -> usize {
        self.cts.len() + self.mod_depth() + self.stc.len()
    }

    fn rotations(&self) -> Vec<i64> {
        let mut rotations: Vec<i64> = self.cts.iter().chain(&self.stc).flat_map(|t| t.rotations()).collect();
        rotations.extend(sum_rotations(self.slots as i64, self.copies));
        rotations.sort_unstable();
        rotations.dedup();
        rotations
    }

    /// Each Galois key's highest level: the sum of a sparse packing's copies and
    /// CoeffsToSlots at the top, conjugation after it, SlotsToCoeffs below EvalMod.
    fn key_levels(&self, params: &Params) -> KeyLevels {
        let top = params.max_level();
        let sums: Vec<(i64, usize)> =
            sum_rotations(self.slots as i64, self.copies).into_iter().map(|r| (r, top)).collect();
        let stc_top = top - self.cts.len() - self.mod_depth();
        key_levels(params, (&self.cts, top), (&self.stc, stc_top), &sums, top - self.cts.len())
    }

    /// See `memory`'s module docs; `compact`: the diagonals kept compact.
    fn memory(&self, params: &Params, compact: bool) -> MemoryEstimate {
        let (top, special) = (params.max_level(), params.p().len());
        let limb = limb_bytes(params);
        let (whole, low) = if self.encapsulation.is_some() { (1, 1) } else { (0, 0) };
        let keys = keys_bytes(params, &self.key_levels(params), whole, low);
        let cts_levels = (0..self.cts.len()).map(|i| top - i);
        let stc_top = top - self.cts.len() - self.mod_depth();
        let stc_levels = (0..self.stc.len()).map(|i| stc_top - i);
        let factors = self.cts.iter().zip(cts_levels).chain(self.stc.iter().zip(stc_levels));
        let plaintexts = diagonal_bytes(params, factors, compact);
        let babies = self.cts.iter().chain(&self.stc).map(|t| t.baby_count()).max().unwrap_or(0) as u64;
        let working = (2 * babies * (top + 1 + special) as u64 + 24 * (top + 1) as u64) * limb + pool_bytes(params);
        MemoryEstimate { keys, plaintexts, working }
    }

    fn mod_depth(&self) -> usize {
        self.modp.depth() + if self.arcsine { 2 } else { 0 }
    }
}

/// The coarsest scale a transform's factor is encoded at (a 20-bit chain's are near 2^19).
const MIN_DIAGONAL_SCALE: f64 = (1u64 << 16) as f64;

/// How [`prepare_factors`] encodes: the last factor aimed at `last` (else the canonical
/// scale), the others `growth_bits` above `q_l`, the diagonals kept in `form`.
#[derive(Clone, Copy)]
struct Factors {
    last: Option<f64>,
    growth_bits: u32,
    form: DiagonalForm,
}

/// `factors` encoded from `level` down, one level each, for an input at `scale`: each at
/// `q_l 2^growth_bits` (the rescale gives the scale back, `growth_bits` higher: where
/// the primes are small, a rescale's rounding weighs less on a larger scale), the last
/// aimed at `last` or else the canonical scale of the level below it; the diagonals kept
/// in `form`. Returns them and the level after the last.
fn prepare_factors(
    ctx: &Context,
    ev: &Evaluator,
    factors: &[LinearTransform],
    mut level: usize,
    mut scale: f64,
    how: Factors,
) -> Result<(Vec<PreparedLinearTransform>, usize)> {
    let Factors { last, growth_bits, form } = how;
    let params = ctx.params();
    let q = |l: usize| params.q()[l].0 as f64;
    // Every factor's scale first: a growth the last factor cannot pay for with its
    // diagonals' precision is refused before anything is encoded.
    let mut scales = Vec::with_capacity(factors.len());
    for i in 0..factors.len() {
        let l = level - i;
        let target = last.unwrap_or_else(|| params.scale_at(l - 1).value());
        let f = if i + 1 == factors.len() { target * q(l) / scale } else { q(l) * f64::from(growth_bits).exp2() };
        if f < MIN_DIAGONAL_SCALE {
            return Err(Error::InvalidInput(format!(
                "a transform's factor would be encoded at 2^{:.1}, under 2^16, with a scale growth of \
                 {growth_bits} bits a factor: lower the growth",
                f.log2()
            )));
        }
        scales.push(f);
        scale = scale * f / q(l);
    }
    let mut out = Vec::with_capacity(factors.len());
    for (t, f) in factors.iter().zip(scales) {
        out.push(ctx.prepare_linear_transform_as(ev, t, level, Scale::new(f)?, form)?);
        level -= 1;
    }
    Ok((out, level))
}

/// Seconds spent in each phase of one bootstrap.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// Prescale and ModRaise.
    pub mod_raise: f64,
    pub coeffs_to_slots: f64,
    /// Both halves' EvalMod and their recombination.
    pub eval_mod: f64,
    pub slots_to_coeffs: f64,
}

/// Everything a bootstrap needs, prepared (encoded and resident) once.
#[derive(Debug)]
pub struct Bootstrapper {
    config: BootstrapConfig,
    /// How its diagonals are kept (settled from the config at [`Bootstrapper::new`]).
    form: DiagonalForm,
    cts: Vec<PreparedLinearTransform>,
    stc: Vec<PreparedLinearTransform>,
    modp: ModPoly,
    s0: Scale,
    output_level: usize,
    encapsulation: Option<usize>,
    prepared_encapsulation: Option<PreparedEncapsulation>,
    slots: usize,
    copies: usize,
}

impl Bootstrapper {
    /// The evaluation keys bootstrapping needs for `params` and `config`: the
    /// relinearization key, conjugation and the rotations of both transforms. Make them
    /// with `Context::eval_keys`.
    pub fn key_options(params: &Params, config: &BootstrapConfig) -> Result<KeygenOptions> {
        let plan = Plan::new(params, config)?;
        let (_, estimate) = settle_form(config.diagonals, true, false, |c| plan.memory(params, c));
        check_fits("bootstrapping (keys, diagonals, working set)", &estimate)?;
        Ok(KeygenOptions { relin: true, rotations: plan.rotations(), conjugation: true })
    }

    /// The highest level each of [`Bootstrapper::key_options`]'s Galois keys is switched
    /// at: give it to `Context::evaluator_up_to` (or `Evaluator::add_keys_up_to`) and the
    /// SlotsToCoeffs keys are prepared over the low levels they serve only (the memory
    /// estimate assumes it). The words of a bootstrap are the same.
    pub fn key_levels(params: &Params, config: &BootstrapConfig) -> Result<KeyLevels> {
        Ok(Plan::new(params, config)?.key_levels(params))
    }

    /// What a configuration holds in memory (`memory`'s module docs): [`key_options`]
    /// and [`Bootstrapper::new`] refuse one beyond the machine's available memory with
    /// `Error::OutOfMemory`. The diagonals in the form [`BootstrapConfig::diagonals`]
    /// settles on here, on a backend that keeps compact plaintexts (the CPU's).
    ///
    /// [`key_options`]: Bootstrapper::key_options
    pub fn memory_estimate(params: &Params, config: &BootstrapConfig) -> Result<MemoryEstimate> {
        let plan = Plan::new(params, config)?;
        Ok(settle_form(config.diagonals, true, false, |c| plan.memory(params, c)).1)
    }

    /// Levels a bootstrap spends from the top (`a + b` and EvalMod's).
    pub fn depth(params: &Params, config: &BootstrapConfig) -> Result<usize> {
        Ok(Plan::new(params, config)?.depth())
    }

    /// Encodes the transforms at their levels: `Error::Level` when the chain is too short
    /// for the configuration (naming the depth it needs).
    pub fn new(ctx: &Context, ev: &Evaluator, config: &BootstrapConfig) -> Result<Bootstrapper> {
        let params = ctx.params().clone();
        let plan = Plan::new(&params, config)?;
        // The keys exist already: what is left to allocate is the rest.
        let keeps = ctx.backend().ckks().is_some_and(|o| o.keeps_compact_plaintexts());
        let (form, rest) = settle_form(config.diagonals, keeps, true, |c| plan.memory(&params, c));
        check_fits_on(ctx.backend().as_ref(), "bootstrapping's diagonals and working set", &rest)?;
        let top = params.max_level();
        let depth = plan.depth();
        if top < depth + 1 {
            return Err(Error::Level { op: "bootstrap", found: top, needed: LevelNeed::AtLeast(depth + 1) });
        }
        let s0 = Scale::new(plan.s0)?;
        let how = Factors { last: None, growth_bits: 0, form };
        // CoeffsToSlots from the top: each factor at q_l (the rescale gives the scale
        // back), the last aimed at the canonical scale EvalMod starts from.
        let (cts, level) = prepare_factors(ctx, ev, &plan.cts, top, s0.value(), how)?;
        let level = level - plan.mod_depth();
        let (stc, level) = prepare_factors(ctx, ev, &plan.stc, level, params.scale_at(level).value(), how)?;
        Ok(Bootstrapper {
            config: config.clone(),
            form,
            cts,
            stc,
            modp: plan.modp,
            s0,
            output_level: level,
            encapsulation: plan.encapsulation,
            prepared_encapsulation: None,
            slots: plan.slots,
            copies: plan.copies,
        })
    }

    /// The encapsulation keys `config` needs for `sk` (`None` when it needs none: a sparse
    /// user secret, or `encapsulation: None`), with OS randomness.
    pub fn encapsulation_keys(
        ctx: &Context,
        sk: &SecretKey,
        config: &BootstrapConfig,
    ) -> Result<Option<EncapsulationKeys>> {
        Self::encapsulation_keys_seeded(ctx, sk, config, &Seed::from_os()?)
    }

    /// [`Bootstrapper::encapsulation_keys`] with the randomness of `seed` (reproducible).
    pub fn encapsulation_keys_seeded(
        ctx: &Context,
        sk: &SecretKey,
        config: &BootstrapConfig,
        seed: &Seed,
    ) -> Result<Option<EncapsulationKeys>> {
        match effective_weight(ctx.params(), config.encapsulation)? {
            Some(h) => make_keys(ctx, sk, seed, h, None).map(Some),
            None => Ok(None),
        }
    }

    /// Prepares the encapsulation keys on the evaluator's backend (needed before
    /// [`Bootstrapper::bootstrap`] when [`Bootstrapper::encapsulates`]).
    pub fn set_encapsulation_keys(&mut self, ev: &Evaluator, keys: &EncapsulationKeys) -> Result<()> {
        let h = self.encapsulation.ok_or_else(|| {
            Error::InvalidInput("this bootstrap raises under the user's secret: it takes no encapsulation keys".into())
        })?;
        self.prepared_encapsulation = Some(PreparedEncapsulation::new(ev, keys, h, None)?);
        Ok(())
    }

    /// Whether bootstrapping goes through a sparse secret (and needs its keys).
    pub fn encapsulates(&self) -> bool {
        self.encapsulation.is_some()
    }

    pub fn config(&self) -> &BootstrapConfig {
        &self.config
    }

    /// The level of a bootstrap's output (one more bootstrap needs level 1 or above).
    pub fn output_level(&self) -> usize {
        self.output_level
    }

    /// Slots bootstrapped (`N/2` for full packing).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The range `K` of the integer part after ModRaise.
    pub fn k(&self) -> u32 {
        self.modp.k
    }

    /// Degree of the EvalMod polynomial and its double angles.
    pub fn eval_mod_shape(&self) -> (usize, u32) {
        (self.modp.poly.degree(), self.modp.double_angles)
    }

    /// How the transforms' diagonals are kept ([`BootstrapConfig::diagonals`] settled:
    /// compact asked of the backend, which may keep them whole).
    pub fn diagonal_form(&self) -> DiagonalForm {
        self.form
    }

    /// Prepared plaintexts the transforms hold.
    pub fn plaintexts(&self) -> usize {
        self.cts.iter().chain(&self.stc).map(|t| t.plaintexts()).sum()
    }

    /// `ct` refreshed: the same values (within the bootstrap's precision) at
    /// [`Bootstrapper::output_level`]. `ct` at level 1 or above, values of magnitude at
    /// most 1, degree 1.
    pub fn bootstrap(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        self.bootstrap_timed(ev, ct).map(|(ct, _)| ct)
    }

    /// [`Bootstrapper::bootstrap`] with the time of each phase.
    pub fn bootstrap_timed(&self, ev: &Evaluator, ct: &Ciphertext) -> Result<(Ciphertext, PhaseTimes)> {
        if ct.level() < 1 {
            return Err(Error::Level { op: "bootstrap", found: ct.level(), needed: LevelNeed::AtLeast(1) });
        }
        let mut times = PhaseTimes::default();
        let mut clock = Instant::now();
        let mut lap = |slot: &mut f64| {
            *slot = clock.elapsed().as_secs_f64();
            clock = Instant::now();
        };
        // Prescale to level 0 at s0: the message becomes 2^-c of q_0.
        let at0 = ev.set_scale(&ev.drop_to_level(ct, 1)?, self.s0)?;
        if !at0.scale().same_as(self.s0) {
            return Err(Error::ScaleMismatch { op: "bootstrap", left: at0.scale().value(), right: self.s0.value() });
        }
        let at0 = ev.relabel(&at0, self.s0)?;
        let mut x =
            encapsulation::raise(ev, &at0, self.encapsulation, self.prepared_encapsulation.as_ref(), "Bootstrapper")?;
        if self.copies > 1 {
            // Only the subring of the sparse packing: the sum of its copies.
            x = ev.rotate_and_sum(&x, self.slots as i64, self.copies)?;
        }
        lap(&mut times.mod_raise);
        for t in &self.cts {
            x = ev.rescale(&ev.linear_transform_unscaled(&x, t)?)?;
        }
        let x = ev.canonical_label(x)?;
        lap(&mut times.coeffs_to_slots);
        // Coefficients j and j + N/2 sit in slot j as re + i im: split them.
        let conj = ev.conjugate(&x)?;
        let re = ev.add(&x, &conj)?;
        let im = ev.mul_i(&ev.sub(&conj, &x)?)?;
        // The halves are independent: side by side, the cores left idle by one
        // half's serial steps (a rescale's top limb, a ModUp's three digits) take the
        // other's work. One thread runs them one after the other; the same words.
        let (re, im) = rayon::join(|| self.eval_mod(ev, &re), || self.eval_mod(ev, &im));
        let (re, im) = (re?, im?);
        let mut y = ev.add(&re, &ev.mul_i(&im)?)?;
        lap(&mut times.eval_mod);
        for t in &self.stc {
            y = ev.rescale(&ev.linear_transform_unscaled(&y, t)?)?;
        }
        let y = ev.canonical_label(y)?;
        lap(&mut times.slots_to_coeffs);
        Ok((y, times))
    }

    /// `sin(2 pi x) / 2 pi` (the `1 / 2 pi` is folded into SlotsToCoeffs) of `u = x / (K
    /// + 1)` at its canonical scale.
    fn eval_mod(&self, ev: &Evaluator, u: &Ciphertext) -> Result<Ciphertext> {
        let mut y = ev.eval_chebyshev(u, &self.modp.poly)?;
        for _ in 0..self.modp.double_angles {
            y = ev.sub_const(&ev.mul_int(&ev.canonical_product(&y, &y)?, 2)?, 1.0)?;
        }
        if !self.config.arcsine {
            return Ok(y);
        }
        // y + y^3 / 6: y^2, and y / 6 at the same level (a constant product), then their
        // product; two levels.
        let l = y.level();
        let sq = ev.canonical_product(&y, &y)?;
        let f = ev.params().scale_at(l - 1).value() * ev.params().q()[l].0 as f64 / y.scale().value();
        let sixth = ev.canonical_label(ev.rescale(&ev.mul_const_scaled(&y, 1.0 / 6.0, f)?)?)?;
        let cube = ev.canonical_product(&sq, &sixth)?;
        let y = ev.canonical_at(&y, cube.level())?;
        ev.add(&y, &cube)
    }
}

#[cfg(test)]
mod tests;
