//! Real (tiny) recommendation runs on CPU variants: checked, timed in rotated order,
//! written and read back through the schema; a wrong variant is disqualified.

use super::*;
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::testing::{Delegate, Tamper};
use fhe_cpu::CpuBackend;

#[test]
fn constructor_lines_name_the_variant() {
    let c = constructor_lines("cpu:avx512");
    assert_eq!(c.rust, r#"CpuBackend::new(Some("avx512"))"#);
    assert_eq!(c.engine, r#"Engine::with_backend("cpu:avx512")"#);
    assert_eq!(c.env, "LUX_FHE_BACKEND=cpu LUX_FHE_NTT=avx512");
    let g = constructor_lines("cuda:radix4");
    assert_eq!(g.rust, r#"Engine::with_backend("cuda:radix4")"#);
    assert_eq!(g.env, "LUX_FHE_BACKEND=cuda LUX_FHE_NTT=radix4");
}

fn cpu(v: &str) -> Arc<dyn Backend> {
    Arc::new(CpuBackend::new(Some(v)).unwrap())
}

fn tiny(suite: Suite) -> RecommendConfig {
    RecommendConfig { reps: 2, iterations: 2, warmup: 0, ..RecommendConfig::new(suite, ParamSet::PN10QP27) }
}

#[test]
fn fewer_than_two_or_duplicate_candidates_are_errors() {
    let oracle = CpuBackend::oracle();
    let cfg = tiny(Suite::Kernel);
    let one = [cpu("harvey")];
    let e = run_recommend(&one, "cpu:harvey", "built-in", &oracle, &cfg, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("at least two"), "{e}");
    let twice = [cpu("harvey"), cpu("harvey")];
    let e = run_recommend(&twice, "cpu:harvey", "built-in", &oracle, &cfg, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
    let zero = RecommendConfig { reps: 0, ..cfg };
    let two = [cpu("harvey"), cpu("reference")];
    assert!(matches!(
        run_recommend(&two, "cpu:harvey", "built-in", &oracle, &zero, &mut |_| {}),
        Err(Error::InvalidPlan(_))
    ));
}

/// A real (tiny) kernel run: every candidate checked and timed in every repetition,
/// in rotated order; the file reads back through the schema.
#[test]
fn kernel_run_makes_a_complete_report() {
    let oracle = CpuBackend::oracle();
    let cands = [cpu("harvey"), cpu("reference")];
    let mut starts = Vec::new();
    let rec = run_recommend(&cands, "cpu:harvey", "built-in", &oracle, &tiny(Suite::Kernel), &mut |p| {
        if let Progress::Start { label, .. } = p {
            starts.push(label.clone())
        }
    })
    .unwrap();
    assert_eq!(starts.len(), 2 * 2 * 3);
    assert_eq!(rec.order_per_rep, vec![vec!["cpu:harvey", "cpu:reference"], vec!["cpu:reference", "cpu:harvey"]]);
    assert!(starts[0].contains("cpu:harvey") && starts[6].contains("cpu:reference"), "{starts:?}");
    for c in &rec.scoring.candidates {
        assert!(c.disqualified.is_none(), "{c:?}");
        assert_eq!(c.ops.len(), 3);
        assert!(c.ops.iter().all(|o| o.samples == 4 && o.rep_medians_ns.len() == 2 && o.median_ns > 0.0));
    }
    assert!(["cpu:harvey", "cpu:reference"].contains(&rec.scoring.winner.as_str()));
    assert!(rec.constructor.rust.contains(rec.scoring.winner.trim_start_matches("cpu:")));

    let dir = tempfile::tempdir().unwrap();
    let path = write_recommendation(dir.path(), &rec, None).unwrap();
    assert!(path.file_name().unwrap().to_string_lossy().ends_with("-ntt-kernel-PN10QP27.json"));
    // Read back through the schema: every field present (no `Option` field may be left
    // out either), the ratios, scores and winner consistent.
    let back = fhe_bench::schema::load_recommendation(&path).unwrap();
    assert_eq!(back, rec);
    let again = write_recommendation(dir.path(), &rec, None).unwrap();
    assert_ne!(again, path);
    let printed = format_recommendation(&rec);
    assert!(printed.contains("recommended: ") && printed.contains("confidence: "), "{printed}");
    assert!(printed.contains(&rec.constructor.rust), "{printed}");
}

/// The primitive suite checks results before timing: both CPU variants agree with
/// the oracle here, so both are timed.
#[test]
fn primitive_run_checks_then_times() {
    let oracle = CpuBackend::oracle();
    let cands = [cpu(fhe_cpu::ntt::default_variant()), cpu("harvey")];
    let cfg = RecommendConfig {
        reps: 1,
        iterations: 1,
        warmup: 0,
        ..RecommendConfig::new(Suite::Primitive, ParamSet::PN10QP27)
    };
    let default = cands[0].name();
    if default == "cpu:harvey" {
        return; // a CPU without AVX2: the two candidates would be the same backend
    }
    let rec = run_recommend(&cands, &default, "built-in", &oracle, &cfg, &mut |_| {}).unwrap();
    assert!(rec.check.contains("bootstrap"));
    for c in &rec.scoring.candidates {
        assert!(c.disqualified.is_none(), "{c:?}");
        assert_eq!(
            c.ops.iter().map(|o| o.operation.as_str()).collect::<Vec<_>>(),
            ["key_switch", "bootstrap", "gate_and"]
        );
    }
}

/// The ckks-primitive suite checks words and decryptions before timing seed 1's
/// five operations on every candidate.
#[test]
fn ckks_primitive_run_checks_then_times() {
    let oracle = CpuBackend::oracle();
    let cands = [cpu("harvey"), cpu("reference")];
    let cfg =
        RecommendConfig { reps: 2, iterations: 1, warmup: 0, ..RecommendConfig::ckks(Preset::Slots4096Scale40Depth2) };
    let rec = run_recommend(&cands, "cpu:harvey", "built-in", &oracle, &cfg, &mut |_| {}).unwrap();
    assert_eq!(rec.params, "slots4096-scale40-depth2");
    assert!(rec.check.contains("hoisted"), "{}", rec.check);
    assert_eq!(rec.operations.len(), 5);
    for c in &rec.scoring.candidates {
        assert!(c.disqualified.is_none(), "{c:?}");
        assert!(c.ops.iter().all(|o| o.samples == 2 && o.median_ns > 0.0));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write_recommendation(dir.path(), &rec, None).unwrap();
    assert!(path.to_string_lossy().ends_with("-ntt-ckks-primitive-slots4096-scale40-depth2.json"));
}

/// The CPU backend with a forward NTT that is wrong in one slot: fast, but wrong.
struct WrongNtt;

impl Tamper for WrongNtt {
    fn name(&self) -> String {
        "cpu:wrong".into()
    }
    fn ring_forward(&self, _: PolynomialSize, q: RingModulus, data: &mut [u64]) -> fhe_api::Result<()> {
        data[7] = (data[7] + 1) % q.0;
        Ok(())
    }
}

#[test]
fn a_wrong_variant_is_reported_and_never_timed_or_recommended() {
    let oracle = CpuBackend::oracle();
    let wrong: Arc<dyn Backend> = Arc::new(Delegate::new(CpuBackend::new(Some("harvey")).unwrap(), WrongNtt));
    let cands = [wrong, cpu("reference")];
    let mut labels = Vec::new();
    let rec = run_recommend(&cands, "cpu:wrong", "built-in", &oracle, &tiny(Suite::Kernel), &mut |p| {
        if let Progress::Start { label, .. } = p {
            labels.push(label.clone())
        }
    })
    .unwrap();
    let w = rec.scoring.candidates.iter().find(|c| c.backend == "cpu:wrong").unwrap();
    let why = w.disqualified.as_deref().unwrap();
    // fhe_kat's report: the surface, and the first differing byte (word 7, 8 bytes each).
    assert!(why.contains("surface ntt_forward") && why.contains("offset 56"), "{why}");
    assert!(w.ops.is_empty() && w.score.is_none());
    assert!(labels.iter().all(|l| !l.contains("cpu:wrong")), "{labels:?}");
    assert_eq!(rec.scoring.winner, "cpu:reference");
    assert!(!rec.scoring.baseline_is_default);
    assert!(format_recommendation(&rec).contains("DISQUALIFIED"));
}
