//! Peers: other libraries timed beside ours, their rows in the same result files
//! (`backend` tells them apart, so [`crate::ratios`] can pair rows again from a file).
//!
//! - [`openfhe`]: OpenFHE's CKKS, through its Python worker (`fhe-bench/peers/openfhe/`,
//!   a JSON-lines protocol on stdin and stdout); no cargo feature, and never in CI (its
//!   venv comes from `scripts/openfhe-setup`); [`openfhe_boot`]: its `EvalBootstrap`, one worker
//!   per round;
//! - `tfhe_rs` (cargo feature `peers`): TFHE-rs boolean gates and tfhe-ntt in the same
//!   process, and both timed in alternation with ours round by round.

pub mod openfhe;
pub mod openfhe_boot;
pub mod openfhe_fe;
#[cfg(feature = "peers")]
pub mod tfhe_rs;

#[cfg(feature = "peers")]
pub use tfhe_rs::{
    run_interleaved_gates, run_interleaved_ntt, run_own_ntt_kernels, run_peers, run_tfhe_boolean, run_tfhe_ntt,
    TFHE_BACKEND, TFHE_NTT_BACKEND,
};
