//! CKKS bootstrapping (full packing): a ciphertext near the bottom of the chain back to
//! a high level, written once over the evaluator, so every backend with the CKKS
//! capability runs it with no kernel of its own.
//!
//! | step | levels | what |
//! |---|---|---|
//! | prescale | 1 (input's) | `x * k` rescaled to level 0 at scale `q_0 / 2^c` |
//! | ModRaise | - | level 0 read as integers mod `q_L`: `m + q_0 I` |
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
pub mod evalmod;
pub mod memory;

use std::time::Instant;

use fhe_api::ckks::{Ciphertext, Params, Scale};
use fhe_api::error::{Error, LevelNeed, Result};

use crate::ckks::circuits::linear::{LinearTransform, PreparedLinearTransform};
use crate::ckks::context::Context;
use crate::ckks::evaluator::Evaluator;
use crate::ckks::keygen::KeygenOptions;
use evalmod::{k_bound, ModPoly, FAILURE_LOG2};
use memory::{check_fits, key_bytes, limb_bytes, MemoryEstimate};

/// Bits of the EvalMod approximation (before its double angles): past the noise the
/// steps after ModRaise leave, so it never limits the precision.
const EVAL_MOD_BITS: u32 = 36;

/// How to bootstrap; [`BootstrapConfig::default`] is OpenFHE's `{3, 3}`.
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrapConfig {
    /// Levels of CoeffsToSlots and of SlotsToCoeffs.
    pub level_budget: (usize, usize),
    /// The message is `2^-prescale_bits` of `q_0` during EvalMod.
    pub prescale_bits: u32,
    /// `log2` of the failure probability per bootstrap the range `K` is set for.
    pub failure_log2: f64,
    /// Corrects the sine towards the identity with `arcsin(s) ~ s + s^3 / 6` (two levels):
    /// the sine's relative error `(2 pi m 2^-c)^2 / 6` becomes `3 (2 pi m 2^-c)^4 / 40`.
    pub arcsine: bool,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        BootstrapConfig { level_budget: (3, 3), prescale_bits: 8, failure_log2: FAILURE_LOG2, arcsine: false }
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
}

impl Plan {
    fn new(params: &Params, config: &BootstrapConfig) -> Result<Plan> {
        let n = params.slots();
        let q0 = params.q()[0].0 as f64;
        let s0 = q0 / (1u64 << config.prescale_bits) as f64;
        let k = k_bound(params, config.failure_log2);
        let modp = ModPoly::new(k, EVAL_MOD_BITS)?;
        // CoeffsToSlots: u = (s0 / (q0 (K + 1))) U^-1 z, halved for the real and
        // imaginary extraction (`ct + conj(ct)` doubles).
        let alpha = s0 / (q0 * (k as f64 + 1.0)) / 2.0;
        let cts = dft::coeffs_to_slots(n, config.level_budget.0, alpha)?;
        // SlotsToCoeffs: m = (q0 / (2 pi s0)) U y.
        let beta = q0 / (2.0 * std::f64::consts::PI * s0);
        let stc = dft::slots_to_coeffs(n, config.level_budget.1, beta)?;
        Ok(Plan { cts, stc, modp, s0, arcsine: config.arcsine })
    }

    fn depth(&self) -> usize {
        self.cts.len() + self.mod_depth() + self.stc.len()
    }

    fn rotations(&self) -> Vec<i64> {
        let mut rotations: Vec<i64> = self.cts.iter().chain(&self.stc).flat_map(|t| t.rotations()).collect();
        rotations.sort_unstable();
        rotations.dedup();
        rotations
    }

    /// See `memory`'s module docs.
    fn memory(&self, params: &Params) -> MemoryEstimate {
        let (top, special) = (params.max_level(), params.p().len());
        let limb = limb_bytes(params);
        let keys = (self.rotations().len() as u64 + 2) * key_bytes(params);
        let cts_levels = (0..self.cts.len()).map(|i| top - i);
        let stc_top = top - self.cts.len() - self.mod_depth();
        let stc_levels = (0..self.stc.len()).map(|i| stc_top - i);
        let plaintexts = self
            .cts
            .iter()
            .zip(cts_levels)
            .chain(self.stc.iter().zip(stc_levels))
            .map(|(t, l)| t.diagonals().len() as u64 * (l + 1 + special) as u64 * limb)
            .sum();
        let babies = self.cts.iter().chain(&self.stc).map(|t| t.baby_count()).max().unwrap_or(0) as u64;
        let working = (2 * babies * (top + 1 + special) as u64 + 24 * (top + 1) as u64) * limb;
        MemoryEstimate { keys, plaintexts, working }
    }

    fn mod_depth(&self) -> usize {
        self.modp.depth() + if self.arcsine { 2 } else { 0 }
    }
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
    cts: Vec<PreparedLinearTransform>,
    stc: Vec<PreparedLinearTransform>,
    modp: ModPoly,
    s0: Scale,
    output_level: usize,
}

impl Bootstrapper {
    /// The evaluation keys bootstrapping needs for `params` and `config`: the
    /// relinearization key, conjugation and the rotations of both transforms. Make them
    /// with `Context::eval_keys`.
    pub fn key_options(params: &Params, config: &BootstrapConfig) -> Result<KeygenOptions> {
        let plan = Plan::new(params, config)?;
        check_fits("bootstrapping (keys, diagonals, working set)", &plan.memory(params))?;
        Ok(KeygenOptions { relin: true, rotations: plan.rotations(), conjugation: true })
    }

    /// What a configuration holds in memory (`memory`'s module docs): [`key_options`]
    /// and [`Bootstrapper::new`] refuse one beyond the machine's available memory with
    /// `Error::OutOfMemory`.
    ///
    /// [`key_options`]: Bootstrapper::key_options
    pub fn memory_estimate(params: &Params, config: &BootstrapConfig) -> Result<MemoryEstimate> {
        Ok(Plan::new(params, config)?.memory(params))
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
        let rest = MemoryEstimate { keys: 0, ..plan.memory(&params) };
        check_fits("bootstrapping's diagonals and working set", &rest)?;
        let top = params.max_level();
        let depth = plan.depth();
        if top < depth + 1 {
            return Err(Error::Level { op: "bootstrap", found: top, needed: LevelNeed::AtLeast(depth + 1) });
        }
        let q = |l: usize| params.q()[l].0 as f64;
        let s0 = Scale::new(plan.s0)?;
        // CoeffsToSlots from the top: each factor at q_l (the rescale gives the scale
        // back), the last aimed at the canonical scale EvalMod starts from.
        let mut cts = Vec::new();
        let mut level = top;
        let mut scale = s0.value();
        for (i, t) in plan.cts.iter().enumerate() {
            let f =
                if i + 1 == plan.cts.len() { params.scale_at(level - 1).value() * q(level) / scale } else { q(level) };
            cts.push(ctx.prepare_linear_transform(ev, t, level, Scale::new(f)?)?);
            scale = scale * f / q(level);
            level -= 1;
        }
        level -= plan.mod_depth();
        let mut stc = Vec::new();
        let mut scale = params.scale_at(level).value();
        for (i, t) in plan.stc.iter().enumerate() {
            let f =
                if i + 1 == plan.stc.len() { params.scale_at(level - 1).value() * q(level) / scale } else { q(level) };
            stc.push(ctx.prepare_linear_transform(ev, t, level, Scale::new(f)?)?);
            scale = scale * f / q(level);
            level -= 1;
        }
        Ok(Bootstrapper { config: config.clone(), cts, stc, modp: plan.modp, s0, output_level: level })
    }

    pub fn config(&self) -> &BootstrapConfig {
        &self.config
    }

    /// The level of a bootstrap's output (one more bootstrap needs level 1 or above).
    pub fn output_level(&self) -> usize {
        self.output_level
    }

    /// The range `K` of the integer part after ModRaise.
    pub fn k(&self) -> u32 {
        self.modp.k
    }

    /// Degree of the EvalMod polynomial and its double angles.
    pub fn eval_mod_shape(&self) -> (usize, u32) {
        (self.modp.poly.degree(), self.modp.double_angles)
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
        let params = ev.params().clone();
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
        let mut x = ev.mod_raise(&at0, params.max_level())?;
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
        let (re, im) = (self.eval_mod(ev, &re)?, self.eval_mod(ev, &im)?);
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
