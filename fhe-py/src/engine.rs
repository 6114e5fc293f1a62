//! `Engine` and the bit scheme's keys and ciphertexts: the client side of the bit
//! scheme (key generation, encryption, decryption), with bytes in and out.

use std::sync::Arc;

use lux_fhe::format::{Decode, Encode};
use lux_fhe::{Engine, EvaluationKey, LweCiphertext, ParamSet, PublicKey, SecretKey};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple, PyType};

use crate::ckks::{params_arg, PyContext};
use crate::errors::IntoPy;
use crate::gates::PyServerKey;
use crate::wire::{heavy, keyed_object, secret_to_pybytes, seed_or_os, to_pybytes};

/// A backend chosen as in Rust: `Engine()` reads `LUX_FHE_BACKEND` (`cpu`, `cuda`,
/// `hip`, `wgpu`, `auto` or unset, optionally `kind:ntt-variant`), `Engine("cpu")` takes
/// the selection as an argument instead. A required backend that cannot run raises
/// `BackendError` naming the cause (not compiled in, driver missing, no device).
#[pyclass(module = "lux_fhe", name = "Engine", frozen)]
pub struct PyEngine {
    pub inner: Engine,
}

/// A bit-scheme parameter set name (`"PN10QP27"`, `"PN11QP54"`, `"PN10QP25Q"`).
pub fn param_set(name: &str) -> PyResult<ParamSet> {
    name.parse::<ParamSet>().py_err()
}

#[pymethods]
impl PyEngine {
    #[new]
    #[pyo3(signature = (backend = None))]
    fn new(py: Python<'_>, backend: Option<&str>) -> PyResult<Self> {
        let inner = heavy(py, || match backend {
            None => Engine::from_env(),
            Some(s) => Engine::with_backend(s),
        })?;
        Ok(PyEngine { inner })
    }

    /// The backend's name, e.g. `cpu:avx512`.
    #[getter]
    fn backend(&self) -> String {
        self.inner.backend().name()
    }

    /// Bit-scheme keys of `params`; from the 32-byte `seed` (reproducible, byte-equal on
    /// every backend) or from OS randomness.
    #[pyo3(signature = (params = "PN10QP27", seed = None))]
    fn keygen(&self, py: Python<'_>, params: &str, seed: Option<&[u8]>) -> PyResult<PyKeySet> {
        let set = param_set(params)?;
        let seed = seed_or_os(seed)?;
        let keys = heavy(py, || self.inner.keygen_from_seed(set, &seed))?;
        PyKeySet::from_rust(py, keys)
    }

    /// Public-key encryption of one bit (OS randomness, or the 32-byte `seed`).
    #[pyo3(signature = (pk, bit, seed = None))]
    fn encrypt_bit(
        &self,
        py: Python<'_>,
        pk: &PyPublicKey,
        bit: bool,
        seed: Option<&[u8]>,
    ) -> PyResult<PyLweCiphertext> {
        let seed = seed.map(|s| seed_or_os(Some(s))).transpose()?;
        let ct = heavy(py, || match &seed {
            None => self.inner.encrypt_bit(&pk.inner, bit),
            Some(s) => self.inner.encrypt_bit_seeded(&pk.inner, bit, s),
        })?;
        Ok(PyLweCiphertext { inner: ct })
    }

    /// Encrypts each bit of `bits` (a list of bools) under the public key.
    fn encrypt_bits(&self, py: Python<'_>, pk: &PyPublicKey, bits: Vec<bool>) -> PyResult<Vec<PyLweCiphertext>> {
        let cts =
            heavy(py, || bits.iter().map(|&b| self.inner.encrypt_bit(&pk.inner, b)).collect::<Result<Vec<_>, _>>())?;
        Ok(cts.into_iter().map(|inner| PyLweCiphertext { inner }).collect())
    }

    /// The bit `ct` holds.
    fn decrypt_bit(&self, sk: &PySecretKey, ct: &PyLweCiphertext) -> PyResult<bool> {
        self.inner.decrypt_bit(&sk.inner, &ct.inner).py_err()
    }

    /// The bits `cts` hold, in order.
    fn decrypt_bits(
        &self,
        py: Python<'_>,
        sk: &PySecretKey,
        cts: Vec<PyRef<'_, PyLweCiphertext>>,
    ) -> PyResult<Vec<bool>> {
        let cts = crate::gates::owned(&cts);
        heavy(py, || cts.iter().map(|c| self.inner.decrypt_bit(&sk.inner, c)).collect())
    }

    /// Prepares the evaluation key on the backend once (resident on a GPU): the
    /// object that evaluates gates, batches and integer operations.
    fn server_key(&self, py: Python<'_>, ek: &PyEvaluationKey) -> PyResult<PyServerKey> {
        let inner = heavy(py, || self.inner.server_key(&ek.inner))?;
        Ok(PyServerKey { inner })
    }

    /// CKKS on this engine's backend with a preset name
    /// (`"slots4096-scale40-depth2"`, ...) or custom `ckks.Params`.
    fn ckks(&self, py: Python<'_>, params: &Bound<'_, PyAny>) -> PyResult<PyContext> {
        let params = params_arg(params)?;
        let ctx = heavy(py, || self.inner.ckks_with_params(params))?;
        Ok(PyContext::new(Arc::new(ctx)))
    }

    fn __repr__(&self) -> String {
        format!("Engine({:?})", self.inner.backend().name())
    }
}

/// The three bit-scheme keys of one seed: `sk` (secret), `pk` (public), `ek`
/// (evaluation). Pickles as its three keys, each through its own bytes.
#[pyclass(module = "lux_fhe", name = "KeySet", frozen)]
pub struct PyKeySet {
    /// The secret key.
    #[pyo3(get)]
    sk: Py<PySecretKey>,
    /// The public key.
    #[pyo3(get)]
    pk: Py<PyPublicKey>,
    /// The evaluation key (send it to the server).
    #[pyo3(get)]
    ek: Py<PyEvaluationKey>,
}

impl PyKeySet {
    fn from_rust(py: Python<'_>, keys: lux_fhe::KeySet) -> PyResult<Self> {
        Ok(PyKeySet {
            sk: Py::new(py, PySecretKey { inner: keys.sk })?,
            pk: Py::new(py, PyPublicKey { inner: keys.pk })?,
            ek: Py::new(py, PyEvaluationKey { inner: keys.ek })?,
        })
    }
}

#[pymethods]
impl PyKeySet {
    #[new]
    fn new(sk: Py<PySecretKey>, pk: Py<PyPublicKey>, ek: Py<PyEvaluationKey>) -> Self {
        PyKeySet { sk, pk, ek }
    }

    /// A key set from the composed encoding (kind 11) a Rust program wrote with
    /// `KeySet::encode_zeroizing`.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let keys = heavy(py, || lux_fhe::KeySet::decode(data))?;
        PyKeySet::from_rust(py, keys)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.get();
        let args = PyTuple::new(py, [this.sk.bind(py).as_any(), this.pk.bind(py).as_any(), this.ek.bind(py).as_any()])?;
        PyTuple::new(py, [slf.get_type().into_any(), args.into_any()])
    }
}

/// A bit-scheme secret key. Its words are wiped when the object is freed;
/// `to_bytes()` returns them (secret: treat the bytes as the key itself).
#[pyclass(module = "lux_fhe", name = "SecretKey", frozen)]
pub struct PySecretKey {
    pub inner: SecretKey,
}

#[pymethods]
impl PySecretKey {
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        secret_to_pybytes(py, self.inner.encode_zeroizing())
    }

    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        Ok(PySecretKey { inner: SecretKey::decode(data).py_err()? })
    }
}

keyed_object!(PySecretKey, "SecretKey");

/// A bit-scheme public key (encrypts bits and integers).
#[pyclass(module = "lux_fhe", name = "PublicKey", frozen)]
pub struct PyPublicKey {
    pub inner: PublicKey,
}

#[pymethods]
impl PyPublicKey {
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_pybytes(py, &self.inner.encode())
    }

    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        Ok(PyPublicKey { inner: PublicKey::decode(data).py_err()? })
    }
}

keyed_object!(PyPublicKey, "PublicKey");

/// A bit-scheme evaluation key (bootstrapping and key-switching keys), tens of MB;
/// `Engine.server_key` prepares it for evaluation.
#[pyclass(module = "lux_fhe", name = "EvaluationKey", frozen)]
pub struct PyEvaluationKey {
    pub inner: EvaluationKey,
}

#[pymethods]
impl PyEvaluationKey {
    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = heavy(py, || Ok(self.inner.encode()))?;
        Ok(to_pybytes(py, &bytes))
    }

    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(PyEvaluationKey { inner: heavy(py, || EvaluationKey::decode(data))? })
    }
}

keyed_object!(PyEvaluationKey, "EvaluationKey");

/// One encrypted bit (an LWE ciphertext). Equal when their bytes are equal.
#[pyclass(module = "lux_fhe", name = "LweCiphertext", frozen)]
pub struct PyLweCiphertext {
    pub inner: LweCiphertext,
}

#[pymethods]
impl PyLweCiphertext {
    /// The noiseless encryption of a public constant (it belongs to no key).
    #[staticmethod]
    #[pyo3(signature = (bit, params = "PN10QP27"))]
    fn constant(bit: bool, params: &str) -> PyResult<Self> {
        Ok(PyLweCiphertext { inner: lux_fhe::gates::constant(param_set(params)?, bit) })
    }

    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_pybytes(py, &self.inner.encode())
    }

    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        Ok(PyLweCiphertext { inner: LweCiphertext::decode(data).py_err()? })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.hash(&mut h);
        h.finish()
    }
}

keyed_object!(PyLweCiphertext, "LweCiphertext");
