//! `ServerKey`'s gates: one gate (one bootstrap), whole batches in one backend call,
//! mixed batches, MUX and refresh. Every call that bootstraps releases the GIL, so
//! Python threads (and Ray actors in one process) run gates side by side.

use lux_fhe::{Gate, LweCiphertext, ServerKey};
use pyo3::prelude::*;

use crate::engine::PyLweCiphertext;
use crate::errors::InvalidInputError;
use crate::wire::heavy;

/// A gate kind: `Gate.AND`, `Gate.OR`, `Gate.NAND`, `Gate.NOR`, `Gate.XOR`,
/// `Gate.XNOR`. Every method taking a gate also takes its name (`"and"`, case-blind).
#[pyclass(module = "lux_fhe", name = "Gate", eq, eq_int, frozen, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq)]
#[allow(clippy::upper_case_acronyms)]
pub enum PyGate {
    AND,
    OR,
    NAND,
    NOR,
    XOR,
    XNOR,
}

impl From<PyGate> for Gate {
    fn from(g: PyGate) -> Gate {
        match g {
            PyGate::AND => Gate::And,
            PyGate::OR => Gate::Or,
            PyGate::NAND => Gate::Nand,
            PyGate::NOR => Gate::Nor,
            PyGate::XOR => Gate::Xor,
            PyGate::XNOR => Gate::Xnor,
        }
    }
}

/// A `Gate` or its name.
pub fn gate_arg(obj: &Bound<'_, PyAny>) -> PyResult<Gate> {
    if let Ok(g) = obj.extract::<PyGate>() {
        return Ok(g.into());
    }
    let name: String = obj.extract()?;
    Gate::ALL.into_iter().find(|g| g.name().eq_ignore_ascii_case(name.trim())).ok_or_else(|| {
        let valid: Vec<_> = Gate::ALL.iter().map(|g| g.name()).collect();
        InvalidInputError::new_err(format!("unknown gate `{name}`; valid values: {}", valid.join(", ")))
    })
}

/// Owned copies of the ciphertexts (cheap next to a bootstrap), so the GIL can be
/// released while the backend works on them.
pub fn owned(cts: &[PyRef<'_, PyLweCiphertext>]) -> Vec<LweCiphertext> {
    cts.iter().map(|c| c.inner.clone()).collect()
}

pub fn wrap(cts: Vec<LweCiphertext>) -> Vec<PyLweCiphertext> {
    cts.into_iter().map(|inner| PyLweCiphertext { inner }).collect()
}

/// The evaluation key prepared on the backend: gates, batches and integer operations.
/// Thread-safe; not picklable (send the `EvaluationKey` and prepare it where it lands).
#[pyclass(module = "lux_fhe", name = "ServerKey", frozen)]
pub struct PyServerKey {
    pub inner: ServerKey,
}

impl PyServerKey {
    fn two(&self, py: Python<'_>, g: Gate, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        Ok(PyLweCiphertext { inner: heavy(py, || self.inner.gate(g, a, b))? })
    }
}

#[pymethods]
impl PyServerKey {
    #[getter]
    /// The parameter set's name.
    fn params(&self) -> &'static str {
        self.inner.params().name()
    }

    #[getter]
    /// The key set's tag, 16 hex digits (`docs/FORMAT.md`, "Key tags").
    fn tag(&self) -> String {
        self.inner.tag().to_string()
    }

    /// `gate(a, b)` for a gate chosen at run time (one bootstrap).
    fn gate(
        &self,
        py: Python<'_>,
        gate: &Bound<'_, PyAny>,
        a: &PyLweCiphertext,
        b: &PyLweCiphertext,
    ) -> PyResult<PyLweCiphertext> {
        self.two(py, gate_arg(gate)?, a, b)
    }

    /// `a AND b` (one bootstrap).
    fn and_(&self, py: Python<'_>, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.two(py, Gate::And, a, b)
    }

    /// `a OR b` (one bootstrap).
    fn or_(&self, py: Python<'_>, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.two(py, Gate::Or, a, b)
    }

    /// `NOT (a AND b)` (one bootstrap).
    fn nand(&self, py: Python<'_>, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.two(py, Gate::Nand, a, b)
    }

    /// `NOT (a OR b)` (one bootstrap).
    fn nor(&self, py: Python<'_>, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.two(py, Gate::Nor, a, b)
    }

    /// `a XOR b` (one bootstrap).
    fn xor(&self, py: Python<'_>, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.two(py, Gate::Xor, a, b)
    }

    /// `NOT (a XOR b)` (one bootstrap).
    fn xnor(&self, py: Python<'_>, a: &PyLweCiphertext, b: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.two(py, Gate::Xnor, a, b)
    }

    /// NOT costs no bootstrap.
    fn not_(&self, a: &PyLweCiphertext) -> PyLweCiphertext {
        PyLweCiphertext { inner: self.inner.not(&a.inner) }
    }

    /// `sel ? t : f`.
    fn mux(
        &self,
        py: Python<'_>,
        sel: &PyLweCiphertext,
        t: &PyLweCiphertext,
        f: &PyLweCiphertext,
    ) -> PyResult<PyLweCiphertext> {
        let (s, t, f) = (&sel.inner, &t.inner, &f.inner);
        Ok(PyLweCiphertext { inner: heavy(py, || self.inner.mux(s, t, f))? })
    }

    /// `out[i] = gate(lhs[i], rhs[i])` in one batched bootstrap.
    fn gate_batch(
        &self,
        py: Python<'_>,
        gate: &Bound<'_, PyAny>,
        lhs: Vec<PyRef<'_, PyLweCiphertext>>,
        rhs: Vec<PyRef<'_, PyLweCiphertext>>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let g = gate_arg(gate)?;
        let (lhs, rhs) = (owned(&lhs), owned(&rhs));
        Ok(wrap(heavy(py, || self.inner.gate_batch(g, &lhs, &rhs))?))
    }

    /// `out[i] = gate_i(a_i, b_i)` for a list of `(gate, a, b)` in one batched bootstrap.
    fn mixed_batch(
        &self,
        py: Python<'_>,
        batch: Vec<(Bound<'_, PyAny>, PyRef<'_, PyLweCiphertext>, PyRef<'_, PyLweCiphertext>)>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let rows: Vec<(Gate, LweCiphertext, LweCiphertext)> = batch
            .iter()
            .map(|(g, a, b)| Ok((gate_arg(g)?, a.inner.clone(), b.inner.clone())))
            .collect::<PyResult<_>>()?;
        let out = heavy(py, || {
            let refs: Vec<_> = rows.iter().map(|(g, a, b)| (*g, a, b)).collect();
            self.inner.mixed_batch(&refs)
        })?;
        Ok(wrap(out))
    }

    /// `sel[i] ? t[i] : f[i]` in one batch.
    fn mux_batch(
        &self,
        py: Python<'_>,
        sel: Vec<PyRef<'_, PyLweCiphertext>>,
        t: Vec<PyRef<'_, PyLweCiphertext>>,
        f: Vec<PyRef<'_, PyLweCiphertext>>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let (s, t, f) = (owned(&sel), owned(&t), owned(&f));
        Ok(wrap(heavy(py, || self.inner.mux_batch(&s, &t, &f))?))
    }

    /// Bootstraps each ciphertext: same bit, fresh noise (a batch of gate bootstraps).
    fn refresh_batch(&self, py: Python<'_>, cts: Vec<PyRef<'_, PyLweCiphertext>>) -> PyResult<Vec<PyLweCiphertext>> {
        let cts = owned(&cts);
        Ok(wrap(heavy(py, || self.inner.refresh_batch(&cts))?))
    }

    fn __repr__(&self) -> String {
        format!(
            "ServerKey({} on {}, tag {})",
            self.inner.params().name(),
            self.inner.backend().name(),
            self.inner.tag()
        )
    }
}
