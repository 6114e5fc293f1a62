//! The bit-scheme surfaces of one case, computed on one backend (the list is in the
//! [`crate::tfhe`] docs).

use fhe_api::format::Encode;
use fhe_api::rng::stream;
use fhe_api::{Backend, LweCiphertext, ParamSet};
use fhe_schemes::tfhe::gates::{gate_batch, mux_batch, not, refresh_batch};
use fhe_schemes::tfhe::Gate;

use crate::scheme::{CaseSeeds, Schedule};
use crate::Result;

/// The bits case `k` encrypts: `b_j = (k >> j) & 1`, so cases 0..4 cover every input
/// pair of the two-input gates.
pub(crate) fn bits(k: u64) -> [bool; 3] {
    [0, 1, 2].map(|j| (k >> j) & 1 == 1)
}

/// One ciphertext surface: its serialized bytes, the plaintext it must hold, and what
/// the backend's `decrypt_bit` made of it.
pub struct CtSurface {
    pub name: String,
    pub expected_bit: bool,
    pub bytes: Vec<u8>,
    pub decrypted: Result<bool, String>,
}

/// The NTT surfaces of a dispatch case: one polynomial uniform mod `Q` (stream
/// `equiv-ntt` of the master seed), its forward transform and the inverse of that.
pub struct NttSurfaces {
    pub input: Vec<u64>,
    pub forward: Vec<u64>,
    pub inverse: Vec<u64>,
}

/// Every surface of one case on one backend.
pub struct Computed {
    /// `sk`, `pk`, `ek`, serialized.
    pub keys: [(&'static str, Vec<u8>); 3],
    pub cts: Vec<CtSurface>,
    /// [`Schedule::Dispatch`] only.
    pub ntt: Option<NttSurfaces>,
}

/// Computes every surface of case `seeds` of `params` on `backend`.
pub(crate) fn compute(
    backend: &dyn Backend,
    params: ParamSet,
    seeds: &CaseSeeds,
    schedule: Schedule,
) -> Result<Computed> {
    let keys = fhe_schemes::tfhe::keygen_from_seed(backend, params, &seeds.master)?;
    let b = bits(seeds.index);
    let [b0, b1, b2] = b;
    let mut outs: Vec<(String, bool, LweCiphertext)> = Vec::new();

    let enc: Vec<LweCiphertext> = b
        .iter()
        .zip(&seeds.encrypt)
        .map(|(&bit, seed)| fhe_schemes::tfhe::encrypt_bit_seeded(&keys.pk, bit, seed))
        .collect::<fhe_api::Result<_>>()?;
    for (j, ct) in enc.iter().enumerate() {
        outs.push((format!("encrypt[{j}]"), b[j], ct.clone()));
    }

    let key = backend.prepare(&keys.ek)?;
    for (j, ct) in refresh_batch(backend, &key, &enc)?.into_iter().enumerate() {
        outs.push((format!("bootstrap[{j}]"), b[j], ct));
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
    let ntt = match schedule {
        Schedule::Kat => None,
        Schedule::Dispatch => Some(ntt(backend, params, seeds)?),
    };
    Ok(Computed { keys: [("sk", keys.sk.encode()), ("pk", keys.pk.encode()), ("ek", keys.ek.encode())], cts, ntt })
}

fn ntt(backend: &dyn Backend, params: ParamSet, seeds: &CaseSeeds) -> Result<NttSurfaces> {
    let p = params.params();
    let mut r = stream(&seeds.master.0, "equiv-ntt", 0);
    let input: Vec<u64> = (0..p.big_n()).map(|_| r.uniform_mod(p.q_ring())).collect();
    let mut forward = input.clone();
    backend.ntt_forward(params, &mut forward)?;
    let mut inverse = forward.clone();
    backend.ntt_inverse(params, &mut inverse)?;
    Ok(NttSurfaces { input, forward, inverse })
}
