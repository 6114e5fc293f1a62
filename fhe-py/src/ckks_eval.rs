//! The CKKS `Evaluator`: every operation of the Rust evaluator under the same name,
//! each run with the GIL released. Inputs are cheap clones of resident handles taken
//! under the GIL; the in-place forms (`*_assign`, `*_then_add`) write the result back
//! into the accumulator object.

use std::sync::Arc;

use lux_fhe::ckks::{Ciphertext, Complex, Context, Evaluator, HoistedCiphertext, Plaintext, PreparedPlaintext};
use lux_fhe::Result;
use pyo3::prelude::*;

use crate::ckks::PyParams;
use crate::ckks_keys::{eval_keys_of, PyCiphertext, PyPlaintext, PyPreparedPlaintext};
use crate::errors::InvalidInputError;
use crate::wire::heavy;

/// A plaintext operand: host (`Plaintext`, uploaded for the call) or kept
/// (`PreparedPlaintext`, the fast form).
enum PlainRef<'a> {
    Plain(&'a Plaintext),
    Prepared(&'a PreparedPlaintext),
}

fn plain_ref<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<PlainRef<'a>> {
    if let Ok(p) = obj.cast::<PyPlaintext>() {
        return Ok(PlainRef::Plain(&p.get().inner));
    }
    match obj.cast::<PyPreparedPlaintext>() {
        Ok(p) => Ok(PlainRef::Prepared(&p.get().inner)),
        Err(_) => Err(InvalidInputError::new_err("expected a ckks.Plaintext or a ckks.PreparedPlaintext")),
    }
}

/// Calls a generic plaintext operation on either form.
macro_rules! with_plain {
    ($p:expr, |$x:ident| $body:expr) => {
        match $p {
            PlainRef::Plain($x) => $body,
            PlainRef::Prepared($x) => $body,
        }
    };
}

/// A real (`float`, `int`) or complex constant.
fn complex_arg(obj: &Bound<'_, PyAny>) -> PyResult<Complex> {
    if let Ok(re) = obj.extract::<f64>() {
        return Ok(Complex { re, im: 0.0 });
    }
    let re: f64 = obj.getattr("real")?.extract()?;
    let im: f64 = obj.getattr("imag")?.extract()?;
    Ok(Complex { re, im })
}

/// A ciphertext with its key-switching decomposition kept (`Evaluator.hoist`), for
/// several rotations of one input.
#[pyclass(module = "lux_fhe.ckks", name = "HoistedCiphertext", frozen)]
pub struct PyHoisted {
    inner: HoistedCiphertext,
}

/// Evaluation with prepared (resident) keys; thread-safe, so Python threads can share
/// one. Built by `Context.evaluator(keys, mode)`.
#[pyclass(module = "lux_fhe.ckks", name = "Evaluator", frozen)]
pub struct PyEvaluator {
    pub(crate) inner: Evaluator,
    ctx: Arc<Context>,
}

impl PyEvaluator {
    pub fn new(inner: Evaluator, ctx: Arc<Context>) -> Self {
        PyEvaluator { inner, ctx }
    }

    fn wrap(&self, ct: Ciphertext) -> PyCiphertext {
        PyCiphertext::new(ct, self.ctx.clone())
    }

    fn unary(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        f: impl FnOnce(&Evaluator, &Ciphertext) -> Result<Ciphertext> + Send,
    ) -> PyResult<PyCiphertext> {
        let a = a.get()?;
        Ok(self.wrap(heavy(py, || f(&self.inner, &a))?))
    }

    fn binary(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        b: &PyCiphertext,
        f: impl FnOnce(&Evaluator, &Ciphertext, &Ciphertext) -> Result<Ciphertext> + Send,
    ) -> PyResult<PyCiphertext> {
        let (a, b) = (a.get()?, b.get()?);
        Ok(self.wrap(heavy(py, || f(&self.inner, &a, &b))?))
    }

    /// An in-place form: `f` changes a clone of `acc`'s handle, which then replaces it.
    fn in_place(
        &self,
        py: Python<'_>,
        acc: &PyCiphertext,
        f: impl FnOnce(&Evaluator, &mut Ciphertext) -> Result<()> + Send,
    ) -> PyResult<()> {
        let mut out = acc.get()?;
        heavy(py, || f(&self.inner, &mut out))?;
        acc.set(out)
    }
}

#[pymethods]
impl PyEvaluator {
    #[getter]
    /// `"manual"` or `"auto"`.
    fn mode(&self) -> &'static str {
        match self.inner.mode() {
            lux_fhe::ckks::Mode::Manual => "manual",
            lux_fhe::ckks::Mode::Auto => "auto",
        }
    }
    #[getter]
    /// The CKKS parameters.
    fn params(&self) -> PyParams {
        PyParams { inner: self.inner.params().clone() }
    }
    #[getter]
    /// The tag of the key set whose keys are prepared.
    fn tag(&self) -> String {
        self.inner.tag().to_string()
    }
    /// The Galois elements whose keys are prepared.
    #[getter]
    fn galois_elements(&self) -> Vec<u64> {
        self.inner.galois_elements()
    }

    /// Prepares more keys (an `EvalKeys` or a `KeySet`'s).
    fn add_keys(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let keys = eval_keys_of(keys)?;
        let keys = &keys.get().inner;
        heavy(py, || self.inner.add_keys(keys))
    }

    /// `a + b`.
    fn add(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.binary(py, a, b, |ev, a, b| ev.add(a, b))
    }
    /// `a - b`.
    fn sub(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.binary(py, a, b, |ev, a, b| ev.sub(a, b))
    }
    /// `-a`.
    fn negate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.negate(a))
    }
    /// `acc += b` in place.
    fn add_assign(&self, py: Python<'_>, acc: &PyCiphertext, b: &PyCiphertext) -> PyResult<()> {
        let b = b.get()?;
        self.in_place(py, acc, |ev, acc| ev.add_assign(acc, &b))
    }
    /// `acc -= b` in place.
    fn sub_assign(&self, py: Python<'_>, acc: &PyCiphertext, b: &PyCiphertext) -> PyResult<()> {
        let b = b.get()?;
        self.in_place(py, acc, |ev, acc| ev.sub_assign(acc, &b))
    }

    /// Keeps a plaintext on the backend in evaluation form for repeated use.
    fn prepare_plaintext(&self, py: Python<'_>, pt: &PyPlaintext) -> PyResult<PyPreparedPlaintext> {
        let pt = &pt.inner;
        Ok(PyPreparedPlaintext { inner: heavy(py, || self.inner.prepare_plaintext(pt))? })
    }
    /// `a + p` for a `Plaintext` or `PreparedPlaintext`.
    fn add_plain(&self, py: Python<'_>, a: &PyCiphertext, p: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
        let p = plain_ref(p)?;
        self.unary(py, a, |ev, a| with_plain!(p, |x| ev.add_plain(a, x)))
    }
    /// `a - p` for a `Plaintext` or `PreparedPlaintext`.
    fn sub_plain(&self, py: Python<'_>, a: &PyCiphertext, p: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
        let p = plain_ref(p)?;
        self.unary(py, a, |ev, a| with_plain!(p, |x| ev.sub_plain(a, x)))
    }
    /// `a * p` for a `Plaintext` or `PreparedPlaintext` (rescale after).
    fn mul_plain(&self, py: Python<'_>, a: &PyCiphertext, p: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
        let p = plain_ref(p)?;
        self.unary(py, a, |ev, a| with_plain!(p, |x| ev.mul_plain(a, x)))
    }
    /// `acc += a * p` in place.
    fn mul_plain_then_add(
        &self,
        py: Python<'_>,
        acc: &PyCiphertext,
        a: &PyCiphertext,
        p: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (a, p) = (a.get()?, plain_ref(p)?);
        self.in_place(py, acc, |ev, acc| with_plain!(p, |x| ev.mul_plain_then_add(acc, &a, x)))
    }

    /// `a + c` for a real or complex constant `c`.
    fn add_const(&self, py: Python<'_>, a: &PyCiphertext, c: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
        let c = complex_arg(c)?;
        self.unary(py, a, |ev, a| ev.add_const(a, c))
    }
    /// `a - c` for a real or complex constant `c`.
    fn sub_const(&self, py: Python<'_>, a: &PyCiphertext, c: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
        let c = complex_arg(c)?;
        self.unary(py, a, |ev, a| ev.sub_const(a, c))
    }
    /// `a * c`, encoded at the prime the next rescale drops (rescale it after).
    fn mul_const(&self, py: Python<'_>, a: &PyCiphertext, c: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
        let c = complex_arg(c)?;
        self.unary(py, a, |ev, a| ev.mul_const(a, c))
    }
    /// `acc += a * c` in place.
    fn mul_const_then_add(
        &self,
        py: Python<'_>,
        acc: &PyCiphertext,
        a: &PyCiphertext,
        c: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (a, c) = (a.get()?, complex_arg(c)?);
        self.in_place(py, acc, |ev, acc| ev.mul_const_then_add(acc, &a, c))
    }
    /// `a * c` with `c` encoded at the scale `factor`: the result's scale is
    /// `a.scale * factor`, never rescaled (with `factor = target * q_l / a.scale` the
    /// next rescale lands on `target`); for circuits that choose every scale.
    fn mul_const_scaled(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        c: &Bound<'_, PyAny>,
        factor: f64,
    ) -> PyResult<PyCiphertext> {
        let c = complex_arg(c)?;
        self.unary(py, a, |ev, a| ev.mul_const_scaled(a, c, factor))
    }
    /// `acc += a * c` in place, `c` encoded at `factor` (`acc` at `a`'s level and at
    /// `a.scale * factor`).
    fn mul_const_then_add_scaled(
        &self,
        py: Python<'_>,
        acc: &PyCiphertext,
        a: &PyCiphertext,
        c: &Bound<'_, PyAny>,
        factor: f64,
    ) -> PyResult<()> {
        let (a, c) = (a.get()?, complex_arg(c)?);
        self.in_place(py, acc, |ev, acc| ev.mul_const_then_add_scaled(acc, &a, c, factor))
    }
    /// `a * k` for an integer `k` (no level spent).
    fn mul_int(&self, py: Python<'_>, a: &PyCiphertext, k: i64) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.mul_int(a, k))
    }
    /// `a * i` (no level spent).
    fn mul_i(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.mul_i(a))
    }

    /// `a * b`, relinearized (rescaled too in the automatic mode).
    fn mul(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.binary(py, a, b, |ev, a, b| ev.mul(a, b))
    }
    /// `a * a`, relinearized (rescaled too in the automatic mode).
    fn square(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.square(a))
    }
    /// `a * b`, relinearized and rescaled.
    fn mul_rescale(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.binary(py, a, b, |ev, a, b| ev.mul_rescale(a, b))
    }
    /// `a * b` without relinearization (degree 3).
    fn tensor(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.binary(py, a, b, |ev, a, b| ev.tensor(a, b))
    }
    /// `acc += a * b` in place.
    fn mul_then_add(&self, py: Python<'_>, acc: &PyCiphertext, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<()> {
        let (a, b) = (a.get()?, b.get()?);
        self.in_place(py, acc, |ev, acc| ev.mul_then_add(acc, &a, &b))
    }
    /// A degree-2 ciphertext (`tensor`) back to degree 1.
    fn relinearize(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.relinearize(a))
    }
    /// Divides by the last prime: one level down, the scale back near `2**scale_bits`.
    fn rescale(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.rescale(a))
    }
    /// The same message at a lower `level` (primes dropped, no rescale).
    fn drop_to_level(&self, py: Python<'_>, a: &PyCiphertext, level: usize) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.drop_to_level(a, level))
    }
    /// Both operands at the lower of their levels.
    fn match_levels(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        b: &PyCiphertext,
    ) -> PyResult<(PyCiphertext, PyCiphertext)> {
        let (a, b) = (a.get()?, b.get()?);
        let (x, y) = heavy(py, || self.inner.match_levels(&a, &b))?;
        Ok((self.wrap(x), self.wrap(y)))
    }
    /// The same message at another scale (multiplies by `scale / a.scale`).
    fn set_scale(&self, py: Python<'_>, a: &PyCiphertext, scale: f64) -> PyResult<PyCiphertext> {
        let scale = crate::ckks::scale_arg(Some(scale), self.inner.params().default_scale())?;
        self.unary(py, a, |ev, a| ev.set_scale(a, scale))
    }
    /// The same message at `level` and `scale`.
    fn rescale_to(&self, py: Python<'_>, a: &PyCiphertext, level: usize, scale: f64) -> PyResult<PyCiphertext> {
        let scale = crate::ckks::scale_arg(Some(scale), self.inner.params().default_scale())?;
        self.unary(py, a, |ev, a| ev.rescale_to(a, level, scale))
    }

    /// Slots rotated left by `steps` (needs its Galois key).
    fn rotate(&self, py: Python<'_>, a: &PyCiphertext, steps: i64) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.rotate(a, steps))
    }
    /// `sum_(k < count) rotate(a, k * stride)` (`count` a power of two): `log2(count)`
    /// rotations by `stride, 2 stride, ..`.
    fn rotate_and_sum(&self, py: Python<'_>, a: &PyCiphertext, stride: i64, count: usize) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.rotate_and_sum(a, stride, count))
    }
    /// Every slot holds the sum of the first `slots` slots (rotations by 1, 2, 4, ..).
    fn sum_slots(&self, py: Python<'_>, a: &PyCiphertext, slots: usize) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.sum_slots(a, slots))
    }
    /// `sum_j a_j b_j` over `slots` slots, in every slot (one product, rescaled).
    fn inner_product(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        b: &PyCiphertext,
        slots: usize,
    ) -> PyResult<PyCiphertext> {
        self.binary(py, a, b, |ev, a, b| ev.inner_product(a, b, slots))
    }
    /// The Chebyshev series `sum_j coeffs[j] T_j(u)`, `u = (2x - lo - hi) / (hi - lo)`, on
    /// `a` (real values in `[lo, hi]`): `chebyshev_depth(degree)` levels from the
    /// canonical scale on `[-1, 1]`, one more otherwise.
    fn eval_chebyshev(
        &self,
        py: Python<'_>,
        a: &PyCiphertext,
        coeffs: Vec<f64>,
        lo: f64,
        hi: f64,
    ) -> PyResult<PyCiphertext> {
        let p = lux_fhe::ckks::Chebyshev { a: lo, b: hi, coeffs };
        self.unary(py, a, |ev, a| ev.eval_chebyshev(a, &p))
    }
    /// The complex conjugate of every slot (needs the conjugation key).
    fn conjugate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
        self.unary(py, a, |ev, a| ev.conjugate(a))
    }
    /// Keeps `a`'s decomposition for several rotations.
    fn hoist(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyHoisted> {
        let a = a.get()?;
        Ok(PyHoisted { inner: heavy(py, || self.inner.hoist(&a))? })
    }
    /// Rotations by each of `steps` of a `hoist`ed ciphertext.
    fn rotate_hoisted_with(&self, py: Python<'_>, h: &PyHoisted, steps: Vec<i64>) -> PyResult<Vec<PyCiphertext>> {
        let h = &h.inner;
        let out = heavy(py, || self.inner.rotate_hoisted_with(h, &steps))?;
        Ok(out.into_iter().map(|c| self.wrap(c)).collect())
    }
    /// Rotations of `a` by each of `steps`, sharing one decomposition.
    fn rotate_hoisted(&self, py: Python<'_>, a: &PyCiphertext, steps: Vec<i64>) -> PyResult<Vec<PyCiphertext>> {
        let a = a.get()?;
        let out = heavy(py, || self.inner.rotate_hoisted(&a, &steps))?;
        Ok(out.into_iter().map(|c| self.wrap(c)).collect())
    }
    /// `sum_i p_i * rotate(x, steps_i)` with one decomposition and one ModDown; `terms`
    /// is a list of `(steps, PreparedPlaintext)` with extended plaintexts.
    fn sum_of_rotations(
        &self,
        py: Python<'_>,
        x: &PyCiphertext,
        terms: Vec<(i64, PyRef<'_, PyPreparedPlaintext>)>,
    ) -> PyResult<PyCiphertext> {
        let refs: Vec<(i64, &PreparedPlaintext)> = terms.iter().map(|(s, p)| (*s, &p.inner)).collect();
        self.unary(py, x, |ev, x| ev.sum_of_rotations(x, &refs))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}
