//! `lux_fhe._native`: the Python bindings of the Lux FHE runtime over the `lux-fhe`
//! facade (never a backend's internals). The Python package `lux_fhe` (python/) re-exports
//! these classes, adds the Ray scale-out module and the type stubs.
//!
//! | module | binds |
//! |---|---|
//! | `engine` | `Engine`, the bit scheme's keys and ciphertexts |
//! | `gates` | `ServerKey`'s gates and batches, `Gate` |
//! | `integer` | `FheUint`, `ServerKey`'s integer operations |
//! | `ckks` | `ckks.Params`, `ckks.Context`: keys, numpy encoding, encryption, decryption |
//! | `ckks_keys` | CKKS keys, plaintexts, resident ciphertexts, with bytes |
//! | `ckks_eval` | `ckks.Evaluator`: every operation |
//! | `ckks_boot` | `ckks.Bootstrapper`, `ckks.FunctionalBootstrapper`, `ckks.FourierSeries` |
//! | `errors` | the runtime's `Error` as a hierarchy of Python exceptions |
//! | `wire` | bytes, pickling, seeds, releasing the GIL |
//! | `bench` | the Rust side of the Python-vs-Rust overhead benchmark |

mod bench;
mod ckks;
mod ckks_boot;
mod ckks_eval;
mod ckks_keys;
mod engine;
mod errors;
mod gates;
mod integer;
mod wire;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::register(m)?;
    m.add_class::<engine::PyEngine>()?;
    m.add_class::<engine::PyKeySet>()?;
    m.add_class::<engine::PySecretKey>()?;
    m.add_class::<engine::PyPublicKey>()?;
    m.add_class::<engine::PyEvaluationKey>()?;
    m.add_class::<engine::PyLweCiphertext>()?;
    m.add_class::<gates::PyGate>()?;
    m.add_class::<gates::PyServerKey>()?;
    m.add_class::<integer::PyFheUint>()?;
    m.add_function(wrap_pyfunction!(wire::derive_seed, m)?)?;
    m.add_function(wrap_pyfunction!(wire::init_logging, m)?)?;
    m.add("PARAM_SETS", lux_fhe::ParamSet::ALL.iter().map(|p| p.name()).collect::<Vec<_>>())?;

    let c = PyModule::new(py, "ckks")?;
    c.add_class::<ckks::PyParams>()?;
    c.add_class::<ckks::PyContext>()?;
    c.add_class::<ckks_keys::PyCkksSecretKey>()?;
    c.add_class::<ckks_keys::PyCkksPublicKey>()?;
    c.add_class::<ckks_keys::PySwitchingKey>()?;
    c.add_class::<ckks_keys::PyEvalKeys>()?;
    c.add_class::<ckks_keys::PyCkksKeySet>()?;
    c.add_class::<ckks_keys::PyPlaintext>()?;
    c.add_class::<ckks_keys::PyPreparedPlaintext>()?;
    c.add_class::<ckks_keys::PyCiphertext>()?;
    c.add_class::<ckks_eval::PyEvaluator>()?;
    c.add_class::<ckks_eval::PyHoisted>()?;
    c.add_class::<ckks_boot::PyBootstrapper>()?;
    c.add_class::<ckks_boot::PyFunctionalBootstrapper>()?;
    c.add_class::<ckks_boot::PyFourierSeries>()?;
    c.add_function(wrap_pyfunction!(ckks::presets, &c)?)?;
    c.add_function(wrap_pyfunction!(ckks_boot::fe_functions, &c)?)?;
    c.add_function(wrap_pyfunction!(ckks_boot::floor_bits, &c)?)?;
    c.add_function(wrap_pyfunction!(ckks_boot::chains, &c)?)?;
    c.add_function(wrap_pyfunction!(ckks_boot::seed_two_params, &c)?)?;
    m.add_submodule(&c)?;

    let b = PyModule::new(py, "bench")?;
    bench::register(&b)?;
    m.add_submodule(&b)?;
    Ok(())
}
