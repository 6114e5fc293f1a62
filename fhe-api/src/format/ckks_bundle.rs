//! A CKKS key set's evaluation keys as one object (`docs/FORMAT.md`, "Composed
//! objects"): behind a header of kind [`ComposedKind::CkksEvalKeys`] naming the preset,
//! the number of relinearization keys (`u32`, 0 or 1) and of Galois keys (`u32`), then
//! each key's whole encoding: the relinearization key first, the Galois keys by
//! increasing element. Each key is read by its own reader, so every check of a switching
//! key applies; the bundle adds that all belong to one key set and are filed right. Keys
//! still serialize one by one ([`SwitchingKey`]'s own encoding).

use serde::de::{Deserialize, Deserializer};
use serde::ser::{self, Serialize, Serializer};

use super::header::{open_ckks_composed, write_ckks_composed_header, CkksObjectKind, ComposedKind, HEADER_LEN};
use super::{BytesVisitor, Decode, TryEncode, Wire};
use crate::ckks::entities::{EvalKeys, SwitchKind, SwitchingKey};
use crate::ckks::params::Preset;
use crate::error::{DecodeError, Error, Result};

/// The two counts before the keys.
const COUNTS_LEN: usize = 8;

fn key_len(preset: Preset) -> u64 {
    CkksObjectKind::SwitchingKey.encoded_len(preset, 0).expect("keys have one length")
}

/// The most Galois keys a preset can have: one per odd element below `2N`.
fn max_galois(preset: Preset) -> u64 {
    preset.params().n() as u64
}

impl EvalKeys {
    /// The preset every key is of (`Error::InvalidInput` for an empty bundle, or keys of
    /// parameters that are no preset; `Error::ParamMismatch` for keys of two presets).
    fn preset(&self) -> Result<Preset> {
        let mut keys = self.relin.iter().chain(self.galois.values());
        let first = keys.next().ok_or_else(|| Error::InvalidInput("an empty EvalKeys has no encoding".into()))?;
        let p = first.params();
        let preset = Preset::ALL.into_iter().find(|x| x.params() == &**p).ok_or_else(|| {
            Error::InvalidInput(format!("CKKS parameters `{}` are not a preset, so they have no encoding", p.name()))
        })?;
        for k in keys {
            if k.params() != p {
                return Err(Error::ParamMismatch { expected: p.name().into(), found: k.params().name().into() });
            }
        }
        Ok(preset)
    }

    /// The exact number of bytes [`EvalKeys::try_encode`] returns.
    pub fn try_encoded_len(&self) -> Result<usize> {
        let keys = (self.relin.is_some() as u64) + self.galois.len() as u64;
        Ok((HEADER_LEN as u64 + COUNTS_LEN as u64 + keys * key_len(self.preset()?)) as usize)
    }

    /// The bundle's encoding. Keys of two key sets (tags) are `Error::WrongKey`, a Galois
    /// key filed under another element `Error::InvalidInput`.
    pub fn try_encode(&self) -> Result<Vec<u8>> {
        let preset = self.preset()?;
        self.check_filed()?;
        let len = self.try_encoded_len()?;
        let mut out = Vec::with_capacity(len);
        out.resize(HEADER_LEN, 0);
        write_ckks_composed_header(&mut out, ComposedKind::CkksEvalKeys, preset, (len - HEADER_LEN) as u64);
        out.extend((self.relin.is_some() as u32).to_le_bytes());
        out.extend((self.galois.len() as u32).to_le_bytes());
        for k in self.relin.iter().chain(self.galois.values()) {
            k.try_encode_to(&mut out)?;
        }
        debug_assert_eq!(out.len(), len);
        Ok(out)
    }

    /// One key set, each key filed under its kind.
    fn check_filed(&self) -> Result<()> {
        let mut tag = crate::tag::KeyTag::NONE;
        if let Some(r) = &self.relin {
            if r.kind() != SwitchKind::Relin {
                return Err(Error::InvalidInput(format!("the relinearization key is a {:?} key", r.kind())));
            }
        }
        for (&g, k) in &self.galois {
            if k.kind() != SwitchKind::Galois(g) {
                return Err(Error::InvalidInput(format!("the Galois key filed under {g} is a {:?} key", k.kind())));
            }
        }
        for k in self.relin.iter().chain(self.galois.values()) {
            tag = tag.combine(k.tag())?;
        }
        Ok(())
    }
}

impl Decode for EvalKeys {
    fn decode(bytes: &[u8]) -> Result<Self> {
        let (preset, body) = open_ckks_composed(bytes, ComposedKind::CkksEvalKeys, |preset, body| {
            let counts = body
                .get(..COUNTS_LEN)
                .ok_or(DecodeError::Truncated { needed: HEADER_LEN + COUNTS_LEN, have: HEADER_LEN + body.len() })?;
            let relin = u32::from_le_bytes(counts[..4].try_into().expect("4 bytes")) as u64;
            let galois = u32::from_le_bytes(counts[4..].try_into().expect("4 bytes")) as u64;
            if relin > 1 || galois > max_galois(preset) {
                return Err(DecodeError::Invalid(format!(
                    "ckks::EvalKeys with {relin} relinearization and {galois} Galois keys: at most 1 and {}",
                    max_galois(preset)
                )));
            }
            Ok(COUNTS_LEN as u64 + (relin + galois) * key_len(preset))
        })?;
        let relin = u32::from_le_bytes(body[..4].try_into().expect("4 bytes"));
        let mut keys = EvalKeys::default();
        // The length was checked against the counts, so the keys split exactly.
        for (i, k) in body[COUNTS_LEN..].chunks_exact(key_len(preset) as usize).enumerate() {
            let key = SwitchingKey::decode(k)?;
            match key.kind() {
                SwitchKind::Relin if i == 0 && relin == 1 => keys.relin = Some(key),
                SwitchKind::Galois(g) if (i > 0 || relin == 0) && keys.galois.keys().all(|&h| h < g) => {
                    keys.galois.insert(g, key);
                }
                kind => {
                    return Err(
                        DecodeError::Invalid(format!("ckks::EvalKeys key {i} is a {kind:?} key out of place")).into()
                    )
                }
            }
        }
        keys.check_filed()?;
        Ok(keys)
    }
}

impl Wire for EvalKeys {
    const NAME: &'static str = "ckks::EvalKeys";
    const SECRET: bool = false;
    fn max_encoded_len() -> usize {
        Preset::ALL
            .iter()
            .map(|&p| HEADER_LEN as u64 + COUNTS_LEN as u64 + (1 + max_galois(p)) * key_len(p))
            .max()
            .unwrap_or(0)
            .try_into()
            .unwrap_or(usize::MAX)
    }
}

impl Serialize for EvalKeys {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.try_encode().map_err(ser::Error::custom)?)
    }
}

impl<'de> Deserialize<'de> for EvalKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_byte_buf(BytesVisitor::<EvalKeys>(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ckks_tests::swk;

    fn bundle() -> EvalKeys {
        let small = Preset::Slots4096Scale40Depth2;
        let mut keys = EvalKeys { relin: Some(swk(small, SwitchKind::Relin, 1)), ..Default::default() };
        for g in [5u64, 25, 16383] {
            // Every key of one test key set: `swk` tags by seed, so one seed.
            keys.galois.insert(g, swk_with_seed(small, SwitchKind::Galois(g)));
        }
        keys
    }

    fn swk_with_seed(preset: Preset, kind: SwitchKind) -> SwitchingKey {
        let k = swk(preset, kind, 1);
        SwitchingKey::from_raw(k.params().clone(), kind, k.tag(), *k.seed(), k.b().to_vec()).unwrap()
    }

    #[test]
    fn a_bundle_round_trips_and_its_parts_are_checked() {
        let keys = bundle();
        let bytes = keys.try_encode().unwrap();
        assert_eq!(bytes.len(), keys.try_encoded_len().unwrap());
        let back = EvalKeys::decode(&bytes).unwrap();
        assert_eq!((back.relin.as_ref(), &back.galois), (keys.relin.as_ref(), &keys.galois));
        let json = serde_json::to_string(&keys).unwrap();
        assert_eq!(serde_json::from_str::<EvalKeys>(&json).unwrap().galois, keys.galois);
        // Galois keys only.
        let g = EvalKeys { relin: None, galois: keys.galois.clone() };
        assert_eq!(EvalKeys::decode(&g.try_encode().unwrap()).unwrap().galois, keys.galois);
        // Refusals: empty, truncated, a count too high, a key of another set.
        assert!(EvalKeys::default().try_encode().is_err());
        assert!(EvalKeys::decode(&bytes[..bytes.len() - 1]).is_err());
        let mut b = bytes.clone();
        b[HEADER_LEN + 4..HEADER_LEN + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(EvalKeys::decode(&b).is_err());
        let mut mixed = keys.clone();
        mixed.galois.insert(7, swk(Preset::Slots4096Scale40Depth2, SwitchKind::Galois(7), 2));
        assert!(matches!(mixed.try_encode(), Err(Error::WrongKey { .. })));
        let mut misfiled = keys;
        misfiled.galois.insert(9, swk_with_seed(Preset::Slots4096Scale40Depth2, SwitchKind::Galois(5)));
        assert!(misfiled.try_encode().is_err());
    }
}
