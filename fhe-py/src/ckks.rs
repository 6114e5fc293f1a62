//! CKKS's client side: parameters (presets or a literal), the `Context` (key
//! generation, encoding numpy arrays, encryption, decryption back to numpy, bytes) and
//! the default context that unpickled ciphertexts land in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use lux_fhe::ckks::{
    Complex, Context, KeygenOptions, Mode, Params, ParamsLiteral, Plaintext, Preset, Scale, SecretDist,
};
use lux_fhe::{Engine, Error};
use numpy::{AllowTypeChange, Complex64, IntoPyArray, PyArrayLike1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::ckks_eval::PyEvaluator;
use crate::ckks_keys::{
    eval_keys_of, PyCiphertext, PyCkksKeySet, PyCkksPublicKey, PyCkksSecretKey, PyEvalKeys, PyPlaintext,
};
use crate::errors::{IntoPy, InvalidInputError};
use crate::wire::{heavy, seed_or_os, to_pybytes};

/// CKKS parameters: a preset (`Params.preset("slots4096-scale40-depth2")`) or a literal
/// (`Params("mine", log_n=14, depth=6, dnum=4)`), refused over the 128-bit bound with
/// both numbers (`ParamError`).
#[pyclass(module = "lux_fhe.ckks", name = "Params", frozen)]
pub struct PyParams {
    pub inner: Arc<Params>,
}

/// The chain literal of `Params(...)` and `Params.insecure_for_tests(...)`.
fn literal(
    name: String,
    log_n: u32,
    depth: usize,
    dnum: usize,
    (scale_bits, first_bits, special_bits): (u32, u32, u32),
    hamming_weight: Option<usize>,
) -> ParamsLiteral {
    let secret = hamming_weight.map_or(SecretDist::Ternary, |h| SecretDist::SparseTernary { hamming_weight: h });
    ParamsLiteral { name, log_n, scale_bits, depth, first_bits, special_bits, dnum, secret }
}

#[pymethods]
impl PyParams {
    /// Lattigo's `ParametersLiteral`: `N = 2**log_n`, `depth` scale primes near
    /// `2**scale_bits` after a `first_bits` prime, special primes of `special_bits`,
    /// `dnum` key-switching digits; a ternary secret, or a sparse one of
    /// `hamming_weight` non-zero coefficients.
    #[new]
    #[pyo3(signature = (name, log_n, depth, dnum, scale_bits = 40, first_bits = 60, special_bits = 60, hamming_weight = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: String,
        log_n: u32,
        depth: usize,
        dnum: usize,
        scale_bits: u32,
        first_bits: u32,
        special_bits: u32,
        hamming_weight: Option<usize>,
    ) -> PyResult<Self> {
        let literal = literal(name, log_n, depth, dnum, (scale_bits, first_bits, special_bits), hamming_weight);
        Ok(PyParams { inner: Arc::new(heavy(py, || Params::new(&literal))?) })
    }

    /// INSECURE parameters for tests whose names say so: the constructor's chain without
    /// the 128-bit bound (small rings that bootstrap in seconds).
    #[staticmethod]
    #[pyo3(signature = (name, log_n, depth, dnum, scale_bits = 40, first_bits = 60, special_bits = 60, hamming_weight = None))]
    #[allow(clippy::too_many_arguments)]
    fn insecure_for_tests(
        py: Python<'_>,
        name: String,
        log_n: u32,
        depth: usize,
        dnum: usize,
        scale_bits: u32,
        first_bits: u32,
        special_bits: u32,
        hamming_weight: Option<usize>,
    ) -> PyResult<Self> {
        let literal = literal(name, log_n, depth, dnum, (scale_bits, first_bits, special_bits), hamming_weight);
        Ok(PyParams { inner: Arc::new(heavy(py, || Params::insecure_for_tests(&literal))?) })
    }

    #[getter]
    /// Whether these parameters are below 128-bit security (`insecure_for_tests`).
    fn insecure(&self) -> bool {
        self.inner.is_insecure()
    }

    /// A named preset's parameters.
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        Ok(PyParams { inner: Arc::new(preset(name)?.params().clone()) })
    }

    #[getter]
    /// The parameter set's name.
    fn name(&self) -> &str {
        self.inner.name()
    }
    /// The ring degree `N`.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }
    #[getter]
    /// The slot count, `N / 2`.
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    #[getter]
    /// The multiplicative depth.
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    #[getter]
    /// The top level (`depth`).
    fn max_level(&self) -> usize {
        self.inner.max_level()
    }
    #[getter]
    /// The number of key-switching digits.
    fn dnum(&self) -> usize {
        self.inner.dnum()
    }
    #[getter]
    /// The bits of the default scale.
    fn scale_bits(&self) -> u32 {
        self.inner.scale_bits()
    }
    /// The scale fresh encodings get, `2**scale_bits`.
    #[getter]
    fn default_scale(&self) -> f64 {
        self.inner.default_scale().value()
    }
    #[getter]
    /// The bits of the whole modulus `Q * P`.
    fn log_qp(&self) -> u32 {
        self.inner.log_qp()
    }
    /// The HE standard's 128-bit bound on log QP for this ring and secret, if tabled.
    #[getter]
    fn security_bound(&self) -> Option<u32> {
        self.inner.security_bound()
    }
    /// The canonical scale of `level`: `2**scale_bits` at the top, and what a product
    /// at the level above lands on once rescaled (the default scale of `encode(level=)`).
    fn scale_at(&self, level: usize) -> f64 {
        self.inner.scale_at(level).value()
    }
    /// The ciphertext primes `q_0 .. q_L`.
    #[getter]
    fn q(&self) -> Vec<u64> {
        self.inner.q().iter().map(|m| m.0).collect()
    }
    /// The special primes `p_0 .. p_{K-1}`.
    #[getter]
    fn p(&self) -> Vec<u64> {
        self.inner.p().iter().map(|m| m.0).collect()
    }
    fn __repr__(&self) -> String {
        let p = &self.inner;
        format!("Params({:?}, N={}, depth={}, dnum={}, log_qp={})", p.name(), p.n(), p.depth(), p.dnum(), p.log_qp())
    }
}

/// The preset names, in the library's order.
#[pyfunction]
pub fn presets() -> Vec<&'static str> {
    Preset::ALL.iter().map(|p| p.name()).collect()
}

fn preset(name: &str) -> PyResult<Preset> {
    name.parse::<Preset>().py_err()
}

/// A preset name or a `Params`.
pub fn params_arg(obj: &Bound<'_, PyAny>) -> PyResult<Params> {
    if let Ok(p) = obj.cast::<PyParams>() {
        return Ok((*p.get().inner).clone());
    }
    let name: String = obj.extract()?;
    Ok(preset(&name)?.params().clone())
}

/// Slot values from a numpy array (or anything numpy turns into one): `complex128` when
/// the input is complex, else `float64`; one dimension.
pub fn values_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Complex>> {
    let np = obj.py().import("numpy")?;
    if np.call_method1("iscomplexobj", (obj,))?.extract::<bool>()? {
        let a: PyArrayLike1<'_, Complex64, AllowTypeChange> = obj.extract()?;
        Ok(a.as_array().iter().map(|c| Complex { re: c.re, im: c.im }).collect())
    } else {
        let a: PyArrayLike1<'_, f64, AllowTypeChange> = obj.extract()?;
        Ok(a.as_array().iter().map(|&re| Complex { re, im: 0.0 }).collect())
    }
}

/// Slots as a numpy array: `complex128`, or `float64` real parts when `real`.
pub fn slots_out<'py>(py: Python<'py>, values: Vec<Complex>, real: bool) -> Bound<'py, PyAny> {
    if real {
        values.into_iter().map(|c| c.re).collect::<Vec<f64>>().into_pyarray(py).into_any()
    } else {
        values.into_iter().map(|c| Complex64::new(c.re, c.im)).collect::<Vec<_>>().into_pyarray(py).into_any()
    }
}

pub fn scale_arg(scale: Option<f64>, default: Scale) -> PyResult<Scale> {
    scale.map_or(Ok(default), |s| Scale::new(s).py_err())
}

pub fn mode_arg(mode: &str) -> PyResult<Mode> {
    match mode.trim().to_ascii_lowercase().as_str() {
        "manual" => Ok(Mode::Manual),
        "auto" => Ok(Mode::Auto),
        other => Err(InvalidInputError::new_err(format!("unknown mode `{other}`; valid values: manual, auto"))),
    }
}

/// The process's default engine (`LUX_FHE_BACKEND`) and its contexts by preset: where
/// `Ciphertext.from_bytes` (and so unpickling) puts a ciphertext no context was named
/// for. Every backend gives the same bytes, so the choice changes speed, not results.
pub fn default_context(preset: Preset) -> lux_fhe::Result<Arc<Context>> {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    static CONTEXTS: OnceLock<Mutex<HashMap<Preset, Arc<Context>>>> = OnceLock::new();
    let engine = match ENGINE.get() {
        Some(e) => e,
        None => {
            let e = Engine::from_env()?;
            ENGINE.get_or_init(|| e)
        }
    };
    let mut map = CONTEXTS
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| Error::InvalidInput("the default CKKS context cache was poisoned by a panic".into()))?;
    if let Some(c) = map.get(&preset) {
        return Ok(c.clone());
    }
    let ctx = Arc::new(engine.ckks(preset)?);
    map.insert(preset, ctx.clone());
    Ok(ctx)
}

/// CKKS on one backend with one parameter set: keys, encoding, encryption, decryption,
/// bytes, and evaluators (`Engine.ckks(preset)`).
#[pyclass(module = "lux_fhe.ckks", name = "Context", frozen)]
pub struct PyContext {
    pub inner: Arc<Context>,
}

fn options(relin: bool, rotations: Vec<i64>, conjugation: bool) -> KeygenOptions {
    KeygenOptions { relin, rotations, conjugation }
}

/// A `Plaintext`, or values to encode at the top level and default scale.
fn plaintext_or_values(ctx: &Context, obj: &Bound<'_, PyAny>) -> PyResult<Plaintext> {
    match obj.cast::<PyPlaintext>() {
        Ok(p) => Ok(p.get().inner.clone()),
        Err(_) => {
            let values = values_arg(obj)?;
            obj.py().detach(|| ctx.encode(&values)).py_err()
        }
    }
}

impl PyContext {
    pub fn new(inner: Arc<Context>) -> Self {
        PyContext { inner }
    }

    fn wrap_ct(&self, ct: lux_fhe::ckks::Ciphertext) -> PyCiphertext {
        PyCiphertext::new(ct, self.inner.clone())
    }
}

#[pymethods]
impl PyContext {
    #[getter]
    /// The CKKS parameters.
    fn params(&self) -> PyParams {
        PyParams { inner: self.inner.params().clone() }
    }

    /// Every key: secret, public, relinearization (`relin`), Galois keys for the
    /// rotations by `rotations` (positive: left) and for conjugation; from the 32-byte
    /// `seed` (byte-equal on every backend) or OS randomness.
    #[pyo3(signature = (rotations = Vec::new(), relin = true, conjugation = false, seed = None))]
    fn keygen(
        &self,
        py: Python<'_>,
        rotations: Vec<i64>,
        relin: bool,
        conjugation: bool,
        seed: Option<&[u8]>,
    ) -> PyResult<PyCkksKeySet> {
        let seed = seed_or_os(seed)?;
        let opts = options(relin, rotations, conjugation);
        let keys = heavy(py, || self.inner.keygen_from_seed(&seed, &opts))?;
        PyCkksKeySet::from_rust(py, keys)
    }

    /// More evaluation keys from the secret key alone (then `Evaluator.add_keys`).
    #[pyo3(signature = (sk, rotations = Vec::new(), relin = false, conjugation = false, seed = None))]
    fn eval_keys(
        &self,
        py: Python<'_>,
        sk: &PyCkksSecretKey,
        rotations: Vec<i64>,
        relin: bool,
        conjugation: bool,
        seed: Option<&[u8]>,
    ) -> PyResult<PyEvalKeys> {
        let seed = seed_or_os(seed)?;
        let opts = options(relin, rotations, conjugation);
        Ok(PyEvalKeys { inner: heavy(py, || self.inner.eval_keys_seeded(&sk.inner, &opts, &seed))? })
    }

    /// Galois keys for rotations by `steps`, from the secret key.
    fn rotation_keys(&self, py: Python<'_>, sk: &PyCkksSecretKey, steps: Vec<i64>) -> PyResult<PyEvalKeys> {
        Ok(PyEvalKeys { inner: heavy(py, || self.inner.rotation_keys(&sk.inner, &steps))? })
    }

    /// Encodes up to `slots` values (a 1-D numpy `float64` or `complex128` array, or a
    /// sequence) at `level` (default: the top) and `scale` (default: `Params.scale_at(level)`);
    /// `slots` (a power of two) packs sparsely; missing slots are zero.
    #[pyo3(signature = (values, level = None, scale = None, slots = None))]
    fn encode(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        level: Option<usize>,
        scale: Option<f64>,
        slots: Option<usize>,
    ) -> PyResult<PyPlaintext> {
        let p = self.inner.params();
        let values = values_arg(values)?;
        let level = level.unwrap_or(p.max_level());
        let scale = scale_arg(scale, p.scale_at(level))?;
        let slots = slots.unwrap_or(p.slots());
        Ok(PyPlaintext { inner: heavy(py, || self.inner.encode_sparse(&values, slots, level, scale))? })
    }

    /// An extended plaintext (limbs over the special primes too), for
    /// `Evaluator.sum_of_rotations` after `Evaluator.prepare_plaintext`; no bytes.
    #[pyo3(signature = (values, level = None, scale = None))]
    fn encode_extended(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        level: Option<usize>,
        scale: Option<f64>,
    ) -> PyResult<PyPlaintext> {
        let p = self.inner.params();
        let values = values_arg(values)?;
        let level = level.unwrap_or(p.max_level());
        let scale = scale_arg(scale, p.scale_at(level))?;
        Ok(PyPlaintext { inner: heavy(py, || self.inner.encode_extended(&values, level, scale))? })
    }

    /// A plaintext's slots as `complex128` (`float64` real parts when `real`): all of
    /// them, or the `slots` values of a sparse packing (`encode(..., slots=)`); slice
    /// the array for the first few of a full packing.
    #[pyo3(signature = (pt, slots = None, real = false))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        pt: &PyPlaintext,
        slots: Option<usize>,
        real: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let slots = slots.unwrap_or(self.inner.params().slots());
        let values = heavy(py, || self.inner.decode_slots(&pt.inner, slots))?;
        Ok(slots_out(py, values, real))
    }

    /// Public-key encryption of a `Plaintext` or of values (encoded at the top level);
    /// OS randomness, or the 32-byte `seed`.
    #[pyo3(signature = (pk, values, seed = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        pk: &PyCkksPublicKey,
        values: &Bound<'_, PyAny>,
        seed: Option<&[u8]>,
    ) -> PyResult<PyCiphertext> {
        let pt = plaintext_or_values(&self.inner, values)?;
        let seed = seed_or_os(seed)?;
        Ok(self.wrap_ct(heavy(py, || self.inner.encrypt_seeded(&pk.inner, &pt, &seed))?))
    }

    /// Secret-key encryption (as `encrypt`).
    #[pyo3(signature = (sk, values, seed = None))]
    fn encrypt_sk(
        &self,
        py: Python<'_>,
        sk: &PyCkksSecretKey,
        values: &Bound<'_, PyAny>,
        seed: Option<&[u8]>,
    ) -> PyResult<PyCiphertext> {
        let pt = plaintext_or_values(&self.inner, values)?;
        let seed = seed_or_os(seed)?;
        Ok(self.wrap_ct(heavy(py, || self.inner.encrypt_sk_seeded(&sk.inner, &pt, &seed))?))
    }

    /// Decrypts and decodes as `complex128` (`float64` real parts when `real`): every
    /// slot, or the `slots` values of a sparse packing (as in `decode`). Another key
    /// set's ciphertext is `WrongKeyError`.
    #[pyo3(signature = (sk, ct, slots = None, real = false))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        sk: &PyCkksSecretKey,
        ct: &PyCiphertext,
        slots: Option<usize>,
        real: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let slots = slots.unwrap_or(self.inner.params().slots());
        let ct = ct.get()?;
        let values = heavy(py, || self.inner.decrypt_slots(&sk.inner, &ct, slots))?;
        Ok(slots_out(py, values, real))
    }

    /// The noisy plaintext a ciphertext holds.
    fn decrypt_plaintext(&self, py: Python<'_>, sk: &PyCkksSecretKey, ct: &PyCiphertext) -> PyResult<PyPlaintext> {
        let ct = ct.get()?;
        Ok(PyPlaintext { inner: heavy(py, || self.inner.decrypt_plaintext(&sk.inner, &ct))? })
    }

    /// A ciphertext's bytes in the versioned format (`Ciphertext.to_bytes` too).
    fn to_bytes<'py>(&self, py: Python<'py>, ct: &PyCiphertext) -> PyResult<Bound<'py, PyBytes>> {
        let ct = ct.get()?;
        let bytes = heavy(py, || self.inner.to_bytes(&ct))?;
        Ok(to_pybytes(py, &bytes))
    }

    /// A ciphertext from its bytes, resident on this context's backend; bytes of
    /// another preset are `ParamError`, malformed ones `DecodeError`.
    fn ciphertext_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyCiphertext> {
        Ok(self.wrap_ct(heavy(py, || self.inner.ciphertext_from_bytes(data))?))
    }

    /// An evaluator with `keys` prepared (resident) on the backend. `mode="manual"`:
    /// you rescale and match levels; `mode="auto"`: products are rescaled and operands
    /// reconciled for you.
    #[pyo3(signature = (keys, mode = "manual"))]
    fn evaluator(&self, py: Python<'_>, keys: &Bound<'_, PyAny>, mode: &str) -> PyResult<PyEvaluator> {
        let mode = mode_arg(mode)?;
        let keys = eval_keys_of(keys)?;
        let keys = &keys.get().inner;
        let ev = heavy(py, || self.inner.evaluator_with(keys, mode))?;
        Ok(PyEvaluator::new(ev, self.inner.clone()))
    }

    fn __repr__(&self) -> String {
        format!("Context({:?} on {})", self.inner.params().name(), self.inner.backend().name())
    }
}
