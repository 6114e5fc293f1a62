//! `cargo xtask kat generate` and `kat replay`, one code path for every scheme of the
//! corpus (over [`fhe_kat::Scheme`]); the bit scheme's files first, then CKKS's, then
//! CKKS bootstrapping's, then programmable bootstrapping's. The lines printed are the
//! reports' own ([`fhe_kat::ReplayReport`]); a backend without CKKS prints
//! `KAT CKKS skipped: ...` and `KAT CKKS bootstrap skipped: ...`, one that prepares no
//! `M2C2` keys (the GPU backends) `KAT PBS skipped: ...`, and passes nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};
use fhe_api::Backend;
use fhe_cpu::CpuBackend;
use fhe_kat::ckks::{Ckks, CkksBootstrap};
use fhe_kat::tfhe::pbs::Pbs;
use fhe_kat::tfhe::Tfhe;
use fhe_kat::{Corpus, Scheme, Verdict};

use crate::{backend, conclude, BackendArg, Fail};

#[derive(Subcommand)]
pub enum KatCmd {
    /// Recompute the corpus on the CPU oracle and write it.
    Generate {
        /// Overwrite a corpus whose entries differ.
        #[arg(long)]
        force: bool,
        /// Which scheme's files to regenerate.
        #[arg(long, value_enum, default_value_t = Schemes::All)]
        scheme: Schemes,
        #[command(flatten)]
        corpus: CorpusArg,
    },
    /// Recompute every corpus entry on a backend and compare byte for byte.
    Replay {
        #[command(flatten)]
        backend: BackendArg,
        #[command(flatten)]
        corpus: CorpusArg,
    },
}

/// The schemes of the corpus.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Schemes {
    All,
    Bits,
    /// The CKKS presets' files.
    Ckks,
    /// The CKKS bootstrap file (`ckks-bootstrap-insecure.json`).
    CkksBootstrap,
    /// The programmable-bootstrapping files (`pbs-<SET>.json`: a PBS and a radix add).
    Pbs,
}

#[derive(Args)]
pub struct CorpusArg {
    /// The corpus directory (default: the reviewed corpus, `fhe-kat/corpus`).
    #[arg(long)]
    corpus: Option<PathBuf>,
}

impl CorpusArg {
    pub fn dir(&self) -> PathBuf {
        self.corpus.clone().unwrap_or_else(fhe_kat::corpus_dir)
    }
}

pub fn run(cmd: KatCmd) -> Result<(), Fail> {
    match cmd {
        KatCmd::Generate { force, scheme, corpus } => {
            let dir = corpus.dir();
            let runs = |s: Schemes| scheme == Schemes::All || scheme == s;
            if runs(Schemes::Bits) {
                generate::<Tfhe>(force, &dir)?;
            }
            if runs(Schemes::Ckks) {
                generate::<Ckks>(force, &dir)?;
            }
            if runs(Schemes::CkksBootstrap) {
                generate::<CkksBootstrap>(force, &dir)?;
            }
            if runs(Schemes::Pbs) {
                generate::<Pbs>(force, &dir)?;
            }
            Ok(())
        }
        KatCmd::Replay { backend: b, corpus } => {
            let (b, dir) = (backend(&b.backend)?, corpus.dir());
            let bits = replay::<Tfhe>(&b, &dir)?;
            let ckks = replay::<Ckks>(&b, &dir)?;
            let bootstrap = replay::<CkksBootstrap>(&b, &dir)?;
            let pbs = replay::<Pbs>(&b, &dir)?;
            conclude([Some(bits), Some(ckks), Some(bootstrap), Some(pbs)])
        }
    }
}

/// The CPU oracle, which defines every answer.
pub fn oracle() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::oracle())
}

/// Every set of the scheme's corpus on the oracle, written to `dir` unless it differs
/// from the files there (then `--force`); prints what changed.
fn generate<S: Scheme>(force: bool, dir: &Path) -> Result<(), Fail> {
    let oracle = oracle();
    let n = S::LABELS.noun;
    let start = Instant::now();
    let new = Corpus::<S>::generate(&oracle, S::KAT_PARAMS, S::KAT_ENTRIES)?;
    let old = Corpus::<S>::load(dir)?;
    let changes = old.diff(&new);
    println!("generated {} {n}entries on {} in {:.1} s", new.len(), oracle.name(), start.elapsed().as_secs_f64());
    if changes.is_empty() {
        println!("{n}corpus {} is up to date ({} entries)", dir.display(), new.len());
        return Ok(());
    }
    for c in &changes {
        println!("  {c}");
    }
    if !old.is_empty() && !force {
        return Err(Fail::Failed(format!(
            "{} {n}entries differ from {}; refusing to overwrite without --force",
            changes.len(),
            dir.display()
        )));
    }
    new.write(dir)?;
    println!("wrote {} {n}entries to {}", new.len(), dir.display());
    Ok(())
}

/// The scheme's corpus in `dir`; an error when it has no file.
pub fn load<S: Scheme>(dir: &Path) -> Result<Corpus<S>, Fail> {
    let c = Corpus::<S>::load(dir)?;
    if c.is_empty() {
        let (n, generate) = (S::LABELS.noun, S::LABELS.generate);
        return Err(Fail::Failed(format!("no {n}KAT corpus in {} (run `{generate}`)", dir.display())));
    }
    Ok(c)
}

/// Replays the scheme's corpus on `b` and prints the report.
fn replay<S: Scheme>(b: &Arc<dyn Backend>, dir: &Path) -> Result<Verdict, Fail> {
    let r = fhe_kat::replay(b, &load::<S>(dir)?)?;
    print!("{r}");
    Ok(r.verdict())
}
