//! Programmable bootstrapping (PBS): any function `Z_p -> Z_p` of a block that holds
//! message bits, carry bits and one padding bit, evaluated by one blind rotation whose
//! test polynomial is the function's table.
//!
//! **Blocks.** A block is an [`ExtractedLwe`]: dimension `N`, modulo the ring's prime
//! `Q`, under the ring secret `z` (what a blind rotation outputs). Value `m` in
//! `[0, p)`, `p = 2^(message + carry)`, is encoded as `round(m Q / 2p)`: the top of the
//! `2p` slots (`m >= p`) is the padding bit, which stays 0 so that a table need only be
//! negacyclic. Sums and small multiples of blocks are computed on the host, exactly
//! (mod `Q`), with no noise of their own.
//!
//! **Order: key switch, then blind rotation** (TFHE-rs's KS-PBS). A PBS mod-switches its
//! input `Q -> q`, key-switches it to the small secret `s` (dimension `n`), and
//! blind-rotates that. The key switch's noise is then added once per bootstrap, after
//! the linear combination, not multiplied by it as in the gates' order (blind rotation,
//! then key switch): for `M2C2` at 2-norm 5 that is the difference between `2^-75` and
//! about `2^-27` failure (`docs/PARAMETERS.md`, "Programmable-bootstrapping sets").
//!
//! **The table.** After the mod switch to `2N`, value `k` sits at `k * 2N/2p`. The test
//! polynomial gives every phase in the box `[k B - B/2, k B + B/2)`, `B = 2N/2p`, the
//! encoding of `f(k)`: the half box below `k = 0` is the top of the negacyclic wrap, so
//! an input with a small negative error still reads `f(0)` (the "half-box rotation").
//!
//! Both steps are the backend's own batched operations
//! ([`fhe_api::ops::BootstrapOps::key_switch_batch`] and
//! [`fhe_api::ops::BootstrapOps::blind_rotate_batch_lut`]), so every backend that runs
//! the blind rotation runs PBS; today only the CPU backend prepares keys of the
//! programmable-bootstrapping sets (their LWE words exceed 16 bits).

use std::sync::Arc;

use rayon::prelude::*;

use fhe_api::ops::{check_inputs, Backend, PreparedKey};
use fhe_api::rng::{label, stream, Seed};
use fhe_api::{Error, EvaluationKey, ExtractedLwe, Lut, LweCiphertext, ParamSet, Result, SecretKey};

/// Message and carry bits of a block (plus one padding bit, always).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Encoding {
    pub message_bits: u32,
    pub carry_bits: u32,
}

impl Encoding {
    /// The encoding a programmable-bootstrapping set is built for; a gate set is
    /// `Error::InvalidInput` naming the sets that are.
    pub fn for_set(set: ParamSet) -> Result<Encoding> {
        match set {
            ParamSet::M2C2 | ParamSet::M2C2G2 | ParamSet::M2C2G3 => Ok(Encoding { message_bits: 2, carry_bits: 2 }),
            _ => Err(Error::InvalidInput(format!(
                "{set} is a gate set; programmable bootstrapping needs one of: {}",
                ParamSet::PBS.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// `2^message_bits`: the values a clean block holds.
    pub const fn message_modulus(&self) -> u64 {
        1 << self.message_bits
    }

    /// `p = 2^(message_bits + carry_bits)`: the values a block may hold before its
    /// carries are cleaned.
    pub const fn modulus(&self) -> u64 {
        1 << (self.message_bits + self.carry_bits)
    }

    /// `round(m Q / 2p)` for `m` in `[0, 2p)` (reduced mod `2p` first).
    pub fn encode(&self, q_ring: u64, m: u64) -> u64 {
        let slots = 2 * self.modulus() as u128;
        let m = m as u128 % slots;
        ((m * q_ring as u128 + slots / 2) / slots) as u64 % q_ring
    }

    /// `round(phase 2p / Q) mod 2p`: the block's value with its padding bit.
    pub fn decode(&self, q_ring: u64, phase: u64) -> u64 {
        let slots = 2 * self.modulus() as u128;
        (((phase as u128 * slots + q_ring as u128 / 2) / q_ring as u128) % slots) as u64
    }
}

/// `b - <a, z> mod Q` of a block: its encoded value plus noise.
pub fn block_phase(sk: &SecretKey, ct: &ExtractedLwe) -> Result<u64> {
    if sk.params() != ct.params() {
        return Err(Error::ParamMismatch { expected: sk.params().name().into(), found: ct.params().name().into() });
    }
    ct.tag().check_against(sk.tag())?;
    let q = ct.params().params().q_ring();
    let words = ct.as_words();
    let (a, b) = words.split_at(words.len() - 1);
    let mut acc = b[0];
    for (&x, &z) in a.iter().zip(sk.ring()) {
        // z is ternary: subtract or add a residue, each a conditional subtraction.
        acc = match z {
            1 => (acc + q - x) % q,
            -1 => (acc + x) % q,
            _ => acc,
        };
    }
    Ok(acc)
}

/// The value of a block, in `[0, p)`. A block whose padding bit is set (a sum that
/// overflowed its carry space) is `Error::InvalidInput`.
pub fn decrypt_block(sk: &SecretKey, ct: &ExtractedLwe) -> Result<u64> {
    let enc = Encoding::for_set(ct.params())?;
    let v = enc.decode(ct.params().params().q_ring(), block_phase(sk, ct)?);
    if v >= enc.modulus() {
        return Err(Error::InvalidInput(format!(
            "block decodes to {v}: its padding bit is set (a value of {} or more overflowed the carry space)",
            enc.modulus()
        )));
    }
    Ok(v)
}

/// Secret-key encryption of `m` in `[0, p)` as a block, with the randomness of stream
/// `(seed, "block-encrypt", index)`: `a` uniform mod `Q`, a centered-binomial error.
pub fn encrypt_block_seeded(sk: &SecretKey, m: u64, seed: &Seed, index: u64) -> Result<ExtractedLwe> {
    let set = sk.params();
    let enc = Encoding::for_set(set)?;
    if m >= enc.modulus() {
        return Err(Error::InvalidInput(format!("block value {m} is not below {}", enc.modulus())));
    }
    let p = set.params();
    let q = p.q_ring();
    let mut r = stream(&seed.0, label::BLOCK_ENCRYPT, index);
    let mut data = Vec::with_capacity(p.big_n() + 1);
    let mut dot = 0u64;
    for &z in sk.ring() {
        let a = r.uniform_mod(q);
        dot = match z {
            1 => (dot + a) % q,
            -1 => (dot + q - a) % q,
            _ => dot,
        };
        data.push(a);
    }
    let e = r.cbd(p.noise_eta).rem_euclid(q as i64) as u64;
    data.push(((dot as u128 + e as u128 + enc.encode(q, m) as u128) % q as u128) as u64);
    ExtractedLwe::from_raw(set, sk.tag(), data)
}

/// [`encrypt_block_seeded`] with fresh OS randomness.
pub fn encrypt_block(sk: &SecretKey, m: u64) -> Result<ExtractedLwe> {
    encrypt_block_seeded(sk, m, &Seed::from_os()?, 0)
}

/// The test polynomial of `f: [0, p) -> [0, p)` for blocks of `set` (module docs, "The
/// table"). An output at or above `p` would set the padding bit: `Error::InvalidLut`.
pub fn lut(set: ParamSet, f: impl Fn(u64) -> u64) -> Result<Lut> {
    let enc = Encoding::for_set(set)?;
    let p = set.params();
    let (big_n, q) = (p.big_n(), p.q_ring());
    let modulus = enc.modulus();
    let table: Vec<u64> = (0..modulus).map(&f).collect();
    if let Some((k, &v)) = table.iter().enumerate().find(|(_, &v)| v >= modulus) {
        return Err(Error::InvalidLut {
            params: set.name(),
            detail: format!("f({k}) = {v} is not below {modulus}: it would set the padding bit"),
        });
    }
    let words: Vec<u64> = table.iter().map(|&v| enc.encode(q, v)).collect();
    let slots = 2 * modulus as usize;
    let width = 2 * big_n / slots;
    Lut::from_fn(set, |m| {
        // Box k is [k B - B/2, k B + B/2); the boxes of the padding half are negated.
        let k = ((m + width / 2) / width) % slots;
        if k < modulus as usize {
            words[k]
        } else {
            (q - words[k - modulus as usize]) % q
        }
    })
}

/// Several functions of a block from one blind rotation (many-LUT): with `k` functions
/// and inputs below `bound = p / 2^ceil(log2 k)`, the test polynomial holds function
/// `j`'s table in the boxes of values `j bound .. (j + 1) bound`, and the rotated
/// accumulator is read at coefficient `j bound N / p` for it. The boxes keep their width,
/// so each output has a single table's noise and failure rate; the price is the input
/// range. An input at or above `bound` reads the next function's table instead: the
/// caller bounds its inputs (a sequential carry's `s + c < 2M`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManyLut {
    lut: Lut,
    at: Vec<usize>,
    bound: u64,
}

impl ManyLut {
    /// Inputs must be below this.
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// The test polynomial: every function's table side by side.
    pub fn lut(&self) -> &Lut {
        &self.lut
    }

    /// The number of functions.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }
}

/// The [`ManyLut`] of `fs` for blocks of `set`. No function, more than `p / 2`, or a
/// value at or above `p` is `Error::InvalidLut`.
pub fn many_lut(set: ParamSet, fs: &[&dyn Fn(u64) -> u64]) -> Result<ManyLut> {
    let enc = Encoding::for_set(set)?;
    let p = enc.modulus();
    let invalid = |detail: String| Error::InvalidLut { params: set.name(), detail };
    if fs.is_empty() || fs.len() as u64 > p / 2 {
        return Err(invalid(format!("a many-LUT holds 1 to {} functions of a block, not {}", p / 2, fs.len())));
    }
    let bound = p / (fs.len() as u64).next_power_of_two();
    for (j, f) in fs.iter().enumerate() {
        if let Some((m, v)) = (0..bound).map(|m| (m, f(m))).find(|&(_, v)| v >= p) {
            return Err(invalid(format!("function {j}: f({m}) = {v} is not below {p}: it would set the padding bit")));
        }
    }
    let lut = lut(set, |v| fs.get((v / bound) as usize).map_or(0, |f| f(v % bound)))?;
    let width = set.params().big_n() / p as usize;
    let at = (0..fs.len()).map(|j| j * bound as usize * width).collect();
    Ok(ManyLut { lut, at, bound })
}

/// A prepared evaluation key of a programmable-bootstrapping set and its backend.
#[derive(Clone)]
pub struct PbsKey {
    backend: Arc<dyn Backend>,
    key: Arc<PreparedKey>,
    encoding: Encoding,
}

impl std::fmt::Debug for PbsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PbsKey({}, {})", self.backend.name(), self.key.params())
    }
}

impl PbsKey {
    /// Prepares `ek` on `backend`; a gate set's key is `Error::InvalidInput`.
    pub fn new(backend: Arc<dyn Backend>, ek: &EvaluationKey) -> Result<PbsKey> {
        let encoding = Encoding::for_set(ek.params())?;
        let key = Arc::new(backend.prepare(ek)?);
        Ok(PbsKey { backend, key, encoding })
    }

    pub fn params(&self) -> ParamSet {
        self.key.params()
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// [`lut`] for this key's set.
    pub fn lut(&self, f: impl Fn(u64) -> u64) -> Result<Lut> {
        lut(self.params(), f)
    }

    /// The table of `f(x, y)` for `x, y` in `[0, message_modulus)`, applied to the block
    /// `x * message_modulus + y` ([`PbsKey::pack`]).
    pub fn bivariate_lut(&self, f: impl Fn(u64, u64) -> u64) -> Result<Lut> {
        let mm = self.encoding.message_modulus();
        self.lut(|v| f((v / mm) % mm, v % mm))
    }

    /// `x * message_modulus + y`, the input of a [`PbsKey::bivariate_lut`] (no bootstrap;
    /// both must hold clean messages, below `message_modulus`).
    pub fn pack(&self, x: &ExtractedLwe, y: &ExtractedLwe) -> Result<ExtractedLwe> {
        ExtractedLwe::linear_combination(&[(self.encoding.message_modulus() as i64, x), (1, y)], 0)
    }

    /// The encoding of `m` as a noiseless block (for constants in linear combinations).
    pub fn trivial(&self, m: u64) -> ExtractedLwe {
        let q = self.params().params().q_ring();
        ExtractedLwe::trivial(self.params(), self.encoding.encode(q, m))
    }

    /// [`many_lut`] for this key's set.
    pub fn many_lut(&self, fs: &[&dyn Fn(u64) -> u64]) -> Result<ManyLut> {
        many_lut(self.params(), fs)
    }

    /// Every function of `many` applied to every input (each below [`ManyLut::bound`]):
    /// one key-switch batch and one blind-rotation batch, `many.len()` outputs an input.
    pub fn apply_many(&self, inputs: &[ExtractedLwe], many: &ManyLut) -> Result<Vec<Vec<ExtractedLwe>>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let switched = self.switch(inputs)?;
        let out = self.backend.blind_rotate_batch_lut_at(&self.key, &switched, &many.lut, &many.at)?;
        if out.len() != inputs.len() * many.len() {
            return Err(Error::InvalidInput(format!(
                "backend {} returned {} blocks for {} inputs of {} functions",
                self.backend.name(),
                out.len(),
                inputs.len(),
                many.len()
            )));
        }
        Ok(out.chunks_exact(many.len()).map(<[ExtractedLwe]>::to_vec).collect())
    }

    /// `lut` applied to every input: one key-switch batch and one blind-rotation batch.
    pub fn apply_batch(&self, inputs: &[ExtractedLwe], lut: &Lut) -> Result<Vec<ExtractedLwe>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let switched = self.switch(inputs)?;
        self.backend.blind_rotate_batch_lut(&self.key, &switched, lut)
    }

    /// The key-switch batch every PBS starts with, after the inputs' set and key checks.
    fn switch(&self, inputs: &[ExtractedLwe]) -> Result<Vec<LweCiphertext>> {
        check_inputs(&self.key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        self.backend.key_switch_batch(&self.key, inputs)
    }

    /// `jobs[i].1` applied to `jobs[i].0`, tables of mixed kinds: one key-switch batch for
    /// all, then one blind-rotation batch per distinct table, side by side.
    pub fn apply_mixed(&self, jobs: &[(&ExtractedLwe, &Lut)]) -> Result<Vec<ExtractedLwe>> {
        let inputs: Vec<ExtractedLwe> = jobs.iter().map(|(c, _)| (*c).clone()).collect();
        let indexed: Vec<(usize, &Lut)> = jobs.iter().enumerate().map(|(i, (_, l))| (i, *l)).collect();
        self.apply_indexed(&inputs, &indexed)
    }

    /// `jobs[i].1` applied to `inputs[jobs[i].0]`: each input is key-switched once, however
    /// many tables read it (a block product's low and high digits), then one
    /// blind-rotation batch per distinct table (side by side). The words are those
    /// of [`PbsKey::apply_mixed`] on the same pairs. An index out of range is
    /// `Error::InvalidInput`.
    pub fn apply_indexed(&self, inputs: &[ExtractedLwe], jobs: &[(usize, &Lut)]) -> Result<Vec<ExtractedLwe>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        if let Some((i, _)) = jobs.iter().find(|(i, _)| *i >= inputs.len()) {
            return Err(Error::InvalidInput(format!("job reads input {i} of {}", inputs.len())));
        }
        let switched = self.switch(inputs)?;
        let mut groups: Vec<(&Lut, Vec<usize>)> = Vec::new();
        for (j, (_, lut)) in jobs.iter().enumerate() {
            match groups.iter_mut().find(|(l, _)| std::ptr::eq(*l, *lut) || *l == *lut) {
                Some((_, idx)) => idx.push(j),
                None => groups.push((lut, vec![j])),
            }
        }
        let rotate = |(lut, idx): &(&Lut, Vec<usize>)| {
            let batch: Vec<_> = idx.iter().map(|&j| switched[jobs[j].0].clone()).collect();
            self.backend.blind_rotate_batch_lut(&self.key, &batch, lut)
        };
        // Batches of distinct tables are independent: run side by side, a level of two
        // small batches (a carry's message and carry, one block each) keeps both cores
        // busy instead of one after the other. A lone batch stays on the caller's
        // thread, where the backend may give a single rotation two threads.
        let rotated: Vec<Vec<ExtractedLwe>> = if groups.len() > 1 {
            groups.par_iter().map(rotate).collect::<Result<_>>()?
        } else {
            groups.iter().map(rotate).collect::<Result<_>>()?
        };
        let mut out: Vec<Option<ExtractedLwe>> = vec![None; jobs.len()];
        for ((_, idx), cts) in groups.into_iter().zip(rotated) {
            for (j, ct) in idx.into_iter().zip(cts) {
                out[j] = Some(ct);
            }
        }
        Ok(out.into_iter().map(|c| c.expect("every job is in one group")).collect())
    }

    /// The prepared key and backend, for callers of the backend's own batches.
    pub fn prepared(&self) -> (&Arc<dyn Backend>, &PreparedKey) {
        (&self.backend, &self.key)
    }
}

#[cfg(test)]
#[path = "pbs_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "pbs_multi_bit_tests.rs"]
mod multi_bit_tests;
