//! CKKS measuring on the smallest preset: rows are complete and valid, the peer's
//! request mirrors the preset. No timing asserts.

use std::sync::Arc;

use fhe_api::ckks::params::Preset;
use fhe_cpu::CpuBackend;

use super::*;
use crate::peers::openfhe::OpenFhe;
use crate::{Environment, EquivalenceGate, GateState, Report};

const SMALL: Preset = Preset::Slots4096Scale40Depth2;

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
    let big = CkksPlan::for_preset(Preset::Slots32768Scale40Depth34);
    assert_eq!((big.iterations, big.keygen_iterations), (10, 3));
    assert_eq!(big.calls_per_round(5), 2);
    assert_eq!(CkksPlan::for_preset(SMALL).operations.len(), 9);
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
    assert_eq!(starts, CkksOp::ALL.len());
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
    crate::parse_report(&json).unwrap();
    assert!(json.contains("precision_bits"));
}

fn gate_passed() -> EquivalenceGate {
    EquivalenceGate::new(GateState::Passed, None)
}

/// A peer that records when it is timed and answers fixed samples.
struct FakePeer {
    log: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
}

impl CkksPeer for FakePeer {
    fn sample(&mut self, op: CkksOp, calls: usize, warmup: usize) -> Result<Vec<f64>> {
        self.log.borrow_mut().push(format!("theirs {op} {calls}+{warmup}"));
        Ok(vec![1e9; calls])
    }
    fn precision(&mut self) -> Result<PeerPrecision> {
        Ok(PeerPrecision { fresh: Some(20.0), mul: Some(19.0), rotate: Some(18.0), mul_plain: Some(19.5) })
    }
    fn describe(&self) -> String {
        "fake".into()
    }
}

/// Every round times both sides; rows pair round by round and carry both precisions.
#[test]
fn alternated_rounds_pair_and_alternate() {
    let backend: Arc<dyn fhe_api::Backend> = Arc::new(CpuBackend::new(Some("harvey")).unwrap());
    let mut fx = CkksFixture::new(backend, SMALL, SEED_ROOT).unwrap();
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut peer = FakePeer { log: log.clone() };
    let plan = CkksPlan { operations: vec![CkksOp::Keygen, CkksOp::Rotate], ..CkksPlan::for_preset(SMALL) };
    let mut ticks = Vec::new();
    let (ours, theirs) = run_alternated(&mut fx, &mut peer, &plan, 3, 2, &mut |p| {
        if let Progress::Tick { done, .. } = p {
            ticks.push(*done);
            log.borrow_mut().push("tick".into());
        }
    })
    .unwrap();
    assert_eq!(ticks, [1, 2, 3, 1, 2, 3]);
    // One call of theirs per round, then the round's tick.
    let l = log.borrow();
    assert_eq!(l[0], "theirs ckks_keygen 1+0");
    assert_eq!(l[1], "tick");
    assert_eq!(l[2], "theirs ckks_keygen 1+0");
    assert_eq!(l[6], "theirs ckks_rotate 2+1");
    assert_eq!(ours.len(), 2);
    assert_eq!(theirs.len(), 2);
    for (o, t) in ours.iter().zip(&theirs) {
        assert!(o.backend.ends_with("/interleaved") && t.backend == "peer:openfhe/interleaved");
        assert_eq!((o.runs, t.runs, o.stats.run_medians_ns.len()), (3, 3, 3));
        assert!(o.note.as_deref().unwrap().contains("per-round ratio"));
    }
    assert_eq!((ours[0].iterations, ours[1].iterations, ours[1].warmup), (1, 2, 1));
    assert_eq!((ours[0].precision_bits, theirs[0].precision_bits), (None, None));
    assert_eq!(theirs[1].precision_bits, Some(18.0));
    assert!(ours[1].precision_bits.unwrap() >= MIN_PRECISION_BITS);
    let r = crate::ratios(&ours, &theirs);
    assert!(r.iter().all(|r| r.per_round.is_some()), "{r:?}");
    assert!(format_comparison(&ours, &theirs).contains("ckks_rotate"));
}

/// An operation OpenFHE has no counterpart for is refused before anything runs.
#[test]
fn an_operation_without_a_peer_is_not_alternated() {
    let backend: Arc<dyn fhe_api::Backend> = Arc::new(CpuBackend::new(Some("harvey")).unwrap());
    let mut fx = CkksFixture::new(backend, SMALL, SEED_ROOT).unwrap();
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut peer = FakePeer { log: log.clone() };
    let plan = CkksPlan { operations: vec![CkksOp::MulPlainKept, CkksOp::MulPlain], ..CkksPlan::for_preset(SMALL) };
    let err = run_alternated(&mut fx, &mut peer, &plan, 1, 1, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("ckks_mul_plain has no OpenFHE counterpart"), "{err}");
    assert!(log.borrow().is_empty());
}

#[test]
fn the_peer_is_asked_for_the_presets_own_shape() {
    let r = OpenFhe::setup_request(SMALL.params());
    assert_eq!((r["log_n"].as_u64(), r["depth"].as_u64(), r["dnum"].as_u64()), (Some(13), Some(2), Some(3)));
    assert_eq!(r["first_mod_bits"].as_u64(), Some(55), "OpenFHE refuses 60 bits at N=2^13");
    let big = OpenFhe::setup_request(Preset::Slots32768Scale40Depth34.params());
    assert_eq!((big["log_n"].as_u64(), big["depth"].as_u64(), big["dnum"].as_u64()), (Some(16), Some(34), Some(6)));
    assert_eq!(big["first_mod_bits"].as_u64(), Some(60));
    assert_eq!(big["threads"].as_u64(), Some(1));
}

#[test]
fn a_missing_python_names_the_setup_script() {
    let e = OpenFhe::spawn(std::path::Path::new("/nonexistent/python")).err().unwrap().to_string();
    assert!(e.contains("scripts/openfhe-setup"), "{e}");
}
