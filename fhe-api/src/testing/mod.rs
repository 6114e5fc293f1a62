//! What tests of backends share without the schemes (feature `testing`): [`Delegate`],
//! the one wrapper that forwards every op of an inner backend, through [`Tamper`] hooks
//! a test overrides to break it on purpose. The conformance suite itself runs the
//! schemes' host algorithms, so it lives in `fhe_schemes::testing`.

mod delegate;

pub use delegate::{Delegate, Tamper};
