//! CKKS objects: keys (secret, public, switching, the evaluation bundle), plaintexts
//! and resident ciphertexts, each with bytes in the versioned format and pickling
//! through them (prepared plaintexts stay on their backend and have none).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use lux_fhe::ckks::{
    Ciphertext, Context, EvalKeys, HostCiphertext, KeySet, Plaintext, PreparedPlaintext, Preset, PublicKey, SecretKey,
    SwitchKind, SwitchingKey,
};
use lux_fhe::format::{Decode, TryEncode};
use lux_fhe::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple, PyType};

use crate::ckks::{default_context, PyContext};
use crate::errors::IntoPy;
use crate::wire::{heavy, keyed_object, reduce, secret_to_pybytes, to_pybytes};

/// A CKKS secret key; its words are wiped when the object is freed. `to_bytes()`
/// returns them (secret: treat the bytes as the key).
#[pyclass(module = "lux_fhe.ckks", name = "SecretKey", frozen)]
pub struct PyCkksSecretKey {
    pub inner: SecretKey,
}

#[pymethods]
impl PyCkksSecretKey {
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(secret_to_pybytes(py, self.inner.try_encode_zeroizing().py_err()?))
    }
    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        Ok(PyCkksSecretKey { inner: SecretKey::decode(data).py_err()? })
    }
}

keyed_object!(PyCkksSecretKey, "SecretKey");

/// A CKKS public key (encrypts).
#[pyclass(module = "lux_fhe.ckks", name = "PublicKey", frozen)]
pub struct PyCkksPublicKey {
    pub inner: PublicKey,
}

#[pymethods]
impl PyCkksPublicKey {
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(to_pybytes(py, &self.inner.try_encode().py_err()?))
    }
    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(PyCkksPublicKey { inner: heavy(py, || PublicKey::decode(data))? })
    }
}

keyed_object!(PyCkksPublicKey, "PublicKey");

/// One key-switching key: relinearization, or the Galois key of one element.
#[pyclass(module = "lux_fhe.ckks", name = "SwitchingKey", frozen)]
pub struct PySwitchingKey {
    pub inner: SwitchingKey,
}

#[pymethods]
impl PySwitchingKey {
    /// `"relin"`, or `"galois"` (see `element`).
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner.kind() {
            SwitchKind::Relin => "relin",
            SwitchKind::Galois(_) => "galois",
        }
    }
    /// The Galois element of a Galois key, else `None`.
    #[getter]
    fn element(&self) -> Option<u64> {
        match self.inner.kind() {
            SwitchKind::Galois(g) => Some(g),
            SwitchKind::Relin => None,
        }
    }
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = heavy(py, || self.inner.try_encode())?;
        Ok(to_pybytes(py, &bytes))
    }
    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(PySwitchingKey { inner: heavy(py, || SwitchingKey::decode(data))? })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
}

/// The evaluation keys a server needs (relinearization, Galois keys), as one bundle
/// of bytes (kind 13) or key by key (`keys()`, `EvalKeys.from_keys`).
#[pyclass(module = "lux_fhe.ckks", name = "EvalKeys", frozen)]
pub struct PyEvalKeys {
    pub inner: EvalKeys,
}

#[pymethods]
impl PyEvalKeys {
    #[getter]
    /// Whether the relinearization key is in the bundle.
    fn has_relin(&self) -> bool {
        self.inner.relin.is_some()
    }
    /// The Galois elements held, increasing.
    #[getter]
    fn galois_elements(&self) -> Vec<u64> {
        self.inner.galois.keys().copied().collect()
    }
    /// Every key, the relinearization key first.
    fn keys(&self) -> Vec<PySwitchingKey> {
        let all = self.inner.relin.iter().chain(self.inner.galois.values());
        all.map(|k| PySwitchingKey { inner: k.clone() }).collect()
    }
    /// A bundle of the given keys (at most one relinearization key).
    #[staticmethod]
    fn from_keys(keys: Vec<PyRef<'_, PySwitchingKey>>) -> PyResult<Self> {
        let mut out = EvalKeys { relin: None, galois: BTreeMap::new() };
        for k in keys {
            if k.inner.kind() == SwitchKind::Relin && out.relin.is_some() {
                return Err(Error::InvalidInput("two relinearization keys in one bundle".into())).py_err();
            }
            out.insert(k.inner.clone());
        }
        Ok(PyEvalKeys { inner: out })
    }
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = heavy(py, || self.inner.try_encode())?;
        Ok(to_pybytes(py, &bytes))
    }
    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(PyEvalKeys { inner: heavy(py, || EvalKeys::decode(data))? })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __repr__(&self) -> String {
        format!("EvalKeys(relin={}, galois={:?})", self.inner.relin.is_some(), self.galois_elements())
    }
}

/// The `EvalKeys` of an `EvalKeys` or of a `KeySet`.
pub fn eval_keys_of<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyEvalKeys>> {
    if let Ok(set) = obj.cast::<PyCkksKeySet>() {
        return Ok(set.get().eval.bind(obj.py()).clone());
    }
    Ok(obj.cast::<PyEvalKeys>()?.clone())
}

/// Every CKKS key of one secret: `sk`, `pk`, `eval`. Pickles as its three parts.
#[pyclass(module = "lux_fhe.ckks", name = "KeySet", frozen)]
pub struct PyCkksKeySet {
    /// The secret key.
    #[pyo3(get)]
    sk: Py<PyCkksSecretKey>,
    /// The public key.
    #[pyo3(get)]
    pk: Py<PyCkksPublicKey>,
    /// The evaluation keys (send them to the server).
    #[pyo3(get)]
    eval: Py<PyEvalKeys>,
}

impl PyCkksKeySet {
    pub fn from_rust(py: Python<'_>, keys: KeySet) -> PyResult<Self> {
        Ok(PyCkksKeySet {
            sk: Py::new(py, PyCkksSecretKey { inner: keys.sk })?,
            pk: Py::new(py, PyCkksPublicKey { inner: keys.pk })?,
            eval: Py::new(py, PyEvalKeys { inner: keys.eval })?,
        })
    }
}

#[pymethods]
impl PyCkksKeySet {
    #[new]
    fn new(sk: Py<PyCkksSecretKey>, pk: Py<PyCkksPublicKey>, eval: Py<PyEvalKeys>) -> Self {
        PyCkksKeySet { sk, pk, eval }
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.get();
        let parts = [this.sk.bind(py).as_any(), this.pk.bind(py).as_any(), this.eval.bind(py).as_any()];
        PyTuple::new(py, [slf.get_type().into_any(), PyTuple::new(py, parts)?.into_any()])
    }
}

/// An encoded message on the host (`Context.encode`), with its level and scale.
#[pyclass(module = "lux_fhe.ckks", name = "Plaintext", frozen)]
pub struct PyPlaintext {
    pub inner: Plaintext,
}

#[pymethods]
impl PyPlaintext {
    #[getter]
    /// The level: how many rescales are left.
    fn level(&self) -> usize {
        self.inner.level()
    }
    #[getter]
    /// The scale the values are multiplied by.
    fn scale(&self) -> f64 {
        self.inner.scale().value()
    }
    #[getter]
    /// Whether it has limbs over the special primes too (`Context.encode_extended`).
    fn is_extended(&self) -> bool {
        self.inner.is_extended()
    }
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = heavy(py, || self.inner.try_encode())?;
        Ok(to_pybytes(py, &bytes))
    }
    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(PyPlaintext { inner: heavy(py, || Plaintext::decode(data))? })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __repr__(&self) -> String {
        format!("Plaintext(level {}, scale 2^{:.2})", self.inner.level(), self.inner.scale().log2())
    }
}

/// A plaintext kept on the backend in evaluation form (`Evaluator.prepare_plaintext`),
/// for repeated products; it has no bytes.
#[pyclass(module = "lux_fhe.ckks", name = "PreparedPlaintext", frozen)]
pub struct PyPreparedPlaintext {
    pub inner: PreparedPlaintext,
}

#[pymethods]
impl PyPreparedPlaintext {
    #[getter]
    /// The level: how many rescales are left.
    fn level(&self) -> usize {
        self.inner.level()
    }
    #[getter]
    /// The scale the values are multiplied by.
    fn scale(&self) -> f64 {
        self.inner.scale().value()
    }
}

/// A ciphertext resident on its backend (device memory, for a GPU). Bytes come back
/// with `to_bytes()`; `from_bytes` (and unpickling) uploads onto the given context, or
/// onto the process's default one (`LUX_FHE_BACKEND`) for the bytes' preset.
#[pyclass(module = "lux_fhe.ckks", name = "Ciphertext", frozen)]
pub struct PyCiphertext {
    /// A lock only for the in-place forms (`Evaluator.add_assign`, ...); clones are
    /// cheap (the backend's words are shared until written).
    inner: RwLock<Ciphertext>,
    ctx: Arc<Context>,
}

fn poisoned<T>(_: T) -> PyErr {
    crate::errors::to_py(Error::InvalidInput("a ciphertext's lock was poisoned by a panic".into()))
}

impl PyCiphertext {
    pub fn new(ct: Ciphertext, ctx: Arc<Context>) -> Self {
        PyCiphertext { inner: RwLock::new(ct), ctx }
    }

    /// A cheap clone of the resident handle.
    pub fn get(&self) -> PyResult<Ciphertext> {
        Ok(self.inner.read().map_err(poisoned)?.clone())
    }

    /// Replaces the handle after an in-place operation.
    pub fn set(&self, ct: Ciphertext) -> PyResult<()> {
        *self.inner.write().map_err(poisoned)? = ct;
        Ok(())
    }
}

#[pymethods]
impl PyCiphertext {
    #[getter]
    /// The level: how many rescales are left.
    fn level(&self) -> PyResult<usize> {
        Ok(self.get()?.level())
    }
    #[getter]
    /// The scale the values are multiplied by.
    fn scale(&self) -> PyResult<f64> {
        Ok(self.get()?.scale().value())
    }
    /// The degree in the secret: 1 (two parts) after relinearization, 2 after
    /// `Evaluator.tensor`.
    #[getter]
    fn degree(&self) -> PyResult<usize> {
        Ok(self.get()?.degree())
    }
    #[getter]
    /// The parameter set's name.
    fn params(&self) -> PyResult<String> {
        Ok(self.get()?.params().name().to_string())
    }
    #[getter]
    /// The key set's tag, 16 hex digits (`docs/FORMAT.md`, "Key tags").
    fn tag(&self) -> PyResult<String> {
        Ok(self.get()?.tag().to_string())
    }
    /// The context (backend and parameters) the ciphertext lives in.
    #[getter]
    fn context(&self) -> PyContext {
        PyContext::new(self.ctx.clone())
    }
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let ct = self.get()?;
        let bytes = heavy(py, || self.ctx.to_bytes(&ct))?;
        Ok(to_pybytes(py, &bytes))
    }
    /// A ciphertext from its bytes, onto `context` or the default context of the
    /// bytes' preset. Malformed bytes are `DecodeError`, never a crash.
    #[classmethod]
    #[pyo3(signature = (data, context = None))]
    fn from_bytes(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        data: &[u8],
        context: Option<&PyContext>,
    ) -> PyResult<Self> {
        let given = context.map(|c| c.inner.clone());
        let (ct, ctx) = heavy(py, || {
            let host = HostCiphertext::decode(data)?;
            let ctx = match given {
                Some(c) => c,
                None => default_context(host.params().name().parse::<Preset>()?)?,
            };
            Ok((ctx.upload(&host)?, ctx))
        })?;
        Ok(PyCiphertext::new(ct, ctx))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }
    fn __repr__(&self) -> PyResult<String> {
        let ct = self.get()?;
        Ok(format!("Ciphertext({}, level {}, scale 2^{:.2})", ct.params().name(), ct.level(), ct.scale().log2()))
    }
}
