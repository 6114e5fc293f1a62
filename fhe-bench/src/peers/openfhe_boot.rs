//! OpenFHE's `EvalBootstrap` as a [`BootPeer`]: each round in a fresh worker
//! (`boot_setup`, `boot_time`, `quit`), so its ~10 GB at N = 2^16 are returned to the
//! system when the round ends and its `VmHWM` is that round's peak (not `ru_maxrss`,
//! which a child inherits from the bench across fork and exec).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::ops::ckks_boot::{BootCase, BootPeer, BootRound};
use crate::peers::openfhe::{OpenFhe, BUILD_NOTE, PEER_BACKEND};

fn peer_err(message: impl Into<String>) -> Error {
    Error::Peer { peer: PEER_BACKEND, message: message.into() }
}

/// OpenFHE's bootstrapping, one worker per round.
pub struct OpenFheBoot {
    python: PathBuf,
    /// `info`'s reply: version, build, wheel, python.
    pub info: Value,
    /// The last round's `boot_time` reply (output noise degree and the like).
    last_time: Option<Value>,
}

impl OpenFheBoot {
    /// Checks `python` runs the worker (a missing venv is an error naming
    /// `scripts/openfhe-setup`) and keeps its `info`; no worker stays running.
    pub fn new(python: &Path) -> Result<OpenFheBoot> {
        let w = OpenFhe::spawn(python)?;
        Ok(OpenFheBoot { python: python.to_path_buf(), info: w.info.clone(), last_time: None })
    }
}

fn num(v: &Value, key: &str) -> Result<f64> {
    v.get(key).and_then(Value::as_f64).ok_or_else(|| peer_err(format!("reply without a number `{key}`: {v}")))
}

/// A round from the worker's `boot_setup` and `boot_time` replies.
pub fn parse_boot_round(setup: &Value, time: &Value) -> Result<BootRound> {
    let setup_ms = setup.get("setup_ms").map(|s| num(s, "total")).transpose()?;
    let setup_ns = setup_ms.ok_or_else(|| peer_err("boot_setup reply without setup_ms.total"))? * 1e6;
    let boot_ns = time
        .get("ns")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| peer_err("boot_time reply without samples"))?
        .iter()
        .map(|x| x.as_f64().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| peer_err(format!("bad sample {x}"))))
        .collect::<Result<Vec<f64>>>()?;
    let level = num(time, "output_level")?;
    if level < 0.0 || level.fract() != 0.0 {
        return Err(peer_err(format!("bad output level {level}")));
    }
    Ok(BootRound {
        setup_ns,
        boot_ns,
        max_err: num(time, "max_abs_err")?,
        mean_err: num(time, "mean_abs_err")?,
        output_level: level as usize,
        peak_bytes: num(time, "peak_rss_bytes")? as u64,
        key_count: time.get("key_count").and_then(Value::as_u64).map(|n| n as usize),
        key_bytes: time.get("key_bytes").and_then(Value::as_u64),
        phases_s: None,
    })
}

impl BootPeer for OpenFheBoot {
    fn round(&mut self, case: &BootCase, calls: usize, warmup: usize) -> Result<BootRound> {
        let mut w = OpenFhe::spawn(&self.python)?;
        let setup = w.ask(case.peer_request())?;
        let time = w.ask(json!({"cmd": "boot_time", "iters": calls, "warmup": warmup}))?;
        drop(w); // quit: the worker's memory goes back before our next round
        let round = parse_boot_round(&setup, &time)?;
        self.last_time = Some(time);
        Ok(round)
    }

    fn describe(&self, case: &BootCase) -> String {
        let l = &case.literal;
        let deg = self.last_time.as_ref().and_then(|t| t.get("noise_scale_deg_out")).map(Value::to_string);
        format!(
            "{BUILD_NOTE}; N=2^{}, depth {}, first prime {} bits, scale {} bits, dnum {}, HYBRID, FLEXIBLEAUTO, \
             {} secret, HEStd_128_classic (OpenFHE's table is the uniform-ternary one; it accepts this chain \
             with either secret), FHE enabled, EvalBootstrapSetup({:?}) + EvalBootstrapKeyGen(sk, {}); input: \
             real values uniform in [-1,1], MakeCKKSPackedPlaintext(x, 1, depth - 1) as its examples, \
             CKKSDataType REAL (its default; Decode adds its own noise against key recovery); output_level = \
             depth - GetLevel() as its examples compute (output noise scale degree {}); peak memory: VmHWM of a \
             fresh worker per round (Python and numpy included; not ru_maxrss, which inherits the bench's); key_bytes: key count times one key's BINARY \
             serialization",
            l.log_n,
            l.depth,
            l.first_bits,
            l.scale_bits,
            l.dnum,
            case.secret.describe(),
            [case.config.level_budget.0, case.config.level_budget.1],
            1usize << (l.log_n - 1),
            deg.unwrap_or_else(|| "?".into()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time_reply() -> Value {
        json!({"ok": true, "ns": [1.5e9, 1.6e9], "max_abs_err": 2f64.powi(-18), "mean_abs_err": 2f64.powi(-21),
               "output_level": 3, "peak_rss_bytes": 1u64 << 33, "key_count": 53, "key_bytes": 4000})
    }

    #[test]
    fn a_round_is_read_from_the_replies() {
        let r = parse_boot_round(&json!({"setup_ms": {"total": 1500.0}}), &time_reply()).unwrap();
        assert_eq!(r.setup_ns, 1.5e9);
        assert_eq!(r.boot_ns, vec![1.5e9, 1.6e9]);
        assert_eq!((r.output_level, r.peak_bytes, r.key_count, r.key_bytes), (3, 1 << 33, Some(53), Some(4000)));
        assert_eq!(crate::ops::ckks_boot::bits(r.max_err), Some(18.0));
    }

    #[test]
    fn replies_missing_a_field_are_errors_not_panics() {
        let setup = json!({"setup_ms": {"total": 1.0}});
        assert!(parse_boot_round(&json!({}), &time_reply()).is_err());
        for key in ["ns", "max_abs_err", "output_level", "peak_rss_bytes"] {
            let mut t = time_reply();
            t.as_object_mut().unwrap().remove(key);
            assert!(parse_boot_round(&setup, &t).is_err(), "{key}");
        }
        let mut t = time_reply();
        t["ns"] = json!([]);
        assert!(parse_boot_round(&setup, &t).is_err());
        t["ns"] = json!([-1.0]);
        assert!(parse_boot_round(&setup, &t).is_err());
        let mut t = time_reply();
        t["output_level"] = json!(2.5);
        assert!(parse_boot_round(&setup, &t).is_err());
    }
}
