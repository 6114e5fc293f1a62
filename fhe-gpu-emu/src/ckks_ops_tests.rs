//! Each `CkksOps` method on its own, the emulated device against the CPU oracle
//! (`fhe_schemes::testing::ckks::each_op`: the same random resident inputs and real keys,
//! every operation's words compared, so a difference names the operation and so the
//! kernel), and the bad input it refuses.

use std::sync::Arc;

use fhe_api::ckks::params::Preset;
use fhe_api::Backend;
use fhe_cpu::CpuBackend;
use fhe_schemes::testing::ckks::each_op::{bad_input_is_a_clear_error, each_op_equals_the_oracle};

use super::*;

fn oracle() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::oracle())
}

/// At both small presets: digits of one prime (`N = 2^13`, `dnum` 3) and of two
/// (`N = 2^14`, 7 primes, `dnum` 4, the last digit short).
#[test]
fn every_ckks_op_equals_the_oracle() {
    for preset in [Preset::Slots4096Scale40Depth2, Preset::Slots8192Scale40Depth6] {
        each_op_equals_the_oracle(&emulated_backend().unwrap(), oracle(), preset);
    }
}

/// Bad input is a clear error, never a panic (the shared list).
#[test]
fn bad_ckks_input_is_a_clear_error() {
    bad_input_is_a_clear_error(&emulated_backend().unwrap(), oracle());
}
