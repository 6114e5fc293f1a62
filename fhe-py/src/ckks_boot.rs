//! CKKS bootstrapping from Python: `ckks.Bootstrapper` (a refresh to a high level) and
//! `ckks.FunctionalBootstrapper` with `ckks.FourierSeries` (a refresh that evaluates a
//! function, seed 2). Both are made from the secret key on the client's side: the
//! evaluation keys go straight into the evaluator they own, each prepared over the levels
//! it serves (`Context::evaluator_from_secret`), and the sparse-secret encapsulation keys
//! with them. Every call runs with the GIL released.

use std::cell::RefCell;
use std::sync::Arc;

use lux_fhe::ckks::{
    precision_floor_bits, seed_two_chains, BootstrapConfig, Bootstrapper, Context, DiagonalForm, FeFunction,
    FourierSeries, FunctionalBootstrapper, FunctionalConfig, MemoryEstimate,
};
use lux_fhe::rng::stream;
use lux_fhe::Seed;
use numpy::Complex64;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::ckks::{mode_arg, PyContext, PyParams};
use crate::ckks_eval::PyEvaluator;
use crate::ckks_keys::{PyCiphertext, PyCkksSecretKey};
use crate::errors::{to_py, InvalidInputError};
use crate::wire::{heavy, seed_or_os};

fn memory_dict<'py>(py: Python<'py>, m: &MemoryEstimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("keys", m.keys)?;
    d.set_item("plaintexts", m.plaintexts)?;
    d.set_item("working", m.working)?;
    d.set_item("total", m.total())?;
    Ok(d)
}

/// The encapsulation keys' seed, apart from the evaluation keys'.
fn encapsulation_seed(seed: &Seed) -> Seed {
    let mut r = stream(&seed.0, "lux-fhe-py/encapsulation", 0);
    let mut out = [0u8; 32];
    out.chunks_mut(8).for_each(|c| c.copy_from_slice(&r.next_u64().to_le_bytes()));
    Seed(out)
}

/// A bootstrapping set-up: its evaluator (the keys made from the secret key, each kept
/// over the levels it serves) and the prepared transforms. `encapsulation=None` raises
/// under the user's secret instead of a sparse one of that weight.
#[pyclass(module = "lux_fhe.ckks", name = "Bootstrapper", frozen)]
pub struct PyBootstrapper {
    inner: Bootstrapper,
    ev: Py<PyEvaluator>,
    ctx: Arc<Context>,
}

/// `diagonals=`: `auto` (whole where the machine holds them so, compact where not),
/// `evaluation` or `compact`.
fn diagonals_arg(diagonals: &str) -> PyResult<Option<DiagonalForm>> {
    match diagonals.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(None),
        "evaluation" => Ok(Some(DiagonalForm::Evaluation)),
        "compact" => Ok(Some(DiagonalForm::Compact)),
        other => Err(InvalidInputError::new_err(format!(
            "unknown diagonals `{other}`; valid values: auto, evaluation, compact"
        ))),
    }
}

fn form_name(form: DiagonalForm) -> &'static str {
    match form {
        DiagonalForm::Evaluation => "evaluation",
        DiagonalForm::Compact => "compact",
    }
}

#[allow(clippy::too_many_arguments)]
fn boot_config(
    level_budget: (usize, usize),
    encapsulation: Option<usize>,
    slots: Option<usize>,
    prescale_bits: u32,
    eval_mod_bits: u32,
    arcsine: bool,
    diagonals: Option<DiagonalForm>,
) -> BootstrapConfig {
    BootstrapConfig {
        level_budget,
        encapsulation,
        slots,
        prescale_bits,
        eval_mod_bits,
        arcsine,
        diagonals,
        ..Default::default()
    }
}

#[pymethods]
impl PyBootstrapper {
    /// Makes the evaluation keys from `sk` (OS randomness, or the 32-byte `seed`), an
    /// evaluator in `mode`, and the bootstrapper. A configuration needing more memory
    /// than the machine has is `OutOfMemoryError` before anything is made.
    #[new]
    #[pyo3(signature = (ctx, sk, level_budget = (3, 3), encapsulation = Some(192), slots = None,
                        prescale_bits = 8, eval_mod_bits = 36, arcsine = false, mode = "auto", seed = None,
                        diagonals = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        ctx: &PyContext,
        sk: &PyCkksSecretKey,
        level_budget: (usize, usize),
        encapsulation: Option<usize>,
        slots: Option<usize>,
        prescale_bits: u32,
        eval_mod_bits: u32,
        arcsine: bool,
        mode: &str,
        seed: Option<&[u8]>,
        diagonals: &str,
    ) -> PyResult<Self> {
        let form = diagonals_arg(diagonals)?;
        let config = boot_config(level_budget, encapsulation, slots, prescale_bits, eval_mod_bits, arcsine, form);
        let (mode, seed, c) = (mode_arg(mode)?, seed_or_os(seed)?, ctx.inner.clone());
        let (ev, bs) = heavy(py, || {
            let params = c.params();
            let options = Bootstrapper::key_options(params, &config)?;
            let levels = Bootstrapper::key_levels(params, &config)?;
            let ev = c.evaluator_from_secret(&sk.inner, &options, mode, &levels, &seed)?;
            let mut bs = Bootstrapper::new(&c, &ev, &config)?;
            let sse_seed = encapsulation_seed(&seed);
            if let Some(keys) = Bootstrapper::encapsulation_keys_seeded(&c, &sk.inner, &config, &sse_seed)? {
                bs.set_encapsulation_keys(&ev, &keys)?;
            }
            Ok((ev, bs))
        })?;
        let ev = Py::new(py, PyEvaluator::new(ev, c.clone()))?;
        Ok(PyBootstrapper { inner: bs, ev, ctx: c })
    }

    /// What the configuration holds in memory, in bytes (`keys`, `plaintexts`,
    /// `working`, `total`), estimated before anything is made.
    #[staticmethod]
    #[pyo3(signature = (params, level_budget = (3, 3), encapsulation = Some(192), slots = None,
                        prescale_bits = 8, eval_mod_bits = 36, arcsine = false, diagonals = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn memory_estimate<'py>(
        py: Python<'py>,
        params: &PyParams,
        level_budget: (usize, usize),
        encapsulation: Option<usize>,
        slots: Option<usize>,
        prescale_bits: u32,
        eval_mod_bits: u32,
        arcsine: bool,
        diagonals: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let form = diagonals_arg(diagonals)?;
        let config = boot_config(level_budget, encapsulation, slots, prescale_bits, eval_mod_bits, arcsine, form);
        let m = heavy(py, || Bootstrapper::memory_estimate(&params.inner, &config))?;
        memory_dict(py, &m)
    }

    #[getter]
    /// The evaluator holding the keys (use it for everything else on these ciphertexts).
    fn evaluator(&self, py: Python<'_>) -> Py<PyEvaluator> {
        self.ev.clone_ref(py)
    }

    #[getter]
    /// How the transforms' diagonals are kept: `evaluation` or `compact`.
    fn diagonal_form(&self) -> &'static str {
        form_name(self.inner.diagonal_form())
    }

    #[getter]
    /// The level of a bootstrap's output.
    fn output_level(&self) -> usize {
        self.inner.output_level()
    }

    #[getter]
    /// Slots bootstrapped (`N/2` for full packing).
    fn slots(&self) -> usize {
        self.inner.slots()
    }

    #[getter]
    /// The range `K` of the integer part after ModRaise.
    fn k(&self) -> u32 {
        self.inner.k()
    }

    /// `ct` refreshed at `output_level`: values of magnitude at most 1, at level 1 or above.
    fn bootstrap(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
        let x = ct.get()?;
        let ev = self.ev.get();
        let out = heavy(py, || self.inner.bootstrap(&ev.inner, &x))?;
        Ok(PyCiphertext::new(out, self.ctx.clone()))
    }

    fn __repr__(&self) -> String {
        format!(
            "Bootstrapper(level budget {:?}, output level {})",
            self.inner.config().level_budget,
            self.output_level()
        )
    }
}

/// A function's Fourier extension: `f(v)` on `[-radius, radius]` as `2 Re(sum_j c_j
/// exp(i pi j v / (2 radius)))`.
#[pyclass(module = "lux_fhe.ckks", name = "FourierSeries", frozen)]
pub struct PyFourierSeries {
    inner: FourierSeries,
}

#[pymethods]
impl PyFourierSeries {
    /// The series of a shipped function (`fe_functions()`: identity, exp, tanh, sigmoid,
    /// gelu, each on its documented range) at the lowest degree that reaches `bits`.
    #[staticmethod]
    fn for_function(py: Python<'_>, name: &str, bits: f64) -> PyResult<Self> {
        let f: FeFunction = name.parse().map_err(to_py)?;
        Ok(PyFourierSeries { inner: heavy(py, || f.series(bits))? })
    }

    /// Fits a Python function `f(float) -> float` on `[-radius, radius]` at `degree`
    /// (least squares with a frequency-weighted penalty, docs/CKKS.md).
    #[staticmethod]
    fn fit(f: &Bound<'_, PyAny>, radius: f64, degree: usize) -> PyResult<Self> {
        let failed: RefCell<Option<PyErr>> = RefCell::new(None);
        let call = |v: f64| -> f64 {
            match f.call1((v,)).and_then(|y| y.extract::<f64>()) {
                Ok(y) => y,
                Err(e) => {
                    failed.borrow_mut().get_or_insert(e);
                    f64::NAN
                }
            }
        };
        let series = FourierSeries::fit(call, radius, degree);
        if let Some(e) = failed.into_inner() {
            return Err(e);
        }
        Ok(PyFourierSeries { inner: series.map_err(to_py)? })
    }

    #[getter]
    /// The highest frequency `j`.
    fn degree(&self) -> usize {
        self.inner.degree()
    }

    #[getter]
    /// The input range is `[-radius, radius]`.
    fn radius(&self) -> f64 {
        self.inner.radius
    }

    #[getter]
    /// `c_0 .. c_degree`.
    fn coeffs(&self) -> Vec<Complex64> {
        self.inner.coeffs.iter().map(|c| Complex64::new(c.re, c.im)).collect()
    }

    /// The series at `v` (in f64).
    fn eval(&self, v: f64) -> f64 {
        self.inner.eval(v)
    }

    fn __repr__(&self) -> String {
        format!("FourierSeries(degree {} on [-{r}, {r}])", self.degree(), r = self.inner.radius)
    }
}

/// A functional bootstrapping set-up for series up to `max_degree`, its keys made from
/// the secret key (as `Bootstrapper`'s). `level_budget`, `exp_bits` and
/// `double_angles` (the exponential's squarings) default to `FunctionalConfig::for_scale`
/// of the parameters' scale; `seed_two_chains()` gives each of seed 2's rows its own.
/// `sparse_keys=True` keeps CoeffsToSlots and the exponential under the sparse secret,
/// with keys of their own there (`FunctionalConfig::sparse_keys`: more precision at small
/// scales; the chain's log QP must be within the sparse secret's bound), as seed 2's
/// chains do in the Rust benchmark.
#[pyclass(module = "lux_fhe.ckks", name = "FunctionalBootstrapper", frozen)]
pub struct PyFunctionalBootstrapper {
    inner: FunctionalBootstrapper,
    ev: Py<PyEvaluator>,
    ctx: Arc<Context>,
}

fn fe_config(
    scale_bits: u32,
    level_budget: Option<(usize, usize)>,
    exp_bits: Option<u32>,
    enc: Option<usize>,
    double_angles: Option<u32>,
    sparse_keys: bool,
    diagonals: Option<DiagonalForm>,
) -> FunctionalConfig {
    let d = FunctionalConfig::for_scale(scale_bits);
    FunctionalConfig {
        level_budget: level_budget.unwrap_or(d.level_budget),
        exp_bits: exp_bits.unwrap_or(d.exp_bits),
        double_angles: double_angles.or(d.double_angles),
        encapsulation: enc,
        sparse_keys,
        diagonals,
        ..d
    }
}

#[pymethods]
impl PyFunctionalBootstrapper {
    #[new]
    #[pyo3(signature = (ctx, sk, max_degree, level_budget = None, exp_bits = None, encapsulation = Some(192),
                        mode = "auto", seed = None, double_angles = None, sparse_keys = false, diagonals = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        ctx: &PyContext,
        sk: &PyCkksSecretKey,
        max_degree: usize,
        level_budget: Option<(usize, usize)>,
        exp_bits: Option<u32>,
        encapsulation: Option<usize>,
        mode: &str,
        seed: Option<&[u8]>,
        double_angles: Option<u32>,
        sparse_keys: bool,
        diagonals: &str,
    ) -> PyResult<Self> {
        let (mode, seed, c) = (mode_arg(mode)?, seed_or_os(seed)?, ctx.inner.clone());
        let (bits, form) = (c.params().scale_bits(), diagonals_arg(diagonals)?);
        let config = fe_config(bits, level_budget, exp_bits, encapsulation, double_angles, sparse_keys, form);
        let (ev, fb) = heavy(py, || {
            let params = c.params();
            let options = FunctionalBootstrapper::key_options(params, &config)?;
            let levels = FunctionalBootstrapper::key_levels(params, &config)?;
            let ev = c.evaluator_from_secret(&sk.inner, &options, mode, &levels, &seed)?;
            let mut fb = FunctionalBootstrapper::new(&c, &ev, &config, max_degree)?;
            fb.set_encapsulation_from_secret(&c, &ev, &sk.inner, &encapsulation_seed(&seed))?;
            Ok((ev, fb))
        })?;
        let ev = Py::new(py, PyEvaluator::new(ev, c.clone()))?;
        Ok(PyFunctionalBootstrapper { inner: fb, ev, ctx: c })
    }

    /// Bytes the configuration holds (as `Bootstrapper.memory_estimate`).
    #[staticmethod]
    #[pyo3(signature = (params, level_budget = None, exp_bits = None, encapsulation = Some(192), double_angles = None,
                        sparse_keys = false, diagonals = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn memory_estimate<'py>(
        py: Python<'py>,
        params: &PyParams,
        level_budget: Option<(usize, usize)>,
        exp_bits: Option<u32>,
        encapsulation: Option<usize>,
        double_angles: Option<u32>,
        sparse_keys: bool,
        diagonals: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (bits, form) = (params.inner.scale_bits(), diagonals_arg(diagonals)?);
        let config = fe_config(bits, level_budget, exp_bits, encapsulation, double_angles, sparse_keys, form);
        let m = heavy(py, || FunctionalBootstrapper::memory_estimate(&params.inner, &config))?;
        memory_dict(py, &m)
    }

    #[getter]
    /// The evaluator holding the keys.
    fn evaluator(&self, py: Python<'_>) -> Py<PyEvaluator> {
        self.ev.clone_ref(py)
    }

    #[getter]
    /// How the transforms' diagonals are kept: `evaluation` or `compact`.
    fn diagonal_form(&self) -> &'static str {
        form_name(self.inner.diagonal_form())
    }

    #[getter]
    /// The level inputs are taken at (one above it is brought down).
    fn input_level(&self) -> usize {
        self.inner.input_level()
    }

    /// The output's level for a series of `degree`.
    fn output_level(&self, degree: usize) -> usize {
        self.inner.output_level(&self.ev.get().inner, degree)
    }

    /// `f(2 radius x)` for `series` of `f`: `ct` holds real `x` in `[-1/2, 1/2)` at
    /// `input_level` or above.
    fn bootstrap(&self, py: Python<'_>, ct: &PyCiphertext, series: &PyFourierSeries) -> PyResult<PyCiphertext> {
        let x = ct.get()?;
        let ev = self.ev.get();
        let out = heavy(py, || self.inner.bootstrap(&ev.inner, &x, &series.inner))?;
        Ok(PyCiphertext::new(out, self.ctx.clone()))
    }

    /// The refresh alone (`exp(i pi x)` in the slots), for several series of one input.
    fn exponential(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
        let x = ct.get()?;
        let ev = self.ev.get();
        let out = heavy(py, || self.inner.exponential(&ev.inner, &x))?;
        Ok(PyCiphertext::new(out, self.ctx.clone()))
    }

    /// A series on an `exponential`'s output.
    fn apply(&self, py: Python<'_>, z: &PyCiphertext, series: &PyFourierSeries) -> PyResult<PyCiphertext> {
        let z = z.get()?;
        let ev = self.ev.get();
        let out = heavy(py, || self.inner.apply(&ev.inner, &z, &series.inner))?;
        Ok(PyCiphertext::new(out, self.ctx.clone()))
    }

    fn __repr__(&self) -> String {
        format!(
            "FunctionalBootstrapper(level budget {:?}, input level {})",
            self.inner.config().level_budget,
            self.input_level()
        )
    }
}

/// The shipped functions' names.
#[pyfunction]
pub fn fe_functions() -> Vec<&'static str> {
    FeFunction::ALL.iter().map(|f| f.name()).collect()
}

/// The precision seed 2 fits its series to at a scale of `scale_bits`.
#[pyfunction(name = "precision_floor_bits")]
pub fn floor_bits(scale_bits: u32) -> f64 {
    precision_floor_bits(scale_bits)
}

/// Seed 2's configurations: `(name, level_budget, double_angles)` of each row, the last
/// two for `FunctionalBootstrapper` (`None`: the scale's squarings).
#[pyfunction(name = "seed_two_chains")]
pub fn chains() -> Vec<(String, (usize, usize), Option<u32>)> {
    seed_two_chains()
        .into_iter()
        .map(|c| {
            let config = c.config();
            (c.name, config.level_budget, config.double_angles)
        })
        .collect()
}

/// The parameters of seed 2's configuration `name` for series up to `max_degree`
/// (`SecurityBoundError` over its bound).
#[pyfunction]
pub fn seed_two_params(py: Python<'_>, name: &str, max_degree: usize) -> PyResult<PyParams> {
    let chain = seed_two_chains().into_iter().find(|c| c.name == name).ok_or_else(|| {
        let names: Vec<String> = seed_two_chains().into_iter().map(|c| c.name).collect();
        InvalidInputError::new_err(format!("unknown configuration {name:?}: one of {}", names.join(", ")))
    })?;
    Ok(PyParams { inner: Arc::new(heavy(py, || chain.params(max_degree))?) })
}
