//! Device memory: what a driver says is free, the bytes each resident CKKS object takes
//! in the layouts of `backend/ckks` (so the report is the backend's allocation, not an
//! estimate), and the pre-flight check that refuses an upload that cannot fit with
//! `Error::OutOfMemory` before anything is allocated: data already resident is kept.
//!
//! Sizes are those of [`crate::Buffer`] allocations: 8-byte words (`[part][limb][N]`),
//! a Galois key's gather as `N` 4-byte indices. The plan's tables (twiddles and RNS
//! constants per level, built once per parameter set) are not counted here.

use fhe_api::ckks::Params;
use fhe_api::Result;

use crate::backend::GpuBackend;
use crate::driver::GpuDriver;

pub use fhe_api::DeviceMemory;

const WORD: u64 = 8;

/// Bytes of `limbs` limbs of `N` words.
fn limbs_bytes(params: &Params, limbs: usize) -> u64 {
    limbs as u64 * params.n() as u64 * WORD
}

/// Bytes of a resident ciphertext of degree 1 at `level`: two parts of `level + 1` limbs.
pub fn ciphertext_bytes(params: &Params, level: usize) -> u64 {
    2 * limbs_bytes(params, level + 1)
}

/// Bytes of a prepared plaintext of `limbs` limbs over `q_0..`, plus the `K` limbs over
/// `P` of an extended one (a linear transform's diagonal).
pub fn plaintext_bytes(params: &Params, limbs: usize, extended: bool) -> u64 {
    limbs_bytes(params, limbs) + if extended { limbs_bytes(params, params.p().len()) } else { 0 }
}

/// Bytes of a switching key prepared up to `level` (`SwitchingKey::halves_up_to`): both
/// halves, each a digit per `Params::digits(level)` over `Q_level P`; a Galois key adds
/// its gather of `N` `u32` indices.
pub fn switch_key_bytes(params: &Params, level: usize, galois: bool) -> u64 {
    let digits = params.digits(level).len();
    let half = digits as u64 * limbs_bytes(params, level + 1 + params.p().len());
    2 * half + if galois { params.n() as u64 * 4 } else { 0 }
}

/// What the keys and ciphertexts of one parameter set take on the device, at the top
/// level ([`ckks_footprint`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CkksFootprint {
    /// The parameter set's name (a preset's name).
    pub name: String,
    pub n: usize,
    /// Limbs of `Q` at the top level and of `P`.
    pub q_limbs: usize,
    pub p_limbs: usize,
    pub dnum: usize,
    /// One ciphertext (degree 1) at the top level.
    pub ciphertext: u64,
    /// One plaintext at the top level, and one extended (a linear transform's diagonal).
    pub plaintext: u64,
    pub plaintext_extended: u64,
    /// The relinearization key, prepared whole.
    pub relin_key: u64,
    /// One rotation (Galois) key, prepared whole.
    pub galois_key: u64,
}

/// The device bytes of `params`'s keys and ciphertexts, from the layouts the GPU
/// backend allocates (`fhe-gpu-emu`'s tests count the allocations).
pub fn ckks_footprint(params: &Params) -> CkksFootprint {
    let top = params.max_level();
    CkksFootprint {
        name: params.name().to_string(),
        n: params.n(),
        q_limbs: top + 1,
        p_limbs: params.p().len(),
        dnum: params.digits(top).len(),
        ciphertext: ciphertext_bytes(params, top),
        plaintext: plaintext_bytes(params, top + 1, false),
        plaintext_extended: plaintext_bytes(params, top + 1, true),
        relin_key: switch_key_bytes(params, top, false),
        galois_key: switch_key_bytes(params, top, true),
    }
}

impl<D: GpuDriver> GpuBackend<D> {
    /// Refuses a request of `bytes` that the device's free memory cannot hold, with
    /// `Error::OutOfMemory` naming `what`, the need and the free bytes, before anything is
    /// allocated. A driver that reports no figure is not checked here (its allocation
    /// error is still `OutOfMemory` where the driver maps it).
    pub fn check_fits(&self, what: &str, bytes: u64) -> Result<()> {
        let Some(m) = self.driver().memory() else { return Ok(()) };
        m.check(what, &self.driver().device_info().name, bytes).inspect_err(|_| {
            tracing::warn!(what, needed = bytes, free = m.free, total = m.total, "device memory refused");
        })
    }

    /// [`GpuBackend::check_fits`] for a batch of `count` ciphertexts at `level`, before
    /// uploading them one by one.
    pub fn check_ciphertexts_fit(&self, params: &Params, level: usize, count: usize) -> Result<()> {
        let bytes = ciphertext_bytes(params, level).saturating_mul(count as u64);
        self.check_fits(&format!("{count} ciphertext(s) of {} at level {level}", params.name()), bytes)
    }
}

#[cfg(test)]
mod tests {
    use fhe_api::ckks::params::Preset;

    use super::*;

    /// The small preset by hand: N = 2^13, 3 limbs of Q and 1 of P, one prime a digit.
    #[test]
    fn sizes_follow_the_layout_at_the_small_preset() {
        let p = Preset::Slots4096Scale40Depth2.params();
        let (n, limb) = (8192u64, 8192u64 * 8);
        let f = ckks_footprint(p);
        assert_eq!((f.q_limbs, f.p_limbs, f.dnum), (3, 1, 3));
        assert_eq!((f.ciphertext, f.plaintext, f.plaintext_extended), (2 * 3 * limb, 3 * limb, 4 * limb));
        // Two halves, 3 digits, each over q_0..q_2 and p_0.
        assert_eq!((f.relin_key, f.galois_key), (2 * 3 * 4 * limb, 2 * 3 * 4 * limb + 4 * n));
        // At level 0 one digit over q_0 and p_0.
        assert_eq!(switch_key_bytes(p, 0, true), 2 * 2 * limb + 4 * n);
        assert_eq!(ciphertext_bytes(p, 0), 2 * limb);
    }
}
