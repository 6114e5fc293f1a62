//! The operation traits a backend implements, one file per op family, assembled into
//! [`Backend`]. Shapes are chosen for devices: a batch goes in one call, and the
//! evaluation key is prepared once into a backend-owned [`PreparedKey`] (resident on
//! the device for GPU backends).

mod bootstrap;
pub mod ckks;
mod keys;
mod ntt;
mod ring;

pub use bootstrap::{check_inputs, BootstrapOps, PreparedKey};
pub use ckks::{CkksHandle, CkksOps, PlainHandle, PreparedSwitchKey};
pub use keys::KeyOps;
pub use ntt::{check_ntt_input, NttOps};
pub use ring::{check_ring_input, checked_modulus, RingOps};

use crate::error::{Error, Result};
use crate::registry::BackendKind;

/// The backend's own form of a resident object (a prepared key, a CKKS handle):
/// `Error::WrongBackend` when another backend made it. One rule for every handle type.
pub(crate) fn downcast_owned<'a, T: std::any::Any>(
    inner: &'a (dyn std::any::Any + Send + Sync),
    owner: &str,
    user: &str,
) -> Result<&'a T> {
    inner
        .downcast_ref::<T>()
        .filter(|_| owner == user)
        .ok_or_else(|| Error::WrongBackend { owner: owner.to_string(), used: user.to_string() })
}

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

/// A complete backend: the ring ops, the bit scheme's op families, its identity, and the
/// schemes it declares beyond the bit scheme.
pub trait Backend: RingOps + KeyOps + NttOps + BootstrapOps + Send + Sync + 'static {
    fn kind(&self) -> BackendKind;
    /// Stable name including the NTT variant, e.g. `cpu:reference`.
    fn name(&self) -> String;
    fn device_info(&self) -> DeviceInfo;
    /// The CKKS capability, where this backend implements it (conformance tests and the
    /// facade report the rest as unsupported, never as a pass).
    fn ckks(&self) -> Option<&dyn CkksOps> {
        None
    }
}
