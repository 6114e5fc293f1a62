//! Prepared plaintexts on the CPU: whole (every limb in evaluation form) or compact (the
//! signed integer coefficients alone, one word each; a limb is reduced and transformed
//! where it is read: `CkksOps::upload_plaintext_compact`). A compact limb is the same
//! words as the whole plaintext's, so every product is too.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use super::keyswitch::limb_prime;
use super::plan::CkksPlan;

/// A plaintext in evaluation form: its limbs over `q_0..q_level`, and over `P` for an
/// extended plaintext (empty otherwise); or, compact, its integers alone.
pub(super) struct CpuPt {
    pub(super) m: Vec<u64>,
    pub(super) p: Vec<u64>,
    /// A compact plaintext's `N` integer coefficients (`m` and `p` are then empty).
    pub(super) ints: Vec<i64>,
    /// The largest `|ints[i]|`: below a prime, a residue is `c` or `c + q`, no division.
    pub(super) max_abs: u64,
    /// Whether it has limbs over `P` (an extended plaintext), whole or compact.
    pub(super) extended: bool,
    /// Where `m` goes when the plaintext drops (a plaintext uploaded for one call, as a
    /// host operand is, would otherwise fault a fresh buffer in at each call).
    pub(super) pool: Arc<CkksPlan>,
}

impl Drop for CpuPt {
    fn drop(&mut self) {
        self.pool.recycle(std::mem::take(&mut self.m));
    }
}

impl CpuPt {
    pub(super) fn is_compact(&self) -> bool {
        !self.ints.is_empty()
    }

    /// A compact plaintext's limb for `plan.primes[prime]`, in evaluation form, into `out`.
    fn expand(&self, plan: &CkksPlan, prime: usize, out: &mut [u64]) {
        let (pr, ints) = (&plan.primes[prime], self.ints.iter());
        if self.max_abs < pr.m.q {
            // No division, no branch: the loop vectorises.
            out.iter_mut().zip(ints).for_each(|(o, &c)| *o = pr.m.from_small(c));
        } else {
            out.iter_mut().zip(ints).for_each(|(o, &c)| *o = pr.m.from_i64(c));
        }
        pr.ntt.forward(out);
    }

    /// Limbs `q_0 .. q_level` in evaluation form: borrowed when whole, brought to
    /// evaluation form when compact.
    pub(super) fn q_limbs(&self, plan: &CkksPlan, level: usize) -> Cow<'_, [u64]> {
        let n = plan.params.n();
        if !self.is_compact() {
            return Cow::Borrowed(&self.m[..(level + 1) * n]);
        }
        let mut m = vec![0u64; (level + 1) * n];
        use rayon::prelude::*;
        m.par_chunks_mut(n).enumerate().for_each(|(i, limb)| self.expand(plan, i, limb));
        Cow::Owned(m)
    }

    /// Limb `t` of an extended plaintext in an extended polynomial's order at level `l`
    /// (`q_t` for `t <= l`, else `p_(t - l - 1)`): a slice of a whole one, or a compact
    /// one's brought to evaluation form in `buf` (`N` words).
    pub(super) fn ext_limb<'a>(&'a self, plan: &CkksPlan, l: usize, t: usize, buf: &'a mut [u64]) -> &'a [u64] {
        let n = plan.params.n();
        if self.is_compact() {
            self.expand(plan, limb_prime(plan, l, t), buf);
            buf
        } else if t <= l {
            &self.m[t * n..(t + 1) * n]
        } else {
            &self.p[(t - l - 1) * n..(t - l) * n]
        }
    }
}

thread_local! {
    /// Each worker's buffer for compact limbs (kept: a fresh one faults its pages in at
    /// each limb).
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// `f` on `len` words of this thread's scratch (a fresh buffer where the scratch is in
/// use further up the stack, as a stolen task's can be).
pub(super) fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u64]) -> R) -> R {
    if len == 0 {
        return f(&mut []);
    }
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut buf) => {
            if buf.len() < len {
                buf.resize(len, 0);
            }
            f(&mut buf[..len])
        }
        Err(_) => f(&mut vec![0u64; len]),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use fhe_api::ckks::params::SecretDist;
    use fhe_api::{Error, Seed};
    use fhe_schemes::ckks::{KeygenOptions, Mode};
    use fhe_schemes::testing::ckks::circuits::{insecure_params, insecure_setup};
    use fhe_schemes::testing::ckks::random_values;

    use crate::CpuBackend;

    /// Plain products and sums with a compact plaintext give the whole one's words; a
    /// compact plaintext whose integers are not its residues' is refused.
    #[test]
    fn insecure_compact_plaintexts_give_the_same_words() {
        let backend = Arc::new(CpuBackend::new(None).unwrap());
        let params = insecure_params(SecretDist::Ternary);
        let (ctx, keys, ev) = insecure_setup(backend, params.clone(), &KeygenOptions::default(), Mode::Manual);
        let level = params.max_level() - 1;
        let pt = ctx.encode_at(&random_values(params.slots(), 3), level, params.scale_at(level)).unwrap();
        let ct = ctx.encrypt_seeded(&keys.pk, &pt, &Seed::derive("compact", 1)).unwrap();
        let scale = params.scale_at(level);
        let (ext, ints) = ctx.encode_extended_ints(&random_values(params.slots(), 4), level, scale).unwrap();
        let ints = ints.expect("small integers");
        let whole = ev.prepare_plaintext(&ext).unwrap();
        let compact = ev.prepare_plaintext_compact(&ext, &ints).unwrap();
        let words = |p| {
            let mut acc = ev.mul_plain(&ct, p).unwrap();
            ev.mul_plain_then_add(&mut acc, &ct, p).unwrap();
            let sum = ev.add_plain(&ct, p).unwrap();
            (ev.download(&acc).unwrap(), ev.download(&sum).unwrap())
        };
        assert!(words(&whole) == words(&compact), "compact plaintext words");
        let mut wrong = ints.clone();
        wrong[5] += 1;
        let e = ev.prepare_plaintext_compact(&ext, &wrong).unwrap_err();
        assert!(matches!(&e, Error::InvalidInput(m) if m.contains("do not reduce")), "{e}");
        assert!(ev.prepare_plaintext_compact(&ext, &ints[1..]).is_err());
    }
}
