//! The bit scheme's comparison rules: byte for byte on the serialized form
//! (`fhe_api::format`), every ciphertext also decrypting to its plaintext bit; and its
//! sweep case (the oracle's keys prepared on both backends, bootstraps of encrypted bits
//! and of uniformly random ciphertexts).

use std::sync::Arc;

use fhe_api::format::{Decode, Encode};
use fhe_api::rng::stream;
use fhe_api::{Backend, KeyTag, LweCiphertext, ParamSet};
use fhe_schemes::tfhe::gates::refresh_batch;

use super::corpus::KatEntry;
use super::surfaces::{bits, Computed};
use crate::compare::Checker;
use crate::scheme::{sha256, unhex, CaseSeeds};
use crate::Result;

/// Checks a replay on `backend` against the stored entry: the keys' digests, then every
/// ciphertext's bytes and plaintext.
pub(crate) fn check_entry(check: &mut Checker, backend: &str, entry: &KatEntry, c: &Computed) -> Result<()> {
    for ((name, bytes), stored) in c.keys.iter().zip([&entry.sk_sha256, &entry.pk_sha256, &entry.ek_sha256]) {
        let stored = unhex(&entry.name, &format!("{name} digest"), stored)?;
        check.bytes(&format!("{name} (sha256)"), &stored, &sha256(bytes));
    }
    if c.cts.len() != entry.outputs.len() {
        check.structure(
            "outputs",
            format!("corpus has {} ciphertext surfaces, replay computes {}", entry.outputs.len(), c.cts.len()),
        );
    }
    for (found, stored) in c.cts.iter().zip(&entry.outputs) {
        if found.name != stored.surface || found.expected_bit != stored.bit {
            check.structure(
                &stored.surface,
                format!("corpus surface `{}` (bit {}) meets computed `{}`", stored.surface, stored.bit, found.name),
            );
            continue;
        }
        let bytes = unhex(&format!("{} {}", entry.name, stored.surface), "ciphertext", &stored.ct)?;
        // The stored bytes must be a valid ciphertext that re-encodes to itself.
        match LweCiphertext::decode(&bytes) {
            Ok(ct) if ct.encode() == bytes => {}
            Ok(_) => check.structure(&stored.surface, "stored ciphertext does not re-encode to itself".into()),
            Err(e) => check.structure(&stored.surface, format!("stored ciphertext does not decode: {e}")),
        }
        check.bytes(&stored.surface, &bytes, &found.bytes);
        check.plaintext(&stored.surface, backend, stored.bit, &found.decrypted);
    }
    Ok(())
}

fn ntt_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Every surface of two computations of the same case, byte for byte, and every
/// ciphertext decrypting to its plaintext on both backends.
pub(crate) fn compare(check: &mut Checker, oracle: &str, target: &str, o: &Computed, t: &Computed) {
    for ((name, ob), (_, tb)) in o.keys.iter().zip(&t.keys) {
        check.bytes(name, ob, tb);
    }
    for (oc, tc) in o.cts.iter().zip(&t.cts) {
        check.bytes(&oc.name, &oc.bytes, &tc.bytes);
        check.plaintext(&oc.name, oracle, oc.expected_bit, &oc.decrypted);
        check.plaintext(&tc.name, target, tc.expected_bit, &tc.decrypted);
    }
    if let (Some(o), Some(t)) = (&o.ntt, &t.ntt) {
        check.bytes("ntt:forward", &ntt_bytes(&o.forward), &ntt_bytes(&t.forward));
        check.bytes("ntt:inverse", &ntt_bytes(&o.inverse), &ntt_bytes(&t.inverse));
        check.bytes("ntt:round-trip", &ntt_bytes(&t.input), &ntt_bytes(&t.inverse));
    }
}

/// Two uniformly random LWE ciphertexts of the case (stream `equiv-sweep-random`),
/// tagged as the case's key (a random ciphertext is under every key; the tag only lets
/// the backends accept it).
fn random_cts(params: ParamSet, seeds: &CaseSeeds, tag: KeyTag) -> fhe_api::Result<Vec<LweCiphertext>> {
    let p = params.params();
    (0..2)
        .map(|j| {
            let mut r = stream(&seeds.master.0, "equiv-sweep-random", j);
            let words = (0..=p.n()).map(|_| r.uniform_mod(p.q_lwe()) as u32).collect();
            LweCiphertext::from_raw(params, tag, words)
        })
        .collect()
}

/// One sweep seed: the oracle's keys, prepared on both backends; `refresh_batch` of two
/// encrypted bits and `bootstrap_batch` of two random ciphertexts, byte-equal.
pub(crate) fn sweep_case(
    oracle: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    params: ParamSet,
    seeds: &CaseSeeds,
    check: &mut Checker,
) -> Result<()> {
    let (oracle, target) = (&**oracle, &**target);
    let keys = fhe_schemes::tfhe::keygen_from_seed(oracle, params, &seeds.master)?;
    let b = bits(seeds.index);
    let b = &b[..2];
    let enc = b
        .iter()
        .zip(&seeds.encrypt)
        .map(|(&b, s)| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, b, s))
        .collect::<fhe_api::Result<Vec<_>>>()?;
    let random = random_cts(params, seeds, keys.ek.tag())?;
    let (ok, tk) = (oracle.prepare(&keys.ek)?, target.prepare(&keys.ek)?);
    let (orf, trf) = (refresh_batch(oracle, &ok, &enc)?, refresh_batch(target, &tk, &enc)?);
    for (j, ((o, t), &bit)) in orf.iter().zip(&trf).zip(b).enumerate() {
        let surface = format!("bootstrap[{j}]");
        check.bytes(&surface, &o.encode(), &t.encode());
        let dec = |ct| fhe_schemes::tfhe::decrypt_bit(&keys.sk, ct).map_err(|e| e.to_string());
        check.plaintext(&surface, &oracle.name(), bit, &dec(o));
        check.plaintext(&surface, &target.name(), bit, &dec(t));
    }
    let (obs, tbs) = (oracle.bootstrap_batch(&ok, &random)?, target.bootstrap_batch(&tk, &random)?);
    for (j, (o, t)) in obs.iter().zip(&tbs).enumerate() {
        check.bytes(&format!("bootstrap_batch(random[{j}])"), &o.encode(), &t.encode());
    }
    if obs.len() != tbs.len() || orf.len() != trf.len() {
        check.structure("bootstrap", "the backends returned batches of different lengths".into());
    }
    Ok(())
}
