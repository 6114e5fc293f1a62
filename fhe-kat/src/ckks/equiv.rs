//! The CKKS comparison rules: the words of keys, ciphertexts and decrypted plaintexts
//! byte-equal (a corpus entry stores their SHA-256), level and scale exactly, decoded
//! slots within a tolerance, every output decrypting to its plaintext result with
//! [`MIN_BITS`]; and the CKKS sweep case (mul, rescale and rotate(1) of the oracle's
//! encryptions and of uniformly random ciphertexts, with the oracle's keys prepared on
//! both backends).
//!
//! A target that declares no CKKS capability (`Backend::ckks()` is `None`) is reported
//! as skipped, with the reason, and counts no case as passed.

use std::sync::Arc;

use fhe_api::ckks::entities::HostCiphertext;
use fhe_api::ckks::params::Preset;
use fhe_api::rng::stream;
use fhe_api::Backend;
use fhe_schemes::ckks::Complex;
use fhe_schemes::ckks::Evaluator;
use fhe_schemes::ckks::KeygenOptions;
use fhe_schemes::ckks::{precision_bits, Context};

use super::corpus::{slot_close, CkksDigest, CkksKatCt};
use super::surfaces::{ct_bytes, values, CkksComputed, CtOut, MIN_BITS};
use super::{DECODED_SLOTS, DECODED_TOLERANCE};
use crate::compare::Checker;
use crate::scheme::{sha256, unhex, CaseSeeds};
use crate::Result;

/// Why `backend` cannot run CKKS, or `None` when it declares the capability.
pub fn skip_reason(backend: &dyn Backend) -> Option<String> {
    backend
        .ckks()
        .is_none()
        .then(|| format!("{} declares no CKKS capability (Backend::ckks() is None)", backend.name()))
}

/// The decrypted values of `ct` match plaintext arithmetic to `min_bits`.
fn check_precision(check: &mut Checker, backend: &str, ct: &CtOut, min_bits: f64) {
    let bits = ct.precision();
    if bits.is_nan() || bits < min_bits {
        check.values(&ct.name, backend, format!("{bits:.1} bits of the plaintext result < {min_bits}"));
    }
}

/// What a CKKS corpus entry stores (a preset entry or a bootstrap entry), and the rules
/// that read it.
pub(crate) struct Stored<'a> {
    /// The entry's name (errors name it).
    pub name: &'a str,
    pub digests: &'a [CkksDigest],
    pub outputs: &'a [CkksKatCt],
    /// The file's `decoded_tolerance`.
    pub tolerance: f64,
    /// Every output decrypts to its plaintext result with at least this many bits.
    pub min_bits: f64,
}

/// Checks a replay on `backend` (`name`, `c`) against the stored entry: digests, level
/// and scale, decoded slots within the file's `tolerance`, and the precision.
pub(crate) fn check_entry(check: &mut Checker, name: &str, entry: &Stored, c: &CkksComputed) -> Result<()> {
    let tolerance = entry.tolerance;
    if c.words.len() != entry.digests.len() || c.cts.len() != entry.outputs.len() {
        check.structure(
            "outputs",
            format!(
                "corpus has {} digests and {} ciphertexts, replay computes {} and {}",
                entry.digests.len(),
                entry.outputs.len(),
                c.words.len(),
                c.cts.len()
            ),
        );
    }
    for (found, stored) in c.words.iter().zip(entry.digests) {
        if found.name != stored.name || found.words != stored.words {
            let what = format!(
                "corpus `{}` ({} words) meets computed `{}` ({})",
                stored.name, stored.words, found.name, found.words
            );
            check.structure(&stored.name, what);
            continue;
        }
        check.bytes(
            &format!("{} (sha256)", stored.name),
            &unhex(entry.name, "digest", &stored.sha256)?,
            &sha256(&found.bytes),
        );
    }
    for (found, stored) in c.cts.iter().zip(entry.outputs) {
        let surface = &stored.surface;
        let scale_bits = format!("{:016x}", found.scale.to_bits());
        if found.name != *surface || found.level != stored.level || scale_bits != stored.scale_bits {
            let what = format!(
                "corpus `{surface}` at level {} scale bits {} meets computed `{}` at level {} scale bits {scale_bits}",
                stored.level, stored.scale_bits, found.name, found.level
            );
            check.structure(surface, what);
            continue;
        }
        check.bytes(
            &format!("{surface} (sha256)"),
            &unhex(entry.name, "digest", &stored.sha256)?,
            &sha256(&found.bytes),
        );
        let dec = sha256(&found.decrypted);
        check.bytes(
            &format!("{surface} decrypt (sha256)"),
            &unhex(entry.name, "digest", &stored.decrypt_sha256)?,
            &dec,
        );
        for (i, (s, f)) in stored.slots.iter().zip(&found.decoded).enumerate() {
            let f = [f.re, f.im];
            if !slot_close(*s, f, tolerance) {
                check.values(
                    surface,
                    name,
                    format!("slot {i} decodes to {f:?}, corpus has {s:?} (tolerance {tolerance:e})"),
                );
            }
        }
        if stored.slots.len() != DECODED_SLOTS.min(found.decoded.len()) {
            check.structure(
                surface,
                format!("corpus has {} decoded slots, expected {DECODED_SLOTS}", stored.slots.len()),
            );
        }
        check_precision(check, name, found, entry.min_bits);
    }
    Ok(())
}

/// Byte-equal words, and decoded slots within [`DECODED_TOLERANCE`] of the oracle's;
/// every target output decrypts to its plaintext result with `min_bits`.
pub(crate) fn compare(check: &mut Checker, target: &str, o: &CkksComputed, t: &CkksComputed, min_bits: f64) {
    if o.words.len() != t.words.len() || o.cts.len() != t.cts.len() {
        check.structure("outputs", "the backends computed different surface lists".into());
    }
    for (ow, tw) in o.words.iter().zip(&t.words) {
        check.bytes(&ow.name, &ow.bytes, &tw.bytes);
    }
    for (oc, tc) in o.cts.iter().zip(&t.cts) {
        if (oc.level, oc.scale.to_bits()) != (tc.level, tc.scale.to_bits()) {
            let what = format!("level {} scale {} vs level {} scale {}", oc.level, oc.scale, tc.level, tc.scale);
            check.structure(&oc.name, what);
        }
        check.bytes(&oc.name, &oc.bytes, &tc.bytes);
        check.bytes(&format!("{} decrypt", oc.name), &oc.decrypted, &tc.decrypted);
        let far = oc
            .decoded
            .iter()
            .zip(&tc.decoded)
            .position(|(a, b)| !slot_close([a.re, a.im], [b.re, b.im], DECODED_TOLERANCE));
        if let Some(i) = far {
            let what = format!("slot {i} decodes to {:?}, the oracle's to {:?}", tc.decoded[i], oc.decoded[i]);
            check.values(&oc.name, target, what);
        }
        check_precision(check, target, tc, min_bits);
    }
}

/// Two uniformly random ciphertexts at the top level and default scale (stream
/// `ckks-sweep-random` of the master seed: `c0` then `c1`, limb by limb, `uniform_mod`).
fn random_ct(ctx: &Context, seeds: &CaseSeeds, j: u64) -> Result<HostCiphertext> {
    let p = ctx.params();
    let mut r = stream(&seeds.master.0, "ckks-sweep-random", j);
    let level = p.max_level();
    let mut poly = || -> Vec<u64> {
        p.q()[..=level].iter().flat_map(|q| (0..p.n()).map(|_| r.uniform_mod(q.0)).collect::<Vec<_>>()).collect()
    };
    let (c0, c1) = (poly(), poly());
    // Random words belong to no key set: the evaluators hold the case's keys, which
    // take objects of no key.
    let meta = fhe_api::ckks::CkksMeta::new(p.clone(), level, p.default_scale(), fhe_api::KeyTag::NONE)?;
    Ok(HostCiphertext::from_raw(meta, c0, c1)?)
}

/// `mul`, `rescale` and `rotate(1)` of the product on one evaluator, downloaded.
fn mul_rotate(ev: &Evaluator, a: &HostCiphertext, b: &HostCiphertext) -> Result<[HostCiphertext; 3]> {
    let (a, b) = (ev.upload(a)?, ev.upload(b)?);
    let m = ev.mul(&a, &b)?;
    let r = ev.rescale(&m)?;
    let t = ev.rotate(&r, 1)?;
    Ok([ev.download(&m)?, ev.download(&r)?, ev.download(&t)?])
}

/// One sweep seed: the oracle's keys and encryptions, evaluated on both backends.
pub(crate) fn sweep_case(
    oracle: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    preset: Preset,
    seeds: &CaseSeeds,
    check: &mut Checker,
) -> Result<()> {
    let octx = Context::from_preset(oracle.clone(), preset)?;
    let tctx = Context::from_preset(target.clone(), preset)?;
    let options = KeygenOptions { relin: true, rotations: vec![1], conjugation: false };
    let keys = octx.keygen_from_seed(&seeds.master, &options)?;
    let (oev, tev) = (octx.evaluator(&keys.eval)?, tctx.evaluator(&keys.eval)?);
    let slots = octx.params().slots();
    let (x, y) = (values(&seeds.master, 0, slots), values(&seeds.master, 1, slots));
    let enc = |v: &[Complex], seed| -> Result<HostCiphertext> {
        Ok(oev.download(&octx.encrypt_seeded(&keys.pk, &octx.encode(v)?, seed)?)?)
    };
    let (cx, cy) = (enc(&x, &seeds.encrypt[0])?, enc(&y, &seeds.encrypt[1])?);
    let (r0, r1) = (random_ct(&octx, seeds, 0)?, random_ct(&octx, seeds, 1)?);
    let names = ["mul", "rescale", "rotate(1)"];
    for (prefix, a, b) in [("", &cx, &cy), ("random:", &r0, &r1)] {
        let (o, t) = (mul_rotate(&oev, a, b)?, mul_rotate(&tev, a, b)?);
        for ((name, o), t) in names.iter().zip(&o).zip(&t) {
            let surface = format!("{prefix}{name}");
            if (o.level(), o.scale().value().to_bits()) != (t.level(), t.scale().value().to_bits()) {
                check.structure(
                    &surface,
                    format!("level {} scale {} vs {} {}", o.level(), o.scale(), t.level(), t.scale()),
                );
            }
            check.bytes(&surface, &ct_bytes(o), &ct_bytes(t));
        }
        if prefix.is_empty() {
            // The target's rotated product decrypts (on the oracle) to the plaintext result.
            let xy: Vec<Complex> = x.iter().zip(&y).map(|(&a, &b)| a * b).collect();
            let want: Vec<Complex> = (0..slots).map(|i| xy[(i + 1) % slots]).collect();
            let got = octx.decrypt(&keys.sk, &oev.upload(&t[2])?)?;
            let bits = precision_bits(&got, &want);
            if bits.is_nan() || bits < MIN_BITS {
                check.values(
                    "rotate(1)",
                    &target.name(),
                    format!("{bits:.1} bits of the plaintext result < {MIN_BITS}"),
                );
            }
        }
    }
    Ok(())
}
