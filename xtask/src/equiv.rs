//! `cargo xtask equiv dispatch` and `equiv sweep`, one code path for both schemes (over
//! [`fhe_kat::Scheme`]): the bit scheme's sets first, then the CKKS presets, each
//! printing its report's lines; and `cargo xtask soak` (random chained gates, bit
//! scheme). A backend without CKKS prints `skipped` lines for it, never a pass; the
//! command's exit code is then the bit scheme's, or 3 (skipped) when only CKKS was asked
//! for.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Subcommand};
use fhe_api::ckks::params::Preset;
use fhe_api::{Backend, ParamSet};
use fhe_kat::ckks::Ckks;
use fhe_kat::tfhe::Tfhe;
use fhe_kat::{Scheme, Verdict};

use crate::kat::{load, oracle, CorpusArg};
use crate::{backend, conclude, parse_params, BackendArg, Fail};

#[derive(Subcommand)]
pub enum EquivCmd {
    /// Every public surface, oracle against backend, N seeds per parameter set.
    Dispatch(EquivArgs),
    /// KAT replay, then an orthogonal N-seed bootstrap sweep.
    Sweep {
        #[command(flatten)]
        args: EquivArgs,
        #[command(flatten)]
        corpus: CorpusArg,
    },
}

#[derive(Args)]
pub struct EquivArgs {
    #[command(flatten)]
    backend: BackendArg,
    /// Seeds per parameter set.
    #[arg(long, default_value_t = 1000)]
    seeds: u64,
    /// Parameter sets and CKKS presets (repeatable; default: every set and the CKKS
    /// preset slots4096-scale40-depth2).
    #[arg(long, value_parser = parse_equiv_set)]
    params: Vec<EquivSet>,
    /// Seeds per CKKS preset (default: `--seeds`).
    #[arg(long)]
    ckks_seeds: Option<u64>,
}

/// A bit-scheme parameter set or a CKKS preset.
#[derive(Clone, Copy)]
enum EquivSet {
    Bits(ParamSet),
    Ckks(Preset),
}

fn parse_equiv_set(s: &str) -> Result<EquivSet, String> {
    match (s.parse::<ParamSet>(), s.parse::<Preset>()) {
        (Ok(p), _) => Ok(EquivSet::Bits(p)),
        (_, Ok(p)) => Ok(EquivSet::Ckks(p)),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
    }
}

impl EquivArgs {
    /// The bit-scheme sets and CKKS presets to run: a scheme runs when `--params` names
    /// one of its sets, or by default.
    fn chosen(&self) -> (Vec<ParamSet>, Vec<Preset>) {
        if self.params.is_empty() {
            return (Tfhe::EQUIV_PARAMS.to_vec(), Ckks::EQUIV_PARAMS.to_vec());
        }
        let bits = self.params.iter().filter_map(|p| if let EquivSet::Bits(p) = p { Some(*p) } else { None });
        let ckks = self.params.iter().filter_map(|p| if let EquivSet::Ckks(p) = p { Some(*p) } else { None });
        (bits.collect(), ckks.collect())
    }
}

pub fn run(cmd: EquivCmd) -> Result<(), Fail> {
    let (a, corpus, what) = match cmd {
        EquivCmd::Dispatch(a) => (a, None, "dispatch"),
        EquivCmd::Sweep { args, corpus } => (args, Some(corpus.dir()), "sweep"),
    };
    let b = backend(&a.backend.backend)?;
    let start = Instant::now();
    let (sets, presets) = a.chosen();
    let ckks_seeds = a.ckks_seeds.unwrap_or(a.seeds);
    let bits = one::<Tfhe>(&b, corpus.as_deref(), &sets, a.seeds)?;
    let ckks = one::<Ckks>(&b, corpus.as_deref(), &presets, ckks_seeds)?;
    println!("{what} wall time {:.1} s", start.elapsed().as_secs_f64());
    conclude([bits, ckks])
}

/// One scheme's dispatch (`corpus` is `None`) or sweep (replay of the corpus in that
/// folder first), printed; `None` when no set of the scheme is asked for.
fn one<S: Scheme>(
    b: &Arc<dyn Backend>,
    corpus: Option<&Path>,
    sets: &[S::Params],
    seeds: u64,
) -> Result<Option<Verdict>, Fail> {
    if sets.is_empty() {
        return Ok(None);
    }
    let oracle = oracle();
    Ok(Some(match corpus {
        None => {
            let r = fhe_kat::dispatch::<S>(&oracle, b, sets, seeds)?;
            print!("{r}");
            r.verdict()
        }
        Some(dir) => {
            let r = fhe_kat::sweep(&oracle, b, &load::<S>(dir)?, sets, seeds)?;
            print!("{r}");
            r.verdict()
        }
    }))
}

#[derive(Args)]
pub struct SoakArgs {
    #[command(flatten)]
    backend: BackendArg,
    /// Gates to evaluate.
    #[arg(long, default_value_t = 100_000)]
    gates: u64,
    /// Parameter set.
    #[arg(long, value_parser = parse_params, default_value = "PN10QP27")]
    params: ParamSet,
    /// Soak seed index (`Seed::derive("lux-fhe-soak-v1", k)`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// `soak`: random chained gates on one backend (bit scheme), every result checked.
pub fn soak(a: SoakArgs) -> Result<(), Fail> {
    let b = backend(&a.backend.backend)?;
    let r = fhe_kat::tfhe::soak(b.as_ref(), a.params, a.gates, a.seed)?;
    let counts = r.by_gate.iter().map(|(g, n)| format!("{g} {n}")).collect::<Vec<_>>().join(", ");
    let secs = r.elapsed.as_secs_f64();
    println!(
        "soak {} on {}: {} gates, {} wrong ({counts}) in {secs:.1} s ({:.2} ms/gate)",
        r.params,
        r.backend,
        r.gates,
        r.wrong,
        1e3 * secs / r.gates.max(1) as f64
    );
    if r.ok() {
        Ok(())
    } else {
        Err(Fail::Failed(format!("soak: {} wrong results", r.wrong)))
    }
}
