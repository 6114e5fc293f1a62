//! OpenFHE's `EvalFEFuncBootstrap` as an [`FePeer`]: each round in a fresh worker
//! (`fe_setup`, `fe_time`, `quit`), so its memory goes back to the system when the round
//! ends and its `VmHWM` is that round's peak.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::ops::ckks_fe::{FeCase, FePeer, FeResult, FeRound};
use crate::peers::openfhe::{OpenFhe, BUILD_NOTE, PEER_BACKEND};

fn peer_err(message: impl Into<String>) -> Error {
    Error::Peer { peer: PEER_BACKEND, message: message.into() }
}

/// OpenFHE's FE functional bootstrapping, one worker per round.
pub struct OpenFheFe {
    python: PathBuf,
    pub info: Value,
    last_setup: Option<Value>,
}

impl OpenFheFe {
    /// Checks `python` runs the worker (a missing venv is an error naming
    /// `scripts/openfhe-setup`); no worker stays running.
    pub fn new(python: &Path) -> Result<OpenFheFe> {
        let w = OpenFhe::spawn(python)?;
        Ok(OpenFheFe { python: python.to_path_buf(), info: w.info.clone(), last_setup: None })
    }
}

fn num(v: &Value, key: &str) -> Result<f64> {
    v.get(key).and_then(Value::as_f64).ok_or_else(|| peer_err(format!("reply without a number `{key}`: {v}")))
}

fn count(v: &Value, key: &str) -> Result<usize> {
    let x = num(v, key)?;
    if x < 0.0 || x.fract() != 0.0 {
        return Err(peer_err(format!("bad `{key}` {x}")));
    }
    Ok(x as usize)
}

/// A round from the worker's `fe_setup` and `fe_time` replies, in `case`'s order.
pub fn parse_fe_round(case: &FeCase, setup: &Value, time: &Value) -> Result<FeRound> {
    let setup_ns =
        setup.get("setup_ms").map(|s| num(s, "total")).transpose()?.ok_or_else(|| peer_err("no setup_ms"))? * 1e6;
    let fns =
        time.get("functions").and_then(Value::as_array).ok_or_else(|| peer_err("fe_time reply without functions"))?;
    let mut results = Vec::new();
    for (f, _) in &case.series {
        let r = fns
            .iter()
            .find(|r| r.get("name").and_then(Value::as_str) == Some(f.name()))
            .ok_or_else(|| peer_err(format!("fe_time reply without {}", f.name())))?;
        results.push(FeResult {
            ns: num(r, "ns")?,
            mean_err: num(r, "mean_abs_err")?,
            max_err: num(r, "max_abs_err")?,
            bits_mean_rel: r.get("bits_mean_rel").and_then(Value::as_f64),
            output_level: count(r, "output_level")?,
        });
    }
    Ok(FeRound {
        setup_ns,
        results,
        peak_bytes: num(time, "peak_rss_bytes")? as u64,
        log_qp: Some(count(setup, "log_qp")? as u32),
        dnum: count(setup, "dnum")?,
        depth: count(setup, "depth")?,
        key_count: None,
        key_bytes: None,
        diagonals: None,
    })
}

impl FePeer for OpenFheFe {
    fn round(&mut self, case: &FeCase, warmup: usize) -> Result<FeRound> {
        let mut w = OpenFhe::spawn(&self.python)?;
        let setup = w.ask(case.peer_request())?;
        let time = w.ask(json!({"cmd": "fe_time", "warmup": warmup}))?;
        drop(w);
        let round = parse_fe_round(case, &setup, &time)?;
        self.last_setup = Some(setup);
        Ok(round)
    }

    fn describe(&self, case: &FeCase) -> String {
        let tried = self.last_setup.as_ref().and_then(|s| s.get("dnum_tried")).map(Value::to_string);
        format!(
            "{BUILD_NOTE}; N=2^{}, scale {} bits, first modulus {} bits, SPARSE_ENCAPSULATED, FLEXIBLEAUTO, HYBRID, \
             HEStd_NotSet with log QP held within {:?} (seed 2), depth = max GetFEFBTDepth + {} levels after, \
             EvalFEFuncBootstrapSetup({:?}) + EvalBootstrapKeyGen; dnum tried (dnum, log QP): {}; our series' \
             coefficients; input at level depth - (b + 1) as seed 2; peak memory: VmHWM of a fresh worker",
            case.chain.log_n,
            case.chain.scale_bits,
            case.chain.scale_bits + 1,
            case.bound(),
            case.chain.levels_after,
            [case.chain.level_budget.0, case.chain.level_budget.1],
            tried.unwrap_or_else(|| "?".into()),
        )
    }
}

#[cfg(test)]
mod tests {
    use fhe_schemes::ckks::circuits::seed_two_chains;
    use fhe_schemes::ckks::FeFunction;

    use super::*;

    fn case() -> FeCase {
        FeCase::new(seed_two_chains().remove(0), &[FeFunction::Identity, FeFunction::Exp]).unwrap()
    }

    fn replies() -> (Value, Value) {
        let f = |name: &str| {
            json!({"name": name, "ns": 2.5e9, "mean_abs_err": 1e-3, "max_abs_err": 1e-2, "bits_mean_rel": 9.0,
                   "output_level": 4, "degree": 7})
        };
        (
            json!({"setup_ms": {"total": 1000.0}, "log_qp": 730, "dnum": 4, "depth": 20}),
            json!({"functions": [f("exp"), f("identity")], "peak_rss_bytes": 1u64 << 33}),
        )
    }

    #[test]
    fn a_round_is_read_in_the_case_order() {
        let (setup, time) = replies();
        let r = parse_fe_round(&case(), &setup, &time).unwrap();
        assert_eq!((r.setup_ns, r.log_qp, r.dnum, r.depth, r.results.len()), (1e9, Some(730), 4, 20, 2));
        assert_eq!((r.results[0].output_level, r.results[0].bits_mean_rel), (4, Some(9.0)));
        // The request carries the case's series and the sparse bound of N = 2^15.
        let req = case().peer_request();
        assert_eq!((req["bound"].as_u64(), req["functions"].as_array().map(Vec::len)), (Some(767), Some(2)));
    }

    #[test]
    fn replies_missing_a_field_are_errors_not_panics() {
        let (setup, time) = replies();
        for key in ["log_qp", "dnum", "depth"] {
            let mut s = setup.clone();
            s.as_object_mut().unwrap().remove(key);
            assert!(parse_fe_round(&case(), &s, &time).is_err(), "{key}");
        }
        let mut t = time.clone();
        t["functions"] = json!([t["functions"][0].clone()]);
        assert!(parse_fe_round(&case(), &setup, &t).unwrap_err().to_string().contains("identity"));
        let mut t = time.clone();
        t["functions"][1]["output_level"] = json!(2.5);
        assert!(parse_fe_round(&case(), &setup, &t).is_err());
        assert!(parse_fe_round(&case(), &setup, &json!({})).is_err());
    }
}
