//! RNS-CKKS: approximate arithmetic on vectors of complex numbers.
//!
//! | module | holds |
//! |---|---|
//! | [`params`] | prime chains, presets, the security bound |
//! | [`encoding`] | canonical-embedding encode and decode, deterministic on every platform |

pub mod encoding;
pub mod params;
