//! The oracle check of a recommendation: each candidate computes the outputs of the
//! operations it will be timed on, from the inputs it will be timed on, and every
//! output is compared with the oracle's through `fhe_kat` (the equivalence gate's
//! byte rule and its [`Mismatch`] report), on the serialized form (`fhe_api::format`).
//! A difference disqualifies the candidate; what passes is kept for the timing.

use std::sync::Arc;

use fhe_api::ckks::entities::{HostCiphertext, KeySet, Plaintext};
use fhe_api::ckks::params::Preset;
use fhe_api::ckks::Ciphertext;
use fhe_api::format::{Encode, TryEncode};
use fhe_api::{Backend, ExtractedLwe, LweCiphertext, ParamSet, PreparedKey, Seed};
use fhe_kat::{compare_bytes, Case, CaseSet, Mismatch, MismatchKind, Source};
use fhe_schemes::ckks::Complex;
use fhe_schemes::ckks::Evaluator;
use fhe_schemes::ckks::{precision_bits, Context};
use fhe_schemes::tfhe::gates::{self, Gate};

use fhe_bench::ops::ckks::{self as bench_ckks, MIN_PRECISION_BITS, ROTATIONS};
use fhe_bench::{ntt_input, Error, Result, KEY_SWITCH_INPUTS};

use super::run::RecommendConfig;

/// Why a candidate may not be recommended: a result that differs from the oracle's,
/// or an error of the candidate.
pub(super) type Verdict = std::result::Result<Setup, String>;

/// Inputs and oracle outputs shared by every candidate of a primitive run.
pub(super) struct PrimitiveInputs {
    params: ParamSet,
    ek: fhe_api::EvaluationKey,
    /// `[x, a, b]`: `x` is bootstrapped and key-switched, `a AND b` is the gate.
    pub cts: Vec<LweCiphertext>,
    rotated: Vec<ExtractedLwe>,
    switched: Vec<LweCiphertext>,
    bootstrapped: Vec<LweCiphertext>,
    gate: Vec<LweCiphertext>,
    /// Distinct extracted samples (the oracle's blind rotations of fresh encryptions)
    /// that the `key_switch` timing cycles through, so its key rows come from memory as
    /// in a gate rather than staying in cache (see [`KEY_SWITCH_INPUTS`]).
    pub switch_inputs: Vec<ExtractedLwe>,
}

/// Keys, inputs and the oracle's outputs shared by every candidate of a `ckks-primitive`
/// run (keys are host objects; each candidate prepares its own evaluator from them).
pub(super) struct CkksInputs {
    preset: Preset,
    pub keys: KeySet,
    x: Vec<Complex>,
    y: Vec<Complex>,
    /// `x` and `y` encoded at the top level.
    pub pts: [Plaintext; 2],
    /// The encryption seeds of `x` and `y`.
    pub seeds: [Seed; 2],
    /// The oracle's `[Enc(x), Enc(y), x*y, rotate(x, 1), hoisted(x, 1..4)...]`, encoded.
    want: Vec<Vec<u8>>,
}

/// A candidate's CKKS context and evaluator, and its own encryptions of `x` and `y`.
pub(super) struct CkksSetup {
    pub ctx: Context,
    pub ev: Evaluator,
    pub cx: Ciphertext,
    pub cy: Ciphertext,
}

/// What one qualified candidate needs to be timed.
pub(super) enum Setup {
    Kernel { input: Vec<u64> },
    Primitive { key: PreparedKey },
    Ckks(Box<CkksSetup>),
}

/// The case every comparison of a run is reported under: the recommendation's inputs
/// on `set` (seed index 0 of the run's seed root; the NTT input is fixed).
fn case(set: CaseSet) -> Case {
    Case { source: Source::Recommend, params: set, index: 0, entry: None }
}

/// Compares `(surface, oracle's bytes, candidate's bytes)` through `fhe_kat`; the
/// disqualification reason is the first mismatch, with how many more surfaces differ.
fn verdict<'a>(case: &Case, surfaces: impl IntoIterator<Item = (&'a str, Vec<u8>, Vec<u8>)>) -> Result<(), String> {
    let found: Vec<Mismatch> =
        surfaces.into_iter().filter_map(|(s, want, got)| compare_bytes(case, s, &want, &got)).collect();
    reason(&found)
}

fn reason(found: &[Mismatch]) -> Result<(), String> {
    match found {
        [] => Ok(()),
        [one] => Err(one.to_string()),
        [first, rest @ ..] => Err(format!("{first} (and {} more differing surfaces)", rest.len())),
    }
}

/// The words as 8 bytes little-endian each, the form the gate compares NTT outputs in.
fn le_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The serialized batch, one ciphertext after the other.
fn encoded<T: Encode>(cts: &[T]) -> Vec<u8> {
    cts.iter().flat_map(Encode::encode).collect()
}

/// Checks a candidate's NTT against the oracle's and prepares what timing it needs: the
/// forward transform of one polynomial, and the inverse of that returning the input.
pub(super) fn check_kernel(b: &dyn Backend, params: ParamSet, oracle: &dyn Backend) -> Result<Verdict> {
    let input = ntt_input(params, 1);
    let mut want = input.clone();
    oracle.ntt_forward(params, &mut want)?;
    let outcome = (|| {
        let mut got = input.clone();
        b.ntt_forward(params, &mut got).map_err(|e| format!("ntt_forward failed: {e}"))?;
        let forward = le_bytes(&got);
        b.ntt_inverse(params, &mut got).map_err(|e| format!("ntt_inverse failed: {e}"))?;
        verdict(
            &case(params.into()),
            [("ntt_forward", le_bytes(&want), forward), ("ntt_inverse", le_bytes(&input), le_bytes(&got))],
        )
    })();
    Ok(outcome.map(|()| Setup::Kernel { input }))
}

pub(super) fn primitive_inputs(oracle: &dyn Backend, config: &RecommendConfig) -> Result<PrimitiveInputs> {
    let keys = fhe_schemes::tfhe::keygen_from_seed(oracle, config.params, &Seed::derive(&config.seed_root, 0))?;
    let cts = (0..3u64)
        .map(|i| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, i != 2, &Seed::derive(&config.seed_root, 1 + i)))
        .collect::<fhe_api::Result<Vec<_>>>()?;
    let key = oracle.prepare(&keys.ek)?;
    let rotated = oracle.blind_rotate_batch(&key, &cts[0..1])?;
    let switched = oracle.key_switch_batch(&key, &rotated)?;
    let bootstrapped = oracle.bootstrap_batch(&key, &cts[0..1])?;
    let gate = gates::gate_batch(oracle, &key, Gate::And, &cts[1..2], &cts[2..3])?;
    // The oracle itself must be right: true AND false is false, and a bootstrap keeps x.
    if fhe_schemes::tfhe::decrypt_bit(&keys.sk, &gate[0])?
        || !fhe_schemes::tfhe::decrypt_bit(&keys.sk, &bootstrapped[0])?
    {
        return Err(Error::InvalidInput(format!("the oracle {} decrypts a wrong gate result", oracle.name())));
    }
    // One timed or warm-up call per distinct sample, up to `KEY_SWITCH_INPUTS`.
    let calls = config.warmup + config.iterations;
    let fresh = (0..KEY_SWITCH_INPUTS.min(calls.max(1)) as u64)
        .map(|i| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, i % 2 == 0, &Seed::derive(&config.seed_root, 100 + i)))
        .collect::<fhe_api::Result<Vec<_>>>()?;
    let switch_inputs = oracle.blind_rotate_batch(&key, &fresh)?;
    Ok(PrimitiveInputs {
        params: config.params,
        ek: keys.ek,
        cts,
        rotated,
        switched,
        bootstrapped,
        gate,
        switch_inputs,
    })
}

/// The candidate's blind rotation, key switch, bootstrap and AND gate on the oracle's
/// keys and ciphertexts, each compared with the oracle's.
pub(super) fn check_primitive(b: &dyn Backend, inputs: &PrimitiveInputs) -> Verdict {
    fn fail(what: &'static str) -> impl Fn(fhe_api::Error) -> String {
        move |e| format!("{what} failed: {e}")
    }
    let key = b.prepare(&inputs.ek).map_err(fail("prepare"))?;
    let rotated = b.blind_rotate_batch(&key, &inputs.cts[0..1]).map_err(fail("blind_rotate"))?;
    let switched = b.key_switch_batch(&key, &rotated).map_err(fail("key_switch"))?;
    let boot = b.bootstrap_batch(&key, &inputs.cts[0..1]).map_err(fail("bootstrap"))?;
    let gate = gates::gate_batch(b, &key, Gate::And, &inputs.cts[1..2], &inputs.cts[2..3]).map_err(fail("gate_and"))?;
    verdict(
        &case(inputs.params.into()),
        [
            ("blind_rotate", encoded(&inputs.rotated), encoded(&rotated)),
            ("key_switch", encoded(&inputs.switched), encoded(&switched)),
            ("bootstrap", encoded(&inputs.bootstrapped), encoded(&boot)),
            ("gate_and", encoded(&inputs.gate), encoded(&gate)),
        ],
    )?;
    Ok(Setup::Primitive { key })
}

/// The names of the CKKS outputs, in the order of [`ckks_outputs`].
const CKKS_OUTPUTS: [&str; 8] = [
    "encrypt(x)",
    "encrypt(y)",
    "mul_relin",
    "rotate(1)",
    "hoisted rotate(1)",
    "hoisted rotate(2)",
    "hoisted rotate(3)",
    "hoisted rotate(4)",
];

/// The candidate's CKKS outputs for [`CKKS_OUTPUTS`], in that order.
fn ckks_outputs(
    ctx: &Context,
    ev: &Evaluator,
    i: &CkksInputs,
) -> fhe_api::Result<(Ciphertext, Ciphertext, Vec<HostCiphertext>)> {
    let cx = ctx.encrypt_seeded(&i.keys.pk, &i.pts[0], &i.seeds[0])?;
    let cy = ctx.encrypt_seeded(&i.keys.pk, &i.pts[1], &i.seeds[1])?;
    let mut out = vec![ev.download(&cx)?, ev.download(&cy)?, ev.download(&ev.mul(&cx, &cy)?)?];
    out.push(ev.download(&ev.rotate(&cx, 1)?)?);
    for h in ev.rotate_hoisted(&cx, &ROTATIONS)? {
        out.push(ev.download(&h)?);
    }
    Ok((cx, cy, out))
}

/// Keys from the oracle (seed 0 of the run's root), `x` and `y`, and the oracle's outputs.
pub(super) fn ckks_inputs(oracle: &Arc<dyn Backend>, config: &RecommendConfig) -> Result<CkksInputs> {
    let preset =
        config.preset.ok_or_else(|| Error::InvalidInput("the ckks-primitive suite needs a CKKS preset".into()))?;
    let ctx = Context::from_preset(oracle.clone(), preset)?;
    let keys = ctx.keygen_from_seed(&Seed::derive(&config.seed_root, 0), &bench_ckks::keygen_options())?;
    let slots = ctx.params().slots();
    let (x, y) = (bench_ckks::values(slots, 1), bench_ckks::values(slots, 2));
    let pts = [ctx.encode(&x)?, ctx.encode(&y)?];
    let seeds = [Seed::derive(&config.seed_root, 1), Seed::derive(&config.seed_root, 2)];
    let mut inputs = CkksInputs { preset, keys, x, y, pts, seeds, want: Vec::new() };
    let ev = ctx.evaluator(&inputs.keys.eval)?;
    inputs.want =
        ckks_outputs(&ctx, &ev, &inputs)?.2.iter().map(TryEncode::try_encode).collect::<fhe_api::Result<_>>()?;
    Ok(inputs)
}

/// Same outputs as the oracle's, byte for byte in their encoding (level and scale
/// included), and decryptions (Enc(x), x*y after a rescale) within
/// [`MIN_PRECISION_BITS`] of plaintext arithmetic.
pub(super) fn check_ckks(b: &Arc<dyn Backend>, i: &CkksInputs) -> Verdict {
    let fail = |what: &'static str| move |e: fhe_api::Error| format!("{what} failed: {e}");
    let ctx = Context::from_preset(b.clone(), i.preset).map_err(fail("context"))?;
    let ev = ctx.evaluator(&i.keys.eval).map_err(fail("evaluator"))?;
    let (cx, cy, got) = ckks_outputs(&ctx, &ev, i).map_err(fail("ckks operations"))?;
    let got = got.iter().map(TryEncode::try_encode).collect::<fhe_api::Result<Vec<_>>>().map_err(fail("encode"))?;
    let case = case(i.preset.into());
    verdict(&case, CKKS_OUTPUTS.into_iter().zip(i.want.iter().cloned()).zip(got).map(|((s, w), g)| (s, w, g)))?;
    let dec = |h: &Ciphertext| ctx.decrypt(&i.keys.sk, h).map_err(fail("decrypt"));
    let xy: Vec<Complex> = i.x.iter().zip(&i.y).map(|(&a, &b)| a * b).collect();
    let product = ev.rescale(&ev.mul(&cx, &cy).map_err(fail("mul_relin"))?).map_err(fail("rescale"))?;
    let mut found = Vec::new();
    for (what, bits) in
        [("decrypt(encrypt(x))", precision_bits(&dec(&cx)?, &i.x)), ("x*y", precision_bits(&dec(&product)?, &xy))]
    {
        if bits.is_nan() || bits < MIN_PRECISION_BITS {
            let what_went_wrong = format!("{bits:.1} bits of precision < {MIN_PRECISION_BITS}");
            let kind = MismatchKind::Values { backend: b.name(), what: what_went_wrong };
            found.push(Mismatch { case: case.clone(), surface: what.to_string(), kind });
        }
    }
    reason(&found)?;
    Ok(Setup::Ckks(Box::new(CkksSetup { ctx, ev, cx, cy })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_surfaces_name_the_first_and_count_the_rest() {
        let c = case(ParamSet::PN10QP27.into());
        assert_eq!(verdict(&c, [("bootstrap", vec![1, 2, 3], vec![1, 2, 3])]), Ok(()));
        let e = verdict(&c, [("bootstrap", vec![1, 2, 3], vec![1, 2, 4])]).unwrap_err();
        assert!(e.contains("surface bootstrap") && e.contains("offset 2"), "{e}");
        let e = verdict(&c, [("a", vec![1], vec![2]), ("b", vec![1], vec![1]), ("c", vec![1], vec![])]).unwrap_err();
        assert!(e.contains("surface a") && e.ends_with("(and 1 more differing surfaces)"), "{e}");
    }
}
