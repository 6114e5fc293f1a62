//! The Rust side of the Python-vs-Rust overhead benchmark (`fhe-py/bench/overhead.py`):
//! the same call on the same objects, timed call by call inside Rust with the GIL
//! released, so Python can interleave its own calls with these one by one and compare
//! on the same machine moment. Not a test: it asserts nothing.

use std::time::Instant;

use lux_fhe::Gate;
use pyo3::prelude::*;

use crate::ckks_eval::PyEvaluator;
use crate::ckks_keys::PyCiphertext;
use crate::engine::PyLweCiphertext;
use crate::gates::PyServerKey;
use crate::wire::heavy;

/// Seconds of each of `iters` Rust calls `server.gate(AND, a, b)` (one bootstrap each).
#[pyfunction]
fn rust_and_times(
    py: Python<'_>,
    server: &PyServerKey,
    a: &PyLweCiphertext,
    b: &PyLweCiphertext,
    iters: usize,
) -> PyResult<Vec<f64>> {
    let (key, a, b) = (&server.inner, &a.inner, &b.inner);
    heavy(py, || {
        (0..iters)
            .map(|_| {
                let t = Instant::now();
                let out = key.gate(Gate::And, a, b)?;
                let s = t.elapsed().as_secs_f64();
                drop(std::hint::black_box(out));
                Ok(s)
            })
            .collect()
    })
}

/// Seconds of each of `iters` Rust calls `ev.mul(a, b)` (multiply and relinearize).
#[pyfunction]
fn rust_mul_times(
    py: Python<'_>,
    ev: &PyEvaluator,
    a: &PyCiphertext,
    b: &PyCiphertext,
    iters: usize,
) -> PyResult<Vec<f64>> {
    let (ev, a, b) = (&ev.inner, a.get()?, b.get()?);
    heavy(py, || {
        (0..iters)
            .map(|_| {
                let t = Instant::now();
                let out = ev.mul(&a, &b)?;
                let s = t.elapsed().as_secs_f64();
                drop(std::hint::black_box(out));
                Ok(s)
            })
            .collect()
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rust_and_times, m)?)?;
    m.add_function(wrap_pyfunction!(rust_mul_times, m)?)?;
    Ok(())
}
