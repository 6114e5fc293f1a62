//! The surfaces of one case, computed on one backend (see the crate docs for the list).

use fhe_api::format::Encode;
use fhe_api::{Backend, LweCiphertext, ParamSet, Seed};
use fhe_schemes::tfhe::gates::{gate_batch, mux_batch, not, refresh_batch};
use fhe_schemes::tfhe::Gate;

use crate::Result;

/// The seeds and plaintexts of one case.
pub(crate) struct CaseInput {
    pub params: ParamSet,
    pub master: Seed,
    pub encrypt_seeds: [Seed; 3],
    pub bits: [bool; 3],
}

impl CaseInput {
    /// Case `k` of a seed root (crate docs, "Seeds").
    pub fn derive(root: &str, params: ParamSet, k: u64) -> CaseInput {
        let enc_root = format!("{root}/encrypt");
        CaseInput {
            params,
            master: Seed::derive(root, k),
            encrypt_seeds: [0, 1, 2].map(|j| Seed::derive(&enc_root, 3 * k + j)),
            bits: [0, 1, 2].map(|j| (k >> j) & 1 == 1),
        }
    }
}

/// One ciphertext surface: its serialized bytes, the plaintext it must hold, and what
/// the backend's `decrypt_bit` made of it.
pub(crate) struct CtSurface {
    pub name: String,
    pub expected_bit: bool,
    pub bytes: Vec<u8>,
    pub decrypted: Result<bool, String>,
}

/// Every surface of one case on one backend.
pub(crate) struct Computed {
    /// `sk`, `pk`, `ek`, serialized.
    pub keys: [(&'static str, Vec<u8>); 3],
    pub cts: Vec<CtSurface>,
}

/// Computes every surface of `input` on `backend`.
pub(crate) fn compute(backend: &dyn Backend, input: &CaseInput) -> Result<Computed> {
    let keys = fhe_schemes::tfhe::keygen_from_seed(backend, input.params, &input.master)?;
    let [b0, b1, b2] = input.bits;
    let mut outs: Vec<(String, bool, LweCiphertext)> = Vec::new();

    let enc: Vec<LweCiphertext> = input
        .bits
        .iter()
        .zip(&input.encrypt_seeds)
        .map(|(&bit, seed)| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, bit, seed))
        .collect::<fhe_api::Result<_>>()?;
    for (j, ct) in enc.iter().enumerate() {
        outs.push((format!("encrypt[{j}]"), input.bits[j], ct.clone()));
    }

    let key = backend.prepare(&keys.ek)?;
    for (j, ct) in refresh_batch(backend, &key, &enc)?.into_iter().enumerate() {
        outs.push((format!("bootstrap[{j}]"), input.bits[j], ct));
    }
    // The six gates and the MUX are independent: run them side by side (each call is
    // a one-element batch, which a backend cannot spread over its cores by itself).
    let (gates, mux) = std::thread::scope(|scope| {
        let (key, enc) = (&key, &enc);
        let gates: Vec<_> = Gate::ALL
            .map(|gate| scope.spawn(move || gate_batch(backend, key, gate, &enc[0..1], &enc[1..2])))
            .into_iter()
            .collect();
        let mux = mux_batch(backend, key, &enc[0..1], &enc[1..2], &enc[2..3]);
        (gates.into_iter().map(|h| h.join().expect("gate thread panicked")).collect::<Vec<_>>(), mux)
    });
    for (gate, ct) in Gate::ALL.into_iter().zip(gates) {
        outs.push((format!("gate:{}", gate.name()), gate.eval_plain(b0, b1), ct?.remove(0)));
    }
    outs.push(("mux".into(), if b0 { b1 } else { b2 }, mux?.remove(0)));
    outs.push(("not".into(), !b0, not(&enc[0])));

    let cts = outs
        .into_iter()
        .map(|(name, expected_bit, ct)| CtSurface {
            name,
            expected_bit,
            bytes: ct.encode(),
            decrypted: fhe_schemes::tfhe::decrypt_bit(&keys.sk, &ct).map_err(|e| e.to_string()),
        })
        .collect();
    Ok(Computed { keys: [("sk", keys.sk.encode()), ("pk", keys.pk.encode()), ("ek", keys.ek.encode())], cts })
}

/// SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}
