//! The CKKS capability of a backend: evaluation on backend-owned objects.
//!
//! Ciphertexts, plaintexts, switching keys and hoisting precomputes are uploaded once into
//! a backend's own form ([`Ciphertext`], [`PreparedPlaintext`], [`PreparedSwitchKey`],
//! [`Hoisted`]: host memory on the CPU, device buffers on a GPU) and stay there across
//! operations; only [`CkksOps::download`] brings a ciphertext back (to decrypt, serialize
//! or compare). Every operation is exact integer arithmetic with a pinned definition
//! (`docs/CKKS.md`, "Evaluation"), so every backend's downloaded words equal the CPU
//! oracle's.
//!
//! The scheme's bookkeeping is written once on the host (`fhe_schemes::ckks`'s
//! evaluator): which levels, scales and keys may meet, what a constant encodes to, and
//! the result's metadata, which every method receives as `out` (a backend computes words,
//! never scales). Inputs arrive checked (same parameters, levels as each method says,
//! keys of the right kind); each method still rejects objects it did not make.
//! Element-wise methods take ciphertexts of degree 1 or 2 (an unrelinearized product);
//! key switching, rotations and [`CkksOps::download`] take degree 1.

use std::sync::Arc;

use crate::ckks::entities::{HostCiphertext, Plaintext, SwitchingKey};
use crate::ckks::meta::{Ciphertext, CkksMeta, ExtCiphertext, Hoisted, PreparedPlaintext, PreparedSwitchKey};
use crate::ckks::params::Params;
use crate::error::Result;

/// A constant in every slot as the integers a backend adds or multiplies by: `re[i]` and
/// `im[i]` are the residues modulo `q_i` of the constant polynomial `re + im X^(N/2)`
/// (`X^(N/2)` is `i` in every slot), one per limb of the operand. `im` empty is zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstResidues {
    pub re: Vec<u64>,
    pub im: Vec<u64>,
}

/// A backend keeps at most this many extended polynomials at the top level (`(L + 1 + K)
/// N` words) of work buffers between calls (reuse without page faults); the bootstrap
/// memory estimates count them.
pub const WORK_POOL_POLYS: usize = 64;

pub trait CkksOps: Send + Sync {
    /// A host ciphertext into this backend's form.
    fn upload(&self, ct: &HostCiphertext) -> Result<Ciphertext>;
    /// [`CkksOps::upload`] of a ciphertext the caller no longer needs: a host-memory
    /// backend keeps its buffers instead of copying them (fresh encryptions).
    fn upload_owned(&self, ct: HostCiphertext) -> Result<Ciphertext> {
        self.upload(&ct)
    }
    /// A host buffer of `len` words with unspecified contents, for a result about to come
    /// back through [`CkksOps::upload_owned`] (a fresh encryption's halves): a host-memory
    /// backend hands out the memory of dropped ciphertexts, already faulted in. The
    /// default allocates.
    fn result_buffer(&self, params: &Arc<Params>, len: usize) -> Vec<u64> {
        let _ = params;
        vec![0; len]
    }
    /// A context or evaluator of `params` now uses this backend; each is matched by one
    /// [`CkksOps::context_closed`]. A backend that keeps work buffers for a parameter set
    /// between calls keeps them only while one is open. The default does nothing.
    fn context_opened(&self, params: &Arc<Params>) {
        let _ = params;
    }
    /// The match of one [`CkksOps::context_opened`]: after the last, the backend frees
    /// what it kept for `params` (a bootstrap's work buffers are a gigabyte at
    /// `N = 2^16`), so dropping every context gives the memory back.
    fn context_closed(&self, params: &Arc<Params>) {
        let _ = params;
    }
    /// Back to the host, words unchanged (degree 1).
    fn download(&self, ct: &Ciphertext) -> Result<HostCiphertext>;
    /// A coefficient-form plaintext into evaluation form, resident.
    fn upload_plaintext(&self, pt: &Plaintext) -> Result<PreparedPlaintext>;
    /// [`CkksOps::upload_plaintext`] of a plaintext whose integer coefficients are
    /// `ints` (signed, `N` of them; `pt` holds their residues): a backend may keep the
    /// integers alone, one word a coefficient instead of one a limb, and bring each limb
    /// to evaluation form where it is read. Every product reads the same words as with
    /// the whole plaintext; each use costs a transform per limb. Meant for plaintexts
    /// kept long and read seldom (a bootstrap's diagonals). The default keeps it whole
    /// ([`CkksOps::keeps_compact_plaintexts`] says which).
    fn upload_plaintext_compact(&self, pt: &Plaintext, ints: &[i64]) -> Result<PreparedPlaintext> {
        let _ = ints;
        self.upload_plaintext(pt)
    }
    /// Whether [`CkksOps::upload_plaintext_compact`] keeps the integers alone (what a
    /// memory estimate counts). The default: no.
    fn keeps_compact_plaintexts(&self) -> bool {
        false
    }
    /// Expands a switching key's seeded `a` halves and keeps both halves resident.
    fn prepare_key(&self, key: &SwitchingKey) -> Result<PreparedSwitchKey>;
    /// [`CkksOps::prepare_key`] for switches at `max_level` or below only: a backend may
    /// keep just the digits and limbs those read (`Q_max_level P` of the digits covering
    /// it), so a key used only low in the chain (a bootstrap's SlotsToCoeffs) takes a
    /// fraction of the memory. The words of every switch it serves are the same. The
    /// prepared key's [`crate::ckks::SwitchKeyMeta::max_level`] says what was kept; the
    /// default keeps it whole.
    fn prepare_key_up_to(&self, key: &SwitchingKey, max_level: usize) -> Result<PreparedSwitchKey> {
        crate::ckks::meta::check_level(key.params(), max_level)?;
        self.prepare_key(key)
    }

    /// `a + b` (one level; the result has the larger degree).
    fn add(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// `a - b`.
    fn sub(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// `-a`.
    fn negate(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// `acc += b` in place (`b`'s degree at most `acc`'s); `acc` keeps its metadata.
    fn add_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()>;
    /// `acc -= b` in place.
    fn sub_assign(&self, acc: &mut Ciphertext, b: &Ciphertext) -> Result<()>;
    /// `a + p` (`p` at `a`'s level).
    fn add_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext>;
    /// `a - p`.
    fn sub_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext>;
    /// `a * p`.
    fn mul_plain(&self, a: &Ciphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<Ciphertext>;
    /// `acc += a * p` in place (`a`'s degree at most `acc`'s).
    fn mul_plain_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, p: &PreparedPlaintext) -> Result<()>;
    /// `a + c` (`c0 + c`).
    fn add_const(&self, a: &Ciphertext, c: &ConstResidues, out: CkksMeta) -> Result<Ciphertext>;
    /// `a * c` (every part).
    fn mul_const(&self, a: &Ciphertext, c: &ConstResidues, out: CkksMeta) -> Result<Ciphertext>;
    /// `acc += a * c` in place.
    fn mul_const_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, c: &ConstResidues) -> Result<()>;
    /// `a * X^k` (`0 <= k < 2N`): `k = N/2` multiplies every slot by `i`.
    fn mul_monomial(&self, a: &Ciphertext, k: usize, out: CkksMeta) -> Result<Ciphertext>;
    /// The tensor product `(a0 b0, a0 b1 + a1 b0, a1 b1)` of two degree-1 ciphertexts: a
    /// degree-2 ciphertext, to relinearize once after any number of sums.
    fn tensor(&self, a: &Ciphertext, b: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// `acc += a (x) b` in place (`acc` of degree 2).
    fn mul_then_add(&self, acc: &mut Ciphertext, a: &Ciphertext, b: &Ciphertext) -> Result<()>;
    /// A degree-2 ciphertext back to degree 1 with `rlk` (hybrid key switching of `c2`).
    fn relinearize(&self, a: &Ciphertext, rlk: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext>;
    /// [`CkksOps::tensor`] then [`CkksOps::relinearize`]: the same words; backends fuse it.
    fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rlk: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext> {
        self.relinearize(&self.tensor(a, b, out.clone())?, rlk, out)
    }
    /// Divides by the last prime `q_l` with rounding: level `l - 1`.
    fn rescale(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// [`CkksOps::mul_relin`] at `mid` then [`CkksOps::rescale`] to `out`: the same words
    /// (a backend may share the steps' transforms; the CPU does).
    fn mul_relin_rescale(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        rlk: &PreparedSwitchKey,
        mid: CkksMeta,
        out: CkksMeta,
    ) -> Result<Ciphertext> {
        self.rescale(&self.mul_relin(a, b, rlk, mid)?, out)
    }
    /// Drops the top limbs down to `out`'s level (no division).
    fn drop_to_level(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// Bootstrapping's ModRaise: a degree-1 ciphertext at level 0 read as integers
    /// (each part's coefficients mod `q_0`, centered: `(-q_0/2, q_0/2]`) and reduced mod
    /// every prime up to `out`'s level. It decrypts to `m + q_0 I` for a small integer
    /// polynomial `I`.
    fn mod_raise(&self, a: &Ciphertext, out: CkksMeta) -> Result<Ciphertext>;
    /// `sigma_g(a)` switched back to `s` with the Galois key of `g` (rotation, conjugation).
    fn apply_galois(&self, a: &Ciphertext, key: &PreparedSwitchKey, out: CkksMeta) -> Result<Ciphertext>;
    /// The key-switching decomposition of `a`'s `c1` (ModUp), resident, for any number of
    /// [`CkksOps::apply_galois_hoisted`] calls.
    fn hoist(&self, a: &Ciphertext) -> Result<Hoisted>;
    /// [`CkksOps::apply_galois`] of the hoisted ciphertext for each key: the same words as
    /// separate calls, one ModUp for all.
    fn apply_galois_hoisted(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<Ciphertext>>;

    // The lazy ModDown of a sum of rotations (`docs/CKKS.md`, "Lazy ModDown"): rotations
    // kept over `Q_l P`, multiplied by extended plaintexts and summed there, divided by
    // `P` once.

    /// [`CkksOps::apply_galois_hoisted`] without the ModDown: for each key,
    /// `(P sigma(c0) + u0, u1)` over `Q_l P`, `u` the key-switching sums.
    fn apply_galois_lazy(&self, h: &Hoisted, keys: &[&PreparedSwitchKey], out: CkksMeta) -> Result<Vec<ExtCiphertext>>;
    /// `P a` over `Q_l P` (zero on `P`'s limbs): the rotation by zero of a lazy sum.
    fn lift(&self, a: &Ciphertext, out: CkksMeta) -> Result<ExtCiphertext>;
    /// `x * p` over `Q_l P` (`p` an extended plaintext at `x`'s level or above).
    fn ext_mul_plain(&self, x: &ExtCiphertext, p: &PreparedPlaintext, out: CkksMeta) -> Result<ExtCiphertext>;
    /// `acc += x * p` over `Q_l P`, in place.
    fn ext_mul_plain_then_add(&self, acc: &mut ExtCiphertext, x: &ExtCiphertext, p: &PreparedPlaintext) -> Result<()>;
    /// `sum_i xs[i] * ps[i]` over `Q_l P` in one pass (the inner sum of a baby-step
    /// giant-step transform): the words of [`CkksOps::ext_mul_plain`] then
    /// [`CkksOps::ext_mul_plain_then_add`] term by term, which backends may reduce once
    /// per word instead of once per term.
    fn ext_dot_plain(&self, xs: &[&ExtCiphertext], ps: &[&PreparedPlaintext], out: CkksMeta) -> Result<ExtCiphertext> {
        if xs.is_empty() || xs.len() != ps.len() {
            return Err(crate::error::Error::InvalidInput(format!(
                "a lazy dot product of {} ciphertexts and {} plaintexts",
                xs.len(),
                ps.len()
            )));
        }
        let mut acc = self.ext_mul_plain(xs[0], ps[0], out)?;
        for (x, p) in xs.iter().zip(ps).skip(1) {
            self.ext_mul_plain_then_add(&mut acc, x, p)?;
        }
        Ok(acc)
    }
    /// The ModDown: `round(x / P)` over `q_0 .. q_l`, a degree-1 ciphertext.
    fn mod_down(&self, x: &ExtCiphertext, out: CkksMeta) -> Result<Ciphertext>;
}
