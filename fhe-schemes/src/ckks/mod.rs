//! RNS-CKKS host algorithms, written once over a backend's CKKS capability.
//!
//! | module | holds |
//! |---|---|
//! | `encoding` | canonical-embedding encode and decode ([`Encoder`], [`Complex`]), deterministic on every platform |
//! | `fft` | libm-free roots of unity and the special FFT |
//! | `keygen` | secret, public, relinearization and Galois keys from a seed ([`KeygenOptions`]) |
//! | `encrypt` | public- and secret-key encryption, decryption |
//! | `context` | [`Context`]: one parameter set on one backend, the user's starting point |
//! | `evaluator` | [`Evaluator`]: level and scale bookkeeping over a backend's `CkksOps` |
//! | `circuits` | polynomials, linear transforms, slot sums and bootstrapping over the evaluator |
//!
//! The objects themselves (parameters, keys, plaintexts, ciphertexts) are `fhe_api::ckks`'s.

pub mod circuits;
mod context;
mod encoding;
mod encrypt;
mod evaluator;
mod fft;
mod keygen;

pub use circuits::{
    BootstrapConfig, Bootstrapper, Chebyshev, DiagonalForm, FeFunction, FourierSeries, FunctionalBootstrapper,
    FunctionalChain, FunctionalConfig, LinearTransform, PreparedLinearTransform,
};
pub use context::{precision_bits, Context};
pub use encoding::{Complex, Encoder};
pub use evaluator::{ckks_ops, Evaluator, HoistedCiphertext, KeyLevels, Mode, PlainOperand};
pub use keygen::KeygenOptions;
