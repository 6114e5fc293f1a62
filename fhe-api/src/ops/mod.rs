//! The operation traits a backend implements, one file per op family (`ring`, `tfhe`,
//! `ckks`), assembled into [`Backend`]. Shapes are chosen for devices: a batch goes in
//! one call, and keys and CKKS operands are backend-owned [`Resident`] objects (on the
//! device for GPU backends).

mod ckks;
mod resident;
mod ring;
mod tfhe;

pub use ckks::{CkksOps, ConstResidues, WORK_POOL_POLYS};
pub use resident::Resident;
pub use ring::{check_ring_input, checked_modulus, NttOps, RingOps};
pub use tfhe::{check_inputs, check_narrow_lwe, BootstrapOps, KeyMeta, PreparedKey};

use crate::registry::BackendKind;

/// What a backend reports about itself (bench and equivalence reports carry it).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceInfo {
    /// Device name, e.g. "NVIDIA H200" or the CPU model.
    pub name: String,
    /// Driver or runtime version, where there is one.
    pub driver: Option<String>,
    /// True for software devices (lavapipe); `auto` never picks those.
    pub software: bool,
}

/// Free and total bytes of the device a backend keeps resident data on, as its driver
/// reports them ([`Backend::device_memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceMemory {
    pub free: u64,
    pub total: u64,
}

impl DeviceMemory {
    /// `Error::OutOfMemory` naming `what` on `device`, the need and the free bytes, when
    /// `needed` exceeds them: the one rule of every check against device memory (the GPU
    /// backend's uploads, the circuits' working sets).
    pub fn check(&self, what: &str, device: &str, needed: u64) -> crate::Result<()> {
        if needed > self.free {
            return Err(crate::Error::OutOfMemory {
                what: format!("{what} on {device}"),
                needed,
                available: self.free,
            });
        }
        Ok(())
    }
}

/// A complete backend: the ring ops (and with them [`NttOps`]), the bit scheme's
/// bootstrap, its identity, and the schemes it declares beyond the bit scheme. Host
/// algorithms (key generation, encryption, gates, the CKKS evaluator) are not backend
/// methods: they are programs over `&dyn Backend` (`fhe_schemes`).
pub trait Backend: RingOps + NttOps + BootstrapOps + Send + Sync + 'static {
    fn kind(&self) -> BackendKind;
    /// Stable name including the NTT variant, e.g. `cpu:reference`.
    fn name(&self) -> String;
    fn device_info(&self) -> DeviceInfo;
    /// The CKKS capability, where this backend implements it (conformance tests and the
    /// facade report the rest as unsupported, never as a pass).
    fn ckks(&self) -> Option<&dyn CkksOps> {
        None
    }
    /// Whether [`BootstrapOps::prepare`] takes keys of `set`. By default the sets whose
    /// LWE words fit 16 bits (what the GPU kernels hold, [`check_narrow_lwe`]); the CPU
    /// takes every set. The known-answer replay skips, never passes, a set a backend
    /// does not take.
    fn prepares(&self, set: crate::ParamSet) -> bool {
        set.params().lwe_fits_u16()
    }
    /// Free and total memory of the device holding this backend's resident data, where
    /// its driver says; `None` for host memory (the CPU) or a device that cannot say.
    /// Circuits check what they will upload against it before they start.
    fn device_memory(&self) -> Option<DeviceMemory> {
        None
    }
}
