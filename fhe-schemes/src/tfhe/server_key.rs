//! [`ServerKey`]: a prepared evaluation key and its backend, the server side of the bit
//! scheme: gates one at a time, batched, mixed, and the integer operations
//! ([`crate::integer`]).

use std::sync::Arc;

use fhe_api::ops::{check_inputs, Backend, PreparedKey};
use fhe_api::{EvaluationKey, KeyTag, LweCiphertext, ParamSet, Result};

use crate::tfhe::gates::{self, Gate};

/// A prepared evaluation key and its backend: evaluates gates on encrypted bits.
#[derive(Clone)]
pub struct ServerKey {
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) key: Arc<PreparedKey>,
}

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerKey({}, {})", self.backend.name(), self.key.params())
    }
}

macro_rules! gate_methods {
    ($($name:ident => $gate:ident),*) => {
        $(
            #[doc = concat!("`", stringify!($name), "` of two encrypted bits (one bootstrap).")]
            pub fn $name(&self, a: &LweCiphertext, b: &LweCiphertext) -> Result<LweCiphertext> {
                gates::gate(&*self.backend, &self.key, Gate::$gate, a, b)
            }
        )*
    };
}

impl ServerKey {
    /// Prepares `ek` on `backend` (uploads it, for a GPU) once.
    pub fn new(backend: Arc<dyn Backend>, ek: &EvaluationKey) -> Result<ServerKey> {
        let key = Arc::new(backend.prepare(ek)?);
        Ok(ServerKey { backend, key })
    }

    /// The prepared key (for callers of the backend's batch operations).
    pub fn prepared(&self) -> &PreparedKey {
        &self.key
    }

    gate_methods!(and => And, or => Or, nand => Nand, nor => Nor, xor => Xor, xnor => Xnor);

    pub fn params(&self) -> ParamSet {
        self.key.params()
    }

    /// The evaluation key's tag: every output carries it, and inputs of another key are
    /// `Error::WrongKey` (`docs/FORMAT.md`, "Key tags").
    pub fn tag(&self) -> KeyTag {
        self.key.tag()
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// `gate(a, b)` for a gate kind chosen at run time (one bootstrap). Operands of
    /// another parameter set than the key's are `Error::ParamMismatch`.
    pub fn gate(&self, gate: Gate, a: &LweCiphertext, b: &LweCiphertext) -> Result<LweCiphertext> {
        gates::gate(&*self.backend, &self.key, gate, a, b)
    }

    /// Gates of mixed kinds, `out[i] = gate_i(a_i, b_i)`, in one batched bootstrap (one
    /// backend call, as [`ServerKey::gate_batch`]): each gate's linear part is computed on
    /// the host, so the kinds can differ. An empty batch gives an empty result; an operand
    /// of another parameter set than the key's is `Error::ParamMismatch`, one of another
    /// key `Error::WrongKey`.
    pub fn mixed_batch(&self, batch: &[(Gate, &LweCiphertext, &LweCiphertext)]) -> Result<Vec<LweCiphertext>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let inputs = batch.iter().flat_map(|(_, a, b)| [(a.params(), a.tag()), (b.params(), b.tag())]);
        check_inputs(&self.key, inputs)?;
        gates::mixed_batch(&*self.backend, &self.key, batch)
    }

    /// One gate over whole batches: `out[i] = gate(lhs[i], rhs[i])`, one backend call.
    pub fn gate_batch(&self, gate: Gate, lhs: &[LweCiphertext], rhs: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        gates::gate_batch(&*self.backend, &self.key, gate, lhs, rhs)
    }

    /// NOT costs no bootstrap.
    pub fn not(&self, a: &LweCiphertext) -> LweCiphertext {
        gates::not(a)
    }

    /// `sel ? t : f`.
    pub fn mux(&self, sel: &LweCiphertext, t: &LweCiphertext, f: &LweCiphertext) -> Result<LweCiphertext> {
        Ok(self.mux_batch(std::slice::from_ref(sel), std::slice::from_ref(t), std::slice::from_ref(f))?.remove(0))
    }

    pub fn mux_batch(
        &self,
        sel: &[LweCiphertext],
        t: &[LweCiphertext],
        f: &[LweCiphertext],
    ) -> Result<Vec<LweCiphertext>> {
        gates::mux_batch(&*self.backend, &self.key, sel, t, f)
    }

    /// Bootstraps each ciphertext, keeping its bit and resetting its noise.
    pub fn refresh_batch(&self, cts: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        gates::refresh_batch(&*self.backend, &self.key, cts)
    }
}
