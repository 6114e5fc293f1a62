//! Boolean gates, written once over any [`Backend`]: the linear part runs on the host
//! (it is a few hundred additions), the bootstrap runs batched on the backend.
//!
//! Bits are encoded as `m * q/4`. The sign bootstrap outputs bit 1 exactly when the
//! input phase is in `[0, q/2)`, so each gate shifts its sum so that the true cases sit
//! at `+q/8` and the false ones at `-q/8` or `-3q/8` (margin `q/8` on every side):
//!
//! | gate | linear part |
//! |---|---|
//! | AND  | `c1 + c2 - 3q/8` |
//! | OR   | `c1 + c2 - q/8` |
//! | NAND | `-c1 - c2 + 3q/8` |
//! | NOR  | `-c1 - c2 + q/8` |
//! | XOR  | `2c1 - 2c2 - q/4` (margin `q/4`, twice the noise) |
//! | XNOR | `2c1 - 2c2 + q/4` |
//! | NOT  | `-c + q/4` (no bootstrap) |
//! | MUX(s, t, f) | `BR(s + t - 3q/8) + BR(f - s - q/8)`, one key switch, `+ q/4` |

use fhe_api::error::{Error, Result};
use fhe_api::ops::{Backend, PreparedKey};
use fhe_api::tfhe::entities::LweCiphertext;
use fhe_api::tfhe::params::ParamSet;

/// The two-input gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Gate {
    And,
    Or,
    Nand,
    Nor,
    Xor,
    Xnor,
}

impl Gate {
    pub const ALL: [Gate; 6] = [Gate::And, Gate::Or, Gate::Nand, Gate::Nor, Gate::Xor, Gate::Xnor];

    pub fn name(self) -> &'static str {
        match self {
            Gate::And => "and",
            Gate::Or => "or",
            Gate::Nand => "nand",
            Gate::Nor => "nor",
            Gate::Xor => "xor",
            Gate::Xnor => "xnor",
        }
    }

    /// The plaintext truth table.
    pub fn eval_plain(self, a: bool, b: bool) -> bool {
        match self {
            Gate::And => a & b,
            Gate::Or => a | b,
            Gate::Nand => !(a & b),
            Gate::Nor => !(a | b),
            Gate::Xor => a ^ b,
            Gate::Xnor => !(a ^ b),
        }
    }

    /// `(coefficient of c1, coefficient of c2, constant in units of q/8)`.
    fn linear(self) -> (i32, i32, i32) {
        match self {
            Gate::And => (1, 1, -3),
            Gate::Or => (1, 1, -1),
            Gate::Nand => (-1, -1, 3),
            Gate::Nor => (-1, -1, 1),
            Gate::Xor => (2, -2, -2),
            Gate::Xnor => (2, -2, 2),
        }
    }

    /// The ciphertext the bootstrap is applied to.
    pub fn combine(self, a: &LweCiphertext, b: &LweCiphertext) -> Result<LweCiphertext> {
        let (ca, cb, k) = self.linear();
        LweCiphertext::linear_combination(&[(ca, a), (cb, b)], eighths(a, k))
    }
}

fn eighths(ct: &LweCiphertext, k: i32) -> u32 {
    let eighth = (ct.params().params().q_lwe() / 8) as i64;
    (k as i64 * eighth).rem_euclid(ct.params().params().q_lwe() as i64) as u32
}

fn same_len(what: &str, a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(Error::InvalidInput(format!("{what}: batch lengths differ ({a} vs {b})")));
    }
    Ok(())
}

/// `gate(lhs[i], rhs[i])` for every `i`, in one batched bootstrap.
pub fn gate_batch(
    backend: &dyn Backend,
    key: &PreparedKey,
    gate: Gate,
    lhs: &[LweCiphertext],
    rhs: &[LweCiphertext],
) -> Result<Vec<LweCiphertext>> {
    same_len(gate.name(), lhs.len(), rhs.len())?;
    let combined = lhs.iter().zip(rhs).map(|(a, b)| gate.combine(a, b)).collect::<Result<Vec<_>>>()?;
    backend.bootstrap_batch(key, &combined)
}

/// Gates of mixed kinds in one batched bootstrap: `out[i] = gate_i(a_i, b_i)`. The
/// linear part of each gate is computed on the host, so one backend call carries a whole
/// level of a circuit whatever its gate kinds.
pub fn mixed_batch(
    backend: &dyn Backend,
    key: &PreparedKey,
    gates: &[(Gate, &LweCiphertext, &LweCiphertext)],
) -> Result<Vec<LweCiphertext>> {
    let combined = gates.iter().map(|(g, a, b)| g.combine(a, b)).collect::<Result<Vec<_>>>()?;
    backend.bootstrap_batch(key, &combined)
}

/// The noiseless encryption of a constant bit (`a = 0`, `b = bit * q/4`): what a circuit
/// feeds where an input is known in the clear. It decrypts under every secret key.
pub fn constant(params: ParamSet, bit: bool) -> LweCiphertext {
    let quarter = (params.params().q_lwe() / 4) as u32;
    LweCiphertext::trivial(params, if bit { quarter } else { 0 })
}

/// One gate.
pub fn gate(
    backend: &dyn Backend,
    key: &PreparedKey,
    gate: Gate,
    a: &LweCiphertext,
    b: &LweCiphertext,
) -> Result<LweCiphertext> {
    Ok(gate_batch(backend, key, gate, std::slice::from_ref(a), std::slice::from_ref(b))?.remove(0))
}

/// NOT needs no bootstrap: `q/4 - c`.
pub fn not(ct: &LweCiphertext) -> LweCiphertext {
    LweCiphertext::linear_combination(&[(-1, ct)], eighths(ct, 2)).expect("one term of one parameter set")
}

/// Refresh: a bootstrap of `c - q/8`, which keeps the bit and resets the noise.
pub fn refresh_batch(backend: &dyn Backend, key: &PreparedKey, cts: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
    let shifted =
        cts.iter().map(|c| LweCiphertext::linear_combination(&[(1, c)], eighths(c, -1))).collect::<Result<Vec<_>>>()?;
    backend.bootstrap_batch(key, &shifted)
}

/// `sel[i] ? t[i] : f[i]`: two blind rotations per element (one batch of `2 * len`),
/// summed before a single key switch.
pub fn mux_batch(
    backend: &dyn Backend,
    key: &PreparedKey,
    sel: &[LweCiphertext],
    t: &[LweCiphertext],
    f: &[LweCiphertext],
) -> Result<Vec<LweCiphertext>> {
    same_len("mux", sel.len(), t.len())?;
    same_len("mux", sel.len(), f.len())?;
    let muxes: Vec<_> = sel.iter().zip(t).zip(f).map(|((s, t), f)| (s, t, f)).collect();
    Ok(level_batch(backend, key, &[], &muxes)?.1)
}

/// The two blind-rotation inputs of `s ? t : f`: `s + t - 3q/8` and `f - s - q/8`.
fn mux_halves(s: &LweCiphertext, t: &LweCiphertext, f: &LweCiphertext) -> Result<[LweCiphertext; 2]> {
    Ok([
        LweCiphertext::linear_combination(&[(1, s), (1, t)], eighths(s, -3))?,
        LweCiphertext::linear_combination(&[(-1, s), (1, f)], eighths(s, -1))?,
    ])
}

/// One level of a circuit: two-input gates of mixed kinds and MUXes `(s, t, f)`, each
/// MUX in the cheap form (two blind rotations summed before one key switch). Every blind
/// rotation of the level goes in one backend batch and every key switch in another;
/// without MUXes the level is one [`mixed_batch`] (the backend's fused bootstrap).
/// Returns the gates' outputs, then the MUXes'.
pub fn level_batch(
    backend: &dyn Backend,
    key: &PreparedKey,
    gates: &[(Gate, &LweCiphertext, &LweCiphertext)],
    muxes: &[(&LweCiphertext, &LweCiphertext, &LweCiphertext)],
) -> Result<(Vec<LweCiphertext>, Vec<LweCiphertext>)> {
    if muxes.is_empty() {
        return Ok((mixed_batch(backend, key, gates)?, Vec::new()));
    }
    // Inputs: the gates' linear parts, then every MUX's first half, then its second.
    let mut inputs = Vec::with_capacity(gates.len() + 2 * muxes.len());
    for (g, a, b) in gates {
        inputs.push(g.combine(a, b)?);
    }
    let mut second = Vec::with_capacity(muxes.len());
    for (s, t, f) in muxes {
        let [st, sf] = mux_halves(s, t, f)?;
        inputs.push(st);
        second.push(sf);
    }
    inputs.append(&mut second);
    let mut rotated = backend.blind_rotate_batch(key, &inputs)?;
    let sf = rotated.split_off(gates.len() + muxes.len());
    let st = rotated.split_off(gates.len());
    rotated.reserve_exact(muxes.len());
    for (a, b) in st.iter().zip(&sf) {
        rotated.push(a.add(b)?);
    }
    let mut switched = backend.key_switch_batch(key, &rotated)?;
    let mux_out = switched.split_off(gates.len());
    // A gate's rotation encrypts +-q/8 (+q/8 makes it 0 or q/4); a MUX's sum encrypts
    // -q/4 or 0 (+q/4 does).
    let gate_out = switched.iter().map(|c| LweCiphertext::linear_combination(&[(1, c)], eighths(c, 1)));
    let mux_out = mux_out.iter().map(|c| LweCiphertext::linear_combination(&[(1, c)], eighths(c, 2)));
    Ok((gate_out.collect::<Result<_>>()?, mux_out.collect::<Result<_>>()?))
}
