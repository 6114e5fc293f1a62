//! The encrypted-integer checks, as plain functions over any backend, so every backend
//! runs the same ones (the CPU instantiates them in `integer/tests.rs`; a GPU backend's
//! tests call them with its own backend). Results are checked against
//! [`reference`], a small limb bignum independent of the circuits.
//!
//! These functions panic on a mismatch: they are test bodies.

use std::sync::Arc;

use fhe_api::rng::SplitMix64;
use fhe_api::{Backend, KeySet, ParamSet, Seed};

use super::{bits_to_limbs, limbs_to_bits, FheUint, IntOp};
use crate::tfhe::{decrypt_bit, encrypt_bit, keygen_from_seed, ServerKey};

/// Keys and a prepared server key on one backend.
pub struct IntegerFixture {
    pub keys: KeySet,
    pub server: ServerKey,
}

impl IntegerFixture {
    /// Keys from a seed derived from `label`, prepared on `backend`.
    pub fn new(backend: Arc<dyn Backend>, params: ParamSet, label: &str) -> IntegerFixture {
        let keys = keygen_from_seed(&*backend, params, &Seed::derive(label, 0)).expect("keygen");
        let server = ServerKey::new(backend, &keys.ek).expect("prepare the evaluation key");
        IntegerFixture { keys, server }
    }
}

/// Reproducible operands ([`SplitMix64`]).
#[derive(Clone, Debug)]
pub struct Operands(SplitMix64);

impl Operands {
    pub fn new(seed: u64) -> Operands {
        Operands(SplitMix64::new(seed ^ 0x6a09_e667_f3bc_c908))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// A random `width`-bit value as limbs.
    pub fn value(&mut self, width: usize) -> Vec<u64> {
        let mut limbs: Vec<u64> = (0..width.div_ceil(64)).map(|_| self.next_u64()).collect();
        truncate(&mut limbs, width);
        limbs
    }
}

/// Keeps the low `width` bits (and `ceil(width / 64)` limbs).
pub fn truncate(limbs: &mut Vec<u64>, width: usize) {
    limbs.resize(width.div_ceil(64), 0);
    if !width.is_multiple_of(64) {
        if let Some(top) = limbs.last_mut() {
            *top &= (1u64 << (width % 64)) - 1;
        }
    }
}

fn limb(a: &[u64], i: usize) -> u64 {
    a.get(i).copied().unwrap_or(0)
}

fn wrapping_add(a: &[u64], b: &[u64], width: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut carry = 0u128;
    for i in 0..width.div_ceil(64) {
        let s = limb(a, i) as u128 + limb(b, i) as u128 + carry;
        out.push(s as u64);
        carry = s >> 64;
    }
    truncate(&mut out, width);
    out
}

fn product(a: &[u64], b: &[u64], width: usize) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u128;
        for (j, &y) in b.iter().enumerate() {
            let t = out[i + j] as u128 + x as u128 * y as u128 + carry;
            out[i + j] = t as u64;
            carry = t >> 64;
        }
        out[i + b.len()] = carry as u64;
    }
    truncate(&mut out, width);
    out
}

fn less(a: &[u64], b: &[u64]) -> bool {
    let n = a.len().max(b.len());
    for i in (0..n).rev() {
        if limb(a, i) != limb(b, i) {
            return limb(a, i) < limb(b, i);
        }
    }
    false
}

fn shift_left(a: &[u64], k: usize, width: usize) -> Vec<u64> {
    let bits = limbs_to_bits(a, width).expect("operand fits");
    bits_to_limbs(&(0..width).map(|i| i >= k && bits[i - k]).collect::<Vec<_>>())
}

fn shift_right(a: &[u64], k: usize, width: usize) -> Vec<u64> {
    let bits = limbs_to_bits(a, width).expect("operand fits");
    bits_to_limbs(&(0..width).map(|i| bits.get(i + k).copied().unwrap_or(false)).collect::<Vec<_>>())
}

/// What `op` must return on `width`-bit `a`, `b` (limbs; `sel` for select), as limbs of
/// [`IntOp::output_width`] bits.
pub fn reference(op: IntOp, width: usize, a: &[u64], b: &[u64], sel: bool) -> Vec<u64> {
    let bit = |v: bool| vec![v as u64];
    let mut out = match op {
        IntOp::Add => wrapping_add(a, b, width),
        IntOp::Sub => {
            // a + (2^w - b) = a + !b + 1
            let mut not_b: Vec<u64> = (0..width.div_ceil(64)).map(|i| !limb(b, i)).collect();
            truncate(&mut not_b, width);
            let one = [1u64];
            wrapping_add(&wrapping_add(a, &not_b, width), &one, width)
        }
        IntOp::MulLow => product(a, b, width),
        IntOp::MulFull => product(a, b, 2 * width),
        IntOp::Eq => bit(!less(a, b) && !less(b, a)),
        IntOp::Lt => bit(less(a, b)),
        IntOp::Le => bit(!less(b, a)),
        IntOp::Min => (if less(a, b) { a } else { b }).to_vec(),
        IntOp::Max => (if less(a, b) { b } else { a }).to_vec(),
        IntOp::Select => (if sel { a } else { b }).to_vec(),
        IntOp::Shl(k) => shift_left(a, k, width),
        IntOp::Shr(k) => shift_right(a, k, width),
    };
    truncate(&mut out, op.output_width(width));
    out
}

/// Runs `op` on encrypted `a`, `b` through the public [`ServerKey`] methods.
pub fn eval_encrypted(fx: &IntegerFixture, op: IntOp, a: &FheUint, b: &FheUint, sel: bool) -> Vec<u64> {
    let s = &fx.server;
    let decrypt = |x: FheUint| x.decrypt(&fx.keys.sk).expect("decrypt");
    let decrypt_bit = |x| vec![decrypt_bit(&fx.keys.sk, &x).expect("decrypt") as u64];
    match op {
        IntOp::Add => decrypt(s.add(a, b).expect("add")),
        IntOp::Sub => decrypt(s.sub(a, b).expect("sub")),
        IntOp::MulLow => decrypt(s.mul_low(a, b).expect("mul_low")),
        IntOp::MulFull => decrypt(s.mul_full(a, b).expect("mul_full")),
        IntOp::Eq => decrypt_bit(s.eq(a, b).expect("eq")),
        IntOp::Lt => decrypt_bit(s.lt(a, b).expect("lt")),
        IntOp::Le => decrypt_bit(s.le(a, b).expect("le")),
        IntOp::Min => decrypt(s.min(a, b).expect("min")),
        IntOp::Max => decrypt(s.max(a, b).expect("max")),
        IntOp::Select => {
            let sel = encrypt_bit(&fx.keys.pk, sel).expect("encrypt");
            decrypt(s.select(&sel, a, b).expect("select"))
        }
        IntOp::Shl(k) => decrypt(s.shl(a, k).expect("shl")),
        IntOp::Shr(k) => decrypt(s.shr(a, k).expect("shr")),
    }
}

/// `cases` random operand pairs at `width` (the first pair equal, so `eq` and `le` see
/// both answers), encrypted, run through `op`, decrypted and compared with [`reference`].
pub fn random_operands_decrypt_right(fx: &IntegerFixture, op: IntOp, width: usize, cases: usize, seed: u64) {
    let mut rng = Operands::new(seed ^ ((width as u64) << 32));
    for case in 0..cases {
        let a = rng.value(width);
        // The first of several cases squares (a = b); a lone case gets two operands.
        let b = if case == 0 && cases > 1 { a.clone() } else { rng.value(width) };
        let sel = rng.next_u64() & 1 == 1;
        let ea = FheUint::encrypt_limbs(&fx.keys.pk, width, &a).expect("encrypt");
        let eb = FheUint::encrypt_limbs(&fx.keys.pk, width, &b).expect("encrypt");
        let got = eval_encrypted(fx, op, &ea, &eb, sel);
        let want = reference(op, width, &a, &b, sel);
        assert_eq!(got, want, "{} on {width} bits, a = {a:x?}, b = {b:x?}, sel = {sel}", op.name());
    }
}

/// Mismatched widths and parameter sets are errors, not panics.
pub fn bad_operands_are_errors(fx: &IntegerFixture) {
    let pk = &fx.keys.pk;
    let a = FheUint::encrypt(pk, 8, 1).expect("encrypt");
    let b = FheUint::encrypt(pk, 16, 1).expect("encrypt");
    for r in [fx.server.add(&a, &b), fx.server.mul_low(&a, &b), fx.server.min(&a, &b)] {
        let msg = r.expect_err("width mismatch").to_string();
        assert!(msg.contains("widths differ (8 vs 16 bits)"), "{msg}");
    }
    assert!(fx.server.lt(&a, &b).is_err());
    let sel = encrypt_bit(pk, true).expect("encrypt");
    assert!(fx.server.select(&sel, &a, &b).is_err());
    assert!(FheUint::encrypt(pk, 8, 256).is_err(), "256 does not fit in 8 bits");
    assert!(FheUint::encrypt(pk, 0, 0).is_err());
    assert!(FheUint::encrypt_limbs(pk, 257, &[0]).is_err());
    let wide = FheUint::trivial(fx.keys.pk.params(), 256, &[0, 0, 1, 0]).expect("trivial");
    assert!(wide.decrypt_u128(&fx.keys.sk).is_err(), "2^128 does not fit a u128");
    let half = FheUint::trivial(fx.keys.pk.params(), 129, &[0, 0, 1]).expect("trivial");
    assert!(fx.server.mul_full(&half, &half).is_err(), "258 bits is above the widest integer");
    let other = if fx.keys.pk.params() == ParamSet::PN10QP27 { ParamSet::PN10QP25Q } else { ParamSet::PN10QP27 };
    let foreign = FheUint::trivial(other, 8, &[3]).expect("trivial");
    assert!(fx.server.add(&a, &foreign).is_err());
    assert!(fx.server.shl(&foreign, 1).is_err());
}
