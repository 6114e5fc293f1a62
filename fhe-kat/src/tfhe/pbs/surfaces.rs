//! The surfaces of one PBS case on one backend (the list is in the [`super`] docs).

use std::sync::Arc;

use fhe_api::format::Encode;
use fhe_api::rng::stream;
use fhe_api::{Backend, ExtractedLwe, ParamSet};
use fhe_schemes::integer::radix::{add::add, Propagation, RadixUint};
use fhe_schemes::tfhe::pbs::{decrypt_block, encrypt_block_seeded, PbsKey};

use super::{Case, CASES, RADIX_WIDTH};
use crate::scheme::{sha256, CaseSeeds};
use crate::Result;

/// One block or radix surface: the digest of its serialized form, the value it must
/// hold, and what the secret key decrypts it to.
#[derive(Clone, Debug)]
pub struct PbsCt {
    pub name: String,
    pub expected: u64,
    pub sha256: [u8; 32],
    pub decrypted: Result<u64, String>,
}

/// Every surface of one case on one backend.
#[derive(Clone, Debug)]
pub struct PbsComputed {
    pub case: Case,
    /// The drawn table ([`Case::Table`]) or the operands `[x, y]` ([`Case::RadixAdd`]).
    pub inputs: Vec<u64>,
    /// `sk`, `pk`, `ek`: SHA-256 of the serialized keys.
    pub keys: [(&'static str, [u8; 32]); 3],
    pub cts: Vec<PbsCt>,
}

fn block_ct(sk: &fhe_api::SecretKey, name: String, expected: u64, ct: &ExtractedLwe) -> PbsCt {
    PbsCt { name, expected, sha256: sha256(&ct.encode()), decrypted: decrypt_block(sk, ct).map_err(|e| e.to_string()) }
}

fn radix_ct(sk: &fhe_api::SecretKey, name: &str, expected: u64, x: &RadixUint) -> PbsCt {
    let bytes: Vec<u8> = x.blocks().iter().flat_map(|b| b.encode()).collect();
    let decrypted = x.decrypt_u128(sk).map(|v| v as u64).map_err(|e| e.to_string());
    PbsCt { name: name.into(), expected, sha256: sha256(&bytes), decrypted }
}

/// Computes case `seeds.index mod CASES.len()` of `set` on `backend`.
pub(crate) fn compute(backend: &Arc<dyn Backend>, set: ParamSet, seeds: &CaseSeeds) -> Result<PbsComputed> {
    let case = CASES[(seeds.index % CASES.len() as u64) as usize];
    let keys = fhe_schemes::tfhe::keygen_from_seed(&**backend, set, &seeds.master)?;
    let key = PbsKey::new(backend.clone(), &keys.ek)?;
    let sk = &keys.sk;
    let p = key.encoding().modulus();
    let (inputs, cts) = match case {
        Case::Table => {
            let mut r = stream(&seeds.master.0, "kat-pbs-table", 0);
            let table: Vec<u64> = (0..p).map(|_| r.uniform_mod(p)).collect();
            let blocks: Vec<ExtractedLwe> =
                (0..p).map(|m| encrypt_block_seeded(sk, m, &seeds.encrypt[0], m)).collect::<fhe_api::Result<_>>()?;
            let out = key.apply_batch(&blocks, &key.lut(|m| table[m as usize])?)?;
            let mut cts: Vec<PbsCt> =
                blocks.iter().enumerate().map(|(m, b)| block_ct(sk, format!("encrypt[{m}]"), m as u64, b)).collect();
            cts.extend(out.iter().enumerate().map(|(m, b)| block_ct(sk, format!("pbs[{m}]"), table[m], b)));
            (table, cts)
        }
        Case::RadixAdd => {
            let mut r = stream(&seeds.master.0, "kat-radix-operands", 0);
            let mask = (1u64 << RADIX_WIDTH) - 1;
            let (x, y) = (r.next_u64() & mask, r.next_u64() & mask);
            let a = RadixUint::encrypt_limbs_seeded(sk, RADIX_WIDTH, &[x], &seeds.encrypt[0])?;
            let b = RadixUint::encrypt_limbs_seeded(sk, RADIX_WIDTH, &[y], &seeds.encrypt[1])?;
            let s = add(&key, &a, &b, Propagation::Sequential)?;
            let cts = vec![radix_ct(sk, "a", x, &a), radix_ct(sk, "b", y, &b), radix_ct(sk, "add", (x + y) & mask, &s)];
            (vec![x, y], cts)
        }
    };
    let keys =
        [("sk", sha256(&keys.sk.encode())), ("pk", sha256(&keys.pk.encode())), ("ek", sha256(&keys.ek.encode()))];
    Ok(PbsComputed { case, inputs, keys, cts })
}
