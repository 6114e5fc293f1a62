//! The runtime's `Error` as Python exceptions: one class per family of causes a user
//! can act on, all under `LuxFheError`, each carrying the Rust message unchanged and
//! its source chain as `__cause__` (a backend's missing driver, a decode failure's
//! detail), so `except lux_fhe.DecodeError` and `str(e)` both say what went wrong.

use lux_fhe::Error;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(lux_fhe, LuxFheError, PyException, "Every error of the Lux FHE runtime.");
create_exception!(
    lux_fhe,
    BackendError,
    LuxFheError,
    "A backend that cannot run here or failed: not compiled in, driver or device missing, an unknown \
     LUX_FHE_BACKEND / LUX_FHE_NTT value, a scheme the backend lacks."
);
create_exception!(
    lux_fhe,
    DecodeError,
    LuxFheError,
    "Bytes that are not a valid object of the versioned format (docs/FORMAT.md)."
);
create_exception!(
    lux_fhe,
    WrongKeyError,
    LuxFheError,
    "An object of another key set (its key tag differs), or one relabelled to another parameter set."
);
create_exception!(lux_fhe, MissingKeyError, LuxFheError, "An evaluation key that was not generated.");
create_exception!(
    lux_fhe,
    ParamError,
    LuxFheError,
    "Unknown or mismatched parameter sets, or parameters over the 128-bit security bound."
);
create_exception!(lux_fhe, LevelError, LuxFheError, "A CKKS operand at a level the operation cannot take.");
create_exception!(lux_fhe, ScaleError, LuxFheError, "CKKS scales that differ, or a result scale that would overflow.");
create_exception!(lux_fhe, InvalidInputError, LuxFheError, "A structurally invalid argument.");

/// The Python exception for a runtime error, with its `source()` chain as `__cause__`.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    let err = match &e {
        Error::Unavailable { .. }
        | Error::UnknownBackend { .. }
        | Error::UnknownNttVariant { .. }
        | Error::Environment { .. }
        | Error::Unsupported { .. }
        | Error::WrongBackend { .. }
        | Error::Device { .. } => BackendError::new_err(msg),
        Error::Decode(_) => DecodeError::new_err(msg),
        Error::WrongKey { .. } => WrongKeyError::new_err(msg),
        Error::MissingKey(_) => MissingKeyError::new_err(msg),
        Error::UnknownParamSet { .. }
        | Error::ParamMismatch { .. }
        | Error::SecurityBound { .. }
        | Error::InvalidRing(_) => ParamError::new_err(msg),
        Error::Level { .. } => LevelError::new_err(msg),
        Error::ScaleMismatch { .. } | Error::ScaleOverflow { .. } => ScaleError::new_err(msg),
        Error::InvalidInput(_) | Error::InvalidLut { .. } => InvalidInputError::new_err(msg),
        // `Error` is non-exhaustive: a variant added later is still a LuxFheError.
        _ => LuxFheError::new_err(msg),
    };
    if let Some(source) = std::error::Error::source(&e) {
        Python::attach(|py| err.set_cause(py, Some(cause_chain(source))));
    }
    err
}

/// `LuxFheError`s for a source and its own sources, linked by `__cause__`.
fn cause_chain(source: &(dyn std::error::Error + 'static)) -> PyErr {
    let err = LuxFheError::new_err(source.to_string());
    if let Some(next) = source.source() {
        Python::attach(|py| err.set_cause(py, Some(cause_chain(next))));
    }
    err
}

/// `Result<T, Error>` into `PyResult<T>`.
pub trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LuxFheError", py.get_type::<LuxFheError>())?;
    m.add("BackendError", py.get_type::<BackendError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("WrongKeyError", py.get_type::<WrongKeyError>())?;
    m.add("MissingKeyError", py.get_type::<MissingKeyError>())?;
    m.add("ParamError", py.get_type::<ParamError>())?;
    m.add("LevelError", py.get_type::<LevelError>())?;
    m.add("ScaleError", py.get_type::<ScaleError>())?;
    m.add("InvalidInputError", py.get_type::<InvalidInputError>())?;
    Ok(())
}
