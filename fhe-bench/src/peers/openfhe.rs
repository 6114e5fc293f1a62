//! OpenFHE as a CKKS peer: the Python worker `fhe-bench/peers/openfhe/worker.py` (the
//! JSON-lines protocol is `protocol.py`'s docstring), started with the interpreter of the venv that
//! `scripts/openfhe-setup` makes (`target/openfhe-venv/bin/python`: CPython 3.10 and the
//! PyPI wheel `openfhe==1.6.1.0.22.4`, a portable build without AVX) and
//! `OMP_NUM_THREADS=1`.
//!
//! [`OpenFhe::setup_for`] asks for the preset's own shape: N, scale bits, depth, `dnum`
//! and the bit size of our first prime (55 at `slots4096-scale40-depth2`, where a 60-bit
//! first prime is refused at 128-bit security because OpenFHE reserves two 60-bit special
//! primes; 60 elsewhere), HYBRID key switching, FIXEDMANUAL scaling (nothing rescales by
//! itself), uniform ternary secret, 128-bit classic security, rotation keys 1..4, one
//! thread. Key generation is timed by the worker's `setup` (KeyGen, EvalMultKeyGen,
//! EvalRotateKeyGen); every other operation by its `time` command.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use fhe_api::ckks::params::{Params, Preset};
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::ops::ckks::{CkksOp, ROTATIONS};

/// The peer's `backend` in rows (with `/interleaved` in alternated rows).
pub const PEER_BACKEND: &str = "peer:openfhe";
/// The peer's `ntt_variant`: OpenFHE's own NTT, in the wheel's portable build.
pub const PEER_VARIANT: &str = "openfhe-1.6.1-portable";
/// The worker script.
pub const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/openfhe/worker.py");
/// Where `scripts/openfhe-setup` puts the venv's python, relative to the workspace root.
pub const VENV_PYTHON: &str = "target/openfhe-venv/bin/python";
/// What the rows say about the peer's build.
pub const BUILD_NOTE: &str = "OpenFHE 1.6.1 (PyPI wheel openfhe==1.6.1.0.22.4, a portable build without AVX), \
                              OMP_NUM_THREADS=1";

fn peer_err(message: impl Into<String>) -> Error {
    Error::Peer { peer: PEER_BACKEND, message: message.into() }
}

/// The precision OpenFHE's worker measured (`bits_max` of its `precision` command).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PeerPrecision {
    /// Dec(Enc(x)) against x.
    pub fresh: Option<f64>,
    /// Dec(ModReduce(EvalMult(Enc(x), Enc(y)))) against x y.
    pub mul: Option<f64>,
    /// Dec(EvalRotate(Enc(x), 1)) against x rotated by one.
    pub rotate: Option<f64>,
    /// Dec(ModReduce(EvalMult(Enc(x), Encode(y)))) against x y.
    pub mul_plain: Option<f64>,
}

/// A running worker. Dropping it sends `quit` (and kills a worker that does not exit).
pub struct OpenFhe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The last `setup` request (key generation repeats it).
    setup: Option<Value>,
    /// The reply of the last `setup`.
    pub setup_reply: Option<Value>,
    precision: Option<PeerPrecision>,
    /// `info`'s reply: version, build, wheel, python.
    pub info: Value,
}

impl OpenFhe {
    /// The worker's interpreter when none is named: `$LUX_OPENFHE_PYTHON`, else
    /// `<root>/target/openfhe-venv/bin/python`.
    pub fn default_python(root: &Path) -> PathBuf {
        match std::env::var_os("LUX_OPENFHE_PYTHON").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => root.join(VENV_PYTHON),
        }
    }

    /// Starts the worker with `python` (one OpenMP thread) and asks for its `info`.
    pub fn spawn(python: &Path) -> Result<OpenFhe> {
        if !python.exists() {
            return Err(peer_err(format!(
                "no python at {}: run scripts/openfhe-setup (it makes target/openfhe-venv with CPython 3.10 and \
                 openfhe==1.6.1.0.22.4 and prints the python path), or name one with --openfhe-python or \
                 LUX_OPENFHE_PYTHON",
                python.display()
            )));
        }
        let mut child = Command::new(python)
            .arg(SCRIPT)
            .env("OMP_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| peer_err(format!("cannot start {} {SCRIPT}: {e}", python.display())))?;
        let stdin = child.stdin.take().ok_or_else(|| peer_err("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| peer_err("no stdout"))?);
        let mut w =
            OpenFhe { child, stdin, stdout, setup: None, setup_reply: None, precision: None, info: Value::Null };
        let info = w.ask(json!({"cmd": "info"})).map_err(|e| {
            peer_err(format!("{e} (is {} the python scripts/openfhe-setup printed?)", python.display()))
        })?;
        w.info = info;
        Ok(w)
    }

    /// One request, one reply; a reply with `"ok": false` is an error with its message.
    pub fn ask(&mut self, req: Value) -> Result<Value> {
        let line = serde_json::to_string(&req)?;
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| peer_err(format!("write: {e}")))?;
        let mut reply = String::new();
        let n = self.stdout.read_line(&mut reply).map_err(|e| peer_err(format!("read: {e}")))?;
        if n == 0 {
            return Err(peer_err(format!("the worker exited without answering {line}")));
        }
        let v: Value = serde_json::from_str(&reply)?;
        if v.get("ok") != Some(&Value::Bool(true)) {
            let msg = v.get("error").and_then(Value::as_str).unwrap_or("no error message");
            return Err(peer_err(format!("{} refused: {msg}", req.get("cmd").and_then(Value::as_str).unwrap_or("?"))));
        }
        Ok(v)
    }

    /// The `setup` request for `params`: the same N, scale, depth, `dnum` and first-prime
    /// size (OpenFHE picks its own primes of those sizes and 60-bit special primes).
    pub fn setup_request(params: &Params) -> Value {
        let first_mod_bits = 64 - params.q()[0].0.leading_zeros();
        json!({
            "cmd": "setup",
            "log_n": params.log_n(),
            "scale_bits": params.scale_bits(),
            "depth": params.depth(),
            "first_mod_bits": first_mod_bits,
            "dnum": params.dnum(),
            "special_bits": 60,
            "slots": params.slots(),
            "threads": 1,
            "rotations": ROTATIONS,
            "seed": 1,
        })
    }

    /// Sets the worker up for `preset` (keys included) and measures its precision.
    pub fn setup_for(&mut self, preset: Preset) -> Result<&Value> {
        let req = Self::setup_request(preset.params());
        let reply = self.ask(req.clone())?;
        self.setup = Some(req);
        self.setup_reply = Some(reply);
        self.precision = None;
        self.precision()?;
        Ok(self.setup_reply.as_ref().expect("just set"))
    }

    /// The worker's precision on the current setup (measured once per setup).
    pub fn precision(&mut self) -> Result<PeerPrecision> {
        if let Some(p) = &self.precision {
            return Ok(p.clone());
        }
        let r = self.ask(json!({"cmd": "precision"}))?;
        let bits = |k: &str| r.get(k).and_then(|o| o.get("bits_max")).and_then(Value::as_f64);
        let p = PeerPrecision {
            fresh: bits("fresh"),
            mul: bits("mul"),
            rotate: bits("rotate"),
            mul_plain: bits("mul_plain"),
        };
        self.precision = Some(p.clone());
        Ok(p)
    }

    /// Key generation once: the setup again, timed by the worker (KeyGen +
    /// EvalMultKeyGen + EvalRotateKeyGen), in nanoseconds.
    pub fn keygen_ns(&mut self) -> Result<f64> {
        let req = self.setup.clone().ok_or_else(|| peer_err("keygen before setup"))?;
        let reply = self.ask(req)?;
        let ms = reply
            .get("keygen_ms")
            .and_then(|k| k.get("total"))
            .and_then(Value::as_f64)
            .ok_or_else(|| peer_err("setup reply without keygen_ms.total"))?;
        self.setup_reply = Some(reply);
        Ok(ms * 1e6)
    }

    /// `calls` timed calls of `op` after `warmup` discarded ones (key generation: one
    /// setup per call, no warm-up), in nanoseconds.
    pub fn sample(&mut self, op: CkksOp, calls: usize, warmup: usize) -> Result<Vec<f64>> {
        if op == CkksOp::Keygen {
            return (0..calls).map(|_| self.keygen_ns()).collect();
        }
        let r = self.ask(json!({"cmd": "time", "op": op.short(), "iters": calls, "warmup": warmup}))?;
        let ns = r.get("ns").and_then(Value::as_array).ok_or_else(|| peer_err("time reply without ns"))?;
        ns.iter().map(|x| x.as_f64().ok_or_else(|| peer_err(format!("bad sample {x}")))).collect()
    }

    /// Version, build and parameters, for the rows' notes.
    pub fn describe(&self) -> String {
        let s = self.setup.as_ref();
        let get = |k: &str| s.and_then(|s| s.get(k)).map(|v| v.to_string()).unwrap_or_else(|| "?".into());
        let log_qp = self.setup_reply.as_ref().and_then(|r| r.get("log_qp")).map(|v| v.to_string());
        format!(
            "{BUILD_NOTE}; N=2^{}, depth {}, first prime {} bits, scale {} bits, dnum {}, log QP {}, HYBRID, \
             FIXEDMANUAL, HEStd_128_classic",
            get("log_n"),
            get("depth"),
            get("first_mod_bits"),
            get("scale_bits"),
            get("dnum"),
            log_qp.unwrap_or_else(|| "?".into())
        )
    }
}

impl Drop for OpenFhe {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{{\"cmd\":\"quit\"}}").and_then(|()| self.stdin.flush());
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
