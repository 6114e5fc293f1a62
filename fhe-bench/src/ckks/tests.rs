//! CKKS measuring on the smallest preset: rows are complete and valid, the peer's
//! request mirrors the preset. No timing asserts.

use std::sync::Arc;

use fhe_api::ckks::params::CkksPreset;
use fhe_cpu::CpuBackend;

use super::openfhe::OpenFhe;
use super::*;
use crate::{Environment, Report};

const SMALL: CkksPreset = CkksPreset::Slots4096Scale40Depth2;

#[test]
fn op_names_parse_both_ways() {
    for op in CkksOp::ALL {
        assert_eq!(op.name().parse::<CkksOp>().unwrap(), op);
        assert_eq!(op.short().parse::<CkksOp>().unwrap(), op);
        assert!(op.name().starts_with("ckks_"));
    }
    assert!("ckks_bootstrap".parse::<CkksOp>().is_err());
}

#[test]
fn values_are_in_the_unit_square_and_reproducible() {
    let v = values(1000, 7);
    assert_eq!(v, values(1000, 7));
    assert_ne!(v, values(1000, 8));
    assert!(v.iter().all(|c| c.re.abs() <= 1.0 && c.im.abs() <= 1.0));
    assert!(v.iter().any(|c| c.re < -0.9) && v.iter().any(|c| c.im > 0.9));
}

#[test]
fn default_plans_follow_the_ring_size() {
    let big = CkksPlan::for_preset(CkksPreset::Slots32768Scale40Depth34);
    assert_eq!((big.iterations, big.keygen_iterations), (10, 3));
    assert_eq!(big.calls_per_round(5), 2);
    assert_eq!(CkksPlan::for_preset(SMALL).operations.len(), 7);
}

/// A tiny real run: every operation's row carries a precision (but key generation),
/// the report validates and round-trips.
#[test]
fn small_preset_rows_are_complete() {
    let backend: Arc<dyn fhe_api::Backend> = Arc::new(CpuBackend::new(Some("harvey")).unwrap());
    let mut fx = CkksFixture::new(backend.clone(), SMALL, SEED_ROOT).unwrap();
    let plan = CkksPlan { iterations: 2, keygen_iterations: 1, warmup: 0, runs: 1, ..CkksPlan::for_preset(SMALL) };
    let mut starts = 0;
    let rows = run_ckks(&mut fx, &plan, &mut |p| {
        if matches!(p, Progress::Start { .. }) {
            starts += 1
        }
    })
    .unwrap();
    assert_eq!(starts, 7);
    assert_eq!(rows.iter().map(|r| r.operation.as_str()).collect::<Vec<_>>(), CkksOp::ALL.map(CkksOp::name));
    for r in &rows {
        assert_eq!(r.param_set, SMALL.name());
        assert_eq!(r.precision_bits.is_none(), r.operation == "ckks_keygen", "{r:?}");
        if let Some(b) = r.precision_bits {
            assert!(b >= MIN_PRECISION_BITS, "{r:?}");
        }
    }
    let report = Report::new("test", &backend.name(), Environment::capture(None), gate_passed(), rows);
    let json = report.to_json().unwrap();
    crate::validate_str(&json).unwrap();
    assert!(json.contains("precision_bits"));
}

fn gate_passed() -> EquivalenceGate {
    EquivalenceGate::new(GateState::Passed, None)
}

#[test]
fn gate_compares_with_the_oracle() {
    let oracle: Arc<dyn fhe_api::Backend> = Arc::new(CpuBackend::oracle());
    let target: Arc<dyn fhe_api::Backend> = Arc::new(CpuBackend::new(Some("harvey")).unwrap());
    let g = gate(oracle.clone(), target, SMALL).unwrap();
    assert_eq!(g.status, GateState::Passed, "{g:?}");
    assert_eq!(gate(oracle.clone(), oracle, SMALL).unwrap().status, GateState::NotRun);
}

#[test]
fn the_peer_is_asked_for_the_presets_own_shape() {
    let r = OpenFhe::setup_request(SMALL.params());
    assert_eq!((r["log_n"].as_u64(), r["depth"].as_u64(), r["dnum"].as_u64()), (Some(13), Some(2), Some(3)));
    assert_eq!(r["first_mod_bits"].as_u64(), Some(55), "OpenFHE refuses 60 bits at N=2^13");
    let big = OpenFhe::setup_request(CkksPreset::Slots32768Scale40Depth34.params());
    assert_eq!((big["log_n"].as_u64(), big["depth"].as_u64(), big["dnum"].as_u64()), (Some(16), Some(34), Some(6)));
    assert_eq!(big["first_mod_bits"].as_u64(), Some(60));
    assert_eq!(big["threads"].as_u64(), Some(1));
}

#[test]
fn a_missing_python_names_the_setup_script() {
    let e = OpenFhe::spawn(std::path::Path::new("/nonexistent/python")).err().unwrap().to_string();
    assert!(e.contains("scripts/openfhe-setup"), "{e}");
}
