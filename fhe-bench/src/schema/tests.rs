//! The typed schema: every file under `bench/results/` loads, unknown fields and
//! broken cross-field rules are refused with their JSON path.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use crate::report::EquivalenceGate;
use crate::stats::{Plan, Stats};

fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/results")
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// Every file the repository holds loads through the schema: result files as
/// [`Report`]s, `recommend/` as [`Recommendation`]s. `openfhe/` holds the Python peer's
/// baseline notes (`fhe-bench/peers/openfhe/baseline.py`) and `python/` the Python
/// package's measurements: free-form records no Rust code reads, only checked to be
/// what they claim.
#[test]
fn every_file_under_bench_results_loads() {
    let mut files = Vec::new();
    json_files(&results_dir(), &mut files);
    files.sort();
    let (mut reports, mut recs, mut baselines) = (0, 0, 0);
    for path in &files {
        let folder = path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap();
        match folder {
            crate::chart::RECOMMEND_DIR => {
                load_recommendation(path).unwrap_or_else(|e| panic!("{e}"));
                recs += 1;
            }
            crate::chart::OPENFHE_DIR => {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
                let kind = v["kind"].as_str().unwrap_or("");
                assert!(
                    ["openfhe_ckks_baseline", "openfhe_ckks_precision_draws"].contains(&kind),
                    "{}: kind {kind:?}",
                    path.display()
                );
                baselines += 1;
            }
            // The Python package's records (overhead, Ray): free-form, of a known kind.
            crate::chart::PYTHON_DIR => {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
                let kind = v["kind"].as_str().unwrap_or("");
                assert!(["python_overhead", "ray_scale_out"].contains(&kind), "{}: kind {kind:?}", path.display());
            }
            // The radix-integer examples' records: free-form, of a known kind.
            crate::chart::RADIX_DIR => {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
                let kind = v["kind"].as_str().unwrap_or("");
                assert!(
                    ["radix_vs_tfhe", "radix_timing", "pbs_vs_tfhe"].contains(&kind),
                    "{}: kind {kind:?}",
                    path.display()
                );
            }
            _ => {
                load_report(path).unwrap_or_else(|e| panic!("{e}"));
                reports += 1;
            }
        }
    }
    assert!(reports > 0 && recs > 0, "{reports} reports, {recs} recommendations, {baselines} baselines");
}

fn row(op: &str, median: f64) -> Row {
    let stats = Stats::from_runs(&[vec![median * 0.9, median, median * 1.2], vec![median; 3]]).unwrap();
    Row::new(op, "PN10QP27", "cpu:reference", "reference", 2, Plan { iterations: 3, warmup: 1, runs: 2 }, stats)
}

fn report_value() -> Value {
    let shape = crate::CircuitShape { width_bits: 8, gates: 3, depth: 2, max_level_width: 2, level_widths: vec![2, 1] };
    let rows = vec![row("ntt_forward", 1000.0), row("int_add", 5e6).with_circuit(shape)];
    let r = Report::new("cpu", "cpu:reference", Environment::capture(None), EquivalenceGate::not_run(), rows);
    serde_json::to_value(r).unwrap()
}

fn problems(doc: &Value) -> String {
    match parse_report(&doc.to_string()) {
        Err(e @ Error::Schema { .. }) => e.to_string(),
        other => panic!("accepted or another error: {other:?}"),
    }
}

#[test]
fn unknown_fields_are_refused_at_every_level() {
    let good = report_value();
    parse_report(&good.to_string()).unwrap();
    for at in ["", "/environment", "/environment/cpu_features", "/equivalence_gate", "/rows/0", "/rows/1/circuit"] {
        let mut doc = good.clone();
        doc.pointer_mut(at).unwrap().as_object_mut().unwrap().insert("median_ms".into(), 1.into());
        let msg = problems(&doc);
        assert!(msg.contains("unknown field `median_ms`"), "{at}: {msg}");
    }
}

#[test]
fn gpu_identity_is_required_but_nullable() {
    let mut doc = report_value();
    doc["environment"]["gpu_name"] = Value::Null;
    parse_report(&doc.to_string()).unwrap();
    doc["environment"].as_object_mut().unwrap().remove("gpu_driver");
    assert!(problems(&doc).contains("missing field `gpu_driver`"));
}

#[test]
fn derived_figures_must_agree_with_the_median() {
    type Mutation = fn(&mut Value);
    let cases: [(&str, Mutation, &str); 4] = [
        ("per item", |d| d["rows"][0]["per_item_median_ns"] = 1.0.into(), "per_item_median_ns: 1 is not"),
        ("throughput", |d| d["rows"][0]["throughput_per_s"] = 5.0.into(), "throughput_per_s: 5 is not"),
        ("samples", |d| d["rows"][0]["samples"] = 7.into(), "samples 7 is not iterations x runs"),
        ("run medians", |d| d["rows"][0]["run_medians_ns"] = vec![1000.0].into(), "1 run_medians_ns for 2 runs"),
    ];
    for (what, mutate, want) in cases {
        let mut doc = report_value();
        mutate(&mut doc);
        let msg = problems(&doc);
        assert!(msg.contains("$.rows[0]") && msg.contains(want), "{what}: {msg}");
    }
    // Several problems are reported together.
    let mut doc = report_value();
    doc["lane"] = "".into();
    doc["rows"][1]["batch_size"] = 0.into();
    let msg = problems(&doc);
    assert!(msg.contains("$.lane") && msg.contains("$.rows[1].batch_size"), "{msg}");
}

#[test]
fn load_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, "{}").unwrap();
    let e = load_report(&path).unwrap_err();
    assert!(matches!(&e, Error::InFile { source, .. } if matches!(**source, Error::Schema { .. })), "{e:?}");
    assert!(e.to_string().starts_with(&path.display().to_string()), "{e}");
}

/// `bench/schema.json` and `bench/recommend.schema.json` (for other tools) name exactly
/// the fields these structs write, so a file that follows them also loads here.
#[test]
fn json_schemas_name_the_fields_of_the_structs() {
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let props = |v: &Value| keys(&v["properties"]);
    let schema: Value = serde_json::from_str(crate::JSON_SCHEMA).unwrap();
    let mut doc = report_value();
    let env = doc["environment"].as_object_mut().unwrap();
    for f in ["cpu_id", "cpu_caches", "bootstrap_threads", "git_dirty"] {
        env.insert(f.into(), Value::Null);
    }
    doc["equivalence_gate"]["detail"] = "x".into();
    doc["rows"][1]["note"] = "x".into();
    doc["rows"][1]["precision_bits"] = Value::Null;
    doc["rows"][1]["bootstrap"] = Value::Null;
    assert_eq!(keys(&doc), props(&schema));
    assert_eq!(keys(&doc["environment"]), props(&schema["$defs"]["environment"]));
    assert_eq!(keys(&doc["equivalence_gate"]), props(&schema["$defs"]["equivalence_gate"]));
    assert_eq!(keys(&doc["rows"][1]), props(&schema["$defs"]["row"]));

    // A recommendation the repository holds, written back: every field is always written.
    let dir = results_dir().join(crate::chart::RECOMMEND_DIR);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let rec = load_recommendation(&files[0]).unwrap();
    let schema: Value = serde_json::from_str(include_str!("../../../bench/recommend.schema.json")).unwrap();
    let doc = serde_json::to_value(rec).unwrap();
    assert_eq!(keys(&doc), props(&schema));
    assert_eq!(keys(&doc["candidates"][0]), props(&schema["$defs"]["candidate"]));
    assert_eq!(keys(&doc["candidates"][0]["ops"][0]), props(&schema["$defs"]["operation"]));
}

fn facts(output_level: usize, levels_left: usize) -> crate::BootstrapFacts {
    crate::BootstrapFacts {
        secret: "uniform ternary".into(),
        log_qp: Some(1719),
        within_security_bound: true,
        precision_mean_bits: Some(20.0),
        output_level,
        levels_left,
        peak_memory_bytes: 1 << 33,
        key_count: Some(60),
        key_bytes: Some(1 << 32),
    }
}

fn problems_of(rows: Vec<Row>) -> String {
    let r =
        Report::new("ckks-bootstrap", "cpu:reference", Environment::capture(None), EquivalenceGate::not_run(), rows);
    problems(&serde_json::to_value(r).unwrap())
}

#[test]
fn bootstrap_facts_ride_on_bootstrap_rows_with_consistent_levels() {
    let ok = row("ckks_bootstrap", 1e9).with_bootstrap(facts(3, 2));
    let r = Report::new("x", "cpu:reference", Environment::capture(None), EquivalenceGate::not_run(), vec![ok]);
    parse_report(&serde_json::to_string(&r).unwrap()).unwrap();
    let fe = row("ckks_fe_bootstrap", 1e9).with_bootstrap(facts(3, 2));
    let r = Report::new("x", "cpu:reference", Environment::capture(None), EquivalenceGate::not_run(), vec![fe]);
    parse_report(&serde_json::to_string(&r).unwrap()).unwrap();
    let p = problems_of(vec![row("ckks_rotate", 1e9).with_bootstrap(facts(3, 2))]);
    assert!(p.contains("only `ckks_bootstrap` and `ckks_fe_bootstrap` rows"), "{p}");
    let p = problems_of(vec![row("ckks_bootstrap", 1e9).with_bootstrap(facts(3, 3))]);
    assert!(p.contains("levels_left"), "{p}");
    let p = problems_of(vec![row("ckks_bootstrap_setup", 1e9).with_precision(Some(20.0))]);
    assert!(p.contains("precision"), "{p}");
}
