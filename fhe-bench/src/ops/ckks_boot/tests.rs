use super::*;
use crate::ops::ckks_mem::{kib_field, mem_available};

/// N = 2^12 at depth 12 with a sparse secret: small enough for a unit test, far from
/// secure (which the rows must say).
fn tiny(secret: BootSecret) -> BootCase {
    let literal = ParamsLiteral {
        name: "boot-tiny".into(),
        log_n: 12,
        scale_bits: 50,
        depth: 24,
        first_bits: 60,
        special_bits: 60,
        dnum: 4,
        secret: SecretDist::Ternary,
    };
    BootCase { literal, secret, config: BootstrapConfig::default() }
}

struct FakePeer {
    rounds: usize,
    ns: f64,
}

impl BootPeer for FakePeer {
    fn round(&mut self, _: &BootCase, calls: usize, _: usize) -> Result<BootRound> {
        self.rounds += 1;
        Ok(BootRound {
            setup_ns: 2.0 * self.ns,
            boot_ns: vec![self.ns; calls],
            max_err: 2f64.powi(-20),
            mean_err: 2f64.powi(-23),
            output_level: 3,
            peak_bytes: 1 << 30,
            key_count: Some(7),
            key_bytes: Some(1 << 20),
            phases_s: None,
        })
    }
    fn describe(&self, _: &BootCase) -> String {
        "fake".into()
    }
}

#[test]
fn secrets_parse_and_unknown_ones_are_refused() {
    assert_eq!("uniform".parse::<BootSecret>().unwrap(), BootSecret::Uniform);
    assert_eq!("ternary".parse::<BootSecret>().unwrap(), BootSecret::Uniform);
    assert_eq!("sparse".parse::<BootSecret>().unwrap(), BootSecret::Sparse);
    assert_eq!("encapsulated".parse::<BootSecret>().unwrap(), BootSecret::Encapsulated);
    assert!("dense".parse::<BootSecret>().is_err());
    assert_eq!(BootSecret::Encapsulated.dist(), SecretDist::Ternary);
}

#[test]
fn the_peer_preset_is_within_the_bound_with_a_uniform_secret_and_over_it_with_a_sparse_one() {
    let u = BootCase::peer_preset(BootSecret::Uniform).params().unwrap();
    assert!(u.within_bound && !u.params.is_insecure());
    let s = BootCase::peer_preset(BootSecret::Sparse).params().unwrap();
    assert!(!s.within_bound && s.params.is_insecure());
    assert!(s.params.log_qp() > s.bound.unwrap());
    assert_eq!(s.params.secret(), SecretDist::SparseTernary { hamming_weight: 192 });
    assert_eq!(s.params.q(), u.params.q(), "the same chain, only the secret differs");
    let case = BootCase::peer_preset(BootSecret::Sparse);
    assert_eq!(case.param_set(false), "slots32768-scale59-depth22-sparse192-over-bound");
    assert_eq!(BootCase::peer_preset(BootSecret::Uniform).param_set(true), "slots32768-scale59-depth22");
    let e = BootCase::peer_preset(BootSecret::Encapsulated);
    assert!(e.params().unwrap().within_bound, "the user's secret is the uniform one");
    assert_eq!(e.param_set(true), "slots32768-scale59-depth22-encapsulated");
    assert_eq!(e.peer_request()["secret"], "encapsulated");
}

#[test]
fn a_chain_refused_for_another_reason_is_an_error() {
    let mut case = tiny(BootSecret::Uniform);
    case.literal.log_n = 30;
    assert!(case.params().is_err());
}

#[test]
fn the_peer_request_names_the_same_chain() {
    let r = BootCase::peer_preset(BootSecret::Sparse).peer_request();
    assert_eq!(r["cmd"], "boot_setup");
    assert_eq!((r["log_n"].as_u64(), r["depth"].as_u64(), r["dnum"].as_u64()), (Some(16), Some(22), Some(4)));
    assert_eq!((r["scale_bits"].as_u64(), r["first_mod_bits"].as_u64()), (Some(59), Some(60)));
    assert_eq!((r["secret"].as_str(), r["slots"].as_u64()), (Some("sparse"), Some(32768)));
    assert_eq!(r["level_budget"], serde_json::json!([3, 3]));
}

#[test]
fn errors_are_the_max_and_the_mean_modulus() {
    let want = vec![Complex { re: 0.5, im: 0.0 }, Complex { re: -0.5, im: 0.0 }];
    let got = vec![Complex { re: 0.75, im: 0.0 }, Complex { re: -0.5, im: 0.0 }];
    assert_eq!(errors(&got, &want).unwrap(), (0.25, 0.125));
    assert!(errors(&got[..1], &want).is_err());
    assert_eq!(bits(0.25), Some(2.0));
    assert_eq!(bits(0.0), None);
    let v = real_values(1000, 3);
    assert!(v.iter().all(|c| c.im == 0.0 && c.re.abs() <= 1.0));
    assert!(v.iter().any(|c| c.re < -0.5) && v.iter().any(|c| c.re > 0.5));
}

#[test]
fn meminfo_is_read_in_bytes() {
    let m = "MemTotal:       24000000 kB\nMemAvailable:   21000000 kB\n";
    assert_eq!(mem_available(m), Some(21_000_000 * 1024));
    assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    assert_eq!(kib_field("VmHWM:\t  12 kB\n", "VmHWM:"), Some(12 * 1024));
    assert_eq!(kib_field("VmHWM: 12 MB\n", "VmHWM:"), None);
}

#[test]
fn empty_plans_are_refused_before_any_work() {
    let backend: Arc<dyn Backend> = Arc::new(fhe_cpu::CpuBackend::new(None).unwrap());
    let plan = BootPlan { rounds: 0, ..BootPlan::default() };
    let mut peer = FakePeer { rounds: 0, ns: 1.0 };
    let case = tiny(BootSecret::Uniform);
    assert!(run_boot_alternated(backend.clone(), &case, &mut peer, &plan, &mut |_| {}).is_err());
    assert_eq!(peer.rounds, 0);
    let plan = BootPlan { calls: 0, ..BootPlan::default() };
    assert!(run_boot_ours(backend, &case, &plan).is_err());
}

/// The whole alternation at N = 2^12 (insecure), against a fake peer: rows, facts, the
/// round count on each side, and a schema-valid report.
#[test]
fn alternated_rounds_make_valid_rows_for_both_sides() {
    let backend: Arc<dyn Backend> = Arc::new(fhe_cpu::CpuBackend::new(None).unwrap());
    let plan = BootPlan { rounds: 2, ..BootPlan::default() };
    let mut peer = FakePeer { rounds: 0, ns: 1e9 };
    let case = tiny(BootSecret::Sparse);
    let (ours, theirs) = run_boot_alternated(backend.clone(), &case, &mut peer, &plan, &mut |_| {}).unwrap();
    assert_eq!(peer.rounds, 2);
    assert_eq!(ours.len(), 2);
    assert_eq!(theirs.len(), 2);
    let b = &ours[0];
    assert_eq!((b.operation.as_str(), b.runs, b.stats.run_medians_ns.len()), (OP, 2, 2));
    assert_eq!(ours[1].operation, SETUP_OP);
    let f = b.bootstrap.as_ref().unwrap();
    assert!(!f.within_security_bound, "N = 2^12 at depth 24 is far over any bound");
    assert_eq!(b.param_set, "boot-tiny-sparse192-over-bound");
    assert!(b.precision_bits.unwrap() > 10.0, "{:?}", b.precision_bits);
    assert_eq!(f.levels_left + 1, f.output_level);
    assert!(f.key_count.unwrap() > 2 && f.key_bytes.unwrap() > 0 && f.peak_memory_bytes > 0);
    assert_eq!(theirs[0].bootstrap.as_ref().unwrap().output_level, 3);
    assert!(b.note.as_deref().unwrap().contains("per-round ratio"));
    assert!(b.note.as_deref().unwrap().contains("EvalMod"));
    let table = format_boot_comparison(&ours, &theirs);
    assert!(table.contains("ours") && table.contains("openfhe") && table.contains("boot-tiny-sparse192"), "{table}");
    let env = crate::Environment::capture(Some(backend.as_ref()));
    let gate = crate::EquivalenceGate::new(crate::GateState::NotRun, None);
    let rows: Vec<Row> = ours.into_iter().chain(theirs).collect();
    let report = crate::Report::new("ckks-bootstrap", &backend.name(), env, gate, rows);
    crate::validate(&report).unwrap();
}
