//! What every binding shares: bytes in and out through the versioned format, pickling
//! through those bytes, seeds, and running a heavy call with the GIL released.

use lux_fhe::{Result, Seed};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use zeroize::Zeroizing;

use crate::errors::{IntoPy, InvalidInputError};

/// Runs `f` with the GIL released (every call that does ring arithmetic, key
/// preparation or decoding of large objects), then maps the runtime's error.
pub fn heavy<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T> + Send) -> PyResult<T> {
    py.detach(f).py_err()
}

/// `bytes` holding an encoding the caller asked for.
pub fn to_pybytes<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, bytes)
}

/// `bytes` of a secret encoding: the Rust buffer is wiped when this returns, so the only
/// copy left is the `bytes` object the caller asked for (Python cannot wipe it).
pub fn secret_to_pybytes<'py>(py: Python<'py>, bytes: Zeroizing<Vec<u8>>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &bytes)
}

/// `(type(obj).from_bytes, (obj.to_bytes(),))`: pickling goes through the versioned
/// format, so unpickling malformed bytes raises the decoder's exception.
pub fn reduce<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let from_bytes = obj.get_type().getattr("from_bytes")?;
    let bytes = obj.call_method0("to_bytes")?;
    PyTuple::new(obj.py(), [from_bytes, PyTuple::new(obj.py(), [bytes])?.into_any()])
}

/// A 32-byte seed from Python `bytes`, or fresh OS randomness when `None`.
pub fn seed_or_os(seed: Option<&[u8]>) -> PyResult<Seed> {
    match seed {
        None => Seed::from_os().py_err(),
        Some(b) => {
            let arr: [u8; 32] =
                b.try_into().map_err(|_| InvalidInputError::new_err(format!("a seed is 32 bytes, got {}", b.len())))?;
            Ok(Seed(arr))
        }
    }
}

/// `derive_seed(root, index)`: the library's domain-separated seed derivation
/// (SHA-256 of `root`, a zero byte and `index`), for reproducible keys and encryptions.
#[pyfunction]
pub fn derive_seed<'py>(py: Python<'py>, root: &str, index: u64) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &Seed::derive(root, index).0)
}

/// Sends the runtime's `tracing` events (backend choice, warnings) to stderr, filtered
/// like `RUST_LOG` (`"info"`, `"lux_fhe=debug"`). A second call does nothing.
#[pyfunction]
#[pyo3(signature = (filter = "info"))]
pub fn init_logging(filter: &str) -> PyResult<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .map_err(|e| InvalidInputError::new_err(format!("log filter `{filter}`: {e}")))?;
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
    Ok(())
}

/// The members every keyed object with bytes shares: its parameter set's name, its key
/// set's tag, pickling through its bytes, and a repr naming both. Stamped as a second
/// `#[pymethods]` block (pyo3's `multiple-pymethods`), so each class spells only its own
/// encoding.
macro_rules! keyed_object {
    ($py:ty, $name:literal) => {
        #[pymethods]
        impl $py {
            /// The parameter set's name.
            #[getter]
            fn params(&self) -> String {
                self.inner.params().name().to_string()
            }

            /// The key set's tag, 16 hex digits (`docs/FORMAT.md`, "Key tags").
            #[getter]
            fn tag(&self) -> String {
                self.inner.tag().to_string()
            }

            fn __reduce__<'py>(slf: &pyo3::Bound<'py, Self>) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyTuple>> {
                $crate::wire::reduce(slf.as_any())
            }

            fn __repr__(&self) -> String {
                format!(concat!($name, "({}, tag {})"), self.inner.params().name(), self.inner.tag())
            }
        }
    };
}
pub(crate) use keyed_object;
