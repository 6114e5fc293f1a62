//! The scoring rules on synthetic timings: geometric mean, near tie, confidence levels,
//! rotation, disqualification, and bad input.

use fhe_bench::schema::{
    constructor_lines, parse_recommendation, Recommendation, Suite, RECOMMENDATION_KIND, RECOMMEND_SCHEMA,
    RECOMMEND_SCHEMA_VERSION,
};
use fhe_bench::Environment;
use serde_json::Value;

use super::*;

const OPS: [&str; 3] = ["ntt_forward", "ntt_inverse", "ntt_round_trip"];

/// A candidate whose operation `i` takes `medians[i] * factor[r]` in repetition `r`,
/// with a little symmetric spread around it (so medians are exact).
fn cand(name: &str, medians: &[f64], rep_factors: &[f64]) -> CandidateTimings {
    CandidateTimings {
        backend: name.to_string(),
        disqualified: None,
        ops: OPS
            .iter()
            .zip(medians)
            .map(|(op, &m)| OpTimings {
                operation: op.to_string(),
                reps: rep_factors.iter().map(|f| vec![m * f * 0.99, m * f, m * f * 1.01]).collect(),
            })
            .collect(),
    }
}

fn uniform(name: &str, median: f64, reps: usize) -> CandidateTimings {
    cand(name, &[median; 3], &vec![1.0; reps])
}

fn result<'a>(s: &'a Scoring, name: &str) -> &'a CandidateResult {
    s.candidates.iter().find(|c| c.backend == name).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn geomean_is_equal_weight() {
    assert!(close(geomean(&[2.0, 8.0]).unwrap(), 4.0));
    assert!(close(geomean(&[1.0, 1.0, 8.0]).unwrap(), 2.0));
    // One slow operation does not dominate as it would in an arithmetic mean of times.
    assert!(close(geomean(&[0.5, 2.0]).unwrap(), 1.0));
    assert_eq!(geomean(&[]), None);
    assert_eq!(geomean(&[1.0, 0.0]), None);
    assert_eq!(geomean(&[1.0, f64::NAN]), None);
}

#[test]
fn score_is_the_geomean_of_ratios_to_the_default() {
    let default = cand("cpu:a", &[100.0, 200.0, 400.0], &[1.0, 1.0, 1.0]);
    // Twice as fast on one op, equal on one, half as fast on one: geomean 1.
    let other = cand("cpu:b", &[50.0, 200.0, 800.0], &[1.0, 1.0, 1.0]);
    // 10% faster on every op.
    let fast = cand("cpu:c", &[90.0, 180.0, 360.0], &[1.0, 1.0, 1.0]);
    let s = score(&[default, other, fast], "cpu:a").unwrap();
    assert_eq!(s.baseline, "cpu:a");
    assert!(s.baseline_is_default);
    assert!(close(result(&s, "cpu:a").score.unwrap(), 1.0));
    assert!(close(result(&s, "cpu:b").score.unwrap(), 1.0));
    let b = result(&s, "cpu:b");
    assert_eq!(b.ops.iter().map(|o| o.ratio).collect::<Vec<_>>(), vec![0.5, 1.0, 2.0]);
    assert!(close(result(&s, "cpu:c").score.unwrap(), 0.9));
    assert_eq!(s.fastest, "cpu:c");
    assert_eq!(s.winner, "cpu:c");
    assert!(!s.near_tie);
    assert!(close(result(&s, "cpu:a").relative_latency.unwrap(), 1.0 / 0.9 - 1.0));
    assert!(close(result(&s, "cpu:c").relative_latency.unwrap(), 0.0));
    // Medians are per operation over the pooled repetitions.
    let c = result(&s, "cpu:c");
    assert!(close(c.ops[0].median_ns, 90.0));
    assert_eq!(c.ops[0].samples, 9);
    assert_eq!(c.ops[0].rep_medians_ns.len(), 3);
}

#[test]
fn near_tie_keeps_the_default() {
    // 2.5% faster than the default: within 3%, the default stays.
    let s = score(&[uniform("cpu:default", 100.0, 3), uniform("cpu:new", 100.0 / 1.025, 3)], "cpu:default").unwrap();
    assert_eq!(s.fastest, "cpu:new");
    assert_eq!(s.winner, "cpu:default");
    assert!(s.near_tie);
    assert_eq!(s.confidence, Confidence::Low);
    assert!(s.confidence_reason.contains("near tie"), "{}", s.confidence_reason);
    assert!(s.min_lead.unwrap() < 0.0);

    // Exactly at the boundary (3.0%) is still a tie; 3.5% is not.
    let s = score(&[uniform("cpu:default", 103.0, 3), uniform("cpu:new", 100.0, 3)], "cpu:default").unwrap();
    assert!(s.near_tie, "{:?}", result(&s, "cpu:default").relative_latency);
    let s = score(&[uniform("cpu:default", 103.5, 3), uniform("cpu:new", 100.0, 3)], "cpu:default").unwrap();
    assert!(!s.near_tie);
    assert_eq!(s.winner, "cpu:new");
}

#[test]
fn near_tie_keeps_only_the_default() {
    // The default listed second: the tie keeps the default, not the first listed.
    let s = score(&[uniform("cpu:new", 99.0, 2), uniform("cpu:default", 100.0, 2)], "cpu:default").unwrap();
    assert_eq!(s.baseline, "cpu:default");
    assert_eq!(s.winner, "cpu:default");
    // Without the default among the candidates the first one is the baseline, and a
    // near tie keeps nothing: the fastest wins, with low confidence.
    let s = score(&[uniform("cpu:x", 100.0, 2), uniform("cpu:y", 99.0, 2)], "cpu:default").unwrap();
    assert_eq!(s.baseline, "cpu:x");
    assert!(!s.baseline_is_default);
    assert!(!s.near_tie);
    assert_eq!((s.winner.as_str(), s.confidence), ("cpu:y", Confidence::Low));
}

#[test]
fn confidence_levels_follow_the_lead_in_every_repetition() {
    let base = || uniform("cpu:base", 100.0, 3);
    // 6% lead in every repetition: high.
    let s = score(&[base(), uniform("cpu:w", 100.0 / 1.06, 3)], "cpu:base").unwrap();
    assert_eq!((s.winner.as_str(), s.confidence), ("cpu:w", Confidence::High));
    assert!(close(s.min_lead.unwrap(), 0.06));
    assert_eq!(s.lead_per_rep.len(), 3);

    // 4% lead everywhere: medium (the overall gap also exceeds the 3% tie).
    let s = score(&[base(), uniform("cpu:w", 100.0 / 1.04, 3)], "cpu:base").unwrap();
    assert_eq!((s.winner.as_str(), s.confidence), ("cpu:w", Confidence::Medium));

    // 10% lead overall, but one repetition only 2%: low.
    let w = cand("cpu:w", &[100.0 / 1.1; 3], &[1.0, 1.1 / 1.02, 1.0]);
    let s = score(&[base(), w], "cpu:base").unwrap();
    assert_eq!(s.winner, "cpu:w");
    assert_eq!(s.confidence, Confidence::Low);
    assert!(close(s.min_lead.unwrap(), 0.02));

    // Fastest overall, but slower than the base in one repetition: low.
    let w = cand("cpu:w", &[100.0 / 1.2; 3], &[1.0, 1.0, 1.3]);
    let s = score(&[base(), w], "cpu:base").unwrap();
    assert_eq!(s.winner, "cpu:w");
    assert_eq!(s.confidence, Confidence::Low);
    assert!(s.confidence_reason.contains("not the fastest"), "{}", s.confidence_reason);

    // The lead is over the runner-up, not the slowest: 6% over one, 4% over the other.
    let s =
        score(&[base(), uniform("cpu:near", 100.0 / 1.06 * 1.04, 3), uniform("cpu:w", 100.0 / 1.06, 3)], "cpu:base")
            .unwrap();
    assert_eq!((s.winner.as_str(), s.confidence), ("cpu:w", Confidence::Medium));

    // The default itself can win with high confidence.
    let s = score(&[base(), uniform("cpu:slow", 120.0, 3)], "cpu:base").unwrap();
    assert_eq!((s.winner.as_str(), s.confidence, s.near_tie), ("cpu:base", Confidence::High, false));
}

#[test]
fn median_cv_is_over_operations() {
    let mut c = uniform("cpu:a", 100.0, 1);
    c.ops[0].reps = vec![vec![100.0; 4]];
    c.ops[1].reps = vec![vec![90.0, 110.0, 90.0, 110.0]];
    c.ops[2].reps = vec![vec![50.0, 150.0, 50.0, 150.0]];
    let s = score(&[c], "cpu:a").unwrap();
    let r = result(&s, "cpu:a");
    let cvs: Vec<f64> = r.ops.iter().map(|o| o.cv).collect();
    assert_eq!(cvs[0], 0.0);
    assert!(cvs[1] > 0.0 && cvs[2] > cvs[1]);
    assert!(close(r.median_cv.unwrap(), cvs[1]));
    // A single qualified candidate is recommended with nothing to compare against.
    assert_eq!(s.confidence, Confidence::Low);
    assert!(s.lead_per_rep.is_empty());
}

#[test]
fn rotation_starts_each_repetition_with_another_candidate() {
    assert_eq!(rotation(4, 0), vec![0, 1, 2, 3]);
    assert_eq!(rotation(4, 1), vec![1, 2, 3, 0]);
    assert_eq!(rotation(4, 3), vec![3, 0, 1, 2]);
    assert_eq!(rotation(4, 4), vec![0, 1, 2, 3]);
    assert_eq!(rotation(2, 5), vec![1, 0]);
    let firsts: Vec<usize> = (0..3).map(|r| rotation(3, r)[0]).collect();
    assert_eq!(firsts, vec![0, 1, 2]);
    for r in 0..7 {
        let mut o = rotation(5, r);
        o.sort();
        assert_eq!(o, vec![0, 1, 2, 3, 4], "rep {r} is a permutation");
    }
    assert!(rotation(0, 3).is_empty());
}

#[test]
fn disqualified_candidates_are_never_recommended() {
    let wrong = CandidateTimings {
        backend: "cpu:fast-but-wrong".into(),
        disqualified: Some("bootstrap differs from the oracle".into()),
        ops: Vec::new(),
    };
    let s = score(&[uniform("cpu:base", 100.0, 2), wrong.clone()], "cpu:base").unwrap();
    assert_eq!(s.winner, "cpu:base");
    let w = result(&s, "cpu:fast-but-wrong");
    assert_eq!(w.score, None);
    assert!(w.disqualified.as_deref().unwrap().contains("differs"));
    // The default disqualified: the first qualified candidate is the baseline.
    let bad_default = CandidateTimings { backend: "cpu:base".into(), ..wrong.clone() };
    let s = score(&[bad_default, uniform("cpu:x", 100.0, 2), uniform("cpu:y", 80.0, 2)], "cpu:base").unwrap();
    assert_eq!(s.baseline, "cpu:x");
    assert!(!s.baseline_is_default);
    assert_eq!(s.winner, "cpu:y");
    // Nobody qualified: an error, not a recommendation.
    assert!(matches!(score(&[wrong], "cpu:base"), Err(Error::InvalidInput(_))));
}

#[test]
fn inconsistent_timings_are_errors() {
    let a = uniform("cpu:a", 100.0, 3);
    let fewer_reps = uniform("cpu:b", 100.0, 2);
    assert!(matches!(score(&[a.clone(), fewer_reps], "cpu:a"), Err(Error::InvalidInput(_))));
    let mut other_ops = uniform("cpu:b", 100.0, 3);
    other_ops.ops[0].operation = "bootstrap".into();
    assert!(matches!(score(&[a.clone(), other_ops], "cpu:a"), Err(Error::InvalidInput(_))));
    let mut empty = uniform("cpu:b", 100.0, 3);
    empty.ops[1].reps[2].clear();
    assert!(matches!(score(&[a.clone(), empty], "cpu:a"), Err(Error::InvalidInput(_))));
    let zero = uniform("cpu:z", 0.0, 3);
    assert!(score(&[zero, a.clone()], "cpu:z").is_err());
    let mut bad = uniform("cpu:b", 100.0, 3);
    bad.ops[0].reps[0][0] = f64::NAN;
    assert!(score(&[a, bad], "cpu:a").is_err());
}

#[test]
fn suite_names_parse() {
    assert_eq!("kernel".parse::<Suite>().unwrap(), Suite::Kernel);
    assert_eq!("Primitive".parse::<Suite>().unwrap(), Suite::Primitive);
    assert_eq!("ckks-primitive".parse::<Suite>().unwrap(), Suite::CkksPrimitive);
    assert_eq!(serde_json::to_string(&Suite::CkksPrimitive).unwrap(), "\"ckks-primitive\"");
    let e = "ckks".parse::<Suite>().unwrap_err().to_string();
    assert!(e.contains("kernel") && e.contains("ckks-primitive"), "{e}");
    assert_eq!(
        Suite::CkksPrimitive.operations().iter().map(|o| o.name()).collect::<Vec<_>>(),
        vec!["ckks_encrypt", "ckks_decrypt", "ckks_mul_relin", "ckks_rotate", "ckks_hoisted4"]
    );
    assert_eq!(
        Suite::Kernel.operations().iter().map(|o| o.name()).collect::<Vec<_>>(),
        vec!["ntt_forward", "ntt_inverse", "ntt_round_trip"]
    );
    assert_eq!(
        Suite::Primitive.operations().iter().map(|o| o.name()).collect::<Vec<_>>(),
        vec!["key_switch", "bootstrap", "gate_and"]
    );
}

fn timings(name: &str, median: f64, reps: usize) -> CandidateTimings {
    let ops = Suite::Kernel.operations();
    CandidateTimings {
        backend: name.into(),
        disqualified: None,
        ops: ops
            .iter()
            .map(|o| OpTimings {
                operation: o.name().into(),
                reps: vec![vec![median * 0.99, median, median * 1.01]; reps],
            })
            .collect(),
    }
}

/// A consistent recommendation from synthetic timings: 2 reps of 3 calls, a
/// disqualified third candidate.
fn recommendation() -> Recommendation {
    let mut wrong = timings("cpu:wrong", 1.0, 2);
    wrong.disqualified = Some("differs".into());
    wrong.ops.clear();
    let scoring = score(&[timings("cpu:a", 100.0, 2), timings("cpu:b", 80.0, 2), wrong], "cpu:a").unwrap();
    Recommendation {
        schema_version: RECOMMEND_SCHEMA_VERSION,
        kind: RECOMMENDATION_KIND.into(),
        suite: Suite::Kernel,
        params: "PN10QP27".into(),
        default: "cpu:a".into(),
        default_source: "built-in".into(),
        requested: vec!["cpu:a".into(), "cpu:b".into(), "cpu:wrong".into()],
        operations: Suite::Kernel.operations().iter().map(|o| o.name().into()).collect(),
        reps: 2,
        iterations: 3,
        warmup: 0,
        order_per_rep: vec![vec!["cpu:a".into(), "cpu:b".into()], vec!["cpu:b".into(), "cpu:a".into()]],
        oracle: "cpu:reference".into(),
        check: "ntt_forward, word for word".into(),
        environment: Environment::capture(None),
        constructor: constructor_lines(&scoring.winner),
        scoring,
    }
}

#[test]
fn recommendation_round_trips_and_its_rules_are_checked() {
    let rec = recommendation();
    assert_eq!(rec.scoring.winner, "cpu:b");
    let good = serde_json::to_value(&rec).unwrap();
    assert_eq!(parse_recommendation(&good.to_string()).unwrap(), rec);
    type Mutation = fn(&mut Value);
    let cases: [(Mutation, &str); 9] = [
        (|d| d["candidates"][1]["ops"][0]["ratio"] = 0.5.into(), "$.candidates[1].ops[0].ratio"),
        (|d| d["candidates"][1]["score"] = 0.5.into(), "$.candidates[1].score"),
        (|d| d["winner"] = "cpu:a".into(), "$.winner"),
        (|d| d["constructor"]["env"] = "LUX_FHE_BACKEND=cpu".into(), "$.constructor"),
        (|d| d["kind"] = "bench".into(), "$.kind"),
        (|d| d["candidates"][2]["score"] = 1.0.into(), "$.candidates[2]: a disqualified candidate"),
        (|d| d["order_per_rep"][0][0] = "cpu:wrong".into(), "$.order_per_rep[0]"),
        (|d| d["candidates"][0]["ops"][0]["extra"] = 1.into(), "unknown field `extra`"),
        (|d| drop(d.as_object_mut().unwrap().remove("min_lead")), "missing field `min_lead`"),
    ];
    for (mutate, want) in cases {
        let mut doc = good.clone();
        mutate(&mut doc);
        let msg = parse_recommendation(&doc.to_string()).unwrap_err().to_string();
        assert!(msg.contains(RECOMMEND_SCHEMA) && msg.contains(want), "{want}: {msg}");
    }
}
