//! The CKKS surfaces of one case, computed on one backend (the schedule is in the
//! [`crate::ckks`] docs).

use std::sync::Arc;

use fhe_api::ckks::entities::{EvalKeys, HostCiphertext, SwitchingKey};
use fhe_api::ckks::params::Preset;
use fhe_api::ckks::Ciphertext;
use fhe_api::ring::automorphism::{conjugation_element, galois_element_for_rotation};
use fhe_api::rng::stream;
use fhe_api::{Backend, Seed};
use fhe_schemes::ckks::Complex;
use fhe_schemes::ckks::KeygenOptions;
use fhe_schemes::ckks::{precision_bits, Context};

use crate::scheme::{CaseSeeds, Schedule};
use crate::Result;

/// The rotations of the hoisted surface (and the Galois keys the KAT schedule makes).
pub const HOISTED: [i64; 4] = [1, 2, 3, 4];
/// The constant of the `mul_const+rescale` surface.
pub const MUL_CONST: f64 = -1.25;
/// A decrypted output must match plaintext arithmetic to this many bits (the CPU
/// measures 21-23 bits at the small preset; the conformance suite asks 15).
pub const MIN_BITS: f64 = 15.0;

/// Message `j` of a case: slot `i` is `(u_{2i}, u_{2i+1})` with
/// `u = (next_u64 >> 11) * 2^-53 - 1/2` from stream `(master, "ckks-values", j)`: exact
/// dyadic values in `[-1/2, 1/2)`, the same on every platform.
pub(crate) fn values(master: &Seed, j: u64, slots: usize) -> Vec<Complex> {
    let mut r = stream(&master.0, "ckks-values", j);
    let mut u = move || (r.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) - 0.5;
    (0..slots).map(|_| Complex { re: u(), im: u() }).collect()
}

/// Words as bytes: each word 8 bytes little-endian, in order.
pub(crate) fn le_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The keys a case makes: every key the KAT schedule digests, or the relinearization
/// and rotation-1 keys of `equiv dispatch`.
fn keygen_options(schedule: Schedule) -> KeygenOptions {
    match schedule {
        Schedule::Kat => KeygenOptions { relin: true, rotations: HOISTED.to_vec(), conjugation: true },
        Schedule::Dispatch => KeygenOptions { relin: true, rotations: vec![1], conjugation: false },
    }
}

/// Serialized words of a key or plaintext (`sk`: one byte per ternary coefficient).
pub struct Words {
    pub name: String,
    pub words: usize,
    pub bytes: Vec<u8>,
}

/// One ciphertext surface: its downloaded words, and what decrypting it on the same
/// backend gives.
pub struct CtOut {
    pub name: String,
    pub level: usize,
    pub scale: f64,
    /// `c0 || c1`, [`le_bytes`].
    pub bytes: Vec<u8>,
    /// The decrypted plaintext's coefficient words, [`le_bytes`].
    pub decrypted: Vec<u8>,
    /// Every slot, decoded.
    pub decoded: Vec<Complex>,
    /// Plaintext arithmetic on the messages.
    pub want: Vec<Complex>,
}

impl CtOut {
    pub fn precision(&self) -> f64 {
        precision_bits(&self.decoded, &self.want)
    }
}

/// Every surface of one case on one backend.
pub struct CkksComputed {
    /// Keys and encoded messages, in schedule order.
    pub words: Vec<Words>,
    pub cts: Vec<CtOut>,
}

/// The name of the Galois key of element `g`.
fn galois_name(preset: Preset, g: u64) -> String {
    let n = preset.params().ring_degree();
    if g == conjugation_element(n) {
        return "gk[conj].b".into();
    }
    match HOISTED.iter().chain(&[-1]).find(|&&k| galois_element_for_rotation(n, k) == g) {
        Some(k) => format!("gk[rot {k}].b"),
        None => format!("gk[g {g}].b"),
    }
}

fn key_words(name: String, key: &SwitchingKey) -> Words {
    Words { name, words: key.b().len(), bytes: le_bytes(key.b()) }
}

/// The `b` halves of every evaluation key, relinearization first, then by Galois element.
pub(crate) fn eval_key_words(preset: Preset, eval: &EvalKeys) -> Vec<Words> {
    let relin = eval.relin.iter().map(|k| key_words("rlk.b".into(), k));
    relin.chain(eval.galois.iter().map(|(&g, k)| key_words(galois_name(preset, g), k))).collect()
}

fn rotate_plain(v: &[Complex], k: i64) -> Vec<Complex> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + k).rem_euclid(n) as usize]).collect()
}

fn zip(x: &[Complex], y: &[Complex], f: impl Fn(Complex, Complex) -> Complex) -> Vec<Complex> {
    x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect()
}

/// Downloads, decrypts and decodes one resident ciphertext.
pub(crate) fn ct_out(
    ctx: &Context,
    sk: &fhe_api::ckks::entities::SecretKey,
    name: &str,
    h: &Ciphertext,
    want: Vec<Complex>,
) -> Result<CtOut> {
    let ops = fhe_schemes::ckks::ckks_ops(&**ctx.backend())?;
    let ct: HostCiphertext = ops.download(h)?;
    let pt = ctx.decrypt_plaintext(sk, h)?;
    Ok(CtOut {
        name: name.to_string(),
        level: ct.level(),
        scale: ct.scale().value(),
        bytes: ct_bytes(&ct),
        decrypted: le_bytes(pt.coeffs()),
        decoded: ctx.decode(&pt)?,
        want,
    })
}

/// `c0 || c1` as [`le_bytes`].
pub(crate) fn ct_bytes(ct: &HostCiphertext) -> Vec<u8> {
    let mut b = le_bytes(ct.c0());
    b.extend(le_bytes(ct.c1()));
    b
}

/// Computes every surface of case `seeds` of `preset` on `backend` (which must declare
/// CKKS).
pub(crate) fn compute(
    backend: &Arc<dyn Backend>,
    preset: Preset,
    seeds: &CaseSeeds,
    schedule: Schedule,
) -> Result<CkksComputed> {
    let ctx = Context::from_preset(backend.clone(), preset)?;
    let keys = ctx.keygen_from_seed(&seeds.master, &keygen_options(schedule))?;
    let ev = ctx.evaluator(&keys.eval)?;
    let slots = ctx.params().slots();
    let (x, y) = (values(&seeds.master, 0, slots), values(&seeds.master, 1, slots));
    let (px, py) = (ctx.encode(&x)?, ctx.encode(&y)?);

    let sk = keys.sk.coefficients().iter().map(|&c| c as u8).collect();
    let mut words = vec![
        Words { name: "sk".into(), words: keys.sk.coefficients().len(), bytes: sk },
        Words { name: "pk.b".into(), words: keys.pk.b().len(), bytes: le_bytes(keys.pk.b()) },
    ];
    words.extend(eval_key_words(preset, &keys.eval));
    words.push(Words { name: "encode[x]".into(), words: px.coeffs().len(), bytes: le_bytes(px.coeffs()) });
    words.push(Words { name: "encode[y]".into(), words: py.coeffs().len(), bytes: le_bytes(py.coeffs()) });

    let [ex, ey, es] = &seeds.encrypt;
    let cx = ctx.encrypt_seeded(&keys.pk, &px, ex)?;
    let cy = ctx.encrypt_seeded(&keys.pk, &py, ey)?;
    let sx = ctx.encrypt_sk_seeded(&keys.sk, &px, es)?;
    let xy = zip(&x, &y, |a, b| a * b);
    let mul = ev.mul(&cx, &cy)?;
    let rescaled = ev.rescale(&mul)?;
    let rotated = ev.rotate(&cx, 1)?;

    let mut outs: Vec<(String, Ciphertext, Vec<Complex>)> = vec![
        ("encrypt_pk[x]".into(), cx, x.clone()),
        ("encrypt_pk[y]".into(), cy, y.clone()),
        ("encrypt_sk[x]".into(), sx, x.clone()),
    ];
    if schedule == Schedule::Kat {
        outs.push(("add".into(), ev.add(&outs[0].1, &outs[1].1)?, zip(&x, &y, |a, b| a + b)));
    }
    outs.push(("mul".into(), mul, xy.clone()));
    outs.push(("rescale".into(), rescaled, xy));
    outs.push(("rotate(1)".into(), rotated, rotate_plain(&x, 1)));
    if schedule == Schedule::Kat {
        let cx = &outs[0].1;
        let conj = ev.conjugate(cx)?;
        let hoisted = ev.rotate_hoisted(cx, &HOISTED)?;
        let scaled = ev.rescale(&ev.mul_const(cx, MUL_CONST)?)?;
        outs.push(("conjugate".into(), conj, x.iter().map(|a| a.conj()).collect()));
        for (h, k) in hoisted.into_iter().zip(HOISTED) {
            outs.push((format!("rotate_hoisted[{k}]"), h, rotate_plain(&x, k)));
        }
        outs.push(("mul_const+rescale".into(), scaled, x.iter().map(|a| *a * MUL_CONST).collect()));
    }
    let cts = outs.into_iter().map(|(name, h, want)| ct_out(&ctx, &keys.sk, &name, &h, want)).collect::<Result<_>>()?;
    Ok(CkksComputed { words, cts })
}
