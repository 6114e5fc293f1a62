//! Lux FHE runtime.
pub use fhe_api::*;
