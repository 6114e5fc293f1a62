//! Crate-level tests: reports validate, a tiny real measurement makes a valid report,
//! files round-trip, the chart renders. No timing asserts.

use fhe_api::{Backend, ParamSet};
use fhe_cpu::CpuBackend;
use serde_json::Value;

use crate::*;

/// The typed schema on a JSON document, as a reader of its text sees it.
fn check(doc: &Value) -> Result<Report> {
    parse_report(&doc.to_string())
}

fn sample_row(op: &str, backend: &str, median: f64) -> Row {
    let stats = Stats::from_samples(&[median * 0.9, median, median * 1.2]).unwrap();
    Row::new(op, "PN10QP27", backend, "reference", 1, Plan { iterations: 3, warmup: 1, runs: 1 }, stats)
}

fn sample_report(lane: &str, backend: &str) -> Report {
    Report::new(
        lane,
        backend,
        Environment::capture(None),
        EquivalenceGate::not_run(),
        vec![sample_row("ntt_forward", backend, 60_000.0), sample_row("bootstrap", backend, 2_000_000.0)],
    )
}

fn tiny_ntt_report() -> Report {
    let backend = CpuBackend::oracle();
    let config = SuiteConfig {
        iterations: Iterations::uniform(5),
        warmup: 1,
        runs: 2,
        ntt_batch_sizes: vec![1, 2],
        operations: vec![Operation::NttForward, Operation::NttInverse],
        ..SuiteConfig::default()
    };
    let mut events = Vec::new();
    let rows = run_suite(&backend, ParamSet::PN10QP27, &config, &mut |p| events.push(p.clone())).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(events.iter().filter(|e| matches!(e, Progress::Tick { .. })).count(), config.total_calls());
    Report::new(
        "test",
        &backend.name(),
        Environment::capture(Some(&backend)),
        EquivalenceGate::new(GateState::NotRun, Some("oracle".into())),
        rows,
    )
}

#[test]
fn tiny_real_measurement_is_a_valid_report() {
    let report = tiny_ntt_report();
    let json = report.to_json().unwrap();
    parse_report(&json).unwrap();
    assert_eq!(report.params, "PN10QP27");
    assert_eq!(report.backend, "cpu:reference");
    for row in &report.rows {
        assert_eq!(row.iterations, 5);
        assert_eq!(row.runs, 2);
        assert_eq!(row.stats.samples, 10);
        assert_eq!(row.ntt_variant, "reference");
        assert!(row.stats.min_ns <= row.stats.median_ns && row.stats.p99_ns <= row.stats.max_ns);
    }
    // The CPU backend reports no GPU.
    assert!(report.environment.gpu_name.is_none());
    let back = parse_report(&json).unwrap();
    assert_eq!(back, report);
    let table = format_table(&report);
    assert!(table.contains("ntt_forward") && table.contains("p99") && table.contains("median"));
}

#[test]
fn sample_json_validates_and_every_required_field_is_checked() {
    let json: Value = serde_json::to_value(sample_report("cpu-oracle", "cpu:reference")).unwrap();
    check(&json).unwrap();

    // Every field bench/schema.json requires is one validate() insists on.
    let schema: Value = serde_json::from_str(JSON_SCHEMA).unwrap();
    let required = |v: &Value| -> Vec<String> {
        v["required"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
    };
    for f in required(&schema) {
        let mut doc = json.clone();
        doc.as_object_mut().unwrap().remove(&f);
        assert!(check(&doc).is_err(), "top-level `{f}` removed, still valid");
    }
    for f in required(&schema["$defs"]["environment"]) {
        let mut doc = json.clone();
        doc["environment"].as_object_mut().unwrap().remove(&f);
        assert!(check(&doc).is_err(), "environment `{f}` removed, still valid");
    }
    for f in required(&schema["$defs"]["row"]) {
        let mut doc = json.clone();
        doc["rows"][0].as_object_mut().unwrap().remove(&f);
        assert!(check(&doc).is_err(), "row `{f}` removed, still valid");
    }
}

#[test]
fn wrong_types_and_broken_rules_are_rejected() {
    let good: Value = serde_json::to_value(sample_report("cpu-oracle", "cpu:reference")).unwrap();
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        ("median as string", Box::new(|d| d["rows"][0]["median_ns"] = "fast".into())),
        ("negative p99", Box::new(|d| d["rows"][0]["p99_ns"] = (-1.0).into())),
        ("zero batch", Box::new(|d| d["rows"][0]["batch_size"] = 0.into())),
        ("cores as string", Box::new(|d| d["environment"]["cores"] = "2".into())),
        ("avx2 as int", Box::new(|d| d["environment"]["cpu_features"]["avx2"] = 1.into())),
        ("bad date", Box::new(|d| d["environment"]["date_utc"] = "2026-12-02 16:55".into())),
        ("bad gate", Box::new(|d| d["equivalence_gate"]["status"] = "ok".into())),
        ("median above max", Box::new(|d| d["rows"][0]["median_ns"] = 1e12.into())),
        ("failed gate with rows", Box::new(|d| d["equivalence_gate"]["status"] = "failed".into())),
        ("future schema", Box::new(|d| d["schema_version"] = 99.into())),
        ("cpu id as number", Box::new(|d| d["environment"]["cpu_id"] = 207.into())),
        ("git dirty as string", Box::new(|d| d["environment"]["git_dirty"] = "yes".into())),
    ];
    for (what, mutate) in cases {
        let mut doc = good.clone();
        mutate(&mut doc);
        assert!(matches!(check(&doc), Err(Error::Schema { .. })), "{what}: accepted");
    }
    assert!(check(&Value::Array(vec![])).is_err());
    // The optional identity fields may be null or absent (older files).
    for f in ["cpu_id", "cpu_caches", "git_dirty", "bootstrap_threads"] {
        let mut doc = good.clone();
        doc["environment"][f] = Value::Null;
        check(&doc).unwrap_or_else(|e| panic!("{f} null: {e}"));
        doc["environment"].as_object_mut().unwrap().remove(f);
        check(&doc).unwrap_or_else(|e| panic!("{f} absent: {e}"));
    }
}

#[test]
fn failed_gate_reports_no_numbers() {
    let rows = vec![sample_row("bootstrap", "cuda:radix2", 1.0)];
    let r = Report::new(
        "h200",
        "cuda:radix2",
        Environment::capture(None),
        EquivalenceGate::new(GateState::Failed, Some("seed 3 differs".into())),
        rows,
    );
    assert!(r.rows.is_empty());
    parse_report(&r.to_json().unwrap()).unwrap();
}

#[test]
fn write_load_and_chart() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_results(dir.path(), "cpu-oracle", &sample_report("x", "cpu:reference")).unwrap();
    let b = write_results(dir.path(), "cpu-oracle", &sample_report("x", "cpu:reference")).unwrap();
    let c = write_results(dir.path(), "h200", &sample_report("x", "cuda:fused")).unwrap();
    assert_ne!(a, b, "same-second writes must not overwrite");
    let name = a.file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with("-cpu-reference-PN10QP27.json"), "{name}");
    assert_eq!(a.parent().unwrap(), dir.path().join("cpu-oracle"));
    let loaded = load_report(&c).unwrap();
    assert_eq!(loaded.lane, "h200");
    assert!(write_results(dir.path(), "../escape", &loaded).is_err());

    // A recommendation file beside them is not a result file: the chart skips its folder.
    std::fs::create_dir_all(dir.path().join(chart::RECOMMEND_DIR)).unwrap();
    std::fs::write(dir.path().join(chart::RECOMMEND_DIR).join("r.json"), "{\"kind\":\"ntt_recommendation\"}").unwrap();
    // Nor are the OpenFHE peer's baseline files.
    std::fs::create_dir_all(dir.path().join(chart::OPENFHE_DIR)).unwrap();
    std::fs::write(dir.path().join(chart::OPENFHE_DIR).join("b.json"), "{\"kind\":\"openfhe_ckks_baseline\"}").unwrap();
    let files = result_files(dir.path()).unwrap();
    assert_eq!(files.len(), 3);
    let svg = dir.path().join("chart/medians.svg");
    render_chart(&files, &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"));
    assert!(text.contains("cpu-oracle/cpu:reference") && text.contains("h200/cuda:fused"));
    assert!(text.contains("bootstrap PN10QP27"));
}

/// `precision_bits` is optional (old files have none), a number or null when present,
/// and only on CKKS rows that decrypt.
#[test]
fn precision_bits_is_optional_and_checked() {
    let mut rep = sample_report("x", "cpu:reference");
    rep.rows[0] = sample_row("ckks_mul_relin", "cpu:reference", 1e6).with_precision(Some(21.5));
    let json = rep.to_json().unwrap();
    parse_report(&json).unwrap();
    assert!(json.contains("\"precision_bits\": 21.5"));
    assert_eq!(json.matches("precision_bits").count(), 1, "absent where unset");
    let back = parse_report(&json).unwrap();
    assert_eq!(back.rows[0].precision_bits, Some(21.5));
    assert_eq!(back.rows[1].precision_bits, None);
    let mut v: Value = serde_json::from_str(&json).unwrap();
    v["rows"][0]["precision_bits"] = Value::Null;
    check(&v).unwrap();
    v["rows"][0]["precision_bits"] = Value::from("many");
    assert!(check(&v).unwrap_err().to_string().contains("expected f64"));
    // Not on a row of another kind, nor on CKKS key generation.
    for op in ["bootstrap", "ckks_keygen"] {
        v["rows"][0]["precision_bits"] = Value::from(20.0);
        v["rows"][0]["operation"] = Value::from(op);
        let msg = check(&v).unwrap_err().to_string();
        assert!(msg.contains("$.rows[0].precision_bits: only CKKS operations"), "{op}: {msg}");
    }
}

#[test]
fn ratio_matches_rows() {
    let ours = vec![sample_row("ntt_forward", "cpu:reference", 100.0), sample_row("gate_and", "cpu:reference", 10.0)];
    let theirs = vec![sample_row("ntt_forward", "peer:tfhe-ntt", 50.0)];
    let r = ratios(&ours, &theirs);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].ratio, 2.0);
    assert!(format_ratios(&r).contains("2.00x"));
    assert_eq!(r[0].per_round, None, "rows not timed side by side have no per-round ratio");
    assert!(!format_ratios(&r).contains("per round"));
}

#[test]
fn interleaved_pairs_get_the_median_of_their_round_ratios() {
    // Three rounds: ours 100, 300, 200 against theirs 200, 100, 400 (ratios 0.5, 3, 0.5).
    let row = |backend: &str, rounds: &[f64]| {
        let runs: Vec<Vec<f64>> = rounds.iter().map(|&m| vec![m]).collect();
        let stats = Stats::from_runs(&runs).unwrap();
        Row::new("ntt_forward", "PN10QP27", backend, "v", 1, Plan { iterations: 1, warmup: 1, runs: 3 }, stats)
    };
    let ours = row(&format!("cpu:avx512/kernel{INTERLEAVED}"), &[100.0, 300.0, 200.0]);
    let theirs = row(&format!("peer:tfhe-ntt{INTERLEAVED}"), &[200.0, 100.0, 400.0]);
    let r = ratios(std::slice::from_ref(&ours), std::slice::from_ref(&theirs));
    assert_eq!(r[0].ratio, 1.0, "pooled medians 200 / 200");
    assert_eq!(r[0].per_round, Some(0.5));
    let table = format_ratios(&r);
    assert!(table.contains("per round") && table.contains("0.50x"), "{table}");
    // Only when both sides were interleaved, with as many rounds each.
    let plain = row("peer:tfhe-ntt", &[200.0, 100.0, 400.0]);
    assert_eq!(ratios(std::slice::from_ref(&ours), &[plain])[0].per_round, None);
    let short = row(&format!("peer:tfhe-ntt{INTERLEAVED}"), &[200.0, 100.0]);
    assert_eq!(ratios(&[ours], &[short])[0].per_round, None);
}

#[test]
fn every_operation_runs_once_on_the_oracle() {
    // One call of each, no timing asserts: every case wires up without error.
    let backend = CpuBackend::oracle();
    let config = SuiteConfig {
        iterations: Iterations::uniform(1),
        warmup: 0,
        runs: 1,
        ntt_batch_sizes: vec![1],
        bootstrap_batch_size: 2,
        ..SuiteConfig::default()
    };
    let rows = run_suite(&backend, ParamSet::PN10QP27, &config, &mut no_progress()).unwrap();
    let ops: Vec<&str> = rows.iter().map(|r| r.operation.as_str()).collect();
    assert_eq!(ops.len(), Operation::ALL.len());
    for op in Operation::ALL {
        assert!(ops.contains(&op.name()), "{op} missing");
    }
    let batch = rows.iter().find(|r| r.operation == "bootstrap_batch").unwrap();
    assert_eq!(batch.batch_size, 2);
    assert!((batch.per_item_median_ns * 2.0 - batch.stats.median_ns).abs() < 1e-6);
}

#[test]
fn operation_names_round_trip() {
    for op in Operation::ALL {
        assert_eq!(op.name().parse::<Operation>().unwrap(), op);
        assert_eq!(serde_json::to_value(op).unwrap(), Value::String(op.name().into()));
    }
    assert!("gate_maybe".parse::<Operation>().is_err());
}

#[test]
fn run_report_measures_nothing_when_the_gate_failed() {
    let backend = CpuBackend::oracle();
    let config = SuiteConfig { operations: vec![Operation::Keygen], ..SuiteConfig::default() };
    let gate = EquivalenceGate::new(GateState::Failed, Some("mismatch".into()));
    let mut events = 0;
    let report =
        run_report(&backend, &[ParamSet::PN10QP27], &config, "cpu-oracle", gate, &mut |_| events += 1).unwrap();
    assert!(report.rows.is_empty());
    assert_eq!(events, 0);
    assert_eq!(report.params, "none");
    parse_report(&report.to_json().unwrap()).unwrap();
}

#[test]
fn circuit_shapes_round_trip_and_inconsistent_ones_are_rejected() {
    let shape = CircuitShape { width_bits: 8, gates: 5, depth: 2, max_level_width: 3, level_widths: vec![3, 2] };
    let row = sample_row("int_add", "cpu:reference", 1e9).with_circuit(shape.clone());
    let report =
        Report::new("test", "cpu:reference", Environment::capture(None), EquivalenceGate::not_run(), vec![row]);
    let json = report.to_json().unwrap();
    parse_report(&json).unwrap();
    let back = parse_report(&json).unwrap();
    assert_eq!(back.rows[0].circuit.as_ref(), Some(&shape));
    // A row without a circuit serializes without the field.
    assert!(!sample_report("t", "b").to_json().unwrap().contains("circuit"));

    let mut v: Value = serde_json::from_str(&json).unwrap();
    v["rows"][0]["circuit"]["gates"] = Value::from(6);
    let msg = check(&v).unwrap_err().to_string();
    assert!(msg.contains("level_widths must have `depth` entries summing to `gates`"), "{msg}");
    v["rows"][0]["circuit"] = Value::from("wide");
    assert!(check(&v).unwrap_err().to_string().contains("expected struct CircuitShape"));
    // An integer row carries its circuit; no other row does.
    v["rows"][0].as_object_mut().unwrap().remove("circuit");
    assert!(check(&v).unwrap_err().to_string().contains("$.rows[0].circuit: missing"));
    let mut other: Value = serde_json::to_value(sample_report("t", "b")).unwrap();
    other["rows"][0]["circuit"] = serde_json::to_value(&shape).unwrap();
    assert!(check(&other).unwrap_err().to_string().contains("only integer operations"));
}
