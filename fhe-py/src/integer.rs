//! Encrypted integers: `FheUint` (1 to 256 bits, Python `int` values) and the integer
//! operations of `ServerKey` (levelled gate circuits, one batched bootstrap per level).

use lux_fhe::FheUint;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyTuple, PyType};

use crate::engine::{param_set, PyLweCiphertext, PyPublicKey, PySecretKey};
use crate::errors::IntoPy;
use crate::gates::{owned, wrap, PyServerKey};
use crate::wire::{heavy, reduce, to_pybytes};

/// The 256-bit ceiling of `FheUint`, in bytes.
const MAX_BYTES: usize = 32;

/// A non-negative Python `int` below 2^256 as four little-endian `u64` limbs (the
/// width check against the integer's own width is the library's).
fn limbs_of(value: &Bound<'_, PyInt>) -> PyResult<Vec<u64>> {
    // `int.to_bytes` raises OverflowError for a negative value or one over 256 bits.
    let bytes: Vec<u8> = value.call_method1("to_bytes", (MAX_BYTES, "little"))?.extract()?;
    Ok(bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("32 bytes make four limbs"))).collect())
}

/// Limbs back into a Python `int`.
fn int_of<'py>(py: Python<'py>, limbs: &[u64]) -> PyResult<Bound<'py, PyAny>> {
    let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    py.get_type::<PyInt>().call_method1("from_bytes", (PyBytes::new(py, &bytes), "little"))
}

/// An encrypted unsigned integer of 1 to 256 bits, one encrypted bit per digit.
#[pyclass(module = "lux_fhe", name = "FheUint", frozen)]
pub struct PyFheUint {
    pub inner: FheUint,
}

fn wrap_uint(inner: FheUint) -> PyFheUint {
    PyFheUint { inner }
}

#[pymethods]
impl PyFheUint {
    /// Encrypts `value` (an `int`, `0 <= value < 2**width`) at `width` bits.
    #[staticmethod]
    fn encrypt(py: Python<'_>, pk: &PyPublicKey, width: usize, value: &Bound<'_, PyInt>) -> PyResult<Self> {
        let limbs = limbs_of(value)?;
        Ok(wrap_uint(heavy(py, || FheUint::encrypt_limbs(&pk.inner, width, &limbs))?))
    }

    /// The noiseless encryption of a public constant (belongs to no key).
    #[staticmethod]
    #[pyo3(signature = (width, value, params = "PN10QP27"))]
    fn trivial(width: usize, value: &Bound<'_, PyInt>, params: &str) -> PyResult<Self> {
        Ok(wrap_uint(FheUint::trivial(param_set(params)?, width, &limbs_of(value)?).py_err()?))
    }

    /// From encrypted bits, least significant first (one key, one parameter set).
    #[staticmethod]
    fn from_bits(bits: Vec<PyRef<'_, PyLweCiphertext>>) -> PyResult<Self> {
        Ok(wrap_uint(FheUint::from_bits(owned(&bits)).py_err()?))
    }

    /// The value as a Python `int`.
    fn decrypt<'py>(&self, py: Python<'py>, sk: &PySecretKey) -> PyResult<Bound<'py, PyAny>> {
        int_of(py, &heavy(py, || self.inner.decrypt(&sk.inner))?)
    }

    #[getter]
    /// The width in bits.
    fn width(&self) -> usize {
        self.inner.width()
    }

    #[getter]
    /// The parameter set's name.
    fn params(&self) -> &'static str {
        self.inner.params().name()
    }

    /// The encrypted bits, least significant first.
    fn bits(&self) -> Vec<PyLweCiphertext> {
        wrap(self.inner.bits().to_vec())
    }

    /// The versioned binary encoding (`docs/FORMAT.md`).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_pybytes(py, &self.inner.encode())
    }

    #[classmethod]
    /// Decodes `to_bytes()` output; malformed bytes raise `DecodeError` naming the cause.
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        Ok(wrap_uint(FheUint::decode(data).py_err()?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        reduce(slf.as_any())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __repr__(&self) -> String {
        format!("FheUint({} bits, {})", self.inner.width(), self.inner.params().name())
    }
}

type Binary = fn(&lux_fhe::ServerKey, &FheUint, &FheUint) -> lux_fhe::Result<FheUint>;

impl PyServerKey {
    fn uint2(&self, py: Python<'_>, op: Binary, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        let (a, b) = (&a.inner, &b.inner);
        Ok(wrap_uint(heavy(py, || op(&self.inner, a, b))?))
    }

    fn compare(
        &self,
        py: Python<'_>,
        op: fn(&lux_fhe::ServerKey, &FheUint, &FheUint) -> lux_fhe::Result<lux_fhe::LweCiphertext>,
        a: &PyFheUint,
        b: &PyFheUint,
    ) -> PyResult<PyLweCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        Ok(PyLweCiphertext { inner: heavy(py, || op(&self.inner, a, b))? })
    }
}

#[pymethods]
impl PyServerKey {
    /// `a + b` modulo 2^width.
    fn add(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        self.uint2(py, lux_fhe::ServerKey::add, a, b)
    }

    /// `a - b` modulo 2^width.
    fn sub(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        self.uint2(py, lux_fhe::ServerKey::sub, a, b)
    }

    /// `a * b` modulo 2^width.
    fn mul_low(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        self.uint2(py, lux_fhe::ServerKey::mul_low, a, b)
    }

    /// The full product, `2 * width` bits.
    fn mul_full(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        self.uint2(py, lux_fhe::ServerKey::mul_full, a, b)
    }

    /// The smaller of `a` and `b`.
    fn min(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        self.uint2(py, lux_fhe::ServerKey::min, a, b)
    }

    /// The larger of `a` and `b`.
    fn max(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyFheUint> {
        self.uint2(py, lux_fhe::ServerKey::max, a, b)
    }

    /// The encrypted bit `a == b`.
    fn eq(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyLweCiphertext> {
        self.compare(py, lux_fhe::ServerKey::eq, a, b)
    }

    /// The encrypted bit `a < b`.
    fn lt(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyLweCiphertext> {
        self.compare(py, lux_fhe::ServerKey::lt, a, b)
    }

    /// The encrypted bit `a <= b`.
    fn le(&self, py: Python<'_>, a: &PyFheUint, b: &PyFheUint) -> PyResult<PyLweCiphertext> {
        self.compare(py, lux_fhe::ServerKey::le, a, b)
    }

    /// `sel ? t : f` bitwise.
    fn select(&self, py: Python<'_>, sel: &PyLweCiphertext, t: &PyFheUint, f: &PyFheUint) -> PyResult<PyFheUint> {
        let (s, t, f) = (&sel.inner, &t.inner, &f.inner);
        Ok(wrap_uint(heavy(py, || self.inner.select(s, t, f))?))
    }

    /// `a << k` by a public amount (no bootstrap).
    fn shl(&self, a: &PyFheUint, k: usize) -> PyResult<PyFheUint> {
        Ok(wrap_uint(self.inner.shl(&a.inner, k).py_err()?))
    }

    /// `a >> k` by a public amount (no bootstrap).
    fn shr(&self, a: &PyFheUint, k: usize) -> PyResult<PyFheUint> {
        Ok(wrap_uint(self.inner.shr(&a.inner, k).py_err()?))
    }
}
