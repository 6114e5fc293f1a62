//! What is measured: the bit scheme's operations and suite ([`tfhe`]), the CKKS
//! operations and their alternation with OpenFHE ([`ckks`]), bootstrapping against
//! OpenFHE's ([`ckks_boot`], with the memory helpers of [`ckks_mem`]), and what they
//! report progress with.

pub mod ckks;
pub mod ckks_boot;
pub mod ckks_fe;
pub mod ckks_mem;
pub mod tfhe;

use crate::error::{Error, Result};

/// A progress report from a running suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// A case starts: its label and the number of timed calls it will make.
    Start { label: String, calls: usize },
    /// `done` of the case's calls are timed.
    Tick { label: String, done: usize, calls: usize },
    /// The case is done.
    Finish { label: String },
}

/// A progress callback that ignores everything.
pub fn no_progress() -> impl FnMut(&Progress) {
    |_| {}
}

/// An indicatif bar on stderr over `total_calls` timed calls (use
/// [`SuiteConfig::total_calls`]); the message names the running case. Hidden when
/// stderr is not a terminal.
pub fn stderr_progress(total_calls: usize) -> impl FnMut(&Progress) {
    let bar = indicatif::ProgressBar::new(total_calls as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    move |p: &Progress| match p {
        Progress::Start { label, .. } => bar.set_message(label.clone()),
        Progress::Tick { .. } => bar.inc(1),
        Progress::Finish { .. } => {
            if bar.position() >= bar.length().unwrap_or(0) {
                bar.finish_and_clear();
            }
        }
    }
}

/// `f` inside a one-thread rayon pool when `one_thread`, else on the caller's thread.
pub fn maybe_one_thread<R: Send>(one_thread: bool, f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    if !one_thread {
        return f();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::InvalidInput(format!("one-thread pool: {e}")))?;
    pool.install(f)
}
